// Hues and Cues: the regionalization study. Participants paint the board into the 8 basic categories;
// the consensus over their paintings (majority per cell with its agreement share) is a MacroMap, so it
// is written as macro_regions.csv and read back by every hues command (`--regions FILE`). Part of the
// Hues and Cues module; the benchmark as a whole is described in visalign/benchmarks/hues/hues.h.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "visalign/benchmarks/hues/board.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::hues {

// One participant's painting: a category per cell, or nullopt for a cell left unpainted.
struct RegionPainting {
  std::array<std::optional<Macro>, kCells> cells{};
  int painted() const;  // cells with a category
};

// Most cells a painting names (every cell once).
inline constexpr size_t kMaxPaintedCells = kCells;

// A painting from untrusted JSON: an object {"A1": "Red", "B7": "Blue", ...} whose keys are cell names
// (each cell at most once, case-insensitive) and whose values are category names (case-insensitive).
// At least one cell. Errors name the cell or value (quoted through QuoteText) at `where`.
Result<RegionPainting> ParseRegionPainting(const Json& cells, const std::string& where);
// The painting as that object, painted cells only, board order, canonical names ("A1": "Red").
Json RegionPaintingJson(const RegionPainting& painting);

// Votes per cell over paintings: votes[cell][category].
using RegionVotes = std::array<std::array<int, kMacroCategories>, kCells>;
RegionVotes CountRegionVotes(const std::vector<RegionPainting>& paintings);

// The consensus map of `paintings`:
//   category   = the category most participants painted the cell; a tie goes to the earlier category
//                of Brown, Red, Orange, Yellow, Green, Blue, Purple, Pink (the order of the Macro enum,
//                the same tie rule as a word's modal human category);
//   confidence = the agreement share: votes for that category / participants who painted the cell;
//   neutral    = the board's rule (chroma C*ab < MacroMap::kNeutralChroma), since Neutral is not a
//                category one paints.
// InvalidArgument at "region paintings" when there is no painting or a cell nobody painted (the map
// must cover all 480 cells; the error names how many and the first).
Result<MacroMap> RegionConsensus(const std::vector<RegionPainting>& paintings, const Board& board);

}  // namespace visalign::hues
