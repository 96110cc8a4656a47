// `visalign violin dataset`: generate the VIOLIN prompts, ground-truth images and splits.
#include <cstdio>
#include <memory>

#include "cli/cli.h"
#include "visalign/benchmarks/violin/dataset.h"

namespace visalign::cli {
namespace {

constexpr double kBytesPerMegabyte = 1e6;

void PrintReport(const violin::DatasetOptions& options, const violin::DatasetReport& report) {
  std::printf("wrote %zu items and %zu images (%.1f MB) to %s in %.1f s\n", report.items, report.images,
              static_cast<double>(report.image_bytes + report.manifest_bytes) / kBytesPerMegabyte,
              options.out_dir.string().c_str(), report.seconds);
  const Json& counts = report.summary["counts"];
  std::printf("%-9s %7s %7s %7s %7s %7s %7s\n", "variation", "items", "level1", "level2", "level3", "train", "test");
  auto count = [](const Json& j, const char* field, const char* key) -> long long {
    return j.contains(field) && j[field].contains(key) ? j[field][key].get<long long>() : 0;
  };
  for (const auto& [v, c] : counts["by_variation"].items()) {
    std::printf("%-9s %7lld %7lld %7lld %7lld %7lld %7lld\n", v.c_str(), c["items"].get<long long>(),
                count(c, "level", "1"), count(c, "level", "2"), count(c, "level", "3"), count(c, "split", "train"),
                count(c, "split", "test"));
  }
  std::printf("%-9s %7lld %7lld %7lld %7lld %7lld %7lld\n", "all", counts["items"].get<long long>(),
              count(counts, "level", "1"), count(counts, "level", "2"), count(counts, "level", "3"),
              count(counts, "split", "train"), count(counts, "split", "test"));
}

const CommandGroup kViolinDataset(20, {"violin"}, [](Cli& cli) {
  CLI::App* g = cli.Group("violin", "VIOLIN: pure-color obedience benchmark");
  CLI::App* ds = g->add_subcommand(
      "dataset", "Generate the VIOLIN dataset: prompts, ground-truth images and splits (deterministic per seed)");
  auto opt = std::make_shared<violin::DatasetOptions>();
  auto out = std::make_shared<std::string>();
  auto templates = std::make_shared<std::string>();
  auto no_images = std::make_shared<bool>(false);
  ds->add_option("--out", *out, "Output directory (created; must be empty unless --force)")->required();
  ds->add_option("--variations", opt->variations,
                 "Comma-separated variations: 1 hex, 2 halves, 3 quadrants, 4 fuzzy range, 5 zh/fr, 6 rgb()/hsl()")
      ->delimiter(',')
      ->capture_default_str();
  ds->add_option("--seed", opt->seed, "Sampling seed; the same seed gives byte-identical files")->capture_default_str();
  ds->add_option("--scale", opt->scale,
                 "Size factor: items per group = max(1, round(published size x F)); 1 = 48,320 items")
      ->capture_default_str();
  ds->add_option("--image-size", opt->image_size, "Ground-truth image width and height in pixels")
      ->capture_default_str();
  ds->add_option("--templates", *templates, "Prompt templates JSON (default: the shipped data/violin/templates.json)");
  ds->add_flag("--no-images", *no_images, "Write the manifest only (image fields are null)");
  ds->add_flag("--force", opt->force,
               "Reuse a non-empty --out: replaces manifest.jsonl, summary.json and images/<id>.png");
  ds->footer(
      "Writes DIR/manifest.jsonl (one item per line), DIR/images/<id>.png (8-bit RGB ground truth) and\n"
      "DIR/summary.json (counts per variation, language, notation, level and split). Sizes at --scale 1:\n"
      "v1 3,020; v2 12,080; v3 18,120; v4 3,020; v5 3,020 per language; v6 3,020 per notation.\n"
      "Colors are ISCC-NBS level-1/2/3 colors, sampled stratified by level (see docs/violin.md).\n"
      "Examples:\n"
      "  visalign violin dataset --out violin-demo --scale 0.01\n"
      "  visalign violin dataset --out violin-full --threads 2\n"
      "  visalign violin dataset --out v6 --variations 6 --no-images --seed 7 --json");
  cli.Bind(ds, [&cli, opt, out, templates, no_images]() -> Status {
    violin::DatasetOptions options = *opt;
    options.out_dir = *out;
    options.templates = *templates;
    options.write_images = !*no_images;
    options.show_progress = !cli.global().json;
    VISALIGN_ASSIGN_OR_RETURN(violin::DatasetReport report, violin::GenerateDataset(options));
    if (cli.global().json) {
      PrintJson({{"out", options.out_dir.string()},
                 {"items", report.items},
                 {"images", report.images},
                 {"image_bytes", report.image_bytes},
                 {"manifest_bytes", report.manifest_bytes},
                 {"seconds", report.seconds},
                 {"summary", report.summary}});
    } else {
      PrintReport(options, report);
    }
    return Status::Ok();
  });
});

}  // namespace
}  // namespace visalign::cli
