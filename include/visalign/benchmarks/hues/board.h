// Hues and Cues: The 480-cell board (cells, CIE xy, CIELAB) and its macro colour categories. Part of the Hues and Cues
// module; the benchmark as a whole is described in visalign/benchmarks/hues/hues.h.
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/color.h"
#include "visalign/core/status.h"
#include "visalign/stats/statistics.h"

namespace visalign::hues {

inline constexpr int kRows = 16;  // A..P
inline constexpr int kCols = 30;  // 1..30
inline constexpr int kCells = kRows * kCols;
inline constexpr int kTopK = 5;  // predictions per word

// ---- Board ------------------------------------------------------------------------------------

// How a cell's 8-bit RGB becomes CIE xy.
//   kDisplay: the study's calibrated display, XYZ = M·(R², G², B²) with R, G, B in 0..255 and
//             M = [[69.1661, 52.4902, 46.6052], [39.0454, 115.8404, 16.3118],
//                  [3.3467, 12.6700, 170.1090]] (gamma 2). The default: published numbers use it.
//   kSrgb:    standard sRGB (IEC 61966-2-1) → linear → XYZ (D65).
enum class Chromaticity { kDisplay, kSrgb };
std::string_view ChromaticityName(Chromaticity c);  // "display", "srgb"
Result<Chromaticity> ParseChromaticity(std::string_view text);
stats::Vec2 CellChromaticity(color::Srgb8 rgb, Chromaticity c);

// Cell index = row · 30 + (column − 1), row A = 0. Names are "A1".."P30" (case-insensitive).
Result<int> ParseCell(std::string_view name);
std::string CellName(int index);

struct Cell {
  std::string name;  // "I18"
  char row = 'A';
  int col = 1;
  color::Srgb8 rgb;
  stats::Vec2 xy{};  // under the board's Chromaticity
  color::Lab lab;    // CIELAB of the sRGB color (D65), whatever the chromaticity mode
};

class Board {
 public:
  // board.csv: cell,row,col,R,G,B with all 480 cells exactly once, consistent names.
  static Result<Board> Load(const std::filesystem::path& board_csv, Chromaticity c);
  static Result<Board> Default(Chromaticity c);  // data/hues/board.csv
  const std::vector<Cell>& cells() const { return cells_; }
  const Cell& cell(int index) const { return cells_[static_cast<size_t>(index)]; }
  Chromaticity chromaticity() const { return chromaticity_; }

 private:
  std::vector<Cell> cells_;
  Chromaticity chromaticity_ = Chromaticity::kDisplay;
};

// ---- Macro color categories -------------------------------------------------------------------

// The 8 basic chromatic categories, plus kNeutral used only as a "macro class" (see MacroClass).
enum class Macro { kBrown, kRed, kOrange, kYellow, kGreen, kBlue, kPurple, kPink, kNeutral };
inline constexpr int kMacroCategories = 8;        // kBrown..kPink
inline constexpr int kMacroClasses = 9;           // with kNeutral
std::string_view MacroName(Macro m);              // "Brown", ..., "Pink", "Neutral"
Result<Macro> ParseMacro(std::string_view name);  // one of the 8 categories, case-insensitive

struct MacroCell {
  Macro category = Macro::kBrown;  // never kNeutral
  double confidence = 0;           // in [0, 1]
  bool neutral = false;            // near-achromatic cell
};

// Every cell's category, confidence and neutral flag. The shipped map (data/hues/macro_regions.csv)
// is produced by Derive() through `visalign hues macro-map`; any CSV with the same columns
// (cell,category,confidence,neutral) — e.g. a human consensus map — can replace it.
class MacroMap {
 public:
  static Result<MacroMap> Load(const std::filesystem::path& csv);
  static Result<MacroMap> Default();  // data/hues/macro_regions.csv
  // The documented rule (docs/hues.md): CIELAB of each cell; the category of the nearest chromatic
  // ISCC-NBS centroid (CIEDE2000; white/gray/black centroids skipped, so near-achromatic cells are
  // assigned by their hue) through the level-2 → 8-category table; confidence = share of the
  // kConfidenceNeighbours nearest chromatic centroids in that category; neutral when the cell's
  // chroma C*ab < kNeutralChroma.
  static MacroMap Derive(const Board& board, const color::IsccNbs& iscc);
  static constexpr int kConfidenceNeighbours = 5;
  static constexpr double kNeutralChroma = 10.0;
  // Whether a cell is near-achromatic: chroma C*ab < kNeutralChroma (the neutral flag of Derive).
  static bool IsNeutral(const Cell& cell);
  // A map of the given cells (e.g. a consensus of participants' paintings, RegionConsensus);
  // `source` says where it came from (what source() returns).
  static MacroMap FromCells(const std::array<MacroCell, kCells>& cells, std::string source);

  const MacroCell& at(int cell) const { return cells_[static_cast<size_t>(cell)]; }
  // Category, or kNeutral for neutral cells: what nonsense collapse and entropy count.
  Macro MacroClass(int cell) const { return at(cell).neutral ? Macro::kNeutral : at(cell).category; }
  std::string ToCsv() const;
  const std::string& source() const { return source_; }

 private:
  std::array<MacroCell, kCells> cells_{};
  std::string source_;
};

// The 8-category name for an ISCC-NBS level-2 name ("reddish brown" → Brown), or nullopt for
// white, gray and black.
std::optional<Macro> MacroForIsccLevel2(std::string_view level2);

}  // namespace visalign::hues
