// `visalign violin score`: images on the command line or in a --batch file, each against its
// target, over the VIOLIN evaluator.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "visalign/benchmarks/violin/evaluate.h"
#include "visalign/benchmarks/violin/manifest.h"
#include "visalign/color.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"
#include "visalign/imaging/image.h"
#include "visalign/store.h"

namespace visalign::cli {
namespace {

using violin::Metric;

struct ScoreOptions {
  std::vector<std::string> images;
  violin::TargetArgs target;
  std::string weights, batch, background = violin::kDefaultBackground;
};

// What one image is scored against.
struct ScoreTarget {
  violin::TargetSpec spec;
  violin::Weights weights;
};

Result<ScoreTarget> ResolveTarget(const violin::TargetArgs& target, const std::string& weights) {
  ScoreTarget resolved;
  VISALIGN_ASSIGN_OR_RETURN(resolved.spec, violin::ParseTargetSpec(target));
  VISALIGN_ASSIGN_OR_RETURN(resolved.weights, violin::ParseWeights(weights));
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

Result<violin::Metrics> ReadAndScore(const std::string& image, const ScoreTarget& target,
                                     const imaging::AlphaPolicy& alpha) {
  VISALIGN_ASSIGN_OR_RETURN(imaging::Image decoded, imaging::ReadImage(image, alpha));
  Result<violin::Metrics> metrics = violin::ScoreImage(decoded, target.spec, target.weights);
  if (!metrics.ok()) return metrics.status().WithContext(image);
  return metrics;
}

// A job's metrics, or why there are none; errors of a batch line are prefixed by its FILE:LINE.
Result<violin::Metrics> ScoreJobImage(const ScoreJob& job, const imaging::AlphaPolicy& alpha) {
  Result<violin::Metrics> metrics =
      job.invalid.ok() ? ReadAndScore(*job.image, job.target, alpha) : Result<violin::Metrics>(job.invalid);
  if (metrics.ok() || job.where.empty()) return metrics;
  return metrics.status().WithContext(job.where);
}

// A 0..255 colour as "#RRGGBB (r, g, b)", the hex rounded, the numbers to two decimals.
std::string ColourText(const color::Rgb255& c) {
  auto byte = [](double v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0, 255.0))); };
  return fmt::format("{} ({:.2f}, {:.2f}, {:.2f})", color::ToHex({byte(c.r), byte(c.g), byte(c.b)}), c.r, c.g, c.b);
}

void PrintMetricsTable(const violin::Metrics& m) {
  for (size_t b = 0; b < m.blocks.size(); ++b) {
    const std::string block = m.blocks.size() == 1 ? "" : fmt::format(" {}", b + 1);
    std::cout << fmt::format("mean{:<4} {}\ntarget{:<2} {}\n", block, ColourText(m.blocks[b].mean), block,
                             ColourText(m.blocks[b].target));
  }
  if (m.alpha_min < 255) std::cout << fmt::format("alpha_min {}\n", m.alpha_min);
  std::cout << fmt::format("{:<8} {:>14} {:>10}\n", "metric", "raw", "norm");
  for (Metric metric : violin::kAllMetrics) {
    const size_t i = static_cast<size_t>(metric);
    // sd's raw value is the standard deviation; its normalised value is sd_n = min(1, 2 sd).
    std::cout << fmt::format("{:<8} {:>14.6f} {:>10.6f}\n", violin::RawName(metric), m.raw[i], m.norm[i]);
  }
  std::cout << fmt::format("pre_mean {:.6f}\npur_mean {:.6f}\n", m.pre_mean, m.pur_mean);
}

// One JSON Lines result: the MetricsJson object, or {"error": message}, with "image" (null for a
// batch line too malformed to name one) and, for a batch line, "line".
void PrintJsonLine(const ScoreJob& job, const Result<violin::Metrics>& result) {
  Json out = result.ok() ? violin::MetricsJson(*result) : Json{{"error", result.status().ToString()}};
  out["image"] = job.image ? Json(*job.image) : Json();
  if (job.line > 0) out["line"] = job.line;
  // Paths and messages may hold bytes that are not UTF-8 (file names): replace, do not throw.
  std::cout << out.dump(-1, ' ', false, Json::error_handler_t::replace) << std::endl;
}

// How results are printed: one image as before batches existed (a table or one JSON object,
// its error being the command's error); several as tables headed by their path; or JSON Lines.
enum class ScoreOutput { kOne, kTables, kJsonLines };

Status RunScore(const Cli& cli, const ScoreOptions& o) {
  const bool batch = !o.batch.empty();
  VISALIGN_ASSIGN_OR_RETURN(const imaging::AlphaPolicy alpha, violin::ParseBackground(o.background));
  VISALIGN_ASSIGN_OR_RETURN(std::vector<ScoreJob> jobs, batch ? BatchJobs(o) : CommandLineJobs(o));
  ScoreOutput output = ScoreOutput::kJsonLines;
  if (!batch && jobs.size() == 1) output = ScoreOutput::kOne;
  if (!batch && jobs.size() > 1 && !cli.global().json) output = ScoreOutput::kTables;

  size_t failed = 0;
  Status first_failure;
  size_t transparent = 0;
  auto consume = [&](size_t i, Result<violin::Metrics>&& result) -> Status {
    const ScoreJob& job = jobs[i];
    if (result.ok() && result->alpha_min < 255) ++transparent;
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
  VISALIGN_RETURN_IF_ERROR(ParallelForOrdered(
      jobs.size(), [&](size_t i) { return ScoreJobImage(jobs[i], alpha); }, consume));
  if (transparent > 0)
    std::cerr << fmt::format(
        "warning: {} of {} images have transparent pixels (alpha < 255), scored {} "
        "(--background)\n",
        transparent, jobs.size(), violin::AlphaPolicyText(alpha));
  if (failed == 0) return Status::Ok();
  const std::string first =
      "readable images and valid score arguments (first failure: " + first_failure.ToString() + ")";
  if (batch)
    return Status::InvalidArgument(fmt::format("{} of {} batch lines failed", failed, jobs.size()), BatchName(o.batch),
                                   first);
  return Status::InvalidArgument(fmt::format("{} of {} images failed", failed, jobs.size()), "command line", first);
}

const CommandGroup kViolinScore(21, {"violin"}, [](Cli& cli) {
  CLI::App* g = cli.Group("violin", "VIOLIN: pure-color obedience benchmark");

  auto so = std::make_shared<ScoreOptions>();
  CLI::App* score = g->add_subcommand("score", "Score images against a target color or layout");
  score->add_option("IMAGE", so->images,
                    "Image files (PNG, JPEG, WebP), each scored at native resolution against the same target");
  score->add_option("--batch", so->batch,
                    "JSON Lines file (- = stdin), one image with its own target arguments per line; not with IMAGE");
  score->add_option("--target", so->target.target,
                    "Target color of a single-color image (#RRGGBB, rgb(...), hsl(...), name)");
  score
      ->add_option("--layout", so->target.layout,
                   "Block layout for --targets: h2 (top/bottom), v2 (left/right), q4 (2x2)")
      ->check(CLI::IsMember({"single", "h2", "v2", "q4"}));
  score->add_option("--targets", so->target.targets,
                    "Block colors in layout order: h2 top,bottom; v2 left,right; q4 TL,TR,BL,BR");
  score->add_option("--fuzzy", so->target.fuzzy,
                    "A stated range LOW,HIGH: the target is the closest HSL point of the range");
  score->add_option("--weights", so->weights,
                    "Weights w1,...,w6 of pre_mean (rgb_ed,rgb_rm,de00,hue,chroma,hyab) or w1,...,w9 (then "
                    "pur_mean's sd,ced,hf); default all 1");
  score
      ->add_option("--background", so->background,
                   "Colour transparent pixels are composited over, or none to score their stored RGB")
      ->capture_default_str();
  score->footer(
      "Prints raw and normalised (0-1, lower is better) metrics: precision rgb_ed, rgb_rm, de00, hue, chroma,\n"
      "hyab of the block mean color vs the target; purity sd (sd_n = min(1, 2 sd)), ced (Canny edge density),\n"
      "hf (FFT power above 0.25 cycles/pixel); pre_mean and pur_mean. Definitions: docs/metrics.md.\n"
      "The table starts with each block's mean colour and target; transparent pixels are composited over\n"
      "--background (alpha_min and a warning say so).\n"
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
});

}  // namespace
}  // namespace visalign::cli
