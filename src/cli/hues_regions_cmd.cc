// `visalign hues export-regions`: the consensus macro color map of the paintings `visalign serve`'s
// regionalization tool collected, as the macro_regions.csv every hues command reads with --regions.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "visalign/core/io.h"
#include "visalign/server/tool_exports.h"

namespace visalign::cli {
namespace {

struct ExportRegionsArgs {
  StoreFlags store;
  std::string out;
};

Status RunExportRegions(const Cli& cli, const ExportRegionsArgs& a) {
  VISALIGN_ASSIGN_OR_RETURN(auto study, OpenExistingStudyStore(a.store, "the --store `visalign serve` collected into"));
  VISALIGN_ASSIGN_OR_RETURN(hues::Board board, hues::Board::Default(hues::Chromaticity::kDisplay));
  VISALIGN_ASSIGN_OR_RETURN(auto paintings, server::LatestRegionPaintings(*study));
  VISALIGN_ASSIGN_OR_RETURN(hues::MacroMap map, hues::RegionConsensus(paintings, board));
  const std::string csv = map.ToCsv();
  if (a.out == "-")
    std::cout << csv;
  else
    VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(a.out, csv));
  double agreement = 0;
  int unanimous = 0;
  for (int i = 0; i < hues::kCells; ++i) {
    agreement += map.at(i).confidence / hues::kCells;
    unanimous += map.at(i).confidence == 1;
  }
  if (cli.global().json)
    PrintJson({{"paintings", paintings.size()},
               {"mean_agreement", agreement},
               {"unanimous_cells", unanimous},
               {"out", a.out}});
  else if (a.out != "-")
    fmt::print("Consensus of {} paintings: mean agreement {:.3f}, {} of {} cells unanimous. Wrote {}\n",
               paintings.size(), agreement, unanimous, hues::kCells, a.out);
  return Status::Ok();
}

// After the other hues commands (order 40), in the same group.
const CommandGroup kHuesRegions(41, {"hues"}, [](Cli& cli) {
  CLI::App* g = cli.Group("hues", "Hues and Cues: CLIP color alignment vs human players");
  auto a = std::make_shared<ExportRegionsArgs>();
  CLI::App* s = g->add_subcommand(
      "export-regions", "Write the participants' consensus macro color map (visalign serve's regionalization tool)");
  AddStoreOptions(s, &a->store, "The store `visalign serve --store` collected into", StoreUse::kStudy);
  s->add_option("--out", a->out, "Output CSV (cell,category,confidence,neutral) for --regions; - for stdout")
      ->required();
  s->footer(
      "Per cell, over each participant's latest painting: category = the majority (a tie goes to the earlier of Brown, "
      "Red, Orange, Yellow, Green, Blue, Purple, Pink), confidence = its agreement share (votes / participants who "
      "painted the cell), neutral = the board's rule (C*ab < 10). Every cell must have been painted by someone.\n"
      "Example:\n  visalign hues export-regions --store ./visalign-store --out consensus.csv\n"
      "  visalign hues evaluate --predictions data/hues/peer-sample --regions consensus.csv --out hues-eval");
  cli.Bind(s, [&cli, a]() -> Status { return RunExportRegions(cli, *a); });
});

}  // namespace
}  // namespace visalign::cli
