// The Hues and Cues board: cell names, RGB, chromaticity (display or sRGB) and CIELAB.
#include <fmt/format.h>

#include <array>

#include "benchmarks/hues/text_util.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"

namespace visalign::hues {
namespace {

// The study display's calibration (gamma 2), from the authors' analysis code: XYZ = M · RGB².
constexpr std::array<std::array<double, 3>, 3> kDisplayMatrix{{
    {69.1661, 52.4902, 46.6052},
    {39.0454, 115.8404, 16.3118},
    {3.3467, 12.6700, 170.1090},
}};

constexpr uint8_t kMaxChannel = 255;

stats::Vec2 DisplayChromaticity(color::Srgb8 rgb) {
  const std::array<double, 3> squared{double(rgb.r) * rgb.r, double(rgb.g) * rgb.g, double(rgb.b) * rgb.b};
  std::array<double, 3> xyz{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) xyz[i] += kDisplayMatrix[i][j] * squared[j];
  const double sum = xyz[0] + xyz[1] + xyz[2];
  return {xyz[0] / sum, xyz[1] / sum};
}

stats::Vec2 SrgbChromaticity(color::Srgb8 rgb) {
  const color::Xyy xyy = color::XyzToXyy(color::LinearToXyz(color::ToLinear(color::FromSrgb8(rgb))));
  return {xyy.x, xyy.y};
}

Result<uint8_t> ParseChannel(const std::string& text, const std::string& where) {
  auto v = ParseInt(text, where);
  if (!v.ok() || *v < 0 || *v > kMaxChannel)
    return Status::InvalidArgument("invalid color channel \"" + text + "\"", where, "an integer 0..255");
  return static_cast<uint8_t>(*v);
}

}  // namespace

std::string_view ChromaticityName(Chromaticity c) { return c == Chromaticity::kDisplay ? "display" : "srgb"; }

Result<Chromaticity> ParseChromaticity(std::string_view text) {
  if (text == "display") return Chromaticity::kDisplay;
  if (text == "srgb") return Chromaticity::kSrgb;
  return Status::InvalidArgument("unknown chromaticity \"" + std::string(text) + "\"", "chromaticity",
                                 "display (the study's calibrated display, default) or srgb");
}

stats::Vec2 CellChromaticity(color::Srgb8 rgb, Chromaticity c) {
  return c == Chromaticity::kDisplay ? DisplayChromaticity(rgb) : SrgbChromaticity(rgb);
}

Result<int> ParseCell(std::string_view name) {
  const std::string upper = internal::AsciiUpper(name);
  auto invalid = [&] {
    return Status::InvalidArgument("unknown cell \"" + std::string(name) + "\"", "",
                                   "a board cell A1..P30 (row letter A-P, column 1-30)");
  };
  if (upper.size() < 2 || upper.size() > 3 || upper[0] < 'A' || upper[0] >= 'A' + kRows) return invalid();
  int col = 0;
  for (size_t i = 1; i < upper.size(); ++i) {
    if (upper[i] < '0' || upper[i] > '9') return invalid();
    col = col * 10 + (upper[i] - '0');
  }
  if (upper[1] == '0' || col < 1 || col > kCols) return invalid();
  return (upper[0] - 'A') * kCols + (col - 1);
}

std::string CellName(int index) {
  return fmt::format("{}{}", static_cast<char>('A' + index / kCols), index % kCols + 1);
}

Result<Board> Board::Load(const std::filesystem::path& board_csv, Chromaticity c) {
  VISALIGN_ASSIGN_OR_RETURN(CsvTable t, ReadCsv(board_csv));
  VISALIGN_ASSIGN_OR_RETURN(size_t cell_col, t.Column("cell"));
  VISALIGN_ASSIGN_OR_RETURN(size_t r_col, t.Column("R"));
  VISALIGN_ASSIGN_OR_RETURN(size_t g_col, t.Column("G"));
  VISALIGN_ASSIGN_OR_RETURN(size_t b_col, t.Column("B"));
  Board board;
  board.chromaticity_ = c;
  board.cells_.resize(kCells);
  std::array<bool, kCells> seen{};
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    auto index = ParseCell(row[cell_col]);
    if (!index.ok()) return index.status().WithContext(t.Where(i) + " column cell");
    if (seen[*index])
      return Status::Corrupt("cell \"" + row[cell_col] + "\" listed twice", t.Where(i), "each of the 480 cells once");
    seen[*index] = true;
    Cell& cell = board.cells_[*index];
    cell.name = CellName(*index);
    cell.row = cell.name[0];
    cell.col = *index % kCols + 1;
    VISALIGN_ASSIGN_OR_RETURN(cell.rgb.r, ParseChannel(row[r_col], t.Where(i) + " column R"));
    VISALIGN_ASSIGN_OR_RETURN(cell.rgb.g, ParseChannel(row[g_col], t.Where(i) + " column G"));
    VISALIGN_ASSIGN_OR_RETURN(cell.rgb.b, ParseChannel(row[b_col], t.Where(i) + " column B"));
    cell.xy = CellChromaticity(cell.rgb, c);
    cell.lab = color::Srgb8ToLab(cell.rgb);
  }
  if (t.rows.size() != kCells)
    return Status::Corrupt(fmt::format("{} cells", t.rows.size()), board_csv.string(), "480 cells (A1..P30)");
  return board;
}

Result<Board> Board::Default(Chromaticity c) {
  VISALIGN_ASSIGN_OR_RETURN(auto path, DataFile("hues/board.csv"));
  return Load(path, c);
}

}  // namespace visalign::hues
