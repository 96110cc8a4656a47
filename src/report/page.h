// Internals of the report shared by its sections: HTML and JSON text that never holds a URL, the
// section builder, sortable tables and the pieces every Vega-Lite spec has.
#pragma once

#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/report/report.h"

namespace visalign::report::internal {

// Text for HTML content and attribute values: & < > " escaped, and the ':' of any "://" written
// as "&#58;", so no URL appears in the page whatever a model or file name holds.
std::string EscapeHtml(std::string_view text);
// JSON for a <script type="application/json"> element: "</" written "<\/" and "://" written
// ":\/\/" (the same JSON value).
std::string ScriptJson(const Json& value);

// InvalidArgument at "results folder <dir>" unless summary.csv has every one of `columns`.
Status RequireColumns(const ResultsFolder& folder, std::initializer_list<std::string_view> columns);
// Index of a column RequireColumns has checked, or of an optional one (then header.size() if absent).
size_t ColumnIndex(const CsvTable& table, std::string_view name);

// A file a results folder names (items' images, summary.json's inputs): absolute, or relative to
// where the benchmark ran (tried first), to the results folder or to one of its parent folders (the
// folder a benchmark of an earlier version, which wrote paths relative to where it ran, most likely
// ran in: `--out runs/eval` run from the folder above runs/). The first that exists; as written when
// none does.
std::filesystem::path ResolveInputPath(const ResultsFolder& folder, const std::string& path);

// A CSV cell as a JSON number; null for the empty cell (the NaN rule) or text that is no number.
Json CsvNumber(const std::string& cell);

// A table cell as the page shows it (docs/report.md, "Numbers"): a number with a fraction or an
// exponent to 4 significant digits (C's %.4g: "0.001555", "12.35", "1.235e-05"), rounded to an
// integer from 10 000 up ("12346"); an integer, text and the empty cell as written.
std::string DisplayNumber(const std::string& cell);

// Whether some row of `rows` has a number in `field` (a layer over no row makes vega warn).
bool AnyNumber(const Json& rows, std::string_view field);

// A Vega-Lite spec's common part: the model filter (a variable `model_filter` the page sets from
// its search box, applied to rows with a "model" field), `data` inline, autosize and sizing.
Json BaseSpec(Json values, bool filter_models = true);

// Names the fields the figure's marks need a number in: under the page's model filter, the figure
// shows while some row of a matching model has a number in each, and is hidden (with a line saying
// so) otherwise, rather than drawn empty, which makes vega warn. Kept in the spec's "usermeta"
// (which Vega-Lite ignores) as "need_numbers".
void NeedNumbers(Json& spec, std::initializer_list<std::string_view> fields);

// Classes of table cells: "best" and "second" mark the best and second best value of a column.
using CellClass = std::function<std::string(size_t row, size_t column)>;

// A <table class="sortable"> of `table`'s cells; each row's data-model is its "model" column (for
// the page's model filter), when it has one. A number the page shows rounded (DisplayNumber) keeps
// the cell's exact text in data-value (what sorting and copying use) and title (on hover).
std::string SortableTable(const CsvTable& table, const std::string& id, const std::string& caption,
                          const CellClass& cell_class = {});

// Appends one section's HTML and figures to a report.
class SectionBuilder {
 public:
  SectionBuilder(Report& report, std::string id, std::string benchmark, std::string heading);

  const std::string& id() const { return section().id; }
  void Html(std::string_view html) { section().body += html; }
  void Heading(std::string_view text);  // an <h3> sub-heading
  // A condition that makes the section's numbers meaningless or partial, shown at its top and
  // returned to the caller (the command prints it on stderr): one sentence, the words summary.md uses.
  void Note(std::string text) { section().notes.push_back(std::move(text)); }
  // A results folder's provenance: the folder, versions, and summary.json's inputs.
  void Provenance(const ResultsFolder& folder);
  // Adds a figure with id "<section id>-<name>"; its title and caption are HTML around the plot.
  void AddFigure(const std::string& name, std::string title, std::string caption, Json spec);
  // The results folder's whole summary.csv as a sortable table.
  void AddSummaryTable(const CsvTable& table);

 private:
  Report::Section& section() const { return report_.sections[index_]; }
  Report& report_;
  size_t index_;
};

Status BuildViolinSection(const ResultsFolder& folder, const ReportOptions& options, SectionBuilder& section);
// The VIOLIN probes' part of the VIOLIN section, when summary.json has "probes" (probes_section.cc).
Status BuildProbesSection(const ResultsFolder& folder, const ReportOptions& options, SectionBuilder& section);
// An <img> of an image a results folder names, downscaled to `size`; why not when it cannot be read
// (paths tried as written, then relative to the results folder and its parents).
Result<std::string> Thumbnail(const ResultsFolder& folder, const std::string& path, int size);
Status BuildHuesSection(const ResultsFolder& folder, const ReportOptions& options, SectionBuilder& section);
// The nonsense baseline of `hues nonsense --out` (nonsense_section.cc).
Status BuildNonsenseSection(const ResultsFolder& folder, const ReportOptions& options, SectionBuilder& section);
Status BuildAcvaSection(const ResultsFolder& folder, const ReportOptions& options, SectionBuilder& section);
// The Hues and Cues per-word board and CIE xy figures (hues_board.cc).
Status AddBoardFigures(const ResultsFolder& folder, const ReportOptions& options, SectionBuilder& section);
void BuildRunSection(const StoredRun& run, SectionBuilder& section);

// The report's section types: a results folder whose summary.json names `benchmark` gets the
// section `build` makes (after its provenance). The one table of them is sections.cc; a new
// benchmark's section is its <name>_section.cc and one row there (docs/architecture.md, "Add a
// benchmark"). A table, not a self-registering object per file: the module is a static library,
// and the linker leaves out an object file nothing references, registrar and all.
using BuildSectionFn = Status (*)(const ResultsFolder& folder, const ReportOptions& options, SectionBuilder& section);
struct SectionType {
  std::string_view benchmark;  // a benchmarks::k* id
  BuildSectionFn build;
};
std::span<const SectionType> SectionTypes();
// The entry of `benchmark`, or null.
const SectionType* FindSectionType(std::string_view benchmark);

// The page: `export_mode` makes its script also write every figure's SVG and PNG into the DOM
// for ExportFigures.
std::string RenderPage(const Report& report, bool export_mode);

}  // namespace visalign::report::internal
