// `visalign report`: one self-contained HTML file over benchmark results folders, and the same
// figures as static SVG/PNG files for papers.
//
// The report reads only the results contract (docs/architecture.md): each folder's summary.json
// (benchmark, schema_version, inputs), summary.csv and items.jsonl; it never computes a benchmark's
// numbers. Tables show summary.csv's cells as written; figures are Vega-Lite specifications whose
// data rows are those numbers, rendered in the page by the vega bundles compiled into the binary.
// The page loads nothing: scripts, styles, data and thumbnails are inline and no URL appears in it.
// The same inputs give the same bytes.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/store.h"

namespace visalign::report {

// One benchmark's results folder.
struct ResultsFolder {
  std::filesystem::path dir;  // as given
  std::string benchmark;      // one of ReportedBenchmarks()
  Json summary;               // summary.json
  CsvTable summary_csv;       // summary.csv's cells, as written
  std::vector<Json> items;    // items.jsonl, one object per line
};

// The benchmark ids (visalign/core/benchmarks.h) whose results folders the report reads, each with
// a section of its own: every benchmark of benchmarks::Benchmarks(), in its order.
std::vector<std::string_view> ReportedBenchmarks();

// Reads `dir` as a results folder: InvalidArgument at "results folder <dir>" for a summary.json
// that is not JSON, names no benchmark of ReportedBenchmarks() (the error lists them) or has
// another schema_version than this build's
// (kResultsSchemaVersion), or whose summary.csv or items.jsonl does not parse; NotFound when the
// folder or one of its three files is missing.
Result<ResultsFolder> ReadResultsFolder(const std::filesystem::path& dir);

// A generation run of a run store, for a section on how it went: identity, row counts, latencies,
// attempts and failures.
struct StoredRun {
  std::string store;  // the store's location, as store::DisplayLocation shows it
  store::RunInfo info;
  std::vector<store::Row> rows;
};

// Reads run `run` of the store at `location` without creating or changing anything: NotFound at
// "store location <location>" when there is no store, at "run name <run>" when it has no such run.
Result<StoredRun> ReadStoredRun(const std::string& location, const store::StoreOptions& options,
                                const std::string& run);

// A model's architecture and pretraining-data family, for the Hues and Cues figures.
struct ModelFamily {
  std::string architecture;
  std::string dataset;
};

// The documented mapping from a model name (open_clip style, "ViT-B-16-laion2b_s34b_b88k") to
// its families (docs/report.md, "Model families"); "other" where no rule matches.
ModelFamily FamilyFromName(const std::string& model);

// model -> family, from a CSV file with columns model,architecture,dataset (the override file);
// InvalidArgument at "families file <path>:<line>" for a malformed row.
Result<std::map<std::string, ModelFamily>> ReadFamilyOverrides(const std::filesystem::path& path);

struct ReportOptions {
  std::string title = "visalign report";
  // Families of named models; others come from summary.json's "family" (a catalogued Hues
  // evaluation), the shipped catalog data/hues/model_catalog.csv, or FamilyFromName.
  std::map<std::string, ModelFamily> family_overrides;
  // Hues and Cues words drawn on the board and in CIE xy; without any, the board_word_count words
  // most models fail.
  std::vector<std::string> board_words;
  int board_word_count = 3;
  // Worst images per model shown for VIOLIN, and their longest side in pixels.
  int worst_images = 6;
  int thumbnail_size = 64;
};

// One figure of the report.
struct Figure {
  std::string id;  // unique in the report, also the static file's name: "violin-1-precision-purity"
  std::string title;
  std::string caption;
  Json spec;  // a Vega-Lite specification with its data inline
};

// The report's sections (one per results folder or stored run) and figures, in page order.
struct Report {
  std::string title;
  struct Section {
    std::string id;         // "violin-1", "run-1"
    std::string benchmark;  // one of ReportedBenchmarks(), or "run"
    std::string heading;    // "VIOLIN — <folder>", "Run — <name>"
    // Conditions that make the section's numbers meaningless or partial (random CLIP weights,
    // coverage below 100 %, missing images, refused or invalid answers, thumbnails that cannot be
    // read), one sentence each in the words of the folder's summary.md; shown at the section's top.
    std::vector<std::string> notes;
    std::string body;  // HTML: provenance, figures (<figure data-figure=index>) and tables
  };
  std::vector<Section> sections;
  std::vector<Figure> figures;
};

// Builds the report over `folders` (in the order given), then `runs`; a benchmark absent from them
// simply has no section. A VIOLIN image that cannot be read is listed without its thumbnail and
// named in its section's notes; options out of range are InvalidArgument.
Result<Report> BuildReport(const std::vector<ResultsFolder>& folders, const std::vector<StoredRun>& runs,
                           const ReportOptions& options);

// "1 section", "3 figures": `n` and `noun`, with a plural "s" unless n is 1.
std::string Counted(size_t n, std::string_view noun);

// The self-contained HTML page of `report`.
std::string RenderHtml(const Report& report);

// Static export: every figure of `report` as <dir>/<figure id>.svg and/or .png, rendered by the
// same vega code in headless Chromium at `chromium`: every text of an SVG drawn as the glyph
// outlines of the page's embedded font (no <text>, no font named), the PNG that same SVG at 2x
// (docs/report.md, "Fonts"). Unavailable at "chromium" when it cannot be run.
enum class FigureFormat { kSvg, kPng, kBoth };
Status ExportFigures(const Report& report, const std::filesystem::path& dir, FigureFormat format,
                     const std::filesystem::path& chromium = "/usr/bin/chromium");

}  // namespace visalign::report
