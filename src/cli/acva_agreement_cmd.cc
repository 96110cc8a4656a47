// `visalign acva agreement`: how well the automatic adequacy of `acva analyze` agrees with human
// ratings of the same images.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/cli.h"
#include "visalign/benchmarks/acva/acva.h"
#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/core/io.h"
#include "visalign/server/tool_exports.h"

namespace visalign::cli {
namespace {

Status RunAgreement(const Cli& cli, const std::string& items, const std::string& human) {
  VISALIGN_ASSIGN_OR_RETURN(auto rows, acva::ReadItems(items));
  VISALIGN_ASSIGN_OR_RETURN(acva::AgreementResult r, acva::HumanAgreement(rows, human));
  if (cli.global().json) {
    PrintJson(acva::AgreementJson(r));
    return Status::Ok();
  }
  const std::string rho = r.spearman_error.empty() ? fmt::format("{:.3f} (p = {})", r.spearman.rho,
                                                                 acva::FormatPValue(r.spearman.p_value, 0))
                                                   : "undefined: " + r.spearman_error;
  std::printf("%zu ratings of %zu images: Spearman rho %s, exact bin agreement %.3f, within one bin %.3f\n",
              r.n_ratings, r.n_images, rho.c_str(), r.exact_agreement, r.within_one_bin);
  if (!r.unmatched.empty())
    std::printf("%zu image names matched no item (first: %s)\n", r.unmatched.size(), r.unmatched.front().c_str());
  return Status::Ok();
}

struct ExportRatingsArgs {
  StoreFlags store;
  std::string run;
  std::string out;
};

Status RunExportRatings(const Cli& cli, const ExportRatingsArgs& a) {
  VISALIGN_ASSIGN_OR_RETURN(auto study, OpenExistingStudyStore(a.store,
                                                               "the --store `visalign serve --acva-run` "
                                                               "collected ratings into"));
  VISALIGN_ASSIGN_OR_RETURN(std::vector<acva::HumanRating> ratings, server::AcvaRatings(*study, a.run));
  if (ratings.empty())
    return Status::NotFound("no ratings of run \"" + a.run + "\"", "run name",
                            "a run rated on the rating page of `visalign serve --acva-run " + a.run + "`");
  const std::string csv = acva::HumanRatingsCsv(ratings);
  if (a.out == "-")
    std::fputs(csv.c_str(), stdout);
  else
    VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(a.out, csv));
  if (cli.global().json)
    PrintJson({{"run", a.run}, {"ratings", ratings.size()}, {"out", a.out}});
  else if (a.out != "-")
    std::printf("%zu ratings of run %s. Wrote %s\n", ratings.size(), a.run.c_str(), a.out.c_str());
  return Status::Ok();
}

// After the other acva commands (order 60), in the same group.
const CommandGroup kAcvaAgreement(61, {"acva"}, [](Cli& cli) {
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

  auto e = std::make_shared<ExportRatingsArgs>();
  CLI::App* x = g->add_subcommand("export-ratings", "Write the human ratings of a run (visalign serve's rating page)");
  AddStoreOptions(x, &e->store, "The store `visalign serve --store` collected into", StoreUse::kStudy);
  x->add_option("--run", e->run, "The rated ACVA run (as given to `visalign serve --acva-run`)")->required();
  x->add_option("--out", e->out, "Output CSV (image,rater,score) for `acva agreement --human`; - for stdout")
      ->required();
  x->footer(
      "image = <run>/<concept>/<k> (the items.jsonl image_id), rater = the participant's user id, score = the rater's "
      "weighted adequacy over the rubric, on the judge's scale (docs/acva.md, \"Human validation\").\n"
      "Example:\n  visalign acva export-ratings --store ./visalign-store --run my-model --out ratings.csv\n"
      "  visalign acva agreement --items acva-results/items.jsonl --human ratings.csv");
  cli.Bind(x, [&cli, e]() -> Status { return RunExportRatings(cli, *e); });
});

}  // namespace
}  // namespace visalign::cli
