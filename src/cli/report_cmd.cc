// `visalign report`: one self-contained HTML file (and, with --figures, static SVG/PNG files) over
// benchmark results folders. The library (src/report/) reads the folders and builds the page; this
// file only parses, calls it and prints the output's path.
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "cli/cli.h"
#include "visalign/core/io.h"
#include "visalign/report/report.h"

namespace visalign::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> results;
  StoreFlags store;
  std::vector<std::string> runs;
  std::string out;
  std::string title = "visalign report";
  std::string families;
  std::string figures;
  std::string format = "both";
  std::vector<std::string> board_words;
  int board_count = 3;
  int worst_images = 6;
  int thumbnail_size = 64;
};

// --out names a file in a folder that exists (checked first, so nothing is read or built for nothing).
Status CheckOutFile(const std::string& out) {
  const std::filesystem::path path(out);
  const std::filesystem::path folder = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Status::InvalidArgument("is a folder", "--out " + out,
                                   "the path of the HTML file to write, e.g. " + (path / "report.html").string());
  if (!std::filesystem::is_directory(folder, ec))
    return Status::NotFound(fmt::format("no folder {}", folder.string()), "--out " + out,
                            "a file in an existing folder (create the folder first)");
  return Status::Ok();
}

Status RunReport(const Cli& cli, const ReportArgs& a) {
  if (a.results.empty() && a.runs.empty())
    return Status::InvalidArgument("nothing to report", "visalign report", "--results DIR or --store PATH --run NAME");
  VISALIGN_RETURN_IF_ERROR(CheckOutFile(a.out));
  std::vector<report::ResultsFolder> folders;
  for (const std::string& dir : a.results) {
    VISALIGN_ASSIGN_OR_RETURN(report::ResultsFolder folder, report::ReadResultsFolder(dir));
    folders.push_back(std::move(folder));
  }
  std::vector<report::StoredRun> runs;
  for (const std::string& run : a.runs) {
    VISALIGN_ASSIGN_OR_RETURN(report::StoredRun stored, report::ReadStoredRun(a.store.location, a.store.options, run));
    runs.push_back(std::move(stored));
  }
  report::ReportOptions options;
  options.title = a.title;
  options.board_words = a.board_words;
  options.board_word_count = a.board_count;
  options.worst_images = a.worst_images;
  options.thumbnail_size = a.thumbnail_size;
  if (!a.families.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(options.family_overrides, report::ReadFamilyOverrides(a.families));
  }
  VISALIGN_ASSIGN_OR_RETURN(report::Report built, report::BuildReport(folders, runs, options));
  // What makes a section's numbers meaningless or partial, also on the page at the section's top.
  size_t notes = 0;
  for (const report::Report::Section& section : built.sections)
    for (const std::string& note : section.notes) {
      std::fprintf(stderr, "warning: %s: %s\n", section.heading.c_str(), note.c_str());
      ++notes;
    }
  const std::string html = report::RenderHtml(built);
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(a.out, html));
  if (!a.figures.empty()) {
    const report::FigureFormat format = a.format == "svg"   ? report::FigureFormat::kSvg
                                        : a.format == "png" ? report::FigureFormat::kPng
                                                            : report::FigureFormat::kBoth;
    VISALIGN_RETURN_IF_ERROR(report::ExportFigures(built, a.figures, format));
  }
  if (cli.global().json) {
    PrintJson({{"out", a.out},
               {"bytes", html.size()},
               {"sections", built.sections.size()},
               {"figures", built.figures.size()},
               {"warnings", notes},
               {"figures_dir", a.figures.empty() ? Json() : Json(a.figures)}});
  } else {
    std::printf("report: %s (%s, %s, %.1f KB%s)\n", a.out.c_str(),
                report::Counted(built.sections.size(), "section").c_str(),
                report::Counted(built.figures.size(), "figure").c_str(), html.size() / 1024.0,
                notes ? (", " + report::Counted(notes, "warning") + " on stderr").c_str() : "");
    if (!a.figures.empty()) std::printf("figures: %s/\n", a.figures.c_str());
    std::fflush(stdout);
  }
  return Status::Ok();
}

const CommandGroup kReport(80, {"report"}, [](Cli& cli) {
  CLI::App* cmd =
      cli.app().add_subcommand("report", "One self-contained HTML report (and paper figures) over results folders");
  auto a = std::make_shared<ReportArgs>();
  cmd->add_option("--results", a->results,
                  "A results folder of `violin evaluate`, `hues evaluate`, `hues nonsense` or `acva analyze/run`; "
                  "repeatable, in page order");
  AddStoreOptions(cmd, &a->store, "Run store of the --run runs");
  cmd->add_option("--run", a->runs,
                  "A generation run in the store: a section on its rows, latencies and failures; repeatable");
  cmd->add_option("--out", a->out, "The HTML file to write")->required();
  cmd->add_option("--title", a->title, "The page's title")->capture_default_str();
  cmd->add_option("--families", a->families,
                  "CSV model,architecture,dataset overriding the Hues and Cues model families (docs/report.md)");
  cmd->add_option("--figures", a->figures,
                  "Also write every figure as a static file into this folder (needs chromium); text is drawn as "
                  "glyph outlines of the page's font, so the files look the same on any machine");
  cmd->add_option("--format", a->format, "Static figure format: svg, png or both")
      ->check(CLI::IsMember({"svg", "png", "both"}))
      ->capture_default_str();
  cmd->add_option("--board-word", a->board_words, "Hues and Cues: a word drawn on the board and in CIE xy; repeatable");
  cmd->add_option("--board-count", a->board_count,
                  "Hues and Cues: without --board-word, draw the words most models fail, this many")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd->add_option("--worst-images", a->worst_images, "VIOLIN: worst images shown per model")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--thumbnail-size", a->thumbnail_size, "VIOLIN: longest side of the thumbnails, pixels")
      ->check(CLI::Range(8, 512))
      ->capture_default_str();
  cmd->footer(
      "The page needs no network: scripts, styles, its font (DejaVu Sans), data and thumbnails are inline; no URL "
      "appears in it.\n"
      "Tables show summary.csv as written; plots show tooltips with the numbers and follow the model filter.\n"
      "The same inputs give the same bytes. A benchmark not among the folders has no section.\n"
      "Numbers in tables show 4 significant digits; hovering or copying a cell gives its exact value.\n"
      "Conditions that make a section's numbers meaningless or partial (random CLIP weights, coverage below 100 %, "
      "refused answers, unreadable images) are stated at its top and printed on stderr as warnings.\n"
      "Example:\n"
      "  visalign report --results violin-eval --results hues-eval --results nonsense --results acva-results \\\n"
      "    --out report.html \\\n"
      "    --figures figures --format both\n"
      "  visalign report --store ./visalign-store --run gpt-image --results violin-eval --out report.html");
  cli.Bind(cmd, [&cli, a]() -> Status { return RunReport(cli, *a); });
});

}  // namespace
}  // namespace visalign::cli
