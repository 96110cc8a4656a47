// The VIOLIN probes in the report (docs/report.md): measured vs requested inertia splits with the identity
// line, gravity's pull per context class, the paired differences of negation and gravity, the geometry
// errors, the probe table of summary.json and the worst image of each family and condition.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report/page.h"
#include "visalign/core/format.h"

namespace visalign::report::internal {
namespace {

constexpr double kPercent = 100.0;
constexpr int kFigureWidth = 320, kFigureHeight = 220;

Json Num(const Json& v) { return v.is_number() ? Json(v.get<double>()) : nullptr; }

const Json kTooltip = {{{"field", "model"}},
                       {{"field", "condition"}},
                       {{"field", "measure"}},
                       {{"field", "value"}, {"format", ".4g"}},
                       {{"field", "lo"}, {"format", ".4g"}},
                       {{"field", "hi"}, {"format", ".4g"}},
                       {{"field", "n"}}};

// The series a row or item is drawn in: its model, with the prompts' language when it is not English.
std::string Series(const Json& row) {
  const std::string language = row.value("language", "en");
  return row.value("model", "") + (language == "en" ? "" : " [" + language + "]");
}

// Rows of summary.json's "probes" for `family` whose measure is one of `measures`.
Json EstimateRows(const Json& probes, const std::string& family, const std::vector<std::string>& measures) {
  Json rows = Json::array();
  for (const Json& e : probes) {
    if (e.value("family", "") != family) continue;
    const std::string measure = e.value("measure", "");
    if (std::find(measures.begin(), measures.end(), measure) == measures.end()) continue;
    const Json& ci =
        e.contains("ci") && e["ci"].is_array() && e["ci"].size() == 2 ? e["ci"] : Json::array({nullptr, nullptr});
    rows.push_back({{"model", Series(e)},
                    {"condition", e.value("condition", "")},
                    {"measure", measure},
                    {"value", Num(e.value("value", Json()))},
                    {"lo", Num(ci[0])},
                    {"hi", Num(ci[1])},
                    {"n", e.value("n", 0)}});
  }
  return rows;
}

// Bars of `value` per condition and model, one panel per measure, with the interval as a rule.
Json EstimateBars(Json rows, const std::string& y_title) {
  Json spec = BaseSpec(std::move(rows));
  const Json x = {{"field", "condition"}, {"type", "nominal"}, {"title", nullptr}};
  const Json offset = {{"field", "model"}};
  Json layers = {{{"name", "bars"},
                  {"mark", {{"type", "bar"}}},
                  {"encoding",
                   {{"x", x},
                    {"xOffset", offset},
                    {"y", {{"field", "value"}, {"type", "quantitative"}, {"title", y_title}}},
                    {"color", {{"field", "model"}, {"type", "nominal"}}},
                    {"tooltip", kTooltip}}}}};
  if (AnyNumber(spec["data"]["values"], "lo"))
    layers.push_back({{"transform", {{{"filter", "isValid(datum.lo) && isValid(datum.hi)"}}}},
                      {"name", "intervals"},
                      {"mark", {{"type", "rule"}}},
                      {"encoding",
                       {{"x", x},
                        {"xOffset", offset},
                        {"y", {{"field", "lo"}, {"type", "quantitative"}}},
                        {"y2", {{"field", "hi"}}},
                        {"tooltip", kTooltip}}}});
  spec["facet"] = {{"column", {{"field", "measure"}, {"title", nullptr}}}};
  spec["resolve"] = {{"scale", {{"y", "independent"}}}};
  spec["spec"] = {{"width", kFigureWidth}, {"height", kFigureHeight}, {"layer", std::move(layers)}};
  return spec;
}

bool IsFamily(const Json& item, const std::string& family) {
  return item.contains("probe") && item["probe"].is_object() && item["probe"].value("family", "") == family;
}

Json InertiaSpec(const ResultsFolder& folder) {
  Json points = Json::array();
  for (const Json& item : folder.items) {
    if (!IsFamily(item, "inertia") || !item.contains("probe_measures")) continue;
    const Json& measured = item["probe_measures"].value("measured_split", Json());
    if (!measured.is_number()) continue;
    points.push_back({{"model", Series(item)},
                      {"condition", item["probe"].value("condition", "")},
                      {"orientation", item["probe"].value("orientation", "")},
                      {"requested", Num(item["probe"].value("split", Json()))},
                      {"measured", measured.get<double>()},
                      {"id", item.value("id", "")}});
  }
  Json spec = BaseSpec(std::move(points));
  const Json axis = {{"type", "quantitative"}, {"scale", {{"domain", {0, kPercent}}}}};
  Json x = axis, y = axis;
  x["field"] = "requested", x["title"] = "requested split (%)";
  y["field"] = "measured", y["title"] = "measured split (%)";
  spec["width"] = kFigureWidth;
  spec["height"] = kFigureWidth;
  spec["layer"] = {{{"data", {{"values", {{{"a", 0}, {"b", kPercent}}}}}},
                    {"name", "identity"},
                    {"mark", {{"type", "rule"}, {"strokeDash", {4, 4}}, {"color", "gray"}}},
                    {"encoding",
                     {{"x", {{"datum", 0}, {"type", "quantitative"}}},
                      {"y", {{"datum", 0}, {"type", "quantitative"}}},
                      {"x2", {{"datum", kPercent}}},
                      {"y2", {{"datum", kPercent}}}}}},
                   {{"name", "points"},
                    {"mark", {{"type", "point"}, {"filled", true}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"color", {{"field", "model"}, {"type", "nominal"}}},
                      {"shape", {{"field", "condition"}, {"type", "nominal"}}},
                      {"tooltip",
                       {{{"field", "model"}},
                        {{"field", "id"}},
                        {{"field", "requested"}},
                        {{"field", "measured"}, {"format", ".4g"}}}}}}}};
  return spec;
}

// How bad an item's image is for its family (higher is worse); NaN when it cannot say.
double Badness(const Json& item) {
  const std::string family = item["probe"].value("family", "");
  const Json measures = item.value("probe_measures", Json::object());
  if (family == "inertia") {
    const Json& m = measures.value("measured_split", Json());
    const Json& r = item["probe"].value("split", Json());
    return m.is_number() && r.is_number() ? std::abs(m.get<double>() - r.get<double>()) : NAN;
  }
  if (family == "geometry") {
    const Json& iou = measures.value("iou", Json());
    return iou.is_number() ? 1.0 - iou.get<double>() : NAN;
  }
  const Json& pre = item.value("pre_mean", Json());
  return pre.is_number() ? pre.get<double>() : NAN;
}

void WorstPerCondition(const ResultsFolder& folder, const ReportOptions& options, SectionBuilder& section) {
  if (options.worst_images == 0) return;
  std::map<std::pair<std::string, std::string>, const Json*> worst;
  for (const Json& item : folder.items) {
    if (!item.contains("probe") || !item["probe"].is_object()) continue;
    const double bad = Badness(item);
    if (!std::isfinite(bad)) continue;
    auto key = std::make_pair(item["probe"].value("family", ""), item["probe"].value("condition", ""));
    auto [it, inserted] = worst.emplace(key, &item);
    if (!inserted && bad > Badness(*it->second)) it->second = &item;
  }
  section.Heading("Worst image of each probe condition");
  section.Html("<div class=\"worst\">");
  for (const auto& [key, item] : worst) {
    const Result<std::string> img = Thumbnail(folder, item->value("path", ""), options.thumbnail_size);
    section.Html(
        fmt::format("<figure class=\"thumb\" title=\"{}\">{}<figcaption>{} {}<br>{}<br>{}</figcaption></figure>",
                    EscapeHtml(item->value("prompt", "")),
                    img.ok() ? *img : "<span class=\"no-image\">image not readable</span>", EscapeHtml(key.first),
                    EscapeHtml(key.second), EscapeHtml(item->value("model", "")), EscapeHtml(item->value("id", ""))));
  }
  section.Html("</div>\n");
}

// summary.json's probe rows as a table.
CsvTable ProbeTable(const Json& probes) {
  CsvTable t;
  t.header = {"model", "language", "family", "condition", "measure", "reference", "value", "lo", "hi", "p_value", "n"};
  auto number = [](const Json& v) { return v.is_number() ? FormatNumber(v.get<double>()) : std::string(); };
  for (const Json& e : probes) {
    const Json ci = e.value("ci", Json::array({nullptr, nullptr}));
    t.rows.push_back({e.value("model", ""), e.value("language", "en"), e.value("family", ""), e.value("condition", ""),
                      e.value("measure", ""), e["reference"].is_string() ? e["reference"].get<std::string>() : "",
                      number(e.value("value", Json())), number(ci.size() == 2 ? ci[0] : Json()),
                      number(ci.size() == 2 ? ci[1] : Json()), number(e.value("p_value", Json())),
                      std::to_string(e.value("n", 0))});
  }
  return t;
}

}  // namespace

Status BuildProbesSection(const ResultsFolder& folder, const ReportOptions& options, SectionBuilder& section) {
  const Json& probes = folder.summary["probes"];
  if (!probes.is_array())
    return Status::InvalidArgument("\"probes\" is not a list", "results folder " + folder.dir.string(),
                                   "summary.json as `violin evaluate` writes it");
  section.Heading("Probes (VIOLIN §2.2 Level 5, §2.4 and Figure 4)");
  const auto add = [&](const std::string& name, const std::string& title, const std::string& caption, Json rows,
                       const std::string& y_title) {
    if (!rows.empty()) section.AddFigure(name, title, caption, EstimateBars(std::move(rows), y_title));
  };
  add("probes-negation", "Negation: change against the plain instruction",
      "Paired differences (condition − base) over colours with 95% bootstrap intervals: de00 is the colour "
      "error, hf and ced the high-frequency and edge artefacts.",
      EstimateRows(probes, "negation", {"diff_de00", "diff_hf", "diff_ced"}), "difference to base");
  add("probes-gravity-pull", "Semantic gravity: pull toward the context object's colour",
      "0 = unmoved, 1 = the object's colour (CIELAB), per context class with 95% bootstrap intervals over colours; "
      "diff_de00 is the paired change of the colour error against no context.",
      EstimateRows(probes, "gravity", {"pull", "diff_de00"}), "pull / difference");
  Json inertia = InertiaSpec(folder);
  if (!inertia["data"]["values"].empty())
    section.AddFigure(
        "probes-inertia", "Aesthetic inertia: measured against requested split",
        "Each point is an image; the dashed line is obedience (slope 1, intercept 0), a flat line at 50 % "
        "full inertia. Slope and intercept with intervals are in the table below.",
        std::move(inertia));
  add("probes-geometry", "Level-5 geometry: position, size and overlap",
      "Mean position error (pixels), relative size error, IoU with the requested mask and the share of images "
      "with a wrong number of shapes, with 95% bootstrap intervals over items.",
      EstimateRows(probes, "geometry", {"position_error_px", "size_error", "iou", "failure_rate"}), "value");
  section.Html(
      SortableTable(ProbeTable(probes), section.id() + "-probes-table", "Probe estimates (summary.json \"probes\")"));
  WorstPerCondition(folder, options, section);
  return Status::Ok();
}

}  // namespace visalign::report::internal
