// Per-image VIOLIN metrics (definitions: docs/metrics.md).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "visalign/benchmarks/violin/evaluate.h"
#include "visalign/core/io.h"
#include "visalign/imaging/purity.h"

namespace visalign::violin {
namespace {

constexpr double kChannelMax = 255.0;
constexpr double kHueDegreesMax = 180.0;
constexpr double kHueTurnDegrees = 360.0;
constexpr double kDe00Max = 100.0;
constexpr double kChromaMax = 260.0;
constexpr double kHyabMax = 360.0;
constexpr double kSdMax = 0.5;  // sd_n = min(1, 2 * sd)
constexpr double kFractionMax = 1.0;

struct MetricInfo {
  std::string_view raw_name;
  std::string_view norm_name;
  double max;
};

const MetricInfo& Info(Metric m) {
  static const std::array<MetricInfo, kMetricCount> kInfo = {{
      {"rgb_ed", "rgb_ed", kChannelMax * std::sqrt(3.0)},
      {"rgb_rm", "rgb_rm", kChannelMax * std::sqrt(8.0 + kChannelMax / 256.0)},
      {"de00", "de00", kDe00Max},
      {"hue", "hue", kHueDegreesMax},
      {"chroma", "chroma", kChromaMax},
      {"hyab", "hyab", kHyabMax},
      {"sd", "sd_n", kSdMax},
      {"ced", "ced", kFractionMax},
      {"hf", "hf", kFractionMax},
  }};
  return kInfo[static_cast<size_t>(m)];
}

color::Rgb ToUnit(color::Rgb255 c) { return {c.r / kChannelMax, c.g / kChannelMax, c.b / kChannelMax}; }

// HSL as a point of the unit cube used for fuzzy projection: (h/360, s, l).
std::array<double, 3> HslPoint(color::Rgb unit) {
  const color::Hsl hsl = color::RgbToHsl(unit);
  return {hsl.h / kHueTurnDegrees, hsl.s, hsl.l};
}

}  // namespace

std::string_view RawName(Metric m) { return Info(m).raw_name; }
std::string_view NormName(Metric m) { return Info(m).norm_name; }

double Normalise(Metric m, double raw) { return std::clamp(raw / Info(m).max, 0.0, 1.0); }

Result<Weights> ParseWeights(std::string_view text) {
  const std::string where = "weights \"" + std::string(text) + "\"";
  const std::string expected =
      "six non-negative numbers w1,...,w6 (rgb_ed, rgb_rm, de00, hue, chroma, hyab) or nine (then sd, ced, hf), "
      "not all zero within precision or within purity";
  Weights weights;
  if (text.empty()) return weights;
  std::vector<double> values;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    if (values.size() == kMetricCount) return Status::InvalidArgument("too many weights", where, expected);
    VISALIGN_ASSIGN_OR_RETURN(double w, ParseDouble(text.substr(start, comma - start), where));
    if (!(w >= 0.0) || !std::isfinite(w))
      return Status::InvalidArgument("negative or non-finite weight " + std::to_string(w), where, expected);
    values.push_back(w);
    start = comma + 1;
  }
  if (values.size() != kPrecisionCount && values.size() != kMetricCount)
    return Status::InvalidArgument("expected 6 or 9 weights, got " + std::to_string(values.size()), where, expected);
  std::copy_n(values.begin(), kPrecisionCount, weights.precision.begin());
  if (values.size() == kMetricCount)
    std::copy_n(values.begin() + kPrecisionCount, kPurityCount, weights.purity.begin());
  const auto sum = [](const auto& group) { return std::accumulate(group.begin(), group.end(), 0.0); };
  if (sum(weights.precision) <= 0.0) return Status::InvalidArgument("all precision weights are zero", where, expected);
  if (sum(weights.purity) <= 0.0) return Status::InvalidArgument("all purity weights are zero", where, expected);
  return weights;
}

Result<Normalization> ParseNormalization(std::string_view name) {
  if (name == "fixed") return Normalization::kFixed;
  if (name == "minmax") return Normalization::kMinMax;
  return Status::InvalidArgument("unknown normalization \"" + std::string(name) + "\"", "normalization",
                                 "fixed (the documented maxima) or minmax (the range over the evaluated images)");
}

std::string_view NormalizationName(Normalization n) { return n == Normalization::kMinMax ? "minmax" : "fixed"; }

void WeightMeans(Metrics& m, const Weights& weights) {
  double pre = 0.0, pre_w = 0.0, pur = 0.0, pur_w = 0.0;
  for (size_t i = 0; i < kPrecisionCount; ++i) {
    pre += weights.precision[i] * m.norm[i];
    pre_w += weights.precision[i];
  }
  for (size_t i = 0; i < kPurityCount; ++i) {
    pur += weights.purity[i] * m.norm[kPrecisionCount + i];
    pur_w += weights.purity[i];
  }
  m.pre_mean = pre / pre_w;
  m.pur_mean = pur / pur_w;
}

Json MetricsJson(const Metrics& m) {
  Json raw = Json::object(), norm = Json::object();
  for (Metric metric : kAllMetrics) {
    raw[std::string(RawName(metric))] = m.raw[static_cast<size_t>(metric)];
    norm[std::string(NormName(metric))] = m.norm[static_cast<size_t>(metric)];
  }
  Json out = {{"raw", raw}, {"norm", norm}, {"pre_mean", m.pre_mean}, {"pur_mean", m.pur_mean}};
  if (m.alpha_min < 255) out["alpha_min"] = m.alpha_min;
  return out;
}

TargetSpec TargetSpec::FromItem(const ManifestItem& item) { return TargetSpec{item.layout, item.targets, item.fuzzy}; }

Status TargetSpec::Validate() const {
  if (fuzzy) {
    if (layout != Layout::kSingle)
      return Status::InvalidArgument("a fuzzy range with layout " + std::string(LayoutName(layout)), "target",
                                     "fuzzy ranges only for the single layout");
    return Status::Ok();
  }
  if (targets.size() != static_cast<size_t>(BlockCount(layout)))
    return Status::InvalidArgument(
        std::to_string(targets.size()) + " target colors for layout " + std::string(LayoutName(layout)), "target",
        std::to_string(BlockCount(layout)) + " colors in layout order");
  return Status::Ok();
}

std::array<double, kPrecisionCount> PrecisionRaw(color::Rgb255 mean, color::Rgb255 target) {
  const color::Lab lab_mean = color::SrgbToLab(ToUnit(mean));
  const color::Lab lab_target = color::SrgbToLab(ToUnit(target));
  return {color::RgbEuclidean(mean, target),           color::RgbRedmean(mean, target),
          color::DeltaE2000(lab_target, lab_mean),     color::HueDifference(lab_mean, lab_target),
          color::ChromaDistance(lab_mean, lab_target), color::HyAB(lab_mean, lab_target)};
}

color::Rgb255 FuzzyTarget(color::Rgb255 mean, color::Srgb8 low, color::Srgb8 high) {
  const std::array<double, 3> v = HslPoint(ToUnit(mean));
  const std::array<double, 3> lo = HslPoint(color::FromSrgb8(low));
  const std::array<double, 3> hi = HslPoint(color::FromSrgb8(high));
  double dot = 0.0, norm_sq = 0.0;
  for (int i = 0; i < 3; ++i) {
    dot += (v[i] - lo[i]) * (hi[i] - lo[i]);
    norm_sq += (hi[i] - lo[i]) * (hi[i] - lo[i]);
  }
  const double t = norm_sq == 0.0 ? 0.0 : std::clamp(dot / norm_sq, 0.0, 1.0);
  color::Hsl p;
  p.h = (lo[0] + t * (hi[0] - lo[0])) * kHueTurnDegrees;
  p.s = lo[1] + t * (hi[1] - lo[1]);
  p.l = lo[2] + t * (hi[2] - lo[2]);
  return color::ToRgb255(color::HslToRgb(p));
}

Result<Metrics> ScoreImage(const imaging::Image& image, const TargetSpec& target, const Weights& weights) {
  VISALIGN_RETURN_IF_ERROR(target.Validate());
  const auto positive = [](const auto& group) { return std::accumulate(group.begin(), group.end(), 0.0) > 0.0; };
  if (!positive(weights.precision) || !positive(weights.purity))
    return Status::InvalidArgument("precision or purity weights sum to zero", "weights", "positive weights");
  const int blocks = BlockCount(target.layout);
  Metrics out;
  out.alpha_min = image.alpha_min;
  for (int b = 0; b < blocks; ++b) {
    const Rect rect = BlockRect(target.layout, b, image.width, image.height);
    if (rect.w <= 0 || rect.h <= 0)
      return Status::InvalidArgument(
          "image " + std::to_string(image.width) + "x" + std::to_string(image.height) + " is too small",
          "layout " + std::string(LayoutName(target.layout)), "at least one pixel in every block");
    VISALIGN_ASSIGN_OR_RETURN(imaging::RegionStats stats,
                              imaging::AnalyzeRegion(image, {rect.x, rect.y, rect.w, rect.h}));
    const color::Rgb255 mean{stats.mean[0], stats.mean[1], stats.mean[2]};
    const color::Rgb255 t = target.fuzzy ? FuzzyTarget(mean, target.fuzzy->first, target.fuzzy->second)
                                         : color::ToRgb255(target.targets[static_cast<size_t>(b)]);
    out.blocks.push_back({mean, t});
    const std::array<double, kPrecisionCount> precision = PrecisionRaw(mean, t);
    std::array<double, kMetricCount> raw{};
    std::copy(precision.begin(), precision.end(), raw.begin());
    raw[static_cast<size_t>(Metric::kSd)] = stats.sd;
    raw[static_cast<size_t>(Metric::kCed)] = stats.ced;
    raw[static_cast<size_t>(Metric::kHf)] = stats.hf;
    for (Metric m : kAllMetrics) {
      const size_t i = static_cast<size_t>(m);
      out.raw[i] += raw[i];
      out.norm[i] += Normalise(m, raw[i]);
    }
  }
  for (size_t i = 0; i < kMetricCount; ++i) {
    out.raw[i] /= blocks;
    out.norm[i] /= blocks;
  }
  WeightMeans(out, weights);
  return out;
}

Json BlocksJson(const std::vector<BlockColor>& blocks) {
  Json out = Json::array();
  for (const BlockColor& b : blocks)
    out.push_back({{"mean", {b.mean.r, b.mean.g, b.mean.b}}, {"target", {b.target.r, b.target.g, b.target.b}}});
  return out;
}

}  // namespace visalign::violin
