// The JSON/CSV/Markdown forms of the VIOLIN evaluation summary (evaluate.h: SummaryJson, SummaryCsv,
// SummaryMarkdown, SummaryWarnings; summary_output.h).
#include "benchmarks/violin/summary_output.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <optional>

#include "benchmarks/violin/probes_evaluate.h"
#include "benchmarks/violin/summary.h"
#include "visalign/core/benchmarks.h"
#include "visalign/core/format.h"
#include "visalign/core/io.h"
#include "visalign/core/results.h"

namespace visalign::violin {
namespace {

constexpr int kMarkdownDecimals = 4;

// Column order of the CSV and Markdown tables: precision, pre_mean, purity, pur_mean.
struct TableColumn {
  std::string name;
  std::function<std::optional<double>(const SummaryRow&)> value;
  std::function<std::optional<stats::Interval>(const SummaryRow&)> interval;
};

std::vector<TableColumn> MetricColumns() {
  std::vector<TableColumn> columns;
  auto metric = [](Metric m) {
    const size_t i = static_cast<size_t>(m);
    return TableColumn{std::string(NormName(m)),
                       [i](const SummaryRow& r) -> std::optional<double> {
                         if (!r.mean_norm) return std::nullopt;
                         return (*r.mean_norm)[i];
                       },
                       [i](const SummaryRow& r) -> std::optional<stats::Interval> {
                         if (!r.ci) return std::nullopt;
                         return r.ci->norm[i];
                       }};
  };
  for (size_t i = 0; i < kPrecisionCount; ++i) columns.push_back(metric(kAllMetrics[i]));
  columns.push_back({"pre_mean", [](const SummaryRow& r) { return r.pre_mean; },
                     [](const SummaryRow& r) -> std::optional<stats::Interval> {
                       if (!r.ci) return std::nullopt;
                       return r.ci->pre_mean;
                     }});
  for (size_t i = kPrecisionCount; i < kMetricCount; ++i) columns.push_back(metric(kAllMetrics[i]));
  columns.push_back({"pur_mean", [](const SummaryRow& r) { return r.pur_mean; },
                     [](const SummaryRow& r) -> std::optional<stats::Interval> {
                       if (!r.ci) return std::nullopt;
                       return r.ci->pur_mean;
                     }});
  return columns;
}

// A Markdown cell: rounded for reading, "–" where there is no value.
std::string Cell(double v) {
  const std::string text = FormatFixed(v, kMarkdownDecimals);
  return text.empty() ? "–" : text;
}
Json Optional(const std::optional<double>& v) { return v ? Json(*v) : Json(); }

// The share as a percentage with one decimal, rounded down (so below 100 % never reads "100.0").
std::string PercentDown(double share) { return fmt::format("{:.1f}", std::floor(share * 1000.0) / 10.0); }

}  // namespace

std::vector<std::string> SummaryWarnings(const Json& summary) {
  std::vector<std::string> out;
  const bool worst = summary.value("missing_policy", std::string()) == MissingPolicyName(MissingPolicy::kWorst);
  for (const auto& row : summary.value("overall", Json::array())) {
    const double coverage = row.value("coverage", 1.0);
    if (coverage >= 1.0) continue;
    const size_t n_items = row.value("n_items", size_t{0});
    out.push_back(fmt::format(
        "coverage below 100 %: model {} has a scored image for {} of {} items ({} %; {} without any image, {} "
        "unreadable images), so its means {}.",
        row.value("model", std::string()), static_cast<size_t>(std::lround(coverage * static_cast<double>(n_items))),
        n_items, PercentDown(coverage), row.value("n_missing", size_t{0}), row.value("n_unreadable", size_t{0}),
        worst ? "count each missing image as the worst value" : "cover only the items it has images for"));
  }
  return out;
}

namespace {

Json IntervalJson(const stats::Interval& i) { return {i.lo, i.hi}; }

Json RowJson(const SummaryRow& r, const std::vector<std::string>& by) {
  Json row;
  if (r.scope != "group") row["scope"] = r.scope;
  row["model"] = r.model;
  row["variation"] = r.variation;
  row["language"] = r.language;
  row["notation"] = r.notation;
  for (size_t i = 0; i < by.size(); ++i) row[by[i]] = r.by_values[i];
  row["n_scored"] = r.n_scored;
  row["n_missing"] = r.n_missing;
  row["n_unreadable"] = r.n_unreadable;
  row["n_items"] = r.n_items;
  row["coverage"] = r.coverage();
  row["norm"] = r.mean_norm ? MetricObject(*r.mean_norm, true) : Json();
  row["raw"] = r.mean_raw ? MetricObject(*r.mean_raw, false) : Json();
  row["pre_mean"] = Optional(r.pre_mean);
  row["pur_mean"] = Optional(r.pur_mean);
  if (r.ci) {
    Json ci = Json::object();
    for (Metric m : kAllMetrics) ci[std::string(NormName(m))] = IntervalJson(r.ci->norm[static_cast<size_t>(m)]);
    ci["pre_mean"] = IntervalJson(r.ci->pre_mean);
    ci["pur_mean"] = IntervalJson(r.ci->pur_mean);
    row["ci95"] = ci;
  }
  return row;
}

Json ProblemJson(const Problem& p) {
  Json j;
  j["model"] = p.model;
  if (!p.item_id.empty()) j["id"] = p.item_id;
  if (p.k >= 0) j["k"] = p.k;
  if (!p.path.empty()) j["path"] = AbsoluteImagePath(p.path);
  j["reason"] = p.reason;
  return j;
}

}  // namespace

Json MetricObject(const std::array<double, kMetricCount>& values, bool normalised) {
  Json j = Json::object();
  for (Metric m : kAllMetrics) j[std::string(normalised ? NormName(m) : RawName(m))] = values[static_cast<size_t>(m)];
  return j;
}

namespace {

Json OriginJson(const std::string& model, const ImageOrigin& origin) {
  Json j;
  j["model"] = model;
  j["kind"] = origin.kind.empty() ? "unknown" : origin.kind;
  if (!origin.path.empty()) j["path"] = origin.path.string();
  if (origin.kind == "run") {
    j["run"] = origin.run;
    j["identity"] = origin.identity;
  }
  return j;
}

}  // namespace

Json SummaryJson(const Summary& summary, const Weights& weights) {
  Json j = ResultsHeader(benchmarks::kViolin);
  Json inputs;
  inputs["dataset"] = {{"manifest_sha256", summary.manifest_sha256}};
  inputs["models"] = Json::array();
  for (const auto& [model, origin] : summary.origins) inputs["models"].push_back(OriginJson(model, origin));
  j["inputs"] = inputs;
  Json w = Json::object();
  for (size_t i = 0; i < kPrecisionCount; ++i) w[std::string(RawName(kAllMetrics[i]))] = weights.precision[i];
  for (size_t i = 0; i < kPurityCount; ++i)
    w[std::string(RawName(kAllMetrics[kPrecisionCount + i]))] = weights.purity[i];
  j["weights"] = w;
  j["normalization"] = {{"mode", std::string(NormalizationName(summary.normalization))}};
  if (summary.normalization == Normalization::kMinMax && summary.n_scored() > 0) {
    j["normalization"]["raw_min"] = MetricObject(summary.raw_min, false);
    j["normalization"]["raw_max"] = MetricObject(summary.raw_max, false);
  }
  j["split"] = summary.split;
  Json filters = Json::object();
  for (const auto& [key, values] : summary.filters)
    filters[key] = std::vector<std::string>(values.begin(), values.end());
  j["selection"] = {{"filters", filters}, {"limit", summary.limit}};
  j["by"] = summary.by;
  j["missing_policy"] = std::string(MissingPolicyName(summary.missing_policy));
  j["alpha"] = AlphaPolicyText(summary.alpha);
  j["bootstrap"] = {{"resamples", summary.bootstrap.resamples},
                    {"seed", summary.bootstrap.seed},
                    {"level", summary.bootstrap.level},
                    {"unit", "item"}};
  j["n_items"] = summary.n_items;
  j["n_common_items"] = summary.n_common_items;
  j["n_outside_split"] = summary.n_outside_split;
  j["rows"] = Json::array();
  for (const SummaryRow& r : summary.rows) j["rows"].push_back(RowJson(r, summary.by));
  j["overall"] = Json::array();
  for (const SummaryRow& r : summary.overall) j["overall"].push_back(RowJson(r, summary.by));
  j["common"] = Json::array();
  for (const SummaryRow& r : summary.common) j["common"].push_back(RowJson(r, summary.by));
  for (const auto& [name, list] :
       {std::pair{"missing", &summary.missing}, std::pair{"unreadable", &summary.unreadable},
        std::pair{"unmatched", &summary.unmatched}, std::pair{"transparent", &summary.transparent}}) {
    j[std::string("n_") + name] = list->size();
    j[name] = Json::array();
    for (const Problem& p : *list) j[name].push_back(ProblemJson(p));
  }
  if (!summary.probes.empty()) j["probes"] = ProbesJson(summary.probes);
  if (!summary.refusals.empty()) {
    j["refusals"] = Json::array();
    for (const backends::RefusalRate& r : summary.refusals) j["refusals"].push_back(backends::RefusalJson(r));
  }
  return j;
}

std::string AbsoluteImagePath(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return (ec ? path : absolute).lexically_normal().string();
}

std::string SummaryCsv(const Summary& summary) {
  const std::vector<TableColumn> columns = MetricColumns();
  std::string out = "scope,model,variation,language,notation";
  for (const std::string& column : summary.by) out += "," + CsvField(column);
  for (const TableColumn& c : columns) out += "," + c.name;
  out += ",n_scored,n_missing,n_unreadable,n_items,coverage";
  for (const TableColumn& c : columns) out += "," + c.name + "_lo," + c.name + "_hi";
  out += "\n";
  auto line = [&](const SummaryRow& r) {
    out += r.scope + "," + CsvField(r.model) + "," +
           (r.variation == 0 ? std::string(kAllGroups) : std::to_string(r.variation)) + "," + CsvField(r.language) +
           "," + CsvField(r.notation);
    for (const std::string& v : r.by_values) out += "," + CsvField(v);
    for (const TableColumn& c : columns) {
      const std::optional<double> v = c.value(r);
      out += "," + (v ? FormatNumber(*v) : std::string());
    }
    out +=
        fmt::format(",{},{},{},{},{}", r.n_scored, r.n_missing, r.n_unreadable, r.n_items, FormatNumber(r.coverage()));
    for (const TableColumn& c : columns) {
      const std::optional<stats::Interval> i = c.interval(r);
      out += i ? "," + FormatNumber(i->lo) + "," + FormatNumber(i->hi) : std::string(",,");
    }
    out += "\n";
  };
  for (const auto* rows : {&summary.rows, &summary.overall, &summary.common})
    for (const SummaryRow& r : *rows) line(r);
  return out;
}

std::string SummaryMarkdown(const Summary& summary) {
  const std::vector<TableColumn> columns = MetricColumns();
  std::string header = "| model | var | lang | notation |", rule = "|---|---:|---|---|";
  for (const std::string& column : summary.by) {
    header += " " + column + " |";
    rule += "---|";
  }
  for (const TableColumn& c : columns) {
    header += " " + c.name + " |";
    rule += "---:|";
  }
  header += " n_scored | n_missing | n_unreadable | coverage |\n";
  rule += "---:|---:|---:|---:|\n";
  auto cells = [&](const SummaryRow& r, bool intervals) {
    std::string out;
    for (const TableColumn& c : columns) {
      const std::optional<double> v = c.value(r);
      const std::optional<stats::Interval> i = c.interval(r);
      if (!v)
        out += " – |";
      else if (intervals && i)
        out += fmt::format(" {} [{}, {}] |", Cell(*v), Cell(i->lo), Cell(i->hi));
      else
        out += fmt::format(" {} |", Cell(*v));
    }
    return out +
           fmt::format(" {} | {} | {} | {:.1f} % |\n", r.n_scored, r.n_missing, r.n_unreadable, 100.0 * r.coverage());
  };
  auto table = [&](const std::vector<SummaryRow>& rows, bool intervals) {
    std::string out = header + rule;
    for (const SummaryRow& r : rows) {
      out +=
          fmt::format("| {} | {} | {} | {} |", r.model,
                      r.variation == 0 ? std::string(kAllGroups) : std::to_string(r.variation), r.language, r.notation);
      for (const std::string& v : r.by_values) out += " " + v + " |";
      out += cells(r, intervals);
    }
    return out;
  };
  Json overall = {{"missing_policy", MissingPolicyName(summary.missing_policy)}, {"overall", Json::array()}};
  for (const SummaryRow& r : summary.overall) overall["overall"].push_back(RowJson(r, summary.by));
  std::string out;
  for (const std::string& warning : SummaryWarnings(overall)) out += MarkdownWarning(warning);
  out += table(summary.rows, false);
  if (!summary.overall.empty())
    out += fmt::format(
               "\nOverall, every {} item of the selection (split {}), with {:.0f} % bootstrap intervals over "
               "items ({} resamples, seed {}); missing images: {}:\n\n",
               summary.n_items, summary.split, 100.0 * summary.bootstrap.level, summary.bootstrap.resamples,
               summary.bootstrap.seed, MissingPolicyName(summary.missing_policy)) +
           table(summary.overall, true);
  if (!summary.common.empty())
    out += fmt::format("\nModels compared on the {} of {} items that every model has a scored image for:\n\n",
                       summary.n_common_items, summary.n_items) +
           table(summary.common, true);
  return out + ProbesMarkdown(summary.probes);
}

}  // namespace visalign::violin
