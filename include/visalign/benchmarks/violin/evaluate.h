// VIOLIN evaluator: how exactly a generated image obeys a pure-color prompt. Definitions are
// normative and documented in docs/metrics.md; in short, per region R with target T:
//   precision (mean color M of R vs T): rgb_ed, rgb_rm, de00, hue, chroma, hyab, each divided by
//     its maximum (255*sqrt(3), 255*sqrt(8 + 255/256), 100, 180, 260, 360) and clamped to [0, 1];
//   purity (see visalign/imaging/purity.h): sd (normalised sd_n = min(1, 2*sd)), ced, hf;
//   pre_mean = weighted mean of the six normalised precision values, pur_mean = mean of the three
//   normalised purity values. Layouts h2/v2/q4 score each block on its own and average the
//   per-block values. Fuzzy items project M's HSL onto the stated range to get T.
// The dataset evaluation scores lists of image sources per model, so images may come from a
// folder (CollectImageDirectory) or from a run store; nothing is skipped silently: items without
// an image are "missing", files that cannot be decoded or scored are "unreadable", both listed,
// and every row states its coverage. Transparent pixels are composited over a stated background.
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

#include "visalign/backends/refusals.h"
#include "visalign/benchmarks/violin/generation.h"
#include "visalign/benchmarks/violin/manifest.h"
#include "visalign/color.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/imaging/image.h"
#include "visalign/stats/resampling.h"

namespace visalign::violin {

// --- Metrics --------------------------------------------------------------------------------
enum class Metric { kRgbEd, kRgbRm, kDe00, kHue, kChroma, kHyab, kSd, kCed, kHf };
inline constexpr size_t kMetricCount = 9;
inline constexpr size_t kPrecisionCount = 6;  // the first six metrics; the last three are purity
inline constexpr std::array<Metric, kMetricCount> kAllMetrics = {Metric::kRgbEd, Metric::kRgbRm,  Metric::kDe00,
                                                                 Metric::kHue,   Metric::kChroma, Metric::kHyab,
                                                                 Metric::kSd,    Metric::kCed,    Metric::kHf};

std::string_view RawName(Metric m);   // "rgb_ed" ... "sd", "ced", "hf"
std::string_view NormName(Metric m);  // as RawName, but "sd_n" for sd
// raw / (the metric's maximum), clamped to [0, 1]; sd's maximum is 0.5 (sd_n = min(1, 2*sd)).
double Normalise(Metric m, double raw);

// Weights of the six precision metrics in pre_mean and of the three purity metrics in pur_mean
// (non-negative; neither group all zero).
inline constexpr size_t kPurityCount = kMetricCount - kPrecisionCount;
struct Weights {
  std::array<double, kPrecisionCount> precision{1, 1, 1, 1, 1, 1};
  std::array<double, kPurityCount> purity{1, 1, 1};
};
// "w1,...,w6" (precision; purity weights stay 1) or "w1,...,w9" in metric order rgb_ed, rgb_rm, de00, hue,
// chroma, hyab, sd, ced, hf; "" = all 1.
Result<Weights> ParseWeights(std::string_view text);

// How raw values become [0, 1] (docs/metrics.md, "Normalisation"). kFixed: each block's raw value divided by
// the metric's documented maximum and clamped (Normalise), then averaged over blocks. kMinMax: (raw - min) /
// (max - min) of the image-level raw value, min and max taken over every scored image of the evaluation (all
// models); 0 when max = min.
enum class Normalization { kFixed, kMinMax };
Result<Normalization> ParseNormalization(std::string_view name);  // "fixed" | "minmax"
std::string_view NormalizationName(Normalization n);

// A block's mean colour and the target it was compared with (for fuzzy items, the projection).
struct BlockColor {
  color::Rgb255 mean, target;
};

struct Metrics {
  std::array<double, kMetricCount> raw{};
  std::array<double, kMetricCount> norm{};
  double pre_mean = 0;
  double pur_mean = 0;
  std::vector<BlockColor> blocks;  // layout order
  uint8_t alpha_min = 255;         // the image's (imaging::Image::alpha_min)
  // Inertia and geometry probe items are measured by their own metrics (MeasureProbe) instead of the
  // VIOLIN ones above, which then stay unset and out of every VIOLIN row.
  std::optional<ProbeMeasures> probe;
};
// pre_mean and pur_mean: the weighted means of m.norm's precision and purity values.
void WeightMeans(Metrics& m, const Weights& weights);
// {"raw": {rgb_ed, ..., hf}, "norm": {rgb_ed, ..., sd_n, ced, hf}, "pre_mean", "pur_mean"}, plus
// "alpha_min" when the image had transparent pixels (below 255).
Json MetricsJson(const Metrics& m);
// [{"mean": [r, g, b], "target": [r, g, b]}, ...] on the 0..255 scale, unrounded.
Json BlocksJson(const std::vector<BlockColor>& blocks);

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

// --background: "none" drops alpha (scores the stored RGB of transparent pixels); any colour
// (color::ParseColor notation) composites over it. kInvalidArgument naming `text` otherwise.
Result<imaging::AlphaPolicy> ParseBackground(std::string_view text);
inline constexpr char kDefaultBackground[] = "#FFFFFF";
// How transparent pixels are scored, for summaries and warnings: "composited over #FFFFFF" or
// "with alpha dropped (stored RGB)".
std::string AlphaPolicyText(const imaging::AlphaPolicy& alpha);

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
  int k = 0;  // sample index (several images per item allowed)
  std::filesystem::path path;
};
// Where a model's images come from, recorded in summary.json's "inputs" (the results contract).
struct ImageOrigin {
  std::string kind;            // "folder", "run", or "" (not stated: recorded as unknown)
  std::filesystem::path path;  // the image folder, or the run store's root
  std::string run;             // kind "run": the run's name
  Json identity;               // kind "run": the run's identity (backend kind, model, parameters...)
};
struct ModelImages {
  std::string model;
  std::vector<ImageSource> sources;
  // Images the source found but could not attribute to an item (reported, never scored).
  std::vector<std::filesystem::path> unmatched;
  ImageOrigin origin;
};

// Images of one model in a folder (not recursive; origin: kind "folder", the absolute folder): `<id>.<ext>` (k = 0) or
// `<id>__<k>.<ext>`, ext one of png, jpg, jpeg, webp (any case). Image files whose name matches no manifest id go to
// `unmatched`; other files are ignored; two files for the same (id, k) are an error.
Result<ModelImages> CollectImageDirectory(const std::filesystem::path& dir, const std::string& model,
                                          const std::vector<ManifestItem>& items);

// One scored image, as written to items.jsonl (with the item's prompt and targets).
struct ImageScore {
  const ManifestItem* item = nullptr;
  std::string model;
  int k = 0;
  std::filesystem::path path;
  Metrics metrics;
};
Json ImageScoreJson(const ImageScore& score);

// An item without an image (path empty, k = -1), an image that could not be scored, or an
// image that matched no item.
struct Problem {
  std::string model;
  std::string item_id;
  int k = -1;
  std::filesystem::path path;
  std::string reason;
};

// What an item without a scorable image counts as. kSkip: nothing (means are over scored images,
// and coverage says how many items that is). kWorst: one image scoring 1 on every normalised
// metric and on pre_mean and pur_mean, per missing item and per unreadable image (raw means stay
// over scored images: there is no worst raw value).
enum class MissingPolicy { kSkip, kWorst };
Result<MissingPolicy> ParseMissingPolicy(std::string_view name);  // "skip" | "worst"
std::string_view MissingPolicyName(MissingPolicy policy);

// Manifest columns an evaluation can select on (split) or group by (EvaluateOptions::by).
inline constexpr std::array<std::string_view, 6> kGroupColumns = {"split",      "prompt_split", "hue_split1",
                                                                  "hue_split2", "template_id",  "layout"};
// The item's value of one of kGroupColumns; kInvalidArgument naming the columns otherwise.
Result<std::string> ColumnValue(const ManifestItem& item, std::string_view column);

// Percentile bootstrap intervals of a row's means, resampling items (an item's samples together).
struct MetricIntervals {
  std::array<stats::Interval, kMetricCount> norm{};
  stats::Interval pre_mean, pur_mean;
};

// One row of the results table. scope "group": a model on one (variation, language, notation,
// by-columns) group, the shape of the published VIOLIN tables; "overall": a model on every
// selected item; "common": a model on the items every model has a scored image for. Means are
// over the row's images (items with several images count each image; MissingPolicy says what
// missing ones count as); nullopt when there are none.
struct SummaryRow {
  std::string scope = "group";
  std::string model;
  int variation = 0;                   // 0 on overall and common rows
  std::string language;                // "all" on overall and common rows
  std::string notation;                // "all" on overall and common rows
  std::vector<std::string> by_values;  // values of Summary::by, in order ("all" outside groups)
  std::optional<std::array<double, kMetricCount>> mean_norm, mean_raw;
  std::optional<double> pre_mean, pur_mean;
  std::optional<MetricIntervals> ci;  // overall and common rows
  size_t n_scored = 0, n_missing = 0, n_unreadable = 0;
  size_t n_items = 0;         // items of the row
  size_t n_items_scored = 0;  // of them, items with at least one scored image
  double coverage() const { return n_items == 0 ? 0.0 : double(n_items_scored) / double(n_items); }
};

struct Summary {
  std::vector<SummaryRow> rows;     // group rows: model order as given, then variation, language, notation, by
  std::vector<SummaryRow> overall;  // one per model
  std::vector<SummaryRow> common;   // one per model when there are two or more models
  std::vector<Problem> missing;
  std::vector<Problem> unreadable;
  std::vector<Problem> unmatched;
  std::vector<Problem> transparent;  // scored images with alpha < 255 (composited, see `alpha`)
  std::string split = "all";
  ItemFilters filters;  // EvaluateOptions::filters and limit, recorded in summary.json's "selection"
  int64_t limit = 0;
  std::vector<std::string> by;
  MissingPolicy missing_policy = MissingPolicy::kSkip;
  imaging::AlphaPolicy alpha;
  stats::BootstrapOptions bootstrap;
  size_t n_items = 0;           // selected manifest items
  size_t n_common_items = 0;    // items with a scored image in every model
  size_t n_outside_split = 0;   // images of items the selection (split, filters, limit) left out (not scored)
  std::string manifest_sha256;  // EvaluateOptions::manifest_sha256
  std::vector<std::pair<std::string, ImageOrigin>> origins;  // per model, in the given order
  Normalization normalization = Normalization::kFixed;
  std::array<double, kMetricCount> raw_min{}, raw_max{};  // kMinMax: the range each metric was scaled by
  std::vector<ProbeEstimate> probes;                      // probe items' summary (empty without probe items)
  // EvaluateOptions::refusals: summary.json's "refusals" (RefusalJson each) when there is one.
  std::vector<backends::RefusalRate> refusals;
  size_t n_scored() const;
};
// summary.json: the results contract's header (benchmark "violin", schema_version,
// visalign_version) and "inputs" ({"dataset": {"manifest_sha256"}, "models": [{"model", "kind",
// "path"[, "run", "identity"]}]}), then the settings ("weights" of all nine metrics, "normalization": {"mode"}
// plus, for minmax, "raw_min" and "raw_max"), rows and problem lists.
Json SummaryJson(const Summary& summary, const Weights& weights);
// Numbers in CSV are FormatNumber (visalign/core/format.h): empty where summary.json has null.
std::string SummaryCsv(const Summary& summary);       // one line per row, normalised metrics
std::string SummaryMarkdown(const Summary& summary);  // the published-table shape
// Conditions that make an evaluation's numbers partial, one sentence each, from its summary.json: a
// model whose overall coverage is below 100 % (items without a scored image: missing or unreadable).
// summary.md opens with them (MarkdownWarning) and `visalign report` shows them at the top of the
// VIOLIN section: one wording for both.
std::vector<std::string> SummaryWarnings(const Json& summary);
// The probe summary, one ProbeEstimate per line: model,family,condition,measure,reference,value,lo,hi,p_value,n.
std::string ProbesCsv(const Summary& summary);

struct EvaluateOptions {
  Weights weights;
  Normalization normalization = Normalization::kFixed;
  std::string split = "all";  // train | test | all: the manifest's `split` column
  // Further selection, as `violin generate` selects what it generates: items matching `filters`
  // (MatchesFilters), then the first `limit` of those in manifest order (0 = all).
  ItemFilters filters;
  int64_t limit = 0;
  std::vector<std::string> by;  // extra grouping columns, from kGroupColumns
  MissingPolicy missing = MissingPolicy::kSkip;
  // Transparent pixels are scored composited over white (what viewers show) unless told otherwise.
  imaging::AlphaPolicy alpha{imaging::AlphaPolicy::Mode::kComposite, {255, 255, 255}};
  stats::BootstrapOptions bootstrap;  // intervals of the overall and common rows
  std::string manifest_sha256;        // the dataset's ManifestFingerprint, recorded in summary.json
  // The refusal rates of the generation runs scored (a refused row has no image: a missing item,
  // scored as `missing` says; its rate is a result, docs/backends.md "Refusals").
  std::vector<backends::RefusalRate> refusals;
  int threads = 0;  // scoring threads; 0 = ThreadCount()
  bool show_progress = true;
  // Called once per scored image, in a deterministic order (models as given, sources in
  // manifest order then k), from one thread.
  std::function<Status(const ImageScore&)> on_image;
};

// Scores every model's images against the selected items (split, filters, limit). Sources naming an id absent from
// `items` or the same (id, k) twice are kInvalidArgument; images of items outside the split are
// counted (n_outside_split), not scored; nor are they missing. An unknown split or column is kInvalidArgument. Decoding
// and scoring run on `threads` workers with a bounded window of results, so memory does not grow with the number of
// images; results and sums are taken in a fixed order, so numbers do not depend on the thread count.
Result<Summary> Evaluate(const std::vector<ManifestItem>& items, const std::vector<ModelImages>& models,
                         const EvaluateOptions& options);

// Evaluate() writing OUTDIR/items.jsonl (streamed) and OUTDIR/summary.{json,csv,md}, and with probe
// items OUTDIR/probes.csv (ProbesCsv).
Result<Summary> EvaluateToDirectory(const std::vector<ManifestItem>& items, const std::vector<ModelImages>& models,
                                    const EvaluateOptions& options, const std::filesystem::path& out_dir);

}  // namespace visalign::violin
