// `visalign acva agreement`: how well the automatic adequacy of `acva analyze` agrees with human
// ratings of the same images.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/cli.h"
#include "visalign/benchmarks/acva/acva.h"
#include "visalign/benchmarks/acva/pipeline.h"

namespace visalign::cli {
namespace {

Status RunAgreement(const Cli& cli, const std::string& items, const std::string& human) {
  VISALIGN_ASSIGN_OR_RETURN(auto rows, acva::ReadItems(items));
  VISALIGN_ASSIGN_OR_RETURN(acva::AgreementResult r, acva::HumanAgreement(rows, human));
  if (cli.global().json) {
    PrintJson(acva::AgreementJson(r));
    return Status::Ok();
  }
  const std::string rho = r.spearman_error.empty()
                              ? fmt::format("{:.3f} (p = {})", r.spearman.rho, acva::FormatPValue(r.spearman.p_value, 0))
                              : "undefined: " + r.spearman_error;
  std::printf("%zu ratings of %zu images: Spearman rho %s, exact bin agreement %.3f, within one bin %.3f\n",
              r.n_ratings, r.n_images, rho.c_str(), r.exact_agreement, r.within_one_bin);
  if (!r.unmatched.empty())
    std::printf("%zu image names matched no item (first: %s)\n", r.unmatched.size(), r.unmatched.front().c_str());
  return Status::Ok();
}

// After the other acva commands (order 60), in the same group.
const CommandGroup kAcvaAgreement(61, [](Cli& cli) {
  CLI::App* g = cli.Group("acva", "ACVA-Bench: abstract concept visualization (adequacy, diversity, distinctiveness)");
  auto items = std::make_shared<std::string>();
  auto human = std::make_shared<std::string>();
  CLI::App* s = g->add_subcommand("agreement", "Agreement of automatic adequacy with human ratings");
  s->add_option("--items", *items, "items.jsonl written by `acva analyze`")->required();
  s->add_option("--human", *human, "CSV with columns image,rater,score (score in [0, 1])")->required();
  s->footer(
      "image = an items.jsonl image_id (<run>/<concept>/<k>) or the image's SHA-256. Reports Spearman rho of the\n"
      "mean human score vs adequacy over images, and exact / within-one-bin agreement over 5 equal bins.");
  cli.Bind(s, [&cli, items, human]() -> Status { return RunAgreement(cli, *items, *human); });
});

}  // namespace
}  // namespace visalign::cli
