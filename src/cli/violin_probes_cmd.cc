// `visalign violin probes`: write VIOLIN's diagnostic probes (negation, semantic gravity, aesthetic
// inertia, Level-5 geometry) as a dataset in the VIOLIN manifest format.
#include <cstdio>
#include <memory>

#include "cli/cli.h"
#include "visalign/benchmarks/violin/probes.h"

namespace visalign::cli {
namespace {

const CommandGroup kViolinProbes(21, {"violin"}, [](Cli& cli) {
  CLI::App* g = cli.Group("violin", "VIOLIN: pure-color obedience benchmark");
  CLI::App* p = g->add_subcommand(
      "probes", "Write the diagnostic probe dataset: negation, semantic gravity, aesthetic inertia, Level-5 geometry");
  auto opt = std::make_shared<violin::ProbeOptions>();
  auto out = std::make_shared<std::string>();
  p->add_option("--out", *out, "Output directory (created; must be empty unless --force)")->required();
  p->add_option("--seed", opt->seed, "Sampling seed; the same seed gives byte-identical files")->capture_default_str();
  p->add_option("--scale", opt->scale,
                "Size factor: 24 negation/gravity colours, 12 geometry items per condition and 2 inertia colour "
                "pairs at 1 (292 items)")
      ->capture_default_str();
  p->add_option("--image-size", opt->image_size,
                "Canvas of pixel-stated items and ground-truth side, pixels (64..8192)")
      ->capture_default_str();
  p->add_option("--languages", opt->languages,
                "Prompt languages, some of en,zh,fr (default en): every item is written once per "
                "language (ids ending -zh, -fr), and `violin evaluate` summarises each language apart")
      ->delimiter(',')
      ->capture_default_str();
  p->add_flag("--force", opt->force,
              "Reuse a non-empty --out: replaces manifest.jsonl, summary.json and images/p-*.png");
  p->footer(
      "Writes DIR/manifest.jsonl (VIOLIN manifest lines with a \"probe\" member: family, condition, group and\n"
      "the parameters), DIR/images/<id>.png (ground truth) and DIR/summary.json (counts per family and\n"
      "condition). Generate images for it with `violin generate` like any VIOLIN dataset and score them\n"
      "with `violin evaluate`, which adds the probe metrics (summary.json \"probes\", probes.csv).\n"
      "Families (paper §2.2, §2.4, Fig. 4; docs/violin.md \"Probes\"): negation base|negated|entity;\n"
      "gravity none|consistent|conflicting|neutral; inertia percent|pixels at 11 splits 10..90 %;\n"
      "geometry pixels|fractions|pair.\n"
      "Examples:\n"
      "  visalign violin probes --out probes\n"
      "  visalign violin probes --out probes-demo --scale 0.25 --image-size 128 --seed 3\n"
      "  visalign violin probes --out probes-3lang --languages en,zh,fr");
  cli.Bind(p, [&cli, opt, out]() -> Status {
    violin::ProbeOptions options = *opt;
    options.out_dir = *out;
    VISALIGN_ASSIGN_OR_RETURN(violin::ProbeDatasetReport report, violin::GenerateProbeDataset(options));
    if (cli.global().json) {
      PrintJson({{"out", options.out_dir.string()}, {"items", report.items}, {"summary", report.summary}});
      return Status::Ok();
    }
    std::printf("wrote %zu probe items to %s\n", report.items, options.out_dir.string().c_str());
    std::printf("%-9s %-12s %6s\n", "family", "condition", "items");
    for (const auto& [family, conditions] : report.summary["counts"]["families"].items())
      for (const auto& [condition, n] : conditions.items())
        std::printf("%-9s %-12s %6d\n", family.c_str(), condition.c_str(), n.get<int>());
    return Status::Ok();
  });
});

}  // namespace
}  // namespace visalign::cli
