// Macro color categories of the board cells: the derivation rule and the CSV format.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "benchmarks/hues/text_util.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"

namespace visalign::hues {
namespace {

constexpr std::array<std::string_view, kMacroClasses> kMacroNames{"Brown", "Red",    "Orange", "Yellow", "Green",
                                                                  "Blue",  "Purple", "Pink",   "Neutral"};

// ISCC-NBS level-2 hue names → the 8 basic categories. Level-2 names carry the hue modifiers that
// level 1 folds away (e.g. "olive brown" is level-1 olive but reads as brown).
const std::map<std::string, Macro, std::less<>>& Level2Table() {
  static const std::map<std::string, Macro, std::less<>> table{
      {"pink", Macro::kPink},          {"yellowish pink", Macro::kPink},
      {"purplish pink", Macro::kPink}, {"red", Macro::kRed},
      {"purplish red", Macro::kRed},   {"reddish orange", Macro::kOrange},
      {"orange", Macro::kOrange},      {"reddish brown", Macro::kBrown},
      {"brown", Macro::kBrown},        {"yellowish brown", Macro::kBrown},
      {"olive brown", Macro::kBrown},  {"orange yellow", Macro::kYellow},
      {"yellow", Macro::kYellow},      {"greenish yellow", Macro::kYellow},
      {"olive", Macro::kGreen},        {"olive green", Macro::kGreen},
      {"yellow green", Macro::kGreen}, {"yellowish green", Macro::kGreen},
      {"green", Macro::kGreen},        {"bluish green", Macro::kGreen},
      {"greenish blue", Macro::kBlue}, {"blue", Macro::kBlue},
      {"purplish blue", Macro::kBlue}, {"violet", Macro::kPurple},
      {"purple", Macro::kPurple},      {"reddish purple", Macro::kPurple},
  };
  return table;
}

Result<bool> ParseBool(const std::string& text, const std::string& where) {
  const std::string upper = internal::AsciiUpper(text);
  if (upper == "TRUE" || upper == "1" || upper == "YES") return true;
  if (upper == "FALSE" || upper == "0" || upper == "NO") return false;
  return Status::InvalidArgument("not a boolean: \"" + text + "\"", where, "true or false");
}

}  // namespace

std::string_view MacroName(Macro m) { return kMacroNames[static_cast<size_t>(m)]; }

Result<Macro> ParseMacro(std::string_view name) {
  const std::string upper = internal::AsciiUpper(name);
  for (int i = 0; i < kMacroCategories; ++i)
    if (internal::AsciiUpper(kMacroNames[i]) == upper) return static_cast<Macro>(i);
  return Status::InvalidArgument("unknown macro color category \"" + std::string(name) + "\"", "",
                                 "one of Brown, Red, Orange, Yellow, Green, Blue, Purple, Pink");
}

std::optional<Macro> MacroForIsccLevel2(std::string_view level2) {
  const auto& table = Level2Table();
  auto it = table.find(level2);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

MacroMap MacroMap::Derive(const Board& board, const color::IsccNbs& iscc) {
  struct Chromatic {
    color::Lab lab;
    Macro macro;
  };
  std::vector<Chromatic> chromatic;
  for (const color::IsccCentroid& c : iscc.centroids())
    if (auto m = MacroForIsccLevel2(c.level2)) chromatic.push_back({color::Srgb8ToLab(c.rgb), *m});

  MacroMap map;
  map.source_ = "derived (ISCC-NBS nearest chromatic centroid, CIEDE2000)";
  std::vector<std::pair<double, Macro>> by_distance(chromatic.size());
  for (int i = 0; i < kCells; ++i) {
    const color::Lab lab = board.cell(i).lab;
    for (size_t k = 0; k < chromatic.size(); ++k)
      by_distance[k] = {color::DeltaE2000(lab, chromatic[k].lab), chromatic[k].macro};
    std::partial_sort(by_distance.begin(), by_distance.begin() + kConfidenceNeighbours, by_distance.end(),
                      [](const auto& a, const auto& b) { return a.first < b.first; });
    MacroCell& cell = map.cells_[static_cast<size_t>(i)];
    cell.category = by_distance[0].second;
    const auto agree = std::count_if(by_distance.begin(), by_distance.begin() + kConfidenceNeighbours,
                                     [&](const auto& d) { return d.second == cell.category; });
    cell.confidence = double(agree) / kConfidenceNeighbours;
    cell.neutral = IsNeutral(board.cell(i));
  }
  return map;
}

bool MacroMap::IsNeutral(const Cell& cell) { return std::hypot(cell.lab.a, cell.lab.b) < kNeutralChroma; }

MacroMap MacroMap::FromCells(const std::array<MacroCell, kCells>& cells, std::string source) {
  MacroMap map;
  map.cells_ = cells;
  map.source_ = std::move(source);
  return map;
}

std::string MacroMap::ToCsv() const {
  std::string out = "cell,category,confidence,neutral\n";
  for (int i = 0; i < kCells; ++i) {
    const MacroCell& c = at(i);
    out += fmt::format("{},{},{},{}\n", CellName(i), MacroName(c.category), c.confidence, c.neutral ? "true" : "false");
  }
  return out;
}

Result<MacroMap> MacroMap::Load(const std::filesystem::path& csv) {
  VISALIGN_ASSIGN_OR_RETURN(CsvTable t, ReadCsv(csv));
  VISALIGN_ASSIGN_OR_RETURN(size_t cell_col, t.Column("cell"));
  VISALIGN_ASSIGN_OR_RETURN(size_t cat_col, t.Column("category"));
  VISALIGN_ASSIGN_OR_RETURN(size_t conf_col, t.Column("confidence"));
  VISALIGN_ASSIGN_OR_RETURN(size_t neutral_col, t.Column("neutral"));
  MacroMap map;
  map.source_ = csv.string();
  std::array<bool, kCells> seen{};
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    auto index = ParseCell(row[cell_col]);
    if (!index.ok()) return index.status().WithContext(t.Where(i) + " column cell");
    if (seen[*index])
      return Status::Corrupt("cell \"" + row[cell_col] + "\" listed twice", t.Where(i), "each cell once");
    seen[*index] = true;
    MacroCell& cell = map.cells_[static_cast<size_t>(*index)];
    auto category = ParseMacro(row[cat_col]);
    if (!category.ok()) return category.status().WithContext(t.Where(i) + " column category");
    cell.category = *category;
    VISALIGN_ASSIGN_OR_RETURN(cell.confidence, ParseDouble(row[conf_col], t.Where(i) + " column confidence"));
    if (cell.confidence < 0 || cell.confidence > 1)
      return Status::InvalidArgument(fmt::format("confidence {}", cell.confidence), t.Where(i) + " column confidence",
                                     "a number in [0, 1]");
    VISALIGN_ASSIGN_OR_RETURN(cell.neutral, ParseBool(row[neutral_col], t.Where(i) + " column neutral"));
  }
  for (int i = 0; i < kCells; ++i)
    if (!seen[i]) return Status::Corrupt("cell " + CellName(i) + " is missing", csv.string(), "all 480 cells A1..P30");
  return map;
}

Result<MacroMap> MacroMap::Default() {
  VISALIGN_ASSIGN_OR_RETURN(auto path, DataFile("hues/macro_regions.csv"));
  return Load(path);
}

}  // namespace visalign::hues
