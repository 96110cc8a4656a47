// The ACVA-Bench section: pass rates per model and category with their bootstrap intervals, the
// diversity quadrants and D_img against H, near-synonym accuracies with the 2AFC position bias,
// the tiers of the paired tests, and summary.csv.
#include <fmt/format.h>

#include "report/page.h"
#include "visalign/benchmarks/acva/acva.h"
#include "visalign/core/format.h"

namespace visalign::report::internal {
namespace {

constexpr std::string_view kQuadrants[] = {"genuine", "pseudo", "metaphor", "low"};

Json Number(const Json& v) { return v.is_number() ? Json(v) : nullptr; }
Json Bound(const Json& ci, size_t i) { return ci.is_array() && ci.size() == 2 ? Number(ci[i]) : nullptr; }
const Json& Field(const Json& object, std::string_view key) {
  static const Json kNull;
  return object.is_object() && object.contains(key) ? object[std::string(key)] : kNull;
}

Json Tooltip(std::initializer_list<std::string_view> fields) {
  Json out = Json::array();
  for (std::string_view f : fields) {
    Json entry = {{"field", f}};
    if (f != "model" && f != "category" && f != "measure" && f != "quadrant") entry["format"] = ".4f";
    out.push_back(entry);
  }
  return out;
}

// Bars of `value` per (x field, model) with a rule from lo to hi where both exist.
Json BarsWithIntervals(Json rows, std::string_view x_field, std::string y_title) {
  Json spec = BaseSpec(std::move(rows));
  NeedNumbers(spec, {"value"});
  const Json x = {{"field", x_field}, {"type", "nominal"}, {"title", nullptr}};
  const Json offset = {{"field", "model"}};
  const Json tooltip = Tooltip({"model", x_field, "value", "lo", "hi"});
  spec["width"] = {{"step", 60}};
  spec["height"] = 240;
  spec["layer"] = {
      {{"name", "bars"},
       {"mark", {{"type", "bar"}}},
       {"encoding",
        {{"x", x},
         {"xOffset", offset},
         {"y", {{"field", "value"}, {"type", "quantitative"}, {"title", y_title}, {"scale", {{"domain", {0, 1}}}}}},
         {"color", {{"field", "model"}, {"type", "nominal"}}},
         {"tooltip", tooltip}}}}};
  if (AnyNumber(spec["data"]["values"], "lo"))
    spec["layer"].push_back({{"transform", {{{"filter", "isValid(datum.lo) && isValid(datum.hi)"}}}},
                             {"name", "intervals"},
                             {"mark", {{"type", "rule"}}},
                             {"encoding",
                              {{"x", x},
                               {"xOffset", offset},
                               {"y", {{"field", "lo"}, {"type", "quantitative"}}},
                               {"y2", {{"field", "hi"}}},
                               {"tooltip", tooltip}}}});
  return spec;
}

Json PassRateRows(const Json& models) {
  Json rows = Json::array();
  for (const Json& m : models) {
    const std::string model = m.value("model", "");
    rows.push_back({{"model", model},
                    {"category", "all"},
                    {"value", Number(Field(m, "pass_rate"))},
                    {"lo", Bound(Field(m, "pass_rate_ci"), 0)},
                    {"hi", Bound(Field(m, "pass_rate_ci"), 1)}});
    for (const auto& [category, c] : Field(m, "by_category").items())
      rows.push_back({{"model", model},
                      {"category", category},
                      {"value", Number(Field(c, "pass_rate"))},
                      {"lo", Bound(Field(c, "pass_rate_ci"), 0)},
                      {"hi", Bound(Field(c, "pass_rate_ci"), 1)}});
  }
  return rows;
}

Json QuadrantSpec(const Json& models) {
  Json rows = Json::array();
  for (const Json& m : models) {
    const Json& filtered = Field(Field(m, "diversity"), "filtered");
    for (std::string_view q : kQuadrants)
      rows.push_back({{"model", m.value("model", "")},
                      {"quadrant", q},
                      {"share", Number(Field(Field(filtered, "quadrants"), q))}});
  }
  Json spec = BaseSpec(std::move(rows));
  NeedNumbers(spec, {"share"});
  spec["width"] = 420;
  spec["height"] = {{"step", 22}};
  spec["name"] = "shares";
  spec["mark"] = {{"type", "bar"}};
  spec["encoding"] = {
      {"y", {{"field", "model"}, {"type", "nominal"}, {"title", nullptr}}},
      {"x", {{"field", "share"}, {"type", "quantitative"}, {"stack", "normalize"}, {"title", "share of concepts"}}},
      {"color", {{"field", "quadrant"}, {"type", "nominal"}, {"sort", kQuadrants}}},
      {"order", {{"field", "quadrant"}}},
      {"tooltip", {{{"field", "model"}}, {{"field", "quadrant"}}, {{"field", "share"}, {"format", ".4f"}}}}};
  return spec;
}

Json DiversitySpec(const Json& models) {
  Json rows = Json::array();
  for (const Json& m : models) {
    const Json& d = Field(Field(m, "diversity"), "filtered");
    rows.push_back({{"model", m.value("model", "")},
                    {"d_img", Number(Field(d, "d_img_mean"))},
                    {"d_img_lo", Bound(Field(d, "d_img_ci"), 0)},
                    {"d_img_hi", Bound(Field(d, "d_img_ci"), 1)},
                    {"h", Number(Field(d, "h_mean"))},
                    {"h_lo", Bound(Field(d, "h_ci"), 0)},
                    {"h_hi", Bound(Field(d, "h_ci"), 1)}});
  }
  Json spec = BaseSpec(std::move(rows));
  NeedNumbers(spec, {"d_img", "h"});
  const Json x = {{"field", "d_img"}, {"type", "quantitative"}, {"title", "D_img (image diversity)"}};
  const Json y = {{"field", "h"}, {"type", "quantitative"}, {"title", "H (metaphor entropy, bits)"}};
  const Json tooltip = Tooltip({"model", "d_img", "d_img_lo", "d_img_hi", "h", "h_lo", "h_hi"});
  spec["width"] = 360;
  spec["height"] = 280;
  spec["transform"].push_back({{"filter", "isValid(datum.d_img) && isValid(datum.h)"}});
  spec["layer"] = {
      {{"name", "models"},
       {"mark", {{"type", "point"}, {"filled", true}, {"size", 80}}},
       {"encoding", {{"x", x}, {"y", y}, {"color", {{"field", "model"}, {"type", "nominal"}}}, {"tooltip", tooltip}}}},
      {{"name", "d_img_intervals"},
       {"mark", {{"type", "rule"}}},
       {"encoding",
        {{"x", {{"field", "d_img_lo"}, {"type", "quantitative"}}},
         {"x2", {{"field", "d_img_hi"}}},
         {"y", y},
         {"color", {{"field", "model"}, {"type", "nominal"}}}}}},
      {{"name", "h_intervals"},
       {"mark", {{"type", "rule"}}},
       {"encoding",
        {{"x", x},
         {"y", {{"field", "h_lo"}, {"type", "quantitative"}}},
         {"y2", {{"field", "h_hi"}}},
         {"color", {{"field", "model"}, {"type", "nominal"}}}}}}};
  return spec;
}

Json SynonymRows(const Json& models) {
  constexpr std::pair<std::string_view, std::string_view> kMeasures[] = {
      {"embedding_loo_acc", "embedding LOO accuracy"},
      {"afc_acc", "2AFC accuracy"},
      {"afc_first_share", "2AFC first-position share"}};
  Json rows = Json::array();
  for (const Json& m : models) {
    const Json& d = Field(m, "distinctiveness");
    for (const auto& [key, label] : kMeasures) {
      const Json& ci = Field(d, std::string(key) + "_ci");
      const std::string mean_key = key == "afc_first_share" ? std::string(key) : std::string(key) + "_mean";
      rows.push_back({{"model", m.value("model", "")},
                      {"measure", label},
                      {"value", Number(Field(d, mean_key))},
                      {"lo", Bound(ci, 0)},
                      {"hi", Bound(ci, 1)}});
    }
  }
  return rows;
}

// Tiers and the paired comparisons behind them, formatted by the one number formatter.
std::string TiersTable(const Json& summary, const std::string& id) {
  CsvTable tiers;
  tiers.header = {"tier", "models"};
  for (const Json& t : summary.value("tiers", Json::array())) {
    std::string names;
    for (const Json& m : t.value("models", Json::array())) names += (names.empty() ? "" : ", ") + m.get<std::string>();
    tiers.rows.push_back({Field(t, "tier").dump(), names});
  }
  CsvTable pairs;
  pairs.header = {"a", "b", "metric", "difference", "ci_lo", "ci_hi", "p_value", "significant", "n_concepts"};
  const auto number = [](const Json& v) { return v.is_number() ? FormatNumber(v.get<double>()) : ""; };
  for (const Json& c : summary.value("comparisons", Json::array()))
    pairs.rows.push_back({c.value("a", ""), c.value("b", ""), c.value("metric", ""), number(Field(c, "difference")),
                          number(Bound(Field(c, "ci"), 0)), number(Bound(Field(c, "ci"), 1)),
                          number(Field(c, "p_value")), Field(c, "significant").dump(), number(Field(c, "n_concepts"))});
  return SortableTable(tiers, id + "-tiers", "Tiers: models whose paired tests do not separate them share a tier") +
         SortableTable(pairs, id + "-comparisons", "Paired comparisons (summary.json \"comparisons\")");
}

}  // namespace

Status BuildAcvaSection(const ResultsFolder& folder, const ReportOptions& options, SectionBuilder& section) {
  VISALIGN_RETURN_IF_ERROR(RequireColumns(folder, {"model", "tier", "pass_rate"}));
  const Json& models = folder.summary.value("models", Json::array());
  for (std::string& warning : acva::SummaryWarnings(folder.summary)) section.Note(std::move(warning));
  section.AddFigure("pass-rates", "Pass rate per model and category.",
                    "The share of images the judge passes, overall (\"all\") and per concept category; lines: 95% "
                    "bootstrap intervals over concepts.",
                    BarsWithIntervals(PassRateRows(models), "category", "pass rate"));
  section.AddFigure("quadrants", "Diversity quadrants.",
                    "Share of concepts per quadrant of image diversity (D_img) × metaphor entropy (H), split at the "
                    "medians (filtered to passing images).",
                    QuadrantSpec(models));
  section.AddFigure(
      "d-img-h", "D_img against H.",
      "Each model's mean image diversity and metaphor entropy over concepts (filtered), with 95% intervals.",
      DiversitySpec(models));
  section.AddFigure(
      "near-synonyms", "Near-synonym accuracies.",
      "Telling near-synonyms apart: CLIP-embedding leave-one-out accuracy against the judge's 2AFC accuracy; "
      "the first-position share shows the 2AFC position bias (0.5 = none).",
      BarsWithIntervals(SynonymRows(models), "measure", "accuracy / share"));
  section.Heading("Tiers");
  section.Html(TiersTable(folder.summary, section.id()));
  section.Heading("summary.csv");
  section.AddSummaryTable(folder.summary_csv);
  return Status::Ok();
}

}  // namespace visalign::report::internal
