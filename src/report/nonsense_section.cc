// The Hues and Cues nonsense-baseline section (`hues nonsense --out`): how many models fall into
// each collapse class, and per model its class with each group's collapse (the macro class its
// top-1 cells share, or none), then summary.csv.
#include <fmt/format.h>

#include <algorithm>

#include "report/page.h"

namespace visalign::report::internal {
namespace {

// The classes in docs/hues.md's order with the words the figure shows for them, and a colour per
// macro class (the board's hue families).
constexpr std::string_view kClasses[] = {"neutral_collapse", "specific_color_collapse", "selective_collapse",
                                         "high_entropy"};
constexpr std::string_view kClassLabels[] = {"neutral", "specific colour", "selective", "high entropy"};
constexpr std::pair<std::string_view, std::string_view> kMacroColors[] = {
    {"Brown", "#8c564b"}, {"Red", "#d62728"},    {"Orange", "#ff7f0e"}, {"Yellow", "#e6c619"}, {"Green", "#2ca02c"},
    {"Blue", "#1f77b4"},  {"Purple", "#7b3fa0"}, {"Pink", "#e377c2"},   {"Neutral", "#9e9e9e"}};
constexpr std::string_view kModeColumn = "mode";
constexpr std::string_view kCellColor = "#f2f2f2";  // no collapse; also behind the mode's text

size_t ClassRank(const std::string& name) {
  return static_cast<size_t>(std::find(std::begin(kClasses), std::end(kClasses), name) - std::begin(kClasses));
}

// "specific colour → Red", "selective", ...; the class name itself when it is not one of kClasses.
std::string ModeLabel(const std::string& mode, const Json& onto) {
  const size_t rank = ClassRank(mode);
  const std::string label = rank < std::size(kClassLabels) ? std::string(kClassLabels[rank]) : mode;
  return onto.is_string() ? label + " → " + onto.get<std::string>() : label;
}

// One row per model (kind "model") and per (model, group) (kind "group"); "rank" orders the models
// by class, then as summary.json lists them.
Json Rows(const Json& models, std::vector<std::string>& columns) {
  std::vector<size_t> order(models.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return ClassRank(models[a].value("class", "")) < ClassRank(models[b].value("class", ""));
  });
  columns = {std::string(kModeColumn)};
  Json rows = Json::array();
  for (size_t rank = 0; rank < order.size(); ++rank) {
    const Json& m = models[order[rank]];
    const std::string model = m.value("model", ""), mode = m.value("class", "");
    const Json& groups = m.value("groups", Json::array());
    const Json& onto = m.value("onto", Json());
    rows.push_back({{"kind", "model"},
                    {"model", model},
                    {"rank", rank},
                    {"column", kModeColumn},
                    {"class", mode},
                    {"mode", ModeLabel(mode, onto)},
                    {"onto", onto},
                    {"entropy_bits", m.value("entropy_bits", Json())},
                    {"prior_cell", m.value("prior_cell", Json())},
                    {"prior_count", m.value("prior_count", 0)}});
    for (const Json& g : groups) {
      std::string top1;
      for (const Json& cell : g.value("top1", Json::array()))
        top1 += (top1.empty() ? "" : " ") + cell.get<std::string>();
      const std::string group = g.value("group", "");
      if (std::find(columns.begin(), columns.end(), group) == columns.end()) columns.push_back(group);
      const Json& group_onto = g.value("onto", Json());
      rows.push_back({{"kind", "group"},
                      {"model", model},
                      {"rank", rank},
                      {"column", group},
                      {"class", mode},
                      {"top1", top1},
                      {"collapsed", g.value("collapsed", false)},
                      {"onto", group_onto.is_string() ? group_onto.get<std::string>() : "none"}});
    }
  }
  return rows;
}

Json ClassesSpec(Json rows) {
  Json spec = BaseSpec(std::move(rows));
  spec["transform"].push_back({{"filter", "datum.kind == 'model'"}});
  spec["width"] = 360;
  spec["height"] = {{"step", 26}};
  spec["name"] = "bars";
  spec["mark"] = {{"type", "bar"}};
  spec["encoding"] = {
      {"y", {{"field", "class"}, {"type", "nominal"}, {"title", nullptr}, {"sort", kClasses}}},
      {"x", {{"aggregate", "count"}, {"type", "quantitative"}, {"title", "models"}, {"axis", {{"tickMinStep", 1}}}}},
      {"tooltip", {{{"field", "class"}}, {{"aggregate", "count"}, {"title", "models"}}}}};
  return spec;
}

Json ModesSpec(Json rows, const std::vector<std::string>& columns) {
  Json spec = BaseSpec(std::move(rows));
  Json domain = Json::array(), range = Json::array();
  for (const auto& [macro, color] : kMacroColors) {
    domain.push_back(macro);
    range.push_back(color);
  }
  domain.push_back("none");
  range.push_back(kCellColor);
  const Json x = {{"field", "column"},
                  {"type", "nominal"},
                  {"title", nullptr},
                  {"sort", columns},
                  {"axis", {{"orient", "top"}, {"labelAngle", 0}}}};
  const Json y = {
      {"field", "model"}, {"type", "nominal"}, {"title", nullptr}, {"sort", {{"field", "rank"}, {"op", "min"}}}};
  spec["width"] = {{"step", 140}};
  spec["height"] = {{"step", 16}};
  spec["layer"] = {{{"name", "mode_cells"},
                    {"transform", {{{"filter", "datum.kind == 'model'"}}}},
                    {"mark", {{"type", "rect"}, {"fill", kCellColor}, {"stroke", "#ffffff"}, {"strokeWidth", 1}}},
                    {"encoding", {{"x", x}, {"y", y}}}},
                   {{"name", "modes"},
                    {"transform", {{{"filter", "datum.kind == 'model'"}}}},
                    {"mark", {{"type", "text"}, {"fontSize", 11}, {"color", "#1d1d1f"}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"text", {{"field", "mode"}}},
                      {"tooltip",
                       {{{"field", "model"}},
                        {{"field", "class"}, {"title", "mode"}},
                        {{"field", "onto"}},
                        {{"field", "entropy_bits"}, {"title", "entropy (bits)"}, {"format", ".3f"}},
                        {{"field", "prior_cell"}, {"title", "nonsense prior"}},
                        {{"field", "prior_count"}}}}}}},
                   {{"name", "groups"},
                    {"transform", {{{"filter", "datum.kind == 'group'"}}}},
                    {"mark", {{"type", "rect"}, {"stroke", "#ffffff"}, {"strokeWidth", 1}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"color",
                       {{"field", "onto"},
                        {"type", "nominal"},
                        {"title", "group collapsed onto"},
                        {"scale", {{"domain", domain}, {"range", range}}}}},
                      {"tooltip",
                       {{{"field", "model"}},
                        {{"field", "column"}, {"title", "group"}},
                        {{"field", "top1"}, {"title", "top-1 cells"}},
                        {{"field", "collapsed"}},
                        {{"field", "onto"}}}}}}}};
  return spec;
}

}  // namespace

Status BuildNonsenseSection(const ResultsFolder& folder, const ReportOptions&, SectionBuilder& section) {
  VISALIGN_RETURN_IF_ERROR(RequireColumns(folder, {"model", "class", "onto", "entropy_bits"}));
  const Json& models = folder.summary.value("models", Json::array());
  std::vector<std::string> columns;
  const Json rows = Rows(models, columns);
  section.Html(
      fmt::format("<p>{}; nonsense vocabulary <code>{}</code>. A group collapses when at least 3/4 "
                  "of its top-1 cells share a macro class; a model's mode follows docs/hues.md.</p>\n",
                  Counted(models.size(), "model"),
                  EscapeHtml(folder.summary.value("settings", Json::object()).value("vocabulary", "?"))));
  section.AddFigure("classes", "Models per nonsense mode.",
                    "How many models collapse onto Neutral, onto one colour category, only in some groups "
                    "(selective), or not at all (high entropy).",
                    ClassesSpec(rows));
  section.AddFigure("modes", "Nonsense mode per model.",
                    "First column: the model's mode (and the class it collapses onto); then each group of nonsense "
                    "words, coloured by the macro class its top-1 cells collapse onto (light: no collapse). Hover for "
                    "the cells, the entropy and the nonsense prior.",
                    ModesSpec(rows, columns));
  section.Heading("summary.csv");
  section.AddSummaryTable(folder.summary_csv);
  return Status::Ok();
}

}  // namespace visalign::report::internal
