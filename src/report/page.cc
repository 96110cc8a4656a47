// The report's page: escaping, tables, the section builder, the HTML document and BuildReport.
#include "report/page.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "report/assets.h"
#include "visalign/core/benchmarks.h"
#include "visalign/core/results.h"

namespace visalign::report {

std::string Counted(size_t n, std::string_view noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

namespace internal {
namespace {

constexpr int kDisplayDigits = 4;                // significant digits of a table's number
constexpr double kDisplayIntegerFrom = 10000.0;  // from here on, numbers are shown rounded to integers

}  // namespace

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case ':':
        out += text.substr(i + 1, 2) == "//" ? "&#58;" : ":";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string ScriptJson(const Json& value) {
  const std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else if (text.compare(i, 3, "://") == 0) {
      out += ":\\/\\/";
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

Status RequireColumns(const ResultsFolder& folder, std::initializer_list<std::string_view> columns) {
  for (std::string_view name : columns)
    if (ColumnIndex(folder.summary_csv, name) == folder.summary_csv.header.size())
      return Status::InvalidArgument(fmt::format("summary.csv has no column \"{}\"", name),
                                     "results folder " + folder.dir.string(),
                                     fmt::format("the summary.csv of a {} results folder", folder.benchmark));
  return Status::Ok();
}

size_t ColumnIndex(const CsvTable& table, std::string_view name) {
  return static_cast<size_t>(std::find(table.header.begin(), table.header.end(), name) - table.header.begin());
}

std::filesystem::path ResolveInputPath(const ResultsFolder& folder, const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p(path);
  if (p.is_absolute() || p.empty() || std::filesystem::exists(p, ec)) return p;
  const std::filesystem::path dir = std::filesystem::absolute(folder.dir, ec).lexically_normal();
  for (std::filesystem::path base = dir; !base.empty(); base = base.parent_path()) {
    if (std::filesystem::exists(base / p, ec)) return base / p;
    if (base == base.root_path()) break;
  }
  return p;
}

Json CsvNumber(const std::string& cell) {
  double value = 0;
  const char* end = cell.data() + cell.size();
  auto [ptr, ec] = std::from_chars(cell.data(), end, value);
  if (cell.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) return nullptr;
  return value;
}

std::string DisplayNumber(const std::string& cell) {
  const Json value = CsvNumber(cell);
  if (!value.is_number() || cell.find_first_of(".eE") == std::string::npos) return cell;
  const double x = value.get<double>();
  if (std::fabs(x) >= kDisplayIntegerFrom) return fmt::format("{:.0f}", x);
  return fmt::format("{:.{}g}", x, kDisplayDigits);
}

bool AnyNumber(const Json& rows, std::string_view field) {
  for (const Json& row : rows)
    if (row.contains(field) && row[std::string(field)].is_number()) return true;
  return false;
}

Json BaseSpec(Json values, bool filter_models) {
  Json spec;
  spec["params"] = {{{"name", "model_filter"}, {"value", ""}}};
  spec["data"] = {{"values", std::move(values)}};
  spec["config"] = {{"font", "visalign-dejavu-sans, DejaVu Sans, sans-serif"}};  // the page's embedded font
  if (filter_models)
    spec["transform"] = {{{"filter",
                           "model_filter == '' || !isValid(datum.model) || "
                           "indexof(lower(datum.model), lower(model_filter)) >= 0"}}};
  return spec;
}

void NeedNumbers(Json& spec, std::initializer_list<std::string_view> fields) {
  Json& need = spec["usermeta"]["need_numbers"];
  for (std::string_view field : fields) need.push_back(std::string(field));
}

std::string SortableTable(const CsvTable& table, const std::string& id, const std::string& caption,
                          const CellClass& cell_class) {
  std::optional<size_t> model_column;
  for (size_t c = 0; c < table.header.size(); ++c)
    if (table.header[c] == "model") model_column = c;
  std::string html = fmt::format("<div class=\"table-wrap\"><table class=\"sortable\" id=\"{}\">", EscapeHtml(id));
  if (!caption.empty()) html += "<caption>" + EscapeHtml(caption) + "</caption>";
  html += "<thead><tr>";
  for (const std::string& name : table.header) html += "<th>" + EscapeHtml(name) + "</th>";
  html += "</tr></thead><tbody>";
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const std::vector<std::string>& row = table.rows[r];
    html += model_column ? "<tr data-model=\"" + EscapeHtml(row[*model_column]) + "\">" : "<tr>";
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string cls = cell_class ? cell_class(r, c) : std::string();
      const std::string shown = c == model_column ? row[c] : DisplayNumber(row[c]);
      html += "<td";
      if (!cls.empty()) html += " class=\"" + cls + "\"";
      if (shown != row[c]) html += " data-value=\"" + EscapeHtml(row[c]) + "\" title=\"" + EscapeHtml(row[c]) + "\"";
      html += ">" + EscapeHtml(shown) + "</td>";
    }
    html += "</tr>";
  }
  html += "</tbody></table></div>\n";
  return html;
}

SectionBuilder::SectionBuilder(Report& report, std::string id, std::string benchmark, std::string heading)
    : report_(report), index_(report.sections.size()) {
  report.sections.push_back({std::move(id), std::move(benchmark), std::move(heading), {}, ""});
}

void SectionBuilder::Provenance(const ResultsFolder& folder) {
  const Json& s = folder.summary;
  Html(fmt::format("<p class=\"provenance\">Folder <code>{}</code> · written by visalign {} · results schema {}</p>\n",
                   EscapeHtml(folder.dir.string()), EscapeHtml(s.value("visalign_version", std::string("?"))),
                   EscapeHtml(s["schema_version"].dump())));
  if (s.contains("inputs"))
    Html("<details class=\"inputs\"><summary>Inputs (fingerprints of everything the numbers depend on)</summary><pre>" +
         EscapeHtml(s["inputs"].dump(2)) + "</pre></details>\n");
}

void SectionBuilder::Heading(std::string_view text) { Html("<h3>" + EscapeHtml(text) + "</h3>\n"); }

void SectionBuilder::AddFigure(const std::string& name, std::string title, std::string caption, Json spec) {
  const size_t index = report_.figures.size();
  Figure figure{id() + "-" + name, std::move(title), std::move(caption), std::move(spec)};
  Html(
      fmt::format("<figure class=\"plot\" id=\"fig-{}\"><figcaption><strong>{}</strong> {}</figcaption>"
                  "<div class=\"vega\" data-figure=\"{}\"></div></figure>\n",
                  EscapeHtml(figure.id), EscapeHtml(figure.title), EscapeHtml(figure.caption), index));
  report_.figures.push_back(std::move(figure));
}

void SectionBuilder::AddSummaryTable(const CsvTable& table) {
  Html(SortableTable(table, id() + "-summary",
                     "summary.csv (numbers to 4 significant digits: hover a cell for the exact value, which copying "
                     "gives; click a column to sort; the model filter applies)"));
}

std::string RenderPage(const Report& report, bool export_mode) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\"";
  if (export_mode) html += " data-export=\"true\"";
  html +=
      ">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += "<title>" + EscapeHtml(report.title) + "</title>\n";
  html += "<!-- Made by visalign " + EscapeHtml(VisalignVersion()) + ". Plotting libraries included:\n";
  html += std::string(kLibraryNotice) + "\n-->\n";
  if (export_mode)
    html += "<!-- Glyph outlines of the static figures drawn by:\n" + std::string(kExportNotice) + "\n-->\n";
  html += "<style>\n" + std::string(kPageStyle) + "</style>\n</head>\n<body>\n";
  html += "<header class=\"top\"><h1>" + EscapeHtml(report.title) +
          "</h1><div class=\"controls\">"
          "<label>Model filter <input id=\"model-filter\" type=\"search\" placeholder=\"part of a model name\"></label>"
          "<button id=\"theme-toggle\" type=\"button\">Dark</button></div></header>\n";
  html += "<nav class=\"toc\"><ul>";
  for (const Report::Section& s : report.sections)
    html += fmt::format("<li><a href=\"#{}\">{}</a></li>", EscapeHtml(s.id), EscapeHtml(s.heading));
  html += "</ul></nav>\n<main>\n";
  if (report.sections.empty()) html += "<p>No results folders were given.</p>\n";
  for (const Report::Section& s : report.sections) {
    html += fmt::format("<section id=\"{}\" data-benchmark=\"{}\">\n<h2>{}</h2>\n", EscapeHtml(s.id),
                        EscapeHtml(s.benchmark), EscapeHtml(s.heading));
    if (!s.notes.empty()) {
      html += "<div class=\"notes\" role=\"alert\">";
      for (const std::string& note : s.notes)
        html += "<p class=\"note\"><strong>Warning:</strong> " + EscapeHtml(note) + "</p>";
      html += "</div>\n";
    }
    html += s.body + "</section>\n";
  }
  html += "</main>\n";
  Json figures = Json::array();
  for (const Figure& f : report.figures) figures.push_back({{"id", f.id}, {"spec", f.spec}});
  html += "<script type=\"application/json\" id=\"visalign-figures\">" + ScriptJson(figures) + "</script>\n";
  html += "<script type=\"application/json\" id=\"visalign-font\">" + std::string(kFonts) + "</script>\n";
  html += "<script>\n" + std::string(kLibraryScripts) + "\n</script>\n";
  if (export_mode)
    html += "<script>\n" + std::string(kExportScripts) + "\n</script>\n<script>\n" + std::string(kExportScript) +
            "</script>\n";
  html += "<script>\n" + std::string(kPageScript) + "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace internal

namespace {

// The folder's provenance and benchmark section. They read summary.json and items.jsonl as the results
// contract defines them; a value of another type (a hand-edited or damaged file) makes nlohmann
// throw, which ends here as one error naming the folder.
Status BuildBenchmarkSection(const ResultsFolder& folder, const ReportOptions& options,
                             internal::SectionBuilder& section) {
  try {
    section.Provenance(folder);
    const internal::SectionType* type = internal::FindSectionType(folder.benchmark);
    return type != nullptr ? type->build(folder, options, section) : Status::Ok();
  } catch (const Json::exception& e) {
    std::string_view why = e.what();
    if (const size_t end = why.find("] "); why.starts_with("[json.exception.") && end != std::string_view::npos)
      why.remove_prefix(end + 2);
    return Status::InvalidArgument(fmt::format("summary.json or items.jsonl holds a value of another type ({})", why),
                                   "results folder " + folder.dir.string(),
                                   "the files as the benchmark wrote them (docs/architecture.md, results contract)");
  }
}

}  // namespace

Result<Report> BuildReport(const std::vector<ResultsFolder>& folders, const std::vector<StoredRun>& runs,
                           const ReportOptions& options) {
  if (options.worst_images < 0)
    return Status::InvalidArgument("negative number of worst images", "worst images", ">= 0");
  if (options.thumbnail_size < 8)
    return Status::InvalidArgument(fmt::format("thumbnail size {}", options.thumbnail_size), "thumbnail size", ">= 8");
  Report report;
  report.title = options.title;
  std::map<std::string, int> count;
  for (const ResultsFolder& folder : folders) {
    const benchmarks::BenchmarkInfo* info = benchmarks::FindBenchmark(folder.benchmark);
    const std::string_view name = info != nullptr ? info->display_name : std::string_view(folder.benchmark);
    const std::string id = fmt::format("{}-{}", folder.benchmark, ++count[folder.benchmark]);
    // The folder's own name, also for "out/" or ".".
    const std::string folder_name =
        (std::filesystem::absolute(folder.dir).lexically_normal() / "").parent_path().filename().string();
    internal::SectionBuilder section(report, id, folder.benchmark, fmt::format("{} — {}", name, folder_name));
    VISALIGN_RETURN_IF_ERROR(BuildBenchmarkSection(folder, options, section));
  }
  for (const StoredRun& run : runs) {
    internal::SectionBuilder section(report, fmt::format("run-{}", ++count["run"]), "run", "Run — " + run.info.name);
    internal::BuildRunSection(run, section);
  }
  return report;
}

std::string RenderHtml(const Report& report) { return internal::RenderPage(report, /*export_mode=*/false); }

}  // namespace visalign::report
