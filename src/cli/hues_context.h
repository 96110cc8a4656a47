// Shared by the `visalign hues` command files: the board and macro map a command works on, and the
// clue-word vocabulary.
#pragma once

#include <string>
#include <utility>

#include "visalign/benchmarks/hues/hues.h"

namespace visalign::cli {

// Options shared by the commands that need the board and its macro map.
struct BoardOptions {
  std::string chromaticity = "display";
  std::string regions;  // empty = data/hues/macro_regions.csv
};

struct Context {
  hues::Board board;
  hues::MacroMap macro;
  hues::Vocabulary vocabulary;
};

inline Result<Context> LoadContext(const BoardOptions& o) {
  VISALIGN_ASSIGN_OR_RETURN(hues::Chromaticity c, hues::ParseChromaticity(o.chromaticity));
  VISALIGN_ASSIGN_OR_RETURN(hues::Board board, hues::Board::Default(c));
  Result<hues::MacroMap> macro = o.regions.empty() ? hues::MacroMap::Default() : hues::MacroMap::Load(o.regions);
  if (!macro.ok()) return macro.status();
  VISALIGN_ASSIGN_OR_RETURN(hues::Vocabulary vocabulary, hues::Vocabulary::Default());
  return Context{std::move(board), std::move(macro).value(), std::move(vocabulary)};
}

}  // namespace visalign::cli
