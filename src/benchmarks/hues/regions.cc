// The regionalization study: participants' paintings of the board and their consensus macro map.
#include "visalign/benchmarks/hues/regions.h"

#include <fmt/format.h>

#include <algorithm>

#include "visalign/core/untrusted.h"

namespace visalign::hues {

int RegionPainting::painted() const {
  return static_cast<int>(std::count_if(cells.begin(), cells.end(), [](const auto& c) { return c.has_value(); }));
}

Result<RegionPainting> ParseRegionPainting(const Json& cells, const std::string& where) {
  if (!cells.is_object())
    return Status::InvalidArgument("cells is " + QuoteJson(cells), where,
                                   "an object {\"A1\": \"Red\", ...} of board cells and categories");
  if (cells.empty()) return Status::InvalidArgument("no painted cell", where, "at least one cell with a category");
  if (cells.size() > kMaxPaintedCells)
    return Status::InvalidArgument(fmt::format("{} cells", cells.size()), where,
                                   fmt::format("at most {} cells, each once", kMaxPaintedCells));
  RegionPainting painting;
  for (const auto& [name, value] : cells.items()) {
    Result<int> cell = ParseCell(name);
    if (!cell.ok()) return Status::InvalidArgument("unknown cell " + QuoteText(name), where, "board cells A1..P30");
    std::optional<Macro>& slot = painting.cells[static_cast<size_t>(*cell)];
    if (slot) return Status::InvalidArgument("cell " + CellName(*cell) + " painted twice", where, "each cell once");
    Result<Macro> category = ParseMacro(value.is_string() ? value.get<std::string>() : std::string());
    if (!category.ok())
      return Status::InvalidArgument("unknown category " + QuoteJson(value) + " for cell " + CellName(*cell), where,
                                     "one of Brown, Red, Orange, Yellow, Green, Blue, Purple, Pink");
    slot = *category;
  }
  return painting;
}

Json RegionPaintingJson(const RegionPainting& painting) {
  Json cells = Json::object();
  for (int i = 0; i < kCells; ++i)
    if (const auto& c = painting.cells[static_cast<size_t>(i)]) cells[CellName(i)] = MacroName(*c);
  return cells;
}

RegionVotes CountRegionVotes(const std::vector<RegionPainting>& paintings) {
  RegionVotes votes{};
  for (const RegionPainting& p : paintings)
    for (size_t i = 0; i < p.cells.size(); ++i)
      if (p.cells[i]) ++votes[i][static_cast<size_t>(*p.cells[i])];
  return votes;
}

Result<MacroMap> RegionConsensus(const std::vector<RegionPainting>& paintings, const Board& board) {
  if (paintings.empty())
    return Status::InvalidArgument("no painting", "region paintings", "at least one participant's painting");
  const RegionVotes votes = CountRegionVotes(paintings);
  std::array<MacroCell, kCells> cells{};
  std::vector<int> unpainted;
  for (size_t i = 0; i < votes.size(); ++i) {
    const auto& v = votes[i];
    int painters = 0;
    for (int n : v) painters += n;
    if (painters == 0) {
      unpainted.push_back(static_cast<int>(i));
      continue;
    }
    // max_element returns the first maximum: ties go to the earlier category.
    const size_t majority = static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
    cells[i] = {static_cast<Macro>(majority), double(v[majority]) / painters,
                MacroMap::IsNeutral(board.cell(static_cast<int>(i)))};
  }
  if (!unpainted.empty())
    return Status::InvalidArgument(
        fmt::format("{} cells painted by nobody (first: {})", unpainted.size(), CellName(unpainted.front())),
        "region paintings", "every cell painted by at least one participant");
  return MacroMap::FromCells(cells, fmt::format("consensus of {} region paintings", paintings.size()));
}

}  // namespace visalign::hues
