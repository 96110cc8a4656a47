// `visalign violin evaluate`: a dataset's images, one or more models (folders or generation runs),
// scored and summarised over the VIOLIN evaluator.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/backend_options.h"
#include "cli/cli.h"
#include "visalign/backends/refusals.h"
#include "visalign/benchmarks/violin/evaluate.h"
#include "visalign/benchmarks/violin/manifest.h"
#include "visalign/benchmarks/violin/run_images.h"
#include "visalign/color.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"
#include "visalign/imaging/image.h"
#include "visalign/store.h"

namespace visalign::cli {
namespace {

constexpr size_t kProblemsShown = 10;

struct EvaluateArgs {
  std::string dataset, name, out, weights;
  StoreFlags store;
  std::vector<std::string> images, runs, by, filters;
  int64_t limit = 0;
  std::string split = "all", missing = "skip", normalization = "fixed", background = violin::kDefaultBackground;
  int resamples = stats::BootstrapOptions{}.resamples;
  uint64_t seed = stats::BootstrapOptions{}.seed;
  bool strict = false;
};

// Every model whose coverage is below 100 %, and the transparent images, on stderr.
void WarnCoverage(const violin::Summary& summary) {
  for (const violin::SummaryRow& row : summary.overall)
    if (row.n_items_scored < row.n_items)
      std::cerr << fmt::format(
          "warning: model {}: {} of {} items scored ({:.1f} %); {}\n", row.model, row.n_items_scored, row.n_items,
          100.0 * row.coverage(),
          summary.missing_policy == violin::MissingPolicy::kSkip
              ? "means are over scored items (--missing skip)"
              : "items without a scored image count 1 on every normalised metric (--missing worst)");
  if (!summary.transparent.empty())
    std::cerr << fmt::format(
        "warning: {} images have transparent pixels (alpha < 255), scored {} (--background); "
        "listed in summary.json\n",
        summary.transparent.size(), violin::AlphaPolicyText(summary.alpha));
}

// Every --images [NAME=]DIR as (name, folder): NAME defaults to the folder's name; the legacy
// --name (the old bare `--model NAME`) names a single bare DIR. Names must be distinct.
Result<std::vector<std::pair<std::string, std::string>>> ModelFolders(const EvaluateArgs& a) {
  std::vector<std::pair<std::string, std::string>> folders;
  size_t bare = 0;
  for (const std::string& spec : a.images) {
    const size_t eq = spec.find('=');
    if (eq == 0 || (eq != std::string::npos && eq + 1 == spec.size()) || spec.empty())
      return Status::InvalidArgument("empty model name or folder", "argument --images \"" + spec + "\"",
                                     "NAME=DIR or DIR");
    if (eq != std::string::npos) {
      folders.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
      continue;
    }
    ++bare;
    std::string name = a.name.empty() ? std::filesystem::path(spec).lexically_normal().filename().string() : a.name;
    if (name.empty() || name == ".") name = "model";
    folders.emplace_back(name, spec);
  }
  if (!a.name.empty() && bare != 1)
    return Status::InvalidArgument("a model name for " + std::to_string(bare) + " unnamed folders",
                                   "argument --model " + a.name, "--images NAME=DIR");
  if (folders.empty() && a.runs.empty())
    return Status::InvalidArgument("no images given", "command line",
                                   "--images [NAME=]DIR and/or --run NAME (with --store PATH)");
  for (size_t i = 0; i < folders.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (folders[i].first == folders[j].first)
        return Status::InvalidArgument("model \"" + folders[i].first + "\" given twice", "argument --images",
                                       "distinct model names (NAME=DIR)");
  return folders;
}

void WarnProblems(const char* kind, const std::vector<violin::Problem>& problems) {
  if (problems.empty()) return;
  std::cerr << fmt::format("warning: {} {}:\n", problems.size(), kind);
  for (size_t i = 0; i < problems.size() && i < kProblemsShown; ++i) {
    const violin::Problem& p = problems[i];
    std::cerr << fmt::format("  {} {}{}{}\n", p.model, p.item_id.empty() ? p.path.string() : p.item_id,
                             p.k >= 0 ? fmt::format(" (k={})", p.k) : std::string(),
                             p.reason.empty() ? std::string() : ": " + p.reason);
  }
  if (problems.size() > kProblemsShown)
    std::cerr << fmt::format("  ... {} more (all listed in summary.json)\n", problems.size() - kProblemsShown);
}

Status RunEvaluate(const Cli& cli, const EvaluateArgs& a) {
  VISALIGN_ASSIGN_OR_RETURN(auto folders, ModelFolders(a));
  violin::EvaluateOptions options;
  VISALIGN_ASSIGN_OR_RETURN(options.weights, violin::ParseWeights(a.weights));
  VISALIGN_ASSIGN_OR_RETURN(options.normalization, violin::ParseNormalization(a.normalization));
  VISALIGN_ASSIGN_OR_RETURN(options.missing, violin::ParseMissingPolicy(a.missing));
  VISALIGN_ASSIGN_OR_RETURN(options.alpha, violin::ParseBackground(a.background));
  options.split = a.split;
  VISALIGN_ASSIGN_OR_RETURN(options.filters, ParseFilters(a.filters, violin::GenerationFilterKeys()));
  if (a.limit < 0)
    return Status::InvalidArgument("--limit " + std::to_string(a.limit), "--limit", "0 (all) or a positive count");
  options.limit = a.limit;
  options.by = a.by;
  options.bootstrap.resamples = a.resamples;
  options.bootstrap.seed = a.seed;
  options.show_progress = !cli.global().json;
  VISALIGN_ASSIGN_OR_RETURN(std::vector<violin::ManifestItem> items, violin::LoadManifest(a.dataset));
  VISALIGN_ASSIGN_OR_RETURN(options.manifest_sha256, violin::ManifestFingerprint(a.dataset));
  std::vector<violin::ModelImages> models;
  for (const auto& [name, dir] : folders) {
    VISALIGN_ASSIGN_OR_RETURN(violin::ModelImages images, violin::CollectImageDirectory(dir, name, items));
    models.push_back(std::move(images));
  }
  if (!a.runs.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<store::RunStore> st, OpenStore(a.store));
    const std::string& fingerprint = options.manifest_sha256;
    for (const std::string& run : a.runs) {
      for (const violin::ModelImages& m : models)
        if (m.model == run)
          return Status::InvalidArgument("model \"" + run + "\" given twice", "argument --run", "distinct model names");
      VISALIGN_ASSIGN_OR_RETURN(
          violin::ModelImages images,
          violin::CollectRunImages(*st, run, fingerprint, "store " + a.store.Display(), a.store.ForJson()));
      models.push_back(std::move(images));
      VISALIGN_ASSIGN_OR_RETURN(store::RunCounts counts, st->Counts(run));
      options.refusals.push_back(backends::RefusalRateOf(run, counts));
    }
  }
  VISALIGN_ASSIGN_OR_RETURN(violin::Summary summary, violin::EvaluateToDirectory(items, models, options, a.out));

  WarnProblems("items without an image (missing)", summary.missing);
  WarnProblems("unreadable images", summary.unreadable);
  WarnProblems("images matching no manifest item (unmatched, not scored)", summary.unmatched);
  WarnCoverage(summary);
  if (cli.global().json) {
    PrintJson(violin::SummaryJson(summary, options.weights));
  } else {
    std::cout << violin::SummaryMarkdown(summary) << backends::RefusalText(summary.refusals)
              << fmt::format("\n{} images scored; wrote {}/items.jsonl and {}/summary.{{json,csv,md}}\n",
                             summary.n_scored(), a.out, a.out);
  }
  const size_t problems = summary.missing.size() + summary.unreadable.size() + summary.unmatched.size();
  if (a.strict && problems > 0)
    return Status::InvalidArgument(fmt::format("{} missing, {} unreadable, {} unmatched images", summary.missing.size(),
                                               summary.unreadable.size(), summary.unmatched.size()),
                                   "--strict",
                                   "an image for every item and no unreadable or unmatched files (see " +
                                       (std::filesystem::path(a.out) / "summary.json").string() + ")");
  return Status::Ok();
}

const CommandGroup kViolinEvaluate(22, {"violin"}, [](Cli& cli) {
  CLI::App* g = cli.Group("violin", "VIOLIN: pure-color obedience benchmark");
  auto ea = std::make_shared<EvaluateArgs>();
  CLI::App* ev = g->add_subcommand("evaluate", "Score generated images of one or more models against a dataset");
  ev->add_option("--dataset", ea->dataset, "Dataset folder with manifest.jsonl (from `visalign violin dataset`)")
      ->required();
  ev->add_option("--images", ea->images,
                 "A model's image folder as NAME=DIR, or DIR (named after the folder): <id>.png or <id>__<k>.png "
                 "(also .jpg/.jpeg/.webp); repeatable, models compared in one table");
  ev->add_option("--name", ea->name)->group("");  // the deprecated bare `--model NAME`
  cli.DeprecateOption(ev, "--model", "--images", "--name");
  ev->add_option("--run", ea->runs, "A generation run in --store to score, named as the model (repeatable)");
  AddStoreOptions(ev, &ea->store, "Run store of the --run runs");
  ev->add_option("--out", ea->out, "Output folder for items.jsonl and summary.{json,csv,md}")->required();
  ev->add_option("--weights", ea->weights,
                 "Weights w1,...,w6 of pre_mean (rgb_ed,rgb_rm,de00,hue,chroma,hyab) or w1,...,w9 (then pur_mean's "
                 "sd,ced,hf); default all 1");
  ev->add_option("--normalization", ea->normalization,
                 "How raw metrics become [0,1]: fixed (divided by the documented maxima) or minmax (scaled to the "
                 "range over every evaluated image)")
      ->check(CLI::IsMember({"fixed", "minmax"}))
      ->capture_default_str();
  ev->add_option("--split", ea->split, "Items to score: the manifest's split column")
      ->check(CLI::IsMember({"train", "test", "all"}))
      ->capture_default_str();
  AddViolinFilterOption(ev, ea->filters);
  ev->add_option("--limit", ea->limit,
                 "Score the first N selected items only (after --split and --filter; 0 = all): the same selection "
                 "as `violin generate --filter ... --limit N`, so a partial run is evaluated at full coverage")
      ->capture_default_str();
  ev->add_option("--by", ea->by,
                 "Also group rows by a manifest column: split, prompt_split, hue_split1, hue_split2, template_id, "
                 "layout (repeatable)")
      ->check(CLI::IsMember(std::vector<std::string>(violin::kGroupColumns.begin(), violin::kGroupColumns.end())));
  ev->add_option("--missing", ea->missing,
                 "Items without a scorable image: skip (means over scored images) or worst (they score 1)")
      ->check(CLI::IsMember({"skip", "worst"}))
      ->capture_default_str();
  ev->add_option("--background", ea->background,
                 "Colour transparent pixels are composited over, or none to score their stored RGB")
      ->capture_default_str();
  ev->add_option("--bootstrap", ea->resamples, "Bootstrap resamples of the overall rows' 95% intervals")
      ->check(CLI::Range(100, 1000000))
      ->capture_default_str();
  ev->add_option("--bootstrap-seed", ea->seed, "Bootstrap seed (same seed, same intervals)")->capture_default_str();
  ev->add_flag("--strict", ea->strict, "Exit with an error (code 2) if any item is missing or any image is unreadable");
  ev->footer(
      "Rows: one per (model, variation, language, notation), the shape of the published VIOLIN tables; values are\n"
      "means of the normalised metrics over scored images. Items without an image (missing), files that cannot be\n"
      "decoded or scored (unreadable) and image files matching no item (unmatched) are counted and listed in\n"
      "summary.json, never skipped silently; every row states its coverage (items with a scored image / items),\n"
      "and a warning names each model below 100 %. Overall rows (one per model, every selected item) carry 95 %\n"
      "percentile bootstrap intervals over items; with several models, 'common' rows compare them on the items\n"
      "every model has. Transparent pixels are composited over --background (white: what viewers show).\n"
      "items.jsonl has one line per scored image: prompt, targets, mean colour per block, alpha_min, metrics.\n"
      "Use the global --threads N to limit worker threads.\n"
      "Examples:\n"
      "  visalign violin evaluate --dataset violin-demo --images mine=path/to/images --out results\n"
      "  visalign violin evaluate --dataset violin-demo --images gt=violin-demo/images --images mine=path/to/images "
      "--out cmp --threads 2\n"
      "  visalign violin evaluate --dataset violin-demo --store ./visalign-store --run gpt-image --run sdxl --out cmp\n"
      "  visalign violin evaluate --dataset violin-demo --store ./visalign-store --run sdxl --split test --by "
      "prompt_split "
      "--out test-split\n"
      "  visalign violin evaluate --dataset violin-demo --store ./visalign-store --run sdxl --filter variation=1 "
      "--limit 20 "
      "--out first20");
  cli.Bind(ev, [&cli, ea]() { return RunEvaluate(cli, *ea); });
});

}  // namespace
}  // namespace visalign::cli
