// The VIOLIN section: precision and purity per model × variation, the per-metric tables (the
// paper's Table 1/6: best and second best marked), summary.csv, and each model's worst images.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "report/page.h"
#include "visalign/benchmarks/violin/evaluate.h"
#include "visalign/core/base64.h"
#include "visalign/core/format.h"
#include "visalign/imaging/image.h"

namespace visalign::report::internal {
namespace {

// summary.csv's metric columns in the paper's order; lower is better for every one.
constexpr std::string_view kMetricColumns[] = {"rgb_ed",   "rgb_rm", "de00", "hue", "chroma",  "hyab",
                                               "pre_mean", "sd_n",   "ced",  "hf",  "pur_mean"};
constexpr std::pair<std::string_view, std::string_view> kMeasures[] = {{"pre_mean", "precision error"},
                                                                       {"pur_mean", "purity error"}};

size_t Col(const CsvTable& t, std::string_view name) { return ColumnIndex(t, name); }
bool HasCol(const CsvTable& t, std::string_view name) { return Col(t, name) < t.header.size(); }

// The group a row belongs to: variation, with language and notation when they are not "all".
std::string GroupLabel(const CsvTable& t, const std::vector<std::string>& row) {
  std::string label = "v" + row[Col(t, "variation")];
  for (std::string_view column : {"language", "notation"})
    if (HasCol(t, column) && row[Col(t, column)] != "all") label += " " + row[Col(t, column)];
  return label;
}

Json PrecisionPuritySpec(const CsvTable& t) {
  Json values = Json::array();
  for (const auto& row : t.rows) {
    if (row[Col(t, "scope")] != "group") continue;
    for (const auto& [column, measure] : kMeasures) {
      const std::string lo = std::string(column) + "_lo", hi = std::string(column) + "_hi";
      values.push_back({{"model", row[Col(t, "model")]},
                        {"group", GroupLabel(t, row)},
                        {"measure", measure},
                        {"value", CsvNumber(row[Col(t, column)])},
                        {"lo", HasCol(t, lo) ? CsvNumber(row[Col(t, lo)]) : nullptr},
                        {"hi", HasCol(t, hi) ? CsvNumber(row[Col(t, hi)]) : nullptr}});
    }
  }
  Json spec = BaseSpec(std::move(values));
  NeedNumbers(spec, {"value"});
  const Json tooltip = {{{"field", "model"}},
                        {{"field", "group"}},
                        {{"field", "measure"}},
                        {{"field", "value"}, {"format", ".6g"}},
                        {{"field", "lo"}, {"format", ".6g"}},
                        {{"field", "hi"}, {"format", ".6g"}}};
  const Json x = {{"field", "group"}, {"type", "nominal"}, {"title", "variation"}};
  const Json offset = {{"field", "model"}};
  spec["facet"] = {{"column", {{"field", "measure"}, {"title", nullptr}}}};
  spec["resolve"] = {{"scale", {{"y", "independent"}}}};
  Json layers = {{{"name", "bars"},
                  {"mark", {{"type", "bar"}}},
                  {"encoding",
                   {{"x", x},
                    {"xOffset", offset},
                    {"y", {{"field", "value"}, {"type", "quantitative"}, {"title", "error (lower is better)"}}},
                    {"color", {{"field", "model"}, {"type", "nominal"}}},
                    {"tooltip", tooltip}}}}};
  if (AnyNumber(spec["data"]["values"], "lo"))
    layers.push_back({{"transform", {{{"filter", "isValid(datum.lo) && isValid(datum.hi)"}}}},
                      {"name", "intervals"},
                      {"mark", {{"type", "rule"}}},
                      {"encoding",
                       {{"x", x},
                        {"xOffset", offset},
                        {"y", {{"field", "lo"}, {"type", "quantitative"}}},
                        {"y2", {{"field", "hi"}}},
                        {"tooltip", tooltip}}}});
  spec["spec"] = {{"width", 320}, {"height", 220}, {"layer", std::move(layers)}};
  return spec;
}

// Per group (variation ...): models × metrics, the cells of summary.csv, best bold and second underlined.
void MetricTables(const CsvTable& t, SectionBuilder& section) {
  std::vector<std::string> groups;
  std::map<std::string, CsvTable> tables;
  for (const auto& row : t.rows) {
    if (row[Col(t, "scope")] != "group") continue;
    const std::string group = GroupLabel(t, row);
    auto [it, inserted] = tables.try_emplace(group);
    if (inserted) {
      groups.push_back(group);
      it->second.header.push_back("model");
      for (std::string_view m : kMetricColumns) it->second.header.emplace_back(m);
    }
    std::vector<std::string> cells{row[Col(t, "model")]};
    for (std::string_view m : kMetricColumns) cells.push_back(row[Col(t, m)]);
    it->second.rows.push_back(std::move(cells));
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const CsvTable& table = tables[groups[g]];
    // Per column, the best and second best distinct values (lower is better).
    std::vector<std::pair<double, double>> ranks(table.header.size(), {NAN, NAN});
    for (size_t c = 1; c < table.header.size(); ++c) {
      std::set<double> distinct;
      for (const auto& row : table.rows)
        if (const Json v = CsvNumber(row[c]); v.is_number()) distinct.insert(v.get<double>());
      auto it = distinct.begin();
      if (it != distinct.end()) ranks[c].first = *it++;
      if (it != distinct.end() && table.rows.size() > 2) ranks[c].second = *it;
    }
    const CellClass marks = [&](size_t r, size_t c) -> std::string {
      const Json v = CsvNumber(table.rows[r][c]);
      if (c == 0 || !v.is_number() || table.rows.size() < 2) return "";
      if (v.get<double>() == ranks[c].first) return "best";
      if (v.get<double>() == ranks[c].second) return "second";
      return "";
    };
    section.Html(SortableTable(table, fmt::format("{}-table-{}", section.id(), g + 1),
                               groups[g] + ": normalised metrics (lower is better; best bold, second underlined)",
                               marks));
  }
}

}  // namespace

// A box-filtered copy of `image` whose longer side is at most `size` pixels.
imaging::Image Downscale(const imaging::Image& image, int size) {
  const double scale = std::min(1.0, static_cast<double>(size) / std::max(image.width, image.height));
  const int w = std::max(1, static_cast<int>(std::lround(image.width * scale)));
  const int h = std::max(1, static_cast<int>(std::lround(image.height * scale)));
  imaging::Image out = imaging::Image::ForOverwrite(w, h);
  for (int y = 0; y < h; ++y) {
    const int y0 = y * image.height / h, y1 = std::max(y0 + 1, (y + 1) * image.height / h);
    for (int x = 0; x < w; ++x) {
      const int x0 = x * image.width / w, x1 = std::max(x0 + 1, (x + 1) * image.width / w);
      uint64_t sum[3] = {0, 0, 0};
      for (int yy = y0; yy < y1; ++yy)
        for (int xx = x0; xx < x1; ++xx)
          for (int ch = 0; ch < 3; ++ch) sum[ch] += image.pixel(xx, yy)[ch];
      const uint64_t n = static_cast<uint64_t>(y1 - y0) * (x1 - x0);
      for (int ch = 0; ch < 3; ++ch) out.pixel(x, y)[ch] = static_cast<uint8_t>((sum[ch] + n / 2) / n);
    }
  }
  return out;
}

// An <img> of an item's image, downscaled; why not when it cannot be read.
Result<std::string> Thumbnail(const ResultsFolder& folder, const std::string& path, int size) {
  if (path.empty()) return Status::NotFound("items.jsonl names no image path");
  VISALIGN_ASSIGN_OR_RETURN(imaging::Image image, imaging::ReadImage(ResolveInputPath(folder, path)));
  VISALIGN_ASSIGN_OR_RETURN(std::string png, imaging::EncodePng(Downscale(image, size), 9));
  return "<img alt=\"\" src=\"data:image/png;base64," + EncodeBase64(png) + "\">";
}

namespace {

double PrecisionOf(const Json& item) {
  const Json& v = item.value("pre_mean", Json());
  return v.is_number() ? v.get<double>() : -INFINITY;
}

void WorstImages(const ResultsFolder& folder, const ReportOptions& options, SectionBuilder& section) {
  if (options.worst_images == 0) return;
  std::vector<std::string> models;
  std::map<std::string, std::vector<const Json*>> by_model;
  for (const Json& item : folder.items) {
    const std::string model = item.value("model", "");
    auto [it, inserted] = by_model.try_emplace(model);
    if (inserted) models.push_back(model);
    it->second.push_back(&item);
  }
  section.Heading(fmt::format("Worst {} per model (highest precision error)", Counted(options.worst_images, "image")));
  size_t shown = 0, unreadable = 0;
  std::string first_problem;
  section.Html("<div class=\"worst\">");
  for (const std::string& model : models) {
    std::vector<const Json*>& items = by_model[model];
    const size_t n = std::min(items.size(), static_cast<size_t>(options.worst_images));
    std::partial_sort(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(n), items.end(),
                      [](const Json* a, const Json* b) {
                        const double pa = PrecisionOf(*a), pb = PrecisionOf(*b);
                        return pa != pb ? pa > pb : a->value("id", "") < b->value("id", "");
                      });
    section.Html("<div class=\"worst-model\" data-model=\"" + EscapeHtml(model) + "\"><h4>" + EscapeHtml(model) +
                 "</h4>");
    for (size_t i = 0; i < n; ++i) {
      const Json& item = *items[i];
      const std::string path = item.value("path", "");
      const Result<std::string> img = Thumbnail(folder, path, options.thumbnail_size);
      ++shown;
      if (!img.ok() && unreadable++ == 0) first_problem = fmt::format("{}: {}", path, img.status().what());
      const double pre = PrecisionOf(item);
      section.Html(fmt::format("<figure class=\"thumb\" title=\"{}\">{}<figcaption>{}<br>pre {}</figcaption></figure>",
                               EscapeHtml(item.value("prompt", "")),
                               img.ok() ? *img : "<span class=\"no-image\">image not readable</span>",
                               EscapeHtml(item.value("id", "")), std::isfinite(pre) ? FormatFixed(pre, 4) : "–"));
    }
    section.Html("</div>");
  }
  section.Html("</div>\n");
  if (unreadable > 0)
    section.Note(
        fmt::format("{} of the {} worst images shown cannot be read and have no thumbnail (first: {}); image "
                    "paths are tried as written, then relative to the results folder and its parent folders.",
                    unreadable, shown, first_problem));
}

}  // namespace

Status BuildViolinSection(const ResultsFolder& folder, const ReportOptions& options, SectionBuilder& section) {
  VISALIGN_RETURN_IF_ERROR(RequireColumns(folder, {"scope", "model", "variation", "rgb_ed", "rgb_rm", "de00", "hue",
                                                   "chroma", "hyab", "pre_mean", "sd_n", "ced", "hf", "pur_mean"}));
  const CsvTable& table = folder.summary_csv;
  for (std::string& warning : violin::SummaryWarnings(folder.summary)) section.Note(std::move(warning));
  section.AddFigure("precision-purity", "Precision and purity per model × variation.",
                    "Mean normalised errors of summary.csv's group rows; the lines show the 95% bootstrap interval "
                    "where summary.csv has one.",
                    PrecisionPuritySpec(table));
  section.Heading("Metrics per variation");
  MetricTables(table, section);
  section.Heading("summary.csv");
  section.AddSummaryTable(table);
  WorstImages(folder, options, section);
  if (folder.summary.contains("probes")) return BuildProbesSection(folder, options, section);
  return Status::Ok();
}

}  // namespace visalign::report::internal
