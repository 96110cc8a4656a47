// `visalign violin evaluate`: a dataset's images, one or more models (folders or generation runs),
// scored and summarised over the VIOLIN evaluator.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "visalign/color.h"
#include "visalign/imaging.h"
#include "visalign/store.h"
#include "visalign/violin_eval.h"
#include "visalign/violin_manifest.h"

namespace visalign::cli {
namespace {

constexpr char kDefaultOutDir[] = "violin-eval";
constexpr char kDefaultStore[] = "./visalign-store";
constexpr size_t kProblemsShown = 10;

struct EvaluateArgs {
  std::string dataset, images, out = kDefaultOutDir, weights, store = kDefaultStore;
  std::vector<std::string> models, runs, by;
  std::string split = "all", missing = "skip", background = violin::kDefaultBackground;
  int resamples = stats::BootstrapOptions{}.resamples;
  uint64_t seed = stats::BootstrapOptions{}.seed;
  bool strict = false;
};

// Every model whose coverage is below 100 %, and the transparent images, on stderr.
void WarnCoverage(const violin::Summary& summary) {
  for (const violin::SummaryRow& row : summary.overall)
    if (row.n_items_scored < row.n_items)
      std::cerr << fmt::format("warning: model {}: {} of {} items scored ({:.1f} %); {}\n", row.model,
                               row.n_items_scored, row.n_items, 100.0 * row.coverage(),
                               summary.missing_policy == violin::MissingPolicy::kSkip
                                   ? "means are over scored items (--missing skip)"
                                   : "items without a scored image count 1 on every normalised metric (--missing worst)");
  if (!summary.transparent.empty())
    std::cerr << fmt::format("warning: {} images have transparent pixels (alpha < 255), scored {} (--background); "
                             "listed in summary.json\n",
                             summary.transparent.size(),
                             summary.alpha.mode == imaging::AlphaPolicy::Mode::kComposite
                                 ? "composited over " + color::ToHex({summary.alpha.background[0],
                                                                      summary.alpha.background[1],
                                                                      summary.alpha.background[2]})
                                 : std::string("with their stored RGB (alpha dropped)"));
}

// --images DIR pairs with at most one bare --model NAME (default: the folder's name); every
// other --model must be NAME=DIR.
Result<std::vector<std::pair<std::string, std::string>>> ModelFolders(const EvaluateArgs& a) {
  std::vector<std::pair<std::string, std::string>> folders;
  std::string bare;
  for (const std::string& m : a.models) {
    const size_t eq = m.find('=');
    if (eq == std::string::npos) {
      if (!bare.empty() || m.empty())
        return Status::InvalidArgument("more than one bare --model (or an empty one)", "argument --model \"" + m + "\"",
                                       "one --model NAME for --images, the others as NAME=IMGDIR");
      bare = m;
    } else if (eq == 0 || eq + 1 == m.size()) {
      return Status::InvalidArgument("empty model name or folder", "argument --model \"" + m + "\"", "NAME=IMGDIR");
    } else {
      folders.emplace_back(m.substr(0, eq), m.substr(eq + 1));
    }
  }
  if (!a.images.empty()) {
    std::string name = bare;
    if (name.empty()) name = std::filesystem::path(a.images).lexically_normal().filename().string();
    if (name.empty()) name = "model";
    folders.insert(folders.begin(), {name, a.images});
  } else if (!bare.empty()) {
    return Status::InvalidArgument("--model " + bare + " without --images", "command line",
                                   "--images IMGDIR or --model NAME=IMGDIR");
  }
  if (folders.empty() && a.runs.empty())
    return Status::InvalidArgument("no images given", "command line",
                                   "--images IMGDIR, --model NAME=IMGDIR and/or --run NAME (with --store PATH)");
  for (size_t i = 0; i < folders.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (folders[i].first == folders[j].first)
        return Status::InvalidArgument("model \"" + folders[i].first + "\" given twice", "argument --model",
                                       "distinct model names");
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

// A generation run's done images, checked to belong to this dataset version.
Result<violin::ModelImages> RunImages(store::RunStore& st, const std::string& run, const std::string& dataset,
                                      const std::string& fingerprint) {
  VISALIGN_ASSIGN_OR_RETURN(std::optional<store::RunInfo> info, st.FindRun(run));
  if (!info)
    return Status::NotFound("no run named \"" + run + "\"", "store " + st.root().string(),
                            "a run created by `visalign generate --run " + run + "`");
  if (info->dataset_fingerprint != fingerprint)
    return Status::InvalidArgument("run \"" + run + "\" was generated from another dataset version",
                                   "store " + st.root().string() + " vs " + dataset,
                                   "the dataset folder the run was generated from (manifest SHA-256 " +
                                       info->dataset_fingerprint + ")");
  VISALIGN_ASSIGN_OR_RETURN(std::vector<store::DoneImage> done, st.DoneImages(run));
  violin::ModelImages images;
  images.model = run;
  for (store::DoneImage& d : done) images.sources.push_back({d.item_id, d.k, std::move(d.image_path)});
  return images;
}

Status RunEvaluate(const Cli& cli, const EvaluateArgs& a) {
  VISALIGN_ASSIGN_OR_RETURN(auto folders, ModelFolders(a));
  violin::EvaluateOptions options;
  VISALIGN_ASSIGN_OR_RETURN(options.weights, violin::ParseWeights(a.weights));
  VISALIGN_ASSIGN_OR_RETURN(options.missing, violin::ParseMissingPolicy(a.missing));
  VISALIGN_ASSIGN_OR_RETURN(options.alpha, violin::ParseBackground(a.background));
  options.split = a.split;
  options.by = a.by;
  options.bootstrap.resamples = a.resamples;
  options.bootstrap.seed = a.seed;
  options.show_progress = !cli.global().json;
  VISALIGN_ASSIGN_OR_RETURN(std::vector<violin::ManifestItem> items, violin::LoadManifest(a.dataset));
  std::vector<violin::ModelImages> models;
  for (const auto& [name, dir] : folders) {
    VISALIGN_ASSIGN_OR_RETURN(violin::ModelImages images, violin::CollectImageDirectory(dir, name, items));
    models.push_back(std::move(images));
  }
  if (!a.runs.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<store::RunStore> st, store::OpenSqliteStore(a.store));
    VISALIGN_ASSIGN_OR_RETURN(std::string fingerprint, violin::ManifestFingerprint(a.dataset));
    for (const std::string& run : a.runs) {
      for (const violin::ModelImages& m : models)
        if (m.model == run)
          return Status::InvalidArgument("model \"" + run + "\" given twice", "argument --run", "distinct model names");
      VISALIGN_ASSIGN_OR_RETURN(violin::ModelImages images, RunImages(*st, run, a.dataset, fingerprint));
      models.push_back(std::move(images));
    }
  }
  VISALIGN_ASSIGN_OR_RETURN(violin::Summary summary, violin::EvaluateToDirectory(items, models, options, a.out));

  WarnProblems("items without an image (missing)", summary.missing);
  WarnProblems("unreadable images", summary.unreadable);
  WarnProblems("images matching no manifest item (unmatched, not scored)", summary.unmatched);
  WarnCoverage(summary);
  if (cli.global().json)
    PrintJson(nlohmann::json::parse(violin::SummaryJson(summary, options.weights).dump()));
  else
    std::cout << violin::SummaryMarkdown(summary)
              << fmt::format("\n{} images scored; wrote {}/items.jsonl and {}/summary.{{json,csv,md}}\n",
                             summary.n_scored(), a.out, a.out);
  const size_t problems = summary.missing.size() + summary.unreadable.size() + summary.unmatched.size();
  if (a.strict && problems > 0)
    return Status::InvalidArgument(fmt::format("{} missing, {} unreadable, {} unmatched images", summary.missing.size(),
                                               summary.unreadable.size(), summary.unmatched.size()),
                                   "--strict", "an image for every item and no unreadable or unmatched files (see " +
                                                   (std::filesystem::path(a.out) / "summary.json").string() + ")");
  return Status::Ok();
}

const CommandGroup kViolinEvaluate(22, [](Cli& cli) {
  CLI::App* g = cli.Group("violin", "VIOLIN: pure-color obedience benchmark");
  auto ea = std::make_shared<EvaluateArgs>();
  CLI::App* ev = g->add_subcommand("evaluate", "Score generated images of one or more models against a dataset");
  ev->add_option("--dataset", ea->dataset, "Dataset folder with manifest.jsonl (from `visalign violin dataset`)")
      ->required();
  ev->add_option("--images", ea->images, "Folder of one model's images: <id>.png or <id>__<k>.png (also .jpg/.jpeg/.webp)");
  ev->add_option("--model", ea->models,
                 "Model name for --images, or NAME=IMGDIR to add a model (repeatable; compares models in one table)");
  ev->add_option("--run", ea->runs, "A generation run in --store to score, named as the model (repeatable)");
  ev->add_option("--store", ea->store, "Run store folder for --run")->capture_default_str();
  ev->add_option("--out", ea->out, "Output folder for items.jsonl and summary.{json,csv,md}")->capture_default_str();
  ev->add_option("--weights", ea->weights, "pre_mean weights of rgb_ed,rgb_rm,de00,hue,chroma,hyab (default all 1)");
  ev->add_option("--split", ea->split, "Items to score: the manifest's split column")
      ->check(CLI::IsMember({"train", "test", "all"}))
      ->capture_default_str();
  ev->add_option("--by", ea->by,
                 "Also group rows by a manifest column: split, prompt_split, hue_split1, hue_split2, template_id, "
                 "layout (repeatable)")
      ->check(CLI::IsMember({"split", "prompt_split", "hue_split1", "hue_split2", "template_id", "layout"}));
  ev->add_option("--missing", ea->missing,
                 "Items without a scorable image: skip (means over scored images) or worst (they score 1)")
      ->check(CLI::IsMember({"skip", "worst"}))
      ->capture_default_str();
  ev->add_option("--background", ea->background,
                 "Colour transparent pixels are composited over, or none to score their stored RGB")
      ->capture_default_str();
  ev->add_option("--resamples", ea->resamples, "Bootstrap resamples of the overall rows' 95% intervals")
      ->check(CLI::Range(100, 1000000))
      ->capture_default_str();
  ev->add_option("--seed", ea->seed, "Seed of the bootstrap (same seed, same intervals)")->capture_default_str();
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
      "  visalign violin evaluate --dataset ds --images out/sdxl --model sdxl --out results\n"
      "  visalign violin evaluate --dataset ds --model gt=ds/images --model noisy=out/noisy --out cmp --threads 2\n"
      "  visalign violin evaluate --dataset ds --store ./visalign-store --run gpt-image --run sdxl --out cmp\n"
      "  visalign violin evaluate --dataset ds --store ./visalign-store --run sdxl --split test --by prompt_split");
  cli.Bind(ev, [&cli, ea]() { return RunEvaluate(cli, *ea); });
});

}  // namespace
}  // namespace visalign::cli
