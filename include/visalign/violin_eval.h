// VIOLIN evaluator: how exactly a generated image obeys a pure-color prompt. Definitions are
// normative and documented in docs/metrics.md; in short, per region R with target T:
//   precision (mean color M of R vs T): rgb_ed, rgb_rm, de00, hue, chroma, hyab, each divided by
//     its maximum (255*sqrt(3), 255*sqrt(8 + 255/256), 100, 180, 260, 360) and clamped to [0, 1];
//   purity (see visalign/purity.h): sd (normalised sd_n = min(1, 2*sd)), ced, hf;
//   pre_mean = weighted mean of the six normalised precision values, pur_mean = mean of the three
//   normalised purity values. Layouts h2/v2/q4 score each block on its own and average the
//   per-block values. Fuzzy items project M's HSL onto the stated range to get T.
// The dataset evaluation scores lists of image sources per model, so images may come from a
// folder (CollectImageDirectory) or from a run store; nothing is skipped silently: items without
// an image are "missing", files that cannot be decoded or scored are "unreadable", both listed.
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "visalign/color.h"
#include "visalign/imaging.h"
#include "visalign/status.h"
#include "visalign/violin_manifest.h"

namespace visalign::violin {

// --- Metrics --------------------------------------------------------------------------------
enum class Metric { kRgbEd, kRgbRm, kDe00, kHue, kChroma, kHyab, kSd, kCed, kHf };
inline constexpr size_t kMetricCount = 9;
inline constexpr size_t kPrecisionCount = 6;  // the first six metrics; the last three are purity
inline constexpr std::array<Metric, kMetricCount> kAllMetrics = {
    Metric::kRgbEd, Metric::kRgbRm, Metric::kDe00, Metric::kHue, Metric::kChroma,
    Metric::kHyab,  Metric::kSd,    Metric::kCed,  Metric::kHf};

std::string_view RawName(Metric m);   // "rgb_ed" ... "sd", "ced", "hf"
std::string_view NormName(Metric m);  // as RawName, but "sd_n" for sd
// raw / (the metric's maximum), clamped to [0, 1]; sd's maximum is 0.5 (sd_n = min(1, 2*sd)).
double Normalise(Metric m, double raw);

// Weights of the six precision metrics in pre_mean (non-negative, not all zero).
struct Weights {
  std::array<double, kPrecisionCount> precision{1, 1, 1, 1, 1, 1};
};
// "w1,w2,w3,w4,w5,w6" in metric order rgb_ed, rgb_rm, de00, hue, chroma, hyab.
Result<Weights> ParseWeights(std::string_view text);

struct Metrics {
  std::array<double, kMetricCount> raw{};
  std::array<double, kMetricCount> norm{};
  double pre_mean = 0;
  double pur_mean = 0;
};
// {"raw": {rgb_ed, ..., hf}, "norm": {rgb_ed, ..., sd_n, ced, hf}, "pre_mean", "pur_mean"}
nlohmann::json MetricsJson(const Metrics& m);

// What an image should look like.
struct TargetSpec {
  Layout layout = Layout::kSingle;
  std::vector<color::Srgb8> targets;  // BlockCount(layout) colors in layout order (unused when fuzzy)
  std::optional<std::pair<color::Srgb8, color::Srgb8>> fuzzy;  // [low, high]; single layout only

  static TargetSpec FromItem(const ManifestItem& item);
  Status Validate() const;
};

// The six raw precision values of a region with mean M against target T (both 0..255 scale).
std::array<double, kPrecisionCount> PrecisionRaw(color::Rgb255 mean, color::Rgb255 target);
// The fuzzy target for a region mean M: HSL(M) (h/360, s, l) projected onto the segment between
// HSL(low) and HSL(high), clamped to the segment, converted back to sRGB unrounded (0..255).
color::Rgb255 FuzzyTarget(color::Rgb255 mean, color::Srgb8 low, color::Srgb8 high);

// Scores one decoded image at native resolution. Errors: an invalid spec, or an image too small
// to hold every block of the layout (kInvalidArgument).
Result<Metrics> ScoreImage(const imaging::Image& image, const TargetSpec& target, const Weights& weights = {});

// --- Arguments of `visalign violin score` ---------------------------------------------------
// The target arguments as text; empty means not given (initialisers let callers name only the
// given ones: {.target = "red"}).
struct TargetArgs {
  std::string target{};   // --target COLOR
  std::string layout{};   // --layout single|h2|v2|q4, only with targets
  std::string targets{};  // --targets C1,C2[,C3,C4] in layout order
  std::string fuzzy{};    // --fuzzy LOW,HIGH
};
// The TargetSpec of exactly one form: target (one color), layout with targets, or fuzzy (two
// colors). Colors in any color::ParseColorList notation. Errors are kInvalidArgument, naming the
// argument ("argument --target \"...\""), "target arguments" for a missing or mixed form, or
// "target" for a color count that does not fit the layout (TargetSpec::Validate).
Result<TargetSpec> ParseTargetSpec(const TargetArgs& args);

// One image to score with its arguments as text: what a `violin score --batch` line holds.
struct ScoreArgs {
  std::string image;
  TargetArgs target;
  std::string weights;  // --weights w1,...,w6; empty = Weights{}
};
// Parses one batch line, in either of two forms:
//   a JSON object {"image": PATH, "target": C} with string members image (required), target,
//     layout, targets, fuzzy and weights, named as the options without "--";
//   a JSON array of `violin score` arguments ["PATH", "--target", "C"]: one image and the
//     options --target, --layout, --targets, --fuzzy, --weights as "--opt", "VALUE" or "--opt=VALUE"
//     (the form of bench/violin_reference.py batch).
// Unknown members or options, a member or option given twice, non-string values and a missing
// image are kInvalidArgument; text that is not JSON is kCorrupt. Where names no file or line:
// callers add them. The target arguments are only read here, not checked (ParseTargetSpec).
Result<ScoreArgs> ParseScoreLine(std::string_view line);

// --- Dataset evaluation ---------------------------------------------------------------------
struct ImageSource {
  std::string item_id;
  int k = 0;                    // sample index (several images per item allowed)
  std::filesystem::path path;
};
struct ModelImages {
  std::string model;
  std::vector<ImageSource> sources;
  // Images the source found but could not attribute to an item (reported, never scored).
  std::vector<std::filesystem::path> unmatched;
};

// Images of one model in a folder (not recursive): `<id>.<ext>` (k = 0) or `<id>__<k>.<ext>`,
// ext one of png, jpg, jpeg, webp (any case). Image files whose name matches no manifest id go
// to `unmatched`; other files are ignored; two files for the same (id, k) are an error.
Result<ModelImages> CollectImageDirectory(const std::filesystem::path& dir, const std::string& model,
                                          const std::vector<ManifestItem>& items);

// One scored image, as written to items.jsonl.
struct ImageScore {
  const ManifestItem* item = nullptr;
  std::string model;
  int k = 0;
  std::filesystem::path path;
  Metrics metrics;
};
nlohmann::ordered_json ImageScoreJson(const ImageScore& score);

// An item without an image (path empty, k = -1), an image that could not be scored, or an
// image that matched no item.
struct Problem {
  std::string model;
  std::string item_id;
  int k = -1;
  std::filesystem::path path;
  std::string reason;
};

// One row of the results table: a model on one (variation, language, notation) group. Means are
// over scored images (items with several images count each image); nullopt when none scored.
struct SummaryRow {
  std::string model;
  int variation = 0;
  std::string language;
  std::string notation;
  std::optional<std::array<double, kMetricCount>> mean_norm, mean_raw;
  std::optional<double> pre_mean, pur_mean;
  size_t n_scored = 0, n_missing = 0, n_unreadable = 0;
};

struct Summary {
  std::vector<SummaryRow> rows;  // model order as given, then variation, language, notation
  std::vector<Problem> missing;
  std::vector<Problem> unreadable;
  std::vector<Problem> unmatched;
  size_t n_scored() const;
};
nlohmann::ordered_json SummaryJson(const Summary& summary, const Weights& weights);
std::string SummaryCsv(const Summary& summary);       // one line per row, normalised metrics
std::string SummaryMarkdown(const Summary& summary);  // the published-table shape

struct EvaluateOptions {
  Weights weights;
  int threads = 0;           // scoring threads; 0 = ThreadCount()
  bool show_progress = true;
  // Called once per scored image, in a deterministic order (models as given, sources in
  // manifest order then k), from one thread.
  std::function<Status(const ImageScore&)> on_image;
};

// Scores every model's images against `items`. Sources naming an id absent from `items` or the
// same (id, k) twice are kInvalidArgument. Decoding and scoring run on `threads` workers with a
// bounded window of results, so memory does not grow with the number of images; results and
// sums are taken in a fixed order, so numbers do not depend on the thread count.
Result<Summary> Evaluate(const std::vector<ManifestItem>& items, const std::vector<ModelImages>& models,
                         const EvaluateOptions& options);

// Evaluate() writing OUTDIR/items.jsonl (streamed) and OUTDIR/summary.{json,csv,md}.
Result<Summary> EvaluateToDirectory(const std::vector<ManifestItem>& items, const std::vector<ModelImages>& models,
                                    const EvaluateOptions& options, const std::filesystem::path& out_dir);

}  // namespace visalign::violin
