// Probe items inside `violin evaluate`: per-image scoring by family and the probe summary with
// bootstrap intervals (docs/metrics.md, "Probe metrics").
#include "benchmarks/violin/probes_evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "visalign/benchmarks/violin/probes.h"
#include "visalign/core/format.h"
#include "visalign/core/io.h"

namespace visalign::violin {
namespace {

constexpr double kNaN = ProbeMeasures::kNaN;
constexpr double kWithinPoints = 2.0;  // inertia: "obedient" within +-2 percentage points
constexpr int kMarkdownDecimals = 4;

using Extract = std::function<double(const ManifestItem&, const Metrics&)>;

struct MeasureDef {
  std::string name;
  Extract value;
};

double Raw(const Metrics& m, Metric metric) { return m.raw[static_cast<size_t>(metric)]; }

double PullOf(const ManifestItem& item, const Metrics& m) {
  if (!item.probe || !item.probe->context_lab || m.blocks.empty()) return kNaN;
  const color::Rgb255 mean = m.blocks[0].mean;
  return GravityPull(color::SrgbToLab({mean.r / 255.0, mean.g / 255.0, mean.b / 255.0}),
                     color::Srgb8ToLab(item.targets[0]), *item.probe->context_lab);
}

std::vector<MeasureDef> ColourMeasures(bool with_pull) {
  std::vector<MeasureDef> out = {
      {"pre_mean", [](const ManifestItem&, const Metrics& m) { return m.pre_mean; }},
      {"pur_mean", [](const ManifestItem&, const Metrics& m) { return m.pur_mean; }},
      {"de00", [](const ManifestItem&, const Metrics& m) { return Raw(m, Metric::kDe00); }},
      {"hf", [](const ManifestItem&, const Metrics& m) { return Raw(m, Metric::kHf); }},
      {"ced", [](const ManifestItem&, const Metrics& m) { return Raw(m, Metric::kCed); }},
  };
  if (with_pull) out.push_back({"pull", PullOf});
  return out;
}

std::vector<MeasureDef> GeometryMeasures() {
  auto probe = [](double ProbeMeasures::*field) {
    return [field](const ManifestItem&, const Metrics& m) { return m.probe ? (*m.probe).*field : kNaN; };
  };
  return {{"position_error_px", probe(&ProbeMeasures::position_error_px)},
          {"position_error_frac", probe(&ProbeMeasures::position_error_frac)},
          {"size_error", probe(&ProbeMeasures::size_error)},
          {"iou", probe(&ProbeMeasures::iou)},
          {"distance_error_px", probe(&ProbeMeasures::distance_error_px)},
          {"failure_rate", [](const ManifestItem& item, const Metrics& m) {
             if (!m.probe) return kNaN;
             return m.probe->shape_count == static_cast<int>(item.probe->shapes.size()) ? 0.0 : 1.0;
           }}};
}

// Mean of `value` over an item's scored images (NaN values skipped; NaN when none is left).
double ItemValue(const ManifestItem& item, const std::vector<ImageRecord>& images, const Extract& value) {
  double sum = 0, n = 0;
  for (const ImageRecord& r : images) {
    if (!r.scored) continue;
    const double v = value(item, r.metrics);
    if (std::isfinite(v)) sum += v, n += 1;
  }
  return n > 0 ? sum / n : kNaN;
}

double MeanOf(const std::vector<double>& values, const std::vector<size_t>& units) {
  double sum = 0;
  for (size_t u : units) sum += values[u];
  return units.empty() ? kNaN : sum / static_cast<double>(units.size());
}

std::vector<double> Finite(const std::vector<double>& values) {
  std::vector<double> out;
  for (double v : values)
    if (std::isfinite(v)) out.push_back(v);
  return out;
}

ProbeEstimate MeanEstimate(ProbeEstimate e, const std::vector<double>& raw, const stats::BootstrapOptions& bootstrap) {
  const std::vector<double> values = Finite(raw);
  std::vector<size_t> all(values.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  e.n = values.size();
  e.value = MeanOf(values, all);
  e.ci = stats::BootstrapInterval(
      values.size(), [&](const std::vector<size_t>& u) { return MeanOf(values, u); }, bootstrap);
  return e;
}

ProbeEstimate PairedEstimate(ProbeEstimate e, const std::vector<double>& a_raw, const std::vector<double>& b_raw,
                             const stats::BootstrapOptions& bootstrap) {
  std::vector<double> a, b;
  for (size_t i = 0; i < a_raw.size(); ++i)
    if (std::isfinite(a_raw[i]) && std::isfinite(b_raw[i])) a.push_back(a_raw[i]), b.push_back(b_raw[i]);
  e.n = a.size();
  if (a.empty()) return e;
  const stats::PairedDifference d = stats::PairedBootstrap(
      a.size(), [&](const std::vector<size_t>& u) { return MeanOf(a, u); },
      [&](const std::vector<size_t>& u) { return MeanOf(b, u); }, bootstrap);
  e.value = d.difference;
  e.ci = d.interval;
  e.p_value = d.p_value;
  return e;
}

// Negation and gravity: per condition, the measures over colour groups and their paired differences
// to the reference condition (the family's first).
void ColourFamily(ProbeFamily family, const std::string& model, const std::vector<const ManifestItem*>& items,
                  const std::vector<std::vector<ImageRecord>>& records, const stats::BootstrapOptions& bootstrap,
                  std::vector<ProbeEstimate>& out) {
  const std::vector<std::string>& conditions = ProbeConditions(family);
  std::map<std::string, size_t> group_index;
  std::vector<std::map<std::string, size_t>> members;  // group -> condition -> item index
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i]->probe || items[i]->probe->family != family) continue;
    auto [it, inserted] = group_index.emplace(items[i]->probe->group, members.size());
    if (inserted) members.emplace_back();
    members[it->second][items[i]->probe->condition] = i;
  }
  if (members.empty()) return;
  const std::string family_name(ProbeFamilyName(family));
  for (const MeasureDef& measure : ColourMeasures(family == ProbeFamily::kGravity)) {
    std::map<std::string, std::vector<double>> per_condition;
    for (const std::string& c : conditions)
      for (const auto& group : members) {
        auto it = group.find(c);
        per_condition[c].push_back(
            it == group.end() ? kNaN : ItemValue(*items[it->second], records[it->second], measure.value));
      }
    for (const std::string& c : conditions) {
      if (measure.name == "pull" && c != "consistent" && c != "conflicting") continue;
      out.push_back(MeanEstimate({model, family_name, c, measure.name, ""}, per_condition[c], bootstrap));
      if (c != conditions[0] && measure.name != "pull")
        out.push_back(PairedEstimate({model, family_name, c, "diff_" + measure.name, conditions[0]}, per_condition[c],
                                     per_condition[conditions[0]], bootstrap));
    }
  }
}

struct Point {
  double requested, measured;
};

double Slope(const std::vector<Point>& p, const std::vector<size_t>& u) {
  double mx = 0, my = 0;
  for (size_t i : u) mx += p[i].requested, my += p[i].measured;
  mx /= u.size(), my /= u.size();
  double sxy = 0, sxx = 0;
  for (size_t i : u)
    sxy += (p[i].requested - mx) * (p[i].measured - my), sxx += (p[i].requested - mx) * (p[i].requested - mx);
  return sxx > 0 ? sxy / sxx : kNaN;
}

double Intercept(const std::vector<Point>& p, const std::vector<size_t>& u) {
  const double slope = Slope(p, u);
  double mx = 0, my = 0;
  for (size_t i : u) mx += p[i].requested, my += p[i].measured;
  return (my - slope * mx) / u.size();
}

void InertiaFamily(const std::string& model, const std::vector<const ManifestItem*>& items,
                   const std::vector<std::vector<ImageRecord>>& records, const stats::BootstrapOptions& bootstrap,
                   std::vector<ProbeEstimate>& out) {
  std::map<std::string, std::vector<Point>> points;
  const Extract split = [](const ManifestItem&, const Metrics& m) { return m.probe ? m.probe->measured_split : kNaN; };
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i]->probe || items[i]->probe->family != ProbeFamily::kInertia) continue;
    const double measured = ItemValue(*items[i], records[i], split);
    if (!std::isfinite(measured)) continue;
    points[items[i]->probe->condition].push_back({items[i]->probe->split, measured});
    points["all"].push_back({items[i]->probe->split, measured});
  }
  for (const auto& entry : points) {  // not a structured binding: clang 14 (fuzz build) cannot capture one
    const std::string& condition = entry.first;
    const std::vector<Point>& p = entry.second;
    std::vector<size_t> all(p.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    auto add = [&](const std::string& name, const stats::UnitStatistic& stat) {
      ProbeEstimate e{model, "inertia", condition, name, ""};
      e.n = p.size();
      e.value = stat(all);
      e.ci = stats::BootstrapInterval(p.size(), stat, bootstrap);
      out.push_back(e);
    };
    add("slope", [&](const std::vector<size_t>& u) { return Slope(p, u); });
    add("intercept", [&](const std::vector<size_t>& u) { return Intercept(p, u); });
    add("mae_pp", [&](const std::vector<size_t>& u) {
      double s = 0;
      for (size_t i : u) s += std::abs(p[i].measured - p[i].requested);
      return s / u.size();
    });
    add("within_2pp", [&](const std::vector<size_t>& u) {
      double s = 0;
      for (size_t i : u) s += std::abs(p[i].measured - p[i].requested) <= kWithinPoints;
      return s / u.size();
    });
  }
}

void GeometryFamily(const std::string& model, const std::vector<const ManifestItem*>& items,
                    const std::vector<std::vector<ImageRecord>>& records, const stats::BootstrapOptions& bootstrap,
                    std::vector<ProbeEstimate>& out) {
  for (const std::string& c : ProbeConditions(ProbeFamily::kGeometry)) {
    for (const MeasureDef& measure : GeometryMeasures()) {
      if (measure.name == "distance_error_px" && c != "pair") continue;
      std::vector<double> values;
      for (size_t i = 0; i < items.size(); ++i)
        if (items[i]->probe && items[i]->probe->family == ProbeFamily::kGeometry && items[i]->probe->condition == c)
          values.push_back(ItemValue(*items[i], records[i], measure.value));
      if (!values.empty()) out.push_back(MeanEstimate({model, "geometry", c, measure.name, ""}, values, bootstrap));
    }
  }
}

Json Number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

}  // namespace

bool HasViolinScore(const ManifestItem& item) {
  return !item.probe || item.probe->family == ProbeFamily::kNegation || item.probe->family == ProbeFamily::kGravity;
}

Result<Metrics> ScoreItemImage(const imaging::Image& image, const ManifestItem& item, const Weights& weights) {
  if (HasViolinScore(item)) return ScoreImage(image, TargetSpec::FromItem(item), weights);
  VISALIGN_ASSIGN_OR_RETURN(ProbeMeasures measures, MeasureProbe(image, item));
  Metrics m;
  m.alpha_min = image.alpha_min;
  m.probe = measures;
  return m;
}

std::vector<ProbeEstimate> SummariseProbes(const std::vector<const ManifestItem*>& items,
                                           const std::vector<std::string>& models,
                                           const std::vector<std::vector<std::vector<ImageRecord>>>& records,
                                           const stats::BootstrapOptions& bootstrap) {
  std::vector<ProbeEstimate> out;
  if (std::none_of(items.begin(), items.end(), [](const ManifestItem* i) { return i->probe.has_value(); })) return out;
  std::vector<std::string> languages;  // in manifest order
  for (const ManifestItem* item : items)
    if (item->probe && std::find(languages.begin(), languages.end(), item->language) == languages.end())
      languages.push_back(item->language);
  for (size_t m = 0; m < models.size(); ++m) {
    for (const std::string& language : languages) {
      std::vector<const ManifestItem*> subset;
      std::vector<std::vector<ImageRecord>> subset_records;
      for (size_t i = 0; i < items.size(); ++i)
        if (items[i]->probe && items[i]->language == language)  // VIOLIN items' records are not copied
          subset.push_back(items[i]), subset_records.push_back(records[m][i]);
      const size_t first = out.size();
      ColourFamily(ProbeFamily::kNegation, models[m], subset, subset_records, bootstrap, out);
      ColourFamily(ProbeFamily::kGravity, models[m], subset, subset_records, bootstrap, out);
      InertiaFamily(models[m], subset, subset_records, bootstrap, out);
      GeometryFamily(models[m], subset, subset_records, bootstrap, out);
      for (size_t e = first; e < out.size(); ++e) out[e].language = language;
    }
  }
  return out;
}

void AddProbeJson(const ManifestItem& item, const Metrics& metrics, Json& line) {
  if (!item.probe) return;
  line["probe"] = ProbeSpecJson(*item.probe);
  Json measures = metrics.probe ? ProbeMeasuresJson(*metrics.probe) : Json::object();
  if (item.probe->context_lab) measures["pull"] = Number(PullOf(item, metrics));
  line["probe_measures"] = measures;
}

Json ProbesJson(const std::vector<ProbeEstimate>& probes) {
  Json rows = Json::array();
  for (const ProbeEstimate& e : probes) {
    Json j;
    j["model"] = e.model;
    j["language"] = e.language;
    j["family"] = e.family;
    j["condition"] = e.condition;
    j["measure"] = e.measure;
    j["reference"] = e.reference.empty() ? Json(nullptr) : Json(e.reference);
    j["value"] = Number(e.value);
    j["ci"] = {Number(e.ci.lo), Number(e.ci.hi)};
    j["p_value"] = Number(e.p_value);
    j["n"] = e.n;
    rows.push_back(j);
  }
  return rows;
}

std::string ProbesCsv(const Summary& summary) {
  std::string out = "model,language,family,condition,measure,reference,value,lo,hi,p_value,n\n";
  for (const ProbeEstimate& e : summary.probes)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", CsvField(e.model), e.language, e.family, e.condition,
                       e.measure, e.reference, FormatNumber(e.value), FormatNumber(e.ci.lo), FormatNumber(e.ci.hi),
                       FormatNumber(e.p_value), e.n);
  return out;
}

std::string ProbesMarkdown(const std::vector<ProbeEstimate>& probes) {
  if (probes.empty()) return "";
  auto cell = [](double v) { return std::isfinite(v) ? FormatFixed(v, kMarkdownDecimals) : std::string("–"); };
  std::string out =
      "\n## Probes\n\n| model | language | family | condition | measure | value | 95% CI | n "
      "|\n|---|---|---|---|---|---|---|---|\n";
  for (const ProbeEstimate& e : probes)
    out += fmt::format("| {} | {} | {} | {} | {}{} | {} | [{}, {}] | {} |\n", e.model, e.language, e.family,
                       e.condition, e.measure, e.reference.empty() ? "" : " (vs " + e.reference + ")", cell(e.value),
                       cell(e.ci.lo), cell(e.ci.hi), e.n);
  return out;
}

}  // namespace visalign::violin
