// The VIOLIN evaluation summary's rows: group, overall and common-item rows from per-image values and
// their bootstrap intervals (the JSON/CSV/Markdown forms: summary_output.cc).
#include "benchmarks/violin/summary.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace visalign::violin {
namespace {

constexpr double kWorstValue = 1.0;  // every normalised metric, pre_mean and pur_mean are in [0, 1]

// The values a row averages, per image: the nine normalised metrics, pre_mean, pur_mean.
constexpr size_t kPreIndex = kMetricCount, kPurIndex = kMetricCount + 1, kValueCount = kMetricCount + 2;
using Values = std::array<double, kValueCount>;

Values ValuesOf(const Metrics& m) {
  Values v{};
  std::copy(m.norm.begin(), m.norm.end(), v.begin());
  v[kPreIndex] = m.pre_mean;
  v[kPurIndex] = m.pur_mean;
  return v;
}

// What a row accumulates from one item of one model.
struct Sums {
  Values values{};
  std::array<double, kMetricCount> raw{};
  double images = 0;  // images counted in `values` (worst-valued ones included)
  size_t n_scored = 0, n_missing = 0, n_unreadable = 0, n_items = 0, n_items_scored = 0;
  void Add(const Sums& o) {
    for (size_t k = 0; k < kValueCount; ++k) values[k] += o.values[k];
    for (size_t k = 0; k < kMetricCount; ++k) raw[k] += o.raw[k];
    images += o.images;
    n_scored += o.n_scored;
    n_missing += o.n_missing;
    n_unreadable += o.n_unreadable;
    n_items += o.n_items;
    n_items_scored += o.n_items_scored;
  }
};

Sums ItemSums(const std::vector<ImageRecord>& images, MissingPolicy policy) {
  Sums s;
  s.n_items = 1;
  auto add_worst = [&] {
    if (policy != MissingPolicy::kWorst) return;
    for (double& v : s.values) v += kWorstValue;
    s.images += 1;
  };
  if (images.empty()) {
    s.n_missing = 1;
    add_worst();
  }
  for (const ImageRecord& image : images) {
    if (!image.scored) {
      ++s.n_unreadable;
      add_worst();
      continue;
    }
    ++s.n_scored;
    s.images += 1;
    const Values v = ValuesOf(image.metrics);
    for (size_t k = 0; k < kValueCount; ++k) s.values[k] += v[k];
    for (size_t k = 0; k < kMetricCount; ++k) s.raw[k] += image.metrics.raw[k];
  }
  s.n_items_scored = s.n_scored > 0 ? 1 : 0;
  return s;
}

void FillMeans(const Sums& s, SummaryRow& row) {
  row.n_scored = s.n_scored;
  row.n_missing = s.n_missing;
  row.n_unreadable = s.n_unreadable;
  row.n_items = s.n_items;
  row.n_items_scored = s.n_items_scored;
  if (s.images > 0) {
    std::array<double, kMetricCount> norm{};
    for (size_t k = 0; k < kMetricCount; ++k) norm[k] = s.values[k] / s.images;
    row.mean_norm = norm;
    row.pre_mean = s.values[kPreIndex] / s.images;
    row.pur_mean = s.values[kPurIndex] / s.images;
  }
  if (s.n_scored > 0) {
    std::array<double, kMetricCount> raw{};
    for (size_t k = 0; k < kMetricCount; ++k) raw[k] = s.raw[k] / static_cast<double>(s.n_scored);
    row.mean_raw = raw;
  }
}

// Percentile intervals of the row's means (sum of values / images over the drawn items); one
// draw of items per resample serves every value. Resamples without an image are left out.
// The drawn units' values are summed in the order drawn from a packed copy (the values and the image
// count of each unit, 96 bytes) rather than the whole Sums records: half the memory traffic on tens of
// thousands of items, the same sums. `progress` counts the resamples.
MetricIntervals Bootstrap(const std::vector<Sums>& units, const stats::BootstrapOptions& options, Progress* progress) {
  std::vector<std::array<double, kValueCount + 1>> packed(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    std::copy(units[u].values.begin(), units[u].values.end(), packed[u].begin());
    packed[u][kValueCount] = units[u].images;
  }
  std::array<std::vector<double>, kValueCount> replicates;
  stats::ResamplingRng rng(options.seed);
  std::vector<size_t> drawn;
  for (int r = 0; r < options.resamples; ++r) {
    rng.Resample(units.size(), drawn);
    Values total{};
    double images = 0;
    for (size_t u : drawn) {
      const std::array<double, kValueCount + 1>& v = packed[u];
      for (size_t k = 0; k < kValueCount; ++k) total[k] += v[k];
      images += v[kValueCount];
    }
    if (progress) progress->Add();
    if (images == 0) continue;
    for (size_t k = 0; k < kValueCount; ++k) replicates[k].push_back(total[k] / images);
  }
  const double tail = (1.0 - options.level) / 2.0;
  auto interval = [&](size_t k) -> stats::Interval {
    if (replicates[k].empty()) return {std::nan(""), std::nan("")};
    return {stats::Quantile(replicates[k], tail), stats::Quantile(replicates[k], 1.0 - tail)};
  };
  MetricIntervals out;
  for (size_t k = 0; k < kMetricCount; ++k) out.norm[k] = interval(k);
  out.pre_mean = interval(kPreIndex);
  out.pur_mean = interval(kPurIndex);
  return out;
}

SummaryRow WholeRow(const std::string& scope, const std::string& model, size_t n_by, const std::vector<Sums>& units,
                    const stats::BootstrapOptions& options, Progress* progress) {
  SummaryRow row;
  row.scope = scope;
  row.model = model;
  row.language = row.notation = kAllGroups;
  row.by_values.assign(n_by, kAllGroups);
  Sums total;
  for (const Sums& u : units) total.Add(u);
  FillMeans(total, row);
  if (!units.empty()) row.ci = Bootstrap(units, options, progress);
  return row;
}

}  // namespace

Result<MissingPolicy> ParseMissingPolicy(std::string_view name) {
  if (name == "skip") return MissingPolicy::kSkip;
  if (name == "worst") return MissingPolicy::kWorst;
  return Status::InvalidArgument("unknown missing-image policy \"" + std::string(name) + "\"", "missing policy",
                                 "skip or worst");
}

std::string_view MissingPolicyName(MissingPolicy policy) { return policy == MissingPolicy::kWorst ? "worst" : "skip"; }

Result<std::string> ColumnValue(const ManifestItem& item, std::string_view column) {
  if (column == "split") return item.split;
  if (column == "prompt_split") return item.prompt_split;
  if (column == "hue_split1") return item.hue_split1;
  if (column == "hue_split2") return item.hue_split2;
  if (column == "template_id") return item.template_id;
  if (column == "layout") return std::string(LayoutName(item.layout));
  std::string names;
  for (std::string_view c : kGroupColumns) names += (names.empty() ? "" : ", ") + std::string(c);
  return Status::InvalidArgument("unknown manifest column \"" + std::string(column) + "\"", "grouping column", names);
}

size_t Summary::n_scored() const {
  size_t n = 0;
  for (const SummaryRow& r : rows) n += r.n_scored;
  return n;
}

Status BuildRows(const std::vector<const ManifestItem*>& items, const std::vector<std::string>& models,
                 const std::vector<std::vector<std::vector<ImageRecord>>>& records, Summary& summary,
                 Progress* progress) {
  using GroupKey = std::tuple<size_t, int, std::string, std::string, std::vector<std::string>>;
  std::map<GroupKey, Sums> groups;
  std::vector<std::vector<Sums>> units(models.size());
  std::vector<bool> common(items.size(), true);
  std::vector<std::vector<std::string>> by_values(items.size());
  for (size_t i = 0; i < items.size(); ++i)
    for (const std::string& column : summary.by) {
      VISALIGN_ASSIGN_OR_RETURN(std::string value, ColumnValue(*items[i], column));
      by_values[i].push_back(std::move(value));
    }
  for (size_t m = 0; m < models.size(); ++m) {
    for (size_t i = 0; i < items.size(); ++i) {
      const ManifestItem& item = *items[i];
      const Sums s = ItemSums(records[m][i], summary.missing_policy);
      groups[{m, item.variation, item.language, item.notation, by_values[i]}].Add(s);
      units[m].push_back(s);
      common[i] = common[i] && s.n_items_scored > 0;
    }
  }
  for (const auto& [key, sums] : groups) {
    SummaryRow row;
    row.model = models[std::get<0>(key)];
    row.variation = std::get<1>(key);
    row.language = std::get<2>(key);
    row.notation = std::get<3>(key);
    row.by_values = std::get<4>(key);
    FillMeans(sums, row);
    summary.rows.push_back(std::move(row));
  }
  summary.n_items = items.size();
  summary.n_common_items = models.empty() ? 0 : static_cast<size_t>(std::count(common.begin(), common.end(), true));
  for (size_t m = 0; m < models.size(); ++m) {
    summary.overall.push_back(WholeRow("overall", models[m], summary.by.size(), units[m], summary.bootstrap, progress));
    if (models.size() < 2) continue;
    std::vector<Sums> shared;
    for (size_t i = 0; i < items.size(); ++i)
      if (common[i]) shared.push_back(units[m][i]);
    summary.common.push_back(WholeRow("common", models[m], summary.by.size(), shared, summary.bootstrap, progress));
  }
  return Status::Ok();
}

}  // namespace visalign::violin
