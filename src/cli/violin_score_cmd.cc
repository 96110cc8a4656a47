// `visalign violin score` (one image) and `visalign violin evaluate` (a dataset's images, one or
// more models) over the VIOLIN evaluator.
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

using violin::Layout;
using violin::Metric;

constexpr char kDefaultOutDir[] = "violin-eval";
constexpr char kDefaultStore[] = "./visalign-store";
constexpr size_t kProblemsShown = 10;

// Splits "a,b,c" at commas outside parentheses, so rgb(1, 2, 3) and hsl(...) stay whole.
std::vector<std::string> SplitColors(const std::string& text) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0)
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

Result<std::vector<color::Srgb8>> ParseColorList(const std::string& text, const std::string& argument) {
  std::vector<color::Srgb8> out;
  for (const std::string& part : SplitColors(text)) {
    Result<color::ParsedColor> parsed = color::ParseColor(part);
    if (!parsed.ok()) return parsed.status().WithContext("argument " + argument);
    out.push_back(parsed->rgb8);
  }
  return out;
}

struct ScoreArgs {
  std::string image;
  std::string target, layout, targets, fuzzy, weights;
};

Result<violin::TargetSpec> BuildSpec(const ScoreArgs& a) {
  const int forms = !a.target.empty() + !a.targets.empty() + !a.fuzzy.empty();
  const std::string expected = "exactly one of --target COLOR, --layout h2|v2|q4 --targets C1,C2[,C3,C4], "
                               "--fuzzy LOW,HIGH";
  if (forms != 1) return Status::InvalidArgument("no target or more than one target form given", "command line", expected);
  violin::TargetSpec spec;
  if (!a.target.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(spec.targets, ParseColorList(a.target, "--target"));
    if (spec.targets.size() != 1)
      return Status::InvalidArgument("--target takes one color", "argument --target \"" + a.target + "\"",
                                     "use --layout with --targets for several blocks");
  } else if (!a.targets.empty()) {
    if (a.layout.empty()) return Status::InvalidArgument("--targets without --layout", "command line", expected);
    VISALIGN_ASSIGN_OR_RETURN(spec.layout, violin::ParseLayout(a.layout));
    VISALIGN_ASSIGN_OR_RETURN(spec.targets, ParseColorList(a.targets, "--targets"));
  } else {
    VISALIGN_ASSIGN_OR_RETURN(std::vector<color::Srgb8> range, ParseColorList(a.fuzzy, "--fuzzy"));
    if (range.size() != 2)
      return Status::InvalidArgument(std::to_string(range.size()) + " colors", "argument --fuzzy \"" + a.fuzzy + "\"",
                                     "two colors LOW,HIGH");
    spec.fuzzy = std::make_pair(range[0], range[1]);
  }
  if (!a.layout.empty() && a.targets.empty())
    return Status::InvalidArgument("--layout without --targets", "command line", expected);
  VISALIGN_RETURN_IF_ERROR(spec.Validate().WithContext("command line"));
  return spec;
}

Result<violin::Weights> WeightsArg(const std::string& text) {
  if (text.empty()) return violin::Weights{};
  return violin::ParseWeights(text);
}

void PrintMetricsTable(const violin::Metrics& m) {
  std::cout << fmt::format("{:<8} {:>14} {:>10}\n", "metric", "raw", "norm");
  for (Metric metric : violin::kAllMetrics) {
    const size_t i = static_cast<size_t>(metric);
    std::cout << fmt::format("{:<8} {:>14.6f} {:>10.6f}\n", violin::NormName(metric), m.raw[i], m.norm[i]);
  }
  std::cout << fmt::format("pre_mean {:.6f}\npur_mean {:.6f}\n", m.pre_mean, m.pur_mean);
}

Status RunScore(const Cli& cli, const ScoreArgs& a) {
  VISALIGN_ASSIGN_OR_RETURN(violin::TargetSpec spec, BuildSpec(a));
  VISALIGN_ASSIGN_OR_RETURN(violin::Weights weights, WeightsArg(a.weights));
  VISALIGN_ASSIGN_OR_RETURN(imaging::Image image, imaging::ReadImage(a.image));
  Result<violin::Metrics> metrics = violin::ScoreImage(image, spec, weights);
  if (!metrics.ok()) return metrics.status().WithContext(a.image);
  if (cli.global().json)
    PrintJson(violin::MetricsJson(*metrics));
  else
    PrintMetricsTable(*metrics);
  return Status::Ok();
}

struct EvaluateArgs {
  std::string dataset, images, out = kDefaultOutDir, weights, store = kDefaultStore;
  std::vector<std::string> models, runs;
  bool strict = false;
};

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
  VISALIGN_ASSIGN_OR_RETURN(options.weights, WeightsArg(a.weights));
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

const CommandGroup kViolinScore(21, [](Cli& cli) {
  CLI::App* g = cli.Group("violin", "VIOLIN: pure-color obedience benchmark");

  auto sa = std::make_shared<ScoreArgs>();
  CLI::App* score = g->add_subcommand("score", "Score one image against a target color or layout");
  score->add_option("IMAGE", sa->image, "Image file (PNG, JPEG, WebP), scored at native resolution")->required();
  score->add_option("--target", sa->target, "Target color of a single-color image (#RRGGBB, rgb(...), hsl(...), name)");
  score->add_option("--layout", sa->layout, "Block layout for --targets: h2 (top/bottom), v2 (left/right), q4 (2x2)")
      ->check(CLI::IsMember({"single", "h2", "v2", "q4"}));
  score->add_option("--targets", sa->targets, "Block colors in layout order: h2 top,bottom; v2 left,right; q4 TL,TR,BL,BR");
  score->add_option("--fuzzy", sa->fuzzy, "A stated range LOW,HIGH: the target is the closest HSL point of the range");
  score->add_option("--weights", sa->weights,
                    "pre_mean weights of rgb_ed,rgb_rm,de00,hue,chroma,hyab (default 1,1,1,1,1,1)");
  score->footer(
      "Prints raw and normalised (0-1, lower is better) metrics: precision rgb_ed, rgb_rm, de00, hue, chroma,\n"
      "hyab of the block mean color vs the target; purity sd (sd_n = min(1, 2 sd)), ced (Canny edge density),\n"
      "hf (FFT power above 0.25 cycles/pixel); pre_mean and pur_mean. Definitions: docs/metrics.md.\n"
      "Examples:\n"
      "  visalign violin score gen.png --target '#D9B451' --json\n"
      "  visalign violin score gen.png --layout h2 --targets '#72672C,#D9B451'\n"
      "  visalign violin score gen.png --layout q4 --targets 'red,rgb(0, 128, 0),#0000FF,hsl(60, 100%, 50%)'\n"
      "  visalign violin score gen.png --fuzzy '#B92842,#E3A857'");
  cli.Bind(score, [&cli, sa]() { return RunScore(cli, *sa); });

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
  ev->add_flag("--strict", ea->strict, "Exit with an error (code 2) if any item is missing or any image is unreadable");
  ev->footer(
      "Rows: one per (model, variation, language, notation), the shape of the published VIOLIN tables; values are\n"
      "means of the normalised metrics over scored images. Items without an image (missing), files that cannot be\n"
      "decoded or scored (unreadable) and image files matching no item (unmatched) are counted and listed in\n"
      "summary.json, never skipped silently. Use the global --threads N to limit worker threads.\n"
      "Examples:\n"
      "  visalign violin evaluate --dataset ds --images out/sdxl --model sdxl --out results\n"
      "  visalign violin evaluate --dataset ds --model gt=ds/images --model noisy=out/noisy --out cmp --threads 2\n"
      "  visalign violin evaluate --dataset ds --store ./visalign-store --run gpt-image --run sdxl --out cmp");
  cli.Bind(ev, [&cli, ea]() { return RunEvaluate(cli, *ea); });
});

}  // namespace
}  // namespace visalign::cli
