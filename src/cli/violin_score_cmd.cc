// `visalign violin score` (images on the command line or in a --batch file, each against its
// target) and `visalign violin evaluate` (a dataset's images, one or more models) over the VIOLIN
// evaluator.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "visalign/imaging.h"
#include "visalign/io.h"
#include "visalign/parallel.h"
#include "visalign/store.h"
#include "visalign/violin_eval.h"
#include "visalign/violin_manifest.h"

namespace visalign::cli {
namespace {

using violin::Metric;

constexpr char kDefaultOutDir[] = "violin-eval";
constexpr char kDefaultStore[] = "./visalign-store";
constexpr size_t kProblemsShown = 10;

Result<violin::Weights> WeightsArg(const std::string& text) {
  if (text.empty()) return violin::Weights{};
  return violin::ParseWeights(text);
}

struct ScoreOptions {
  std::vector<std::string> images;
  violin::TargetArgs target;
  std::string weights, batch;
};

// What one image is scored against.
struct ScoreTarget {
  violin::TargetSpec spec;
  violin::Weights weights;
};

Result<ScoreTarget> ResolveTarget(const violin::TargetArgs& target, const std::string& weights) {
  ScoreTarget resolved;
  VISALIGN_ASSIGN_OR_RETURN(resolved.spec, violin::ParseTargetSpec(target));
  VISALIGN_ASSIGN_OR_RETURN(resolved.weights, WeightsArg(weights));
  return resolved;
}

// One image to score: a command-line IMAGE, or one line of a --batch file.
struct ScoreJob {
  std::optional<std::string> image;  // nullopt: a batch line too malformed to name one
  int line = 0;                      // batch line number (1-based); 0 for a command-line image
  std::string where;                 // "FILE:LINE" for a batch line, prefixed to its errors
  Status invalid;                    // non-OK: the line's arguments are invalid; nothing is scored
  ScoreTarget target;
};

Result<std::vector<ScoreJob>> CommandLineJobs(const ScoreOptions& o) {
  if (o.images.empty())
    return Status::InvalidArgument("no image given", "command line", "IMAGE... or --batch FILE.jsonl");
  VISALIGN_ASSIGN_OR_RETURN(ScoreTarget target, ResolveTarget(o.target, o.weights));
  std::vector<ScoreJob> jobs;
  for (const std::string& image : o.images) jobs.push_back({image, 0, "", Status::Ok(), target});
  return jobs;
}

std::string BatchName(const std::string& batch) { return batch == "-" ? "stdin" : batch; }

bool IsBlank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c) != 0; });
}

Result<std::vector<ScoreJob>> BatchJobs(const ScoreOptions& o) {
  if (!o.images.empty())
    return Status::InvalidArgument("IMAGE arguments and --batch given", "command line",
                                   "images on the command line or in --batch FILE, not both");
  const violin::TargetArgs& t = o.target;
  if (!t.target.empty() || !t.layout.empty() || !t.targets.empty() || !t.fuzzy.empty() || !o.weights.empty())
    return Status::InvalidArgument("target arguments with --batch", "command line",
                                   "--target, --layout, --targets, --fuzzy and --weights inside each batch line");
  std::string text;
  if (o.batch == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    VISALIGN_ASSIGN_OR_RETURN(text, ReadFile(o.batch));
  }
  const std::vector<std::string_view> lines = SplitLines(text);
  std::vector<ScoreJob> jobs;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (IsBlank(lines[i])) continue;
    ScoreJob& job = jobs.emplace_back();
    job.line = static_cast<int>(i + 1);
    job.where = fmt::format("{}:{}", BatchName(o.batch), job.line);
    Result<violin::ScoreArgs> args = violin::ParseScoreLine(lines[i]);
    if (!args.ok()) {
      job.invalid = args.status();
      continue;
    }
    job.image = args->image;
    Result<ScoreTarget> target = ResolveTarget(args->target, args->weights);
    if (target.ok())
      job.target = std::move(*target);
    else
      job.invalid = target.status();
  }
  return jobs;
}

Result<violin::Metrics> ReadAndScore(const std::string& image, const ScoreTarget& target) {
  VISALIGN_ASSIGN_OR_RETURN(imaging::Image decoded, imaging::ReadImage(image));
  Result<violin::Metrics> metrics = violin::ScoreImage(decoded, target.spec, target.weights);
  if (!metrics.ok()) return metrics.status().WithContext(image);
  return metrics;
}

// A job's metrics, or why there are none; errors of a batch line are prefixed by its FILE:LINE.
Result<violin::Metrics> ScoreJobImage(const ScoreJob& job) {
  Result<violin::Metrics> metrics =
      job.invalid.ok() ? ReadAndScore(*job.image, job.target) : Result<violin::Metrics>(job.invalid);
  if (metrics.ok() || job.where.empty()) return metrics;
  return metrics.status().WithContext(job.where);
}

void PrintMetricsTable(const violin::Metrics& m) {
  std::cout << fmt::format("{:<8} {:>14} {:>10}\n", "metric", "raw", "norm");
  for (Metric metric : violin::kAllMetrics) {
    const size_t i = static_cast<size_t>(metric);
    std::cout << fmt::format("{:<8} {:>14.6f} {:>10.6f}\n", violin::NormName(metric), m.raw[i], m.norm[i]);
  }
  std::cout << fmt::format("pre_mean {:.6f}\npur_mean {:.6f}\n", m.pre_mean, m.pur_mean);
}

// One JSON Lines result: the MetricsJson object, or {"error": message}, with "image" (null for a
// batch line too malformed to name one) and, for a batch line, "line".
void PrintJsonLine(const ScoreJob& job, const Result<violin::Metrics>& result) {
  nlohmann::json out =
      result.ok() ? violin::MetricsJson(*result) : nlohmann::json{{"error", result.status().ToString()}};
  out["image"] = job.image ? nlohmann::json(*job.image) : nlohmann::json();
  if (job.line > 0) out["line"] = job.line;
  // Paths and messages may hold bytes that are not UTF-8 (file names): replace, do not throw.
  std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

// How results are printed: one image as before batches existed (a table or one JSON object,
// its error being the command's error); several as tables headed by their path; or JSON Lines.
enum class ScoreOutput { kOne, kTables, kJsonLines };

Status RunScore(const Cli& cli, const ScoreOptions& o) {
  const bool batch = !o.batch.empty();
  VISALIGN_ASSIGN_OR_RETURN(std::vector<ScoreJob> jobs, batch ? BatchJobs(o) : CommandLineJobs(o));
  ScoreOutput output = ScoreOutput::kJsonLines;
  if (!batch && jobs.size() == 1) output = ScoreOutput::kOne;
  if (!batch && jobs.size() > 1 && !cli.global().json) output = ScoreOutput::kTables;

  size_t failed = 0;
  Status first_failure;
  auto consume = [&](size_t i, Result<violin::Metrics>&& result) -> Status {
    const ScoreJob& job = jobs[i];
    if (output == ScoreOutput::kOne) {
      if (!result.ok()) return result.status();
      if (cli.global().json)
        PrintJson(violin::MetricsJson(*result));
      else
        PrintMetricsTable(*result);
      return Status::Ok();
    }
    const Status& failure = result.status();
    if (!failure.ok() && failed++ == 0) first_failure = failure;
    if (output == ScoreOutput::kJsonLines) {
      PrintJsonLine(job, result);
      return Status::Ok();
    }
    std::cout << fmt::format("{}== {} ==\n", i == 0 ? "" : "\n", *job.image);
    if (failure.ok())
      PrintMetricsTable(*result);
    else
      std::cout << "error: " << failure.ToString() << "\n";
    return Status::Ok();
  };
  VISALIGN_RETURN_IF_ERROR(ParallelForOrdered(jobs.size(), [&](size_t i) { return ScoreJobImage(jobs[i]); }, consume));
  if (failed == 0) return Status::Ok();
  const std::string first =
      "readable images and valid score arguments (first failure: " + first_failure.ToString() + ")";
  if (batch)
    return Status::InvalidArgument(fmt::format("{} of {} batch lines failed", failed, jobs.size()), BatchName(o.batch),
                                   first);
  return Status::InvalidArgument(fmt::format("{} of {} images failed", failed, jobs.size()), "command line", first);
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

  auto so = std::make_shared<ScoreOptions>();
  CLI::App* score = g->add_subcommand("score", "Score images against a target color or layout");
  score->add_option("IMAGE", so->images,
                    "Image files (PNG, JPEG, WebP), each scored at native resolution against the same target");
  score->add_option("--batch", so->batch,
                    "JSON Lines file (- = stdin), one image with its own target arguments per line; not with IMAGE");
  score->add_option("--target", so->target.target,
                    "Target color of a single-color image (#RRGGBB, rgb(...), hsl(...), name)");
  score->add_option("--layout", so->target.layout,
                    "Block layout for --targets: h2 (top/bottom), v2 (left/right), q4 (2x2)")
      ->check(CLI::IsMember({"single", "h2", "v2", "q4"}));
  score->add_option("--targets", so->target.targets,
                    "Block colors in layout order: h2 top,bottom; v2 left,right; q4 TL,TR,BL,BR");
  score->add_option("--fuzzy", so->target.fuzzy,
                    "A stated range LOW,HIGH: the target is the closest HSL point of the range");
  score->add_option("--weights", so->weights,
                    "pre_mean weights of rgb_ed,rgb_rm,de00,hue,chroma,hyab (default 1,1,1,1,1,1)");
  score->footer(
      "Prints raw and normalised (0-1, lower is better) metrics: precision rgb_ed, rgb_rm, de00, hue, chroma,\n"
      "hyab of the block mean color vs the target; purity sd (sd_n = min(1, 2 sd)), ced (Canny edge density),\n"
      "hf (FFT power above 0.25 cycles/pixel); pre_mean and pur_mean. Definitions: docs/metrics.md.\n"
      "Several IMAGEs: each scored against the same target; a table per image headed by its path, or with\n"
      "--json one JSON object per line (JSON Lines), the one-image object plus \"image\".\n"
      "--batch FILE: each line a JSON object {\"image\": PATH, \"target\": C} (or \"layout\" and \"targets\",\n"
      "or \"fuzzy\"; optional \"weights\") or an argument array [\"PATH\", \"--target\", \"C\"]; prints JSON Lines,\n"
      "the one-image object plus \"image\" and \"line\".\n"
      "An image or line that fails gives {\"image\", \"error\"} and the others are scored, then exit code 2.\n"
      "Images are scored on the global --threads; output keeps the input order. See docs/violin.md.\n"
      "Examples:\n"
      "  visalign violin score gen.png --target '#D9B451' --json\n"
      "  visalign violin score gen.png --layout h2 --targets '#72672C,#D9B451'\n"
      "  visalign violin score gen.png --layout q4 --targets 'red,rgb(0, 128, 0),#0000FF,hsl(60, 100%, 50%)'\n"
      "  visalign violin score gen.png --fuzzy '#B92842,#E3A857'\n"
      "  visalign violin score a.png b.png c.png --target '#D9B451' --json --threads 2\n"
      "  visalign violin score --batch images.jsonl > scores.jsonl\n"
      "  echo '{\"image\": \"a.png\", \"layout\": \"v2\", \"targets\": \"#F00,#00F\"}' |\n"
      "    visalign violin score --batch -");
  cli.Bind(score, [&cli, so]() { return RunScore(cli, *so); });

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
