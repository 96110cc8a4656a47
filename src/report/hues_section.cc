// The Hues and Cues section: fail rates per model against the human leave-one-out rate, their
// distributions per architecture and pretraining-data family, the category × family heat tables
// and summary.csv.
#include <fmt/format.h>

#include "report/page.h"
#include "visalign/benchmarks/hues/hues.h"

namespace visalign::report::internal {
namespace {

// The paper's two measures (Hues and Cues, §2.5.1 and §2.5.2): the top-1 answer's Mahalanobis
// outlier test and the top-5 answers' Hotelling T² test (here with Benjamini–Hochberg). Leave-one-out
// is the human baseline's (§2.5.3), not the models'.
constexpr std::pair<std::string_view, std::string_view> kMetrics[] = {{"mahalanobis", "Mahalanobis outlier (top-1)"},
                                                                      {"hotelling", "Hotelling T² (top-5, BH)"}};
constexpr std::pair<std::string_view, std::string_view> kKinds[] = {{"architecture", "architecture"},
                                                                    {"dataset", "pretraining data"}};

Json Number(const Json& v) { return v.is_number() ? Json(v) : nullptr; }

// Where a model's family comes from (docs/report.md, "Model families"): the override file, then
// summary.json's catalogued family, then the shipped catalog data/hues/model_catalog.csv (the one
// `hues evaluate` reads), then the name rules.
struct Families {
  const ReportOptions& options;
  hues::Catalog catalog;

  ModelFamily Of(const Json& model) const {
    const std::string name = model.value("model", "");
    if (auto it = options.family_overrides.find(name); it != options.family_overrides.end()) return it->second;
    if (const Json& f = model.value("family", Json()); f.is_object())
      return {f.value("architecture", "other"), f.value("dataset", "other")};
    if (auto it = catalog.find(name); it != catalog.end()) return {it->second.architecture, it->second.dataset};
    return FamilyFromName(name);
  }
};

Json Tooltip(std::initializer_list<std::string_view> fields) {
  Json out = Json::array();
  for (std::string_view f : fields) {
    Json entry = {{"field", f}};
    if (f == "rate" || f == "human") entry["format"] = ".4f";
    out.push_back(entry);
  }
  return out;
}

// The human leave-one-out rate as a dashed rule: one mark from one data row. Layers are named
// "<name>" (their marks "<name>_marks"), unique in a spec.
Json HumanRule(double human, std::string_view channel, std::string name) {
  return {{"name", std::move(name)},
          {"data", {{"values", {{{"human", human}}}}}},
          {"mark", {{"type", "rule"}, {"strokeDash", {6, 4}}, {"color", "#888"}}},
          {"encoding",
           {{channel, {{"field", "human"}, {"type", "quantitative"}}},
            {"tooltip", {{{"field", "human"}, {"title", "human LOO fail rate"}, {"format", ".4f"}}}}}}};
}

Json ModelRows(const Json& models, const Families& families) {
  Json rows = Json::array();
  for (const Json& m : models) {
    const ModelFamily family = families.Of(m);
    for (const auto& [key, label] : kMetrics)
      rows.push_back({{"model", m.value("model", "")},
                      {"metric", label},
                      {"rate", Number(m.value(key, Json::object()).value("fail_rate", Json()))},
                      {"architecture", family.architecture},
                      {"dataset", family.dataset}});
  }
  return rows;
}

Json PerModelSpec(Json rows, double human) {
  Json spec = BaseSpec(std::move(rows));
  NeedNumbers(spec, {"rate"});
  spec["width"] = 520;
  spec["height"] = {{"step", 14}};
  spec["layer"] = {
      {{"name", "models"},
       {"mark", {{"type", "point"}, {"filled", true}, {"size", 50}}},
       {"encoding",
        {{"y",
          {{"field", "model"},
           {"type", "nominal"},
           {"sort", {{"op", "max"}, {"field", "rate"}, {"order", "descending"}}}}},
         {"x", {{"field", "rate"}, {"type", "quantitative"}, {"title", "fail rate"}, {"scale", {{"domain", {0, 1}}}}}},
         {"color", {{"field", "metric"}, {"type", "nominal"}}},
         {"tooltip", Tooltip({"model", "metric", "rate", "architecture", "dataset"})}}}},
      HumanRule(human, "x", "human")};
  return spec;
}

Json FamilySpec(Json rows, std::string_view kind, double human) {
  Json spec = BaseSpec(std::move(rows));
  NeedNumbers(spec, {"rate"});
  Json panels = Json::array();
  for (const auto& [key, label] : kMetrics) {
    const Json x = {{"field", kind}, {"type", "nominal"}, {"title", nullptr}};
    const Json y = {
        {"field", "rate"}, {"type", "quantitative"}, {"title", "fail rate"}, {"scale", {{"domain", {0, 1}}}}};
    panels.push_back(
        {{"title", label},
         {"width", {{"step", 44}}},
         {"height", 240},
         {"layer",
          {{{"transform", {{{"filter", fmt::format("datum.metric == '{}'", label)}}}},
            {"layer",
             {{{"mark", {{"type", "boxplot"}, {"extent", "min-max"}, {"opacity", 0.5}}},
               {"encoding",
                {{"x", x}, {"y", y}, {"color", {{"field", kind}, {"type", "nominal"}, {"legend", nullptr}}}}}},
              {{"name", fmt::format("models_{}", key)},
               {"mark", {{"type", "tick"}, {"color", "#333"}}},
               {"encoding",
                {{"x", x}, {"y", y}, {"tooltip", Tooltip({"model", "metric", "rate", "architecture", "dataset"})}}}}}}},
           HumanRule(human, "y", fmt::format("human_{}", key))}}});
  }
  spec["hconcat"] = std::move(panels);
  return spec;
}

// One row per (model, category) with both rates, plus one per category for the humans.
Json CategoryRows(const Json& summary, const Families& families) {
  Json rows = Json::array();
  for (const Json& m : summary.value("models", Json::array())) {
    const ModelFamily family = families.Of(m);
    for (const Json& c : m.value("categories", Json::array()))
      rows.push_back({{"model", m.value("model", "")},
                      {"category", c.value("category", "")},
                      {"architecture", family.architecture},
                      {"dataset", family.dataset},
                      {"rate", Number(c.value("mahalanobis_fail_rate", Json()))}});
  }
  return rows;
}

Json CategorySpec(Json rows, std::string_view kind) {
  Json spec = BaseSpec(std::move(rows));
  NeedNumbers(spec, {"rate"});
  spec["transform"].push_back(
      {{"aggregate", {{{"op", "mean"}, {"field", "rate"}, {"as", "rate"}}, {{"op", "count"}, {"as", "models"}}}},
       {"groupby", {"category", kind}}});
  const Json x = {{"field", kind}, {"type", "nominal"}, {"title", nullptr}};
  const Json y = {{"field", "category"}, {"type", "nominal"}, {"title", nullptr}};
  const Json tooltip = {{{"field", "category"}},
                        {{"field", kind}},
                        {{"field", "rate"}, {"title", "mean Mahalanobis fail rate"}, {"format", ".4f"}},
                        {{"field", "models"}}};
  spec["width"] = {{"step", 70}};
  spec["height"] = {{"step", 26}};
  spec["layer"] = {
      {{"name", "cells"},
       {"mark", {{"type", "rect"}}},
       {"encoding",
        {{"x", x},
         {"y", y},
         {"tooltip", tooltip},
         {"color",
          {{"field", "rate"},
           {"type", "quantitative"},
           {"title", "fail rate"},
           {"scale", {{"domain", {0, 1}}, {"scheme", "orangered"}}}}}}}},
      {{"name", "labels"},
       {"mark", {{"type", "text"}, {"fontSize", 10}}},
       {"encoding",
        {{"x", x},
         {"y", y},
         {"text", {{"field", "rate"}, {"type", "quantitative"}, {"format", ".2f"}}},
         {"color", {{"condition", {{"test", "datum.rate > 0.5"}, {"value", "white"}}}, {"value", "black"}}}}}}};
  return spec;
}

}  // namespace

Status BuildHuesSection(const ResultsFolder& folder, const ReportOptions& options, SectionBuilder& section) {
  VISALIGN_RETURN_IF_ERROR(RequireColumns(folder, {"model", "mahalanobis_fail_rate", "hotelling_fail_rate"}));
  const Json& summary = folder.summary;
  const Json& models = summary.value("models", Json::array());
  const Json& human_rate = summary.value("humans", Json::object()).value("fail_rate", Json());
  const double human = human_rate.is_number() ? human_rate.get<double>() : 0;
  std::vector<std::string> catalog_sources;
  VISALIGN_ASSIGN_OR_RETURN(hues::Catalog catalog, hues::LoadModelCatalog({}, catalog_sources));
  const Families families{options, std::move(catalog)};
  for (std::string& warning : hues::EvaluationWarnings(summary)) section.Note(std::move(warning));
  const Json rows = ModelRows(models, families);
  section.Html(fmt::format("<p>Human leave-one-out fail rate: <strong>{}</strong> (dashed line).</p>\n",
                           human_rate.is_number() ? fmt::format("{:.4f}", human) : "–"));
  section.AddFigure("fail-rates", "Fail rate per model.",
                    "The share of words whose model answer is a Mahalanobis outlier of the human answers, and whose "
                    "Hotelling T² test rejects (Benjamini–Hochberg); the dashed line is the human rate.",
                    PerModelSpec(rows, human));
  for (const auto& [kind, label] : kKinds)
    section.AddFigure(fmt::format("families-{}", kind), fmt::format("Fail rates by {} family.", label),
                      "Box: min, quartiles, max of the models' rates; ticks: the models. Families follow "
                      "docs/report.md (override file, the evaluation's catalog, data/hues/model_catalog.csv, else "
                      "the model-name rules).",
                      FamilySpec(rows, kind, human));
  const Json categories = CategoryRows(summary, families);
  for (const auto& [kind, label] : kKinds)
    section.AddFigure(fmt::format("categories-{}", kind), fmt::format("Category × {} family.", label),
                      "Mean Mahalanobis fail rate of the family's models per word category (the human rates per "
                      "category are in summary.json).",
                      CategorySpec(categories, kind));
  VISALIGN_RETURN_IF_ERROR(AddBoardFigures(folder, options, section));
  section.Heading("summary.csv");
  section.AddSummaryTable(folder.summary_csv);
  return Status::Ok();
}

}  // namespace visalign::report::internal
