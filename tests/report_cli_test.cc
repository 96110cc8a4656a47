// `visalign report` end to end: the command over the fixture results folders in tests/data/report/,
// the page opened in headless Chromium (tests/testing/report_check.cjs): no console error or
// warning, no request, the expected number of marks per figure (all models, then filtered), the
// tables' cells exactly summary.csv's; bad inputs answered in one line with exit code 2; the
// static figures.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "testing/cli_runner.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/core/results.h"
#include "visalign/store.h"

namespace visalign {
namespace {
namespace fs = std::filesystem;
using testing::RunProgram;
using testing::RunVisalign;

fs::path Fixture(const std::string& name) {
  return testing::DataDir().parent_path() / "tests" / "data" / "report" / name;
}

std::vector<std::string> ReportArgs(const fs::path& out) {
  return {"report",
          "--results",
          Fixture("violin").string(),
          "--results",
          Fixture("hues").string(),
          "--results",
          Fixture("nonsense").string(),
          "--results",
          Fixture("acva").string(),
          "--out",
          out.string(),
          "--title",
          "fixture report"};
}

// Runs the Chromium check on `html`; its JSON.
Json CheckInChromium(const fs::path& html, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {
      "node", (testing::DataDir().parent_path() / "tests" / "testing" / "report_check.cjs").string(),
      VISALIGN_REPORT_NODE_MODULES, html.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  testing::RunResult r = RunProgram(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Json j = Json::parse(r.out, nullptr, false);
  EXPECT_TRUE(j.is_object()) << r.out << r.err;
  return j;
}

size_t Count(const Json& marks, const std::string& figure, const std::string& name) {
  const Json& f = marks.value(figure, Json::object());
  return f.value(name, size_t{0});
}

TEST(ReportCommand, RendersInChromiumWithTheExpectedMarksAndTables) {
  testing::TempDir t;
  const fs::path html = t / "report.html";
  testing::RunResult r = RunVisalign(ReportArgs(html));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("report: " + html.string()), std::string::npos) << r.out;

  const Json violin = Json::parse(*ReadFile(Fixture("violin") / "summary.json"));
  const Json hues = Json::parse(*ReadFile(Fixture("hues") / "summary.json"));
  const Json nonsense = Json::parse(*ReadFile(Fixture("nonsense") / "summary.json"));
  const Json acva = Json::parse(*ReadFile(Fixture("acva") / "summary.json"));
  const std::string first_hues_model = hues["models"][0]["model"];
  const Json check =
      CheckInChromium(html, {"--filter", first_hues_model, "--filter", "no such model", "--filter", "acva-mono",
                             "--screenshot", (t / "shot.png").string(), "--hover", "hues-1-fail-rates:models_marks",
                             "--sort", "hues-1-summary:8", "--copy", "hues-1-summary"});
  EXPECT_EQ(check["errors"], Json::array()) << check["errors"].dump();
  EXPECT_EQ(check["dark_errors"], Json::array()) << check["dark_errors"].dump();
  EXPECT_EQ(check["requests"], Json::array()) << check["requests"].dump();
  EXPECT_EQ(check["rendered"], "true");
  EXPECT_EQ(check["dark_theme"], "dark");
  // Printing uses the light style and drops the controls, whatever the screen's style.
  EXPECT_EQ(check["print"]["controls"], "none");
  EXPECT_EQ(check["print"]["background"], "rgb(255, 255, 255)");

  const Json& marks = check["marks"];
  // VIOLIN: one bar per (model, variation, measure) = summary.json's rows × 2.
  EXPECT_EQ(Count(marks, "violin-1-precision-purity", "bars_marks"), 2 * violin["rows"].size());
  // Hues: a point per (model, metric), one human rule; a tick per model in each family panel.
  const size_t hues_models = hues["models"].size();
  EXPECT_EQ(Count(marks, "hues-1-fail-rates", "models_marks"), 2 * hues_models);
  EXPECT_EQ(Count(marks, "hues-1-fail-rates", "human_marks"), 1u);
  EXPECT_EQ(Count(marks, "hues-1-families-architecture", "models_mahalanobis_marks"), hues_models);
  EXPECT_EQ(Count(marks, "hues-1-families-dataset", "models_hotelling_marks"), hues_models);
  // Hues boards: 480 cells, each model's top 5; the human answers' ellipse is one line.
  EXPECT_EQ(Count(marks, "hues-1-board-fox", "cells_marks"), 480u);
  EXPECT_EQ(Count(marks, "hues-1-board-fox", "top5_marks"), 5 * hues_models);
  EXPECT_EQ(Count(marks, "hues-1-xy-fox", "ellipse_marks"), 1u);
  EXPECT_EQ(Count(marks, "hues-1-xy-fox", "models_marks"), 5 * hues_models);
  EXPECT_EQ(Count(check["filtered_marks"], "hues-1-board-fox", "top5_marks"), 5u);
  // Nonsense baseline: a bar per collapse class present; per model its mode and a cell per group.
  std::set<std::string> classes;
  size_t groups = 0;
  for (const Json& m : nonsense["models"]) {
    classes.insert(m["class"].get<std::string>());
    groups += m["groups"].size();
  }
  EXPECT_EQ(classes.size(), 4u);  // the fixture has a model of each class
  EXPECT_EQ(Count(marks, "hues-nonsense-1-classes", "bars_marks"), classes.size());
  EXPECT_EQ(Count(marks, "hues-nonsense-1-modes", "modes_marks"), nonsense["models"].size());
  EXPECT_EQ(Count(marks, "hues-nonsense-1-modes", "groups_marks"), groups);
  // ACVA: a bar per (model, category or "all"); a stacked segment per (model, quadrant).
  size_t pass_bars = 0;
  for (const Json& m : acva["models"]) pass_bars += 1 + m["by_category"].size();
  EXPECT_EQ(Count(marks, "acva-1-pass-rates", "bars_marks"), pass_bars);
  size_t shares = 0;  // a model without passing images has no quadrant shares (null)
  for (const Json& m : acva["models"])
    for (const auto& [quadrant, share] : m["diversity"]["filtered"]["quadrants"].items()) shares += share.is_number();
  EXPECT_EQ(Count(marks, "acva-1-quadrants", "shares_marks"), shares);
  EXPECT_EQ(Count(marks, "acva-1-near-synonyms", "bars_marks"), 3 * acva["models"].size());
  size_t diversity_points = 0;  // a model without passing images has no D_img or H
  for (const Json& m : acva["models"])
    diversity_points +=
        m["diversity"]["filtered"]["d_img_mean"].is_number() && m["diversity"]["filtered"]["h_mean"].is_number();
  EXPECT_EQ(Count(marks, "acva-1-d-img-h", "models_marks"), diversity_points);
  // Tiers: one row per tier of summary.json, its models listed.
  Json tiers = Json::array();
  for (const Json& tier : acva["tiers"]) {
    std::string names;
    for (const Json& m : tier["models"]) names += (names.empty() ? "" : ", ") + m.get<std::string>();
    tiers.push_back({tier["tier"].dump(), names});
  }
  EXPECT_EQ(check["tables"]["acva-1-tiers"], tiers);

  // Hovering a mark shows its model and numbers: the fail-rate plot's first point is a model's
  // Mahalanobis rate (tooltip format .4f).
  const std::string tooltip = check.value("tooltip", "");
  EXPECT_NE(tooltip.find(first_hues_model), std::string::npos) << tooltip;
  EXPECT_NE(tooltip.find(fmt::format("{:.4f}", hues["models"][0]["mahalanobis"]["fail_rate"].get<double>())),
            std::string::npos)
      << tooltip;

  // Clicking a column header (hotelling_fail_rate) sorts the table by it, numerically, then the other way round.
  const auto numbers = [](const Json& cells) {
    std::vector<double> out;
    for (const Json& c : cells) out.push_back(std::stod(c.get<std::string>()));
    return out;
  };
  const std::vector<double> ascending = numbers(check["sorted"]["ascending"]);
  std::vector<double> expected;
  for (const Json& m : hues["models"]) expected.push_back(m["hotelling"]["fail_rate"].get<double>());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(ascending, expected);
  std::vector<double> descending = numbers(check["sorted"]["descending"]);
  std::reverse(descending.begin(), descending.end());
  EXPECT_EQ(descending, expected);

  // The model filter leaves the first Hues model only.
  EXPECT_EQ(Count(check["filtered_marks"], "hues-1-fail-rates", "models_marks"), 2u);
  // Typing in the filter logs nothing (docs/report.md): a figure left without a matching model is
  // hidden, with a line saying so, rather than drawn empty (vega warned "Infinite extent" then).
  ASSERT_EQ(check["filters"].size(), 3u);
  for (const Json& filter : check["filters"])
    EXPECT_EQ(filter["messages"], Json::array()) << filter["text"] << ": " << filter["messages"].dump();
  const auto hidden = [](const Json& filter) { return filter["hidden"].get<std::set<std::string>>(); };
  EXPECT_TRUE(hidden(check["filters"][0]).count("violin-1-precision-purity"));
  EXPECT_TRUE(hidden(check["filters"][0]).count("acva-1-pass-rates"));
  EXPECT_FALSE(hidden(check["filters"][0]).count("hues-1-fail-rates"));
  // Nothing matches "no such model": every figure with model rows is hidden, the boards too.
  EXPECT_TRUE(hidden(check["filters"][1]).count("hues-1-fail-rates"));
  EXPECT_TRUE(hidden(check["filters"][1]).count("hues-nonsense-1-modes"));
  // acva-mono has no passing image: no diversity numbers to draw, but a pass rate (0).
  EXPECT_TRUE(hidden(check["filters"][2]).count("acva-1-d-img-h"));
  EXPECT_TRUE(hidden(check["filters"][2]).count("acva-1-quadrants"));
  EXPECT_FALSE(hidden(check["filters"][2]).count("acva-1-pass-rates"));
  EXPECT_EQ(check["hidden_after_filters"], 0);

  // Each summary table's cells carry summary.csv's cells exactly (data-value where the number is
  // shown rounded) and show each number to at most 4 significant digits, integers as written.
  size_t rounded = 0;
  for (const auto& [name, id] :
       {std::pair{"violin", "violin-1-summary"}, std::pair{"hues", "hues-1-summary"},
        std::pair{"nonsense", "hues-nonsense-1-summary"}, std::pair{"acva", "acva-1-summary"}}) {
    Result<CsvTable> csv = ReadCsv(Fixture(name) / "summary.csv");
    ASSERT_TRUE(csv.ok());
    Json rows = Json::array();
    for (const auto& row : csv->rows) rows.push_back(row);
    EXPECT_EQ(check["tables"][id], rows) << id;
    for (size_t r = 0; r < csv->rows.size(); ++r)
      for (size_t c = 0; c < csv->rows[r].size(); ++c) {
        const std::string& exact = csv->rows[r][c];
        const std::string shown = check["shown"][id][r][c];
        if (exact == shown) continue;
        SCOPED_TRACE(id + (": " + exact + " shown as " + shown));
        ++rounded;
        const double x = std::stod(exact), y = std::stod(shown);
        EXPECT_LE(std::fabs(x - y), 5e-4 * std::fabs(x));
        std::string digits = shown.substr(0, shown.find('e'));
        digits.erase(std::remove_if(digits.begin(), digits.end(), [](char ch) { return ch < '0' || ch > '9'; }),
                     digits.end());
        digits.erase(0, digits.find_first_not_of('0'));
        EXPECT_LE(digits.size(), 4u);
      }
  }
  EXPECT_GT(rounded, 100u);
  // Copying the Hues summary table gives summary.csv's exact cells, tab-separated.
  std::string copied;
  const Result<CsvTable> hues_csv = ReadCsv(Fixture("hues") / "summary.csv");
  ASSERT_TRUE(hues_csv.ok());
  for (const std::vector<std::string>& row : hues_csv->rows) {
    std::string line;
    for (const std::string& cell : row) line += (line.empty() ? "" : "\t") + cell;
    copied += (copied.empty() ? "" : "\n") + line;
  }
  EXPECT_EQ(check["copied"], copied);
  // The ACVA fixture used random CLIP weights and 6 of the VIOLIN thumbnails' images were not kept:
  // both sections say so at their top, and the command said so on stderr, in the same words.
  ASSERT_EQ(check["notes"]["acva-1"].size(), 1u);
  const std::string acva_note = check["notes"]["acva-1"][0];
  EXPECT_EQ(acva_note.rfind("Warning: the CLIP model's weights are RANDOM (visalign clip random-model", 0), 0u)
      << acva_note;
  EXPECT_NE(r.err.find("warning: ACVA-Bench — acva: " + acva_note.substr(9) + "\n"), std::string::npos) << r.err;
  ASSERT_EQ(check["notes"]["violin-1"].size(), 1u);
  const std::string violin_note = check["notes"]["violin-1"][0];
  EXPECT_EQ(violin_note.rfind("Warning: 6 of the 12 worst images shown cannot be read", 0), 0u) << violin_note;
  EXPECT_NE(r.err.find("warning: VIOLIN — violin: " + violin_note.substr(9) + "\n"), std::string::npos) << r.err;
  EXPECT_EQ(check["notes"]["hues-1"], Json::array());
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;
  EXPECT_NE(r.out.find("(4 sections, 18 figures, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", 2 warnings on stderr)"), std::string::npos) << r.out;
  Result<std::string> shot = ReadFile(t / "shot.png");
  ASSERT_TRUE(shot.ok());
  EXPECT_EQ(shot->substr(1, 3), "PNG");
}

TEST(ReportCommand, TheSameInputsGiveTheSameBytesAndNoUrl) {
  testing::TempDir t;
  ASSERT_EQ(RunVisalign(ReportArgs(t / "a.html")).exit_code, 0);
  ASSERT_EQ(RunVisalign(ReportArgs(t / "b.html")).exit_code, 0);
  const std::string a = *ReadFile(t / "a.html");
  EXPECT_EQ(a, *ReadFile(t / "b.html"));
  EXPECT_EQ(a.find("http://"), std::string::npos);
  EXPECT_EQ(a.find("https://"), std::string::npos);
}

TEST(ReportCommand, AMissingBenchmarkIsLeftOut) {
  testing::TempDir t;
  testing::RunResult r =
      RunVisalign({"report", "--results", Fixture("hues").string(), "--out", (t / "r.html").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" (1 section, 11 figures, "), std::string::npos) << r.out;  // not "1 sections"
  EXPECT_EQ(r.err, "");
  const Json check = CheckInChromium(t / "r.html");
  EXPECT_EQ(check["errors"], Json::array()) << check["errors"].dump();
  EXPECT_FALSE(check["marks"].contains("violin-1-precision-purity"));
  EXPECT_FALSE(check["marks"].contains("acva-1-pass-rates"));
  EXPECT_TRUE(check["marks"].contains("hues-1-fail-rates"));
}

TEST(ReportCommand, BadInputsAreOneLineWithExitCode2) {
  testing::TempDir t;
  const fs::path out = t / "r.html";
  fs::copy(Fixture("hues"), t / "newer", fs::copy_options::recursive);
  Json summary = Json::parse(*ReadFile(t / "newer" / "summary.json"));
  summary["schema_version"] = 99;
  ASSERT_TRUE(WriteFileAtomic(t / "newer" / "summary.json", summary.dump()).ok());
  testing::RunResult newer = RunVisalign({"report", "--results", (t / "newer").string(), "--out", out.string()});
  EXPECT_EQ(newer.exit_code, 2);
  EXPECT_EQ(newer.err, "error: summary.json has schema_version 99 (--results " + (t / "newer").string() +
                           "): schema_version 1, written by visalign " + std::string(VisalignVersion()) +
                           " (re-run the benchmark)\n");
  fs::copy(Fixture("hues"), t / "garbage", fs::copy_options::recursive);
  ASSERT_TRUE(WriteFileAtomic(t / "garbage" / "summary.json", "{\"benchmark\": ").ok());
  testing::RunResult garbage = RunVisalign({"report", "--results", (t / "garbage").string(), "--out", out.string()});
  EXPECT_EQ(garbage.exit_code, 2);
  EXPECT_EQ(garbage.err.rfind("error: summary.json is invalid JSON (syntax error at byte 15) (--results " +
                                  (t / "garbage").string() + "): ",
                              0),
            0u)
      << garbage.err;
  EXPECT_EQ(std::count(garbage.err.begin(), garbage.err.end(), '\n'), 1);
  fs::copy(Fixture("acva"), t / "retyped", fs::copy_options::recursive);
  summary = Json::parse(*ReadFile(t / "retyped" / "summary.json"));
  summary["models"][0]["model"] = 7;
  ASSERT_TRUE(WriteFileAtomic(t / "retyped" / "summary.json", summary.dump()).ok());
  testing::RunResult retyped = RunVisalign({"report", "--results", (t / "retyped").string(), "--out", out.string()});
  EXPECT_EQ(retyped.exit_code, 2);
  EXPECT_EQ(retyped.err,
            "error: summary.json or items.jsonl holds a value of another type (type must be string, but is "
            "number) (--results " +
                (t / "retyped").string() +
                "): the files as the benchmark wrote them (docs/architecture.md, results contract)\n");
  testing::RunResult missing = RunVisalign({"report", "--results", (t / "nowhere").string(), "--out", out.string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err.rfind("error: no such folder (--results " + (t / "nowhere").string() + "): ", 0), 0u)
      << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1);
  EXPECT_FALSE(fs::exists(out));
  // A report into a folder that does not exist: the folder and what is expected, no temp file named.
  const fs::path nowhere = t / "nowhere" / "r.html";
  testing::RunResult no_folder =
      RunVisalign({"report", "--results", Fixture("hues").string(), "--out", nowhere.string()});
  EXPECT_EQ(no_folder.exit_code, 2);
  EXPECT_EQ(no_folder.err, "error: no folder " + (t / "nowhere").string() + " (--out " + nowhere.string() +
                               "): a file in an existing folder (create the folder first)\n");
  testing::RunResult folder =
      RunVisalign({"report", "--results", Fixture("hues").string(), "--out", t.path().string()});
  EXPECT_EQ(folder.exit_code, 2);
  EXPECT_EQ(folder.err, "error: is a folder (--out " + t.path().string() +
                            "): the path of the HTML file to write, e.g. " + (t / "report.html").string() + "\n");
}

// A store with run "r1": two done images (100 and 250 ms, the second after a failed attempt) and
// one row that failed for good.
void MakeStore(const fs::path& dir) {
  Result<std::unique_ptr<store::RunStore>> st = store::OpenStore(dir.string());
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  store::RunInfo info{"r1", "violin", "abc", {{"backend", "openai"}, {"model", "m"}}, {}, {}};
  ASSERT_TRUE((*st)->OpenRun(info).ok());
  ASSERT_TRUE((*st)->AddItems("r1", {{"a", 0, "p", {}}, {"b", 0, "p", {}}, {"c", 0, "p", {}}}).ok());
  for (const auto& [item, latency] : {std::pair{"a", 100.0}, std::pair{"b", 250.0}}) {
    if (std::string(item) == "b") {
      ASSERT_TRUE((*st)->MarkFailure("r1", "b", 0, "", "HTTP 500", 20, false).ok());
    }
    Result<store::StoredImage> image = (*st)->WriteImage("r1", item, 0, "not an image", "png");
    ASSERT_TRUE(image.ok());
    ASSERT_TRUE((*st)->MarkDone("r1", item, 0, "", *image, latency).ok());
  }
  ASSERT_TRUE((*st)->MarkFailure("r1", "c", 0, "", "HTTP 400: <bad request>", 30, true).ok());
}

TEST(ReportCommand, AStoredRunHasItsSection) {
  testing::TempDir t;
  MakeStore(t / "store");
  const fs::path html = t / "r.html";
  testing::RunResult r =
      RunVisalign({"report", "--store", (t / "store").string(), "--run", "r1", "--out", html.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json check = CheckInChromium(html);
  EXPECT_EQ(check["errors"], Json::array()) << check["errors"].dump();
  // Attempts: one bar per (attempts, status) present: (1, done), (2, done), (1, failed).
  EXPECT_EQ(Count(check["marks"], "run-1-attempts", "bars_marks"), 3u);
  EXPECT_GE(Count(check["marks"], "run-1-latency", "bars_marks"), 2u);
  EXPECT_EQ(check["tables"]["run-1-counts"], Json::parse(R"([["r1","3","2","1","0","4"]])"));
  EXPECT_EQ(check["tables"]["run-1-failures"],
            Json::parse(R"([["c","0","failed","1","HTTP 400: <bad request>"]])"));  // a done row keeps no error
  // One of its three rows failed: the section says so at its top, and the command on stderr.
  const std::string note =
      "run r1 has 1 failed and 0 pending of its 3 rows, so an evaluation of it covers only its 2 done "
      "images (`visalign violin generate --retry-failed` resumes it).";
  EXPECT_EQ(check["notes"]["run-1"], Json::array({"Warning: " + note}));
  EXPECT_EQ(r.err, "warning: Run — r1: " + note + "\n");

  testing::RunResult none =
      RunVisalign({"report", "--store", (t / "store").string(), "--run", "r2", "--out", html.string()});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err, "error: no run named \"r2\" (--run r2 in store " + (t / "store").string() +
                          "): one of the runs `visalign store show --store " + (t / "store").string() + "` lists\n");
  testing::RunResult nostore =
      RunVisalign({"report", "--store", (t / "nowhere").string(), "--run", "r1", "--out", html.string()});
  EXPECT_EQ(nostore.exit_code, 2);
  EXPECT_EQ(nostore.err.rfind("error: no visalign store (--store " + (t / "nowhere").string() + "): ", 0), 0u)
      << nostore.err;
  EXPECT_FALSE(fs::exists(t / "nowhere"));
  testing::RunResult nothing = RunVisalign({"report", "--out", html.string()});
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_EQ(nothing.err, "error: nothing to report (visalign report): --results DIR or --store PATH --run NAME\n");
}

TEST(ReportCommand, StaticFiguresAreGlyphOutlinesAndByteStable) {
  testing::TempDir t;
  std::vector<std::string> args = ReportArgs(t / "r.html");
  for (const char* dir : {"a", "b"}) {
    std::vector<std::string> with = args;
    with.insert(with.end(), {"--figures", (t / dir).string(), "--format", "both"});
    testing::RunResult r = RunVisalign(with);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // VIOLIN 1, Hues 5 + 3 words × (board, xy), nonsense 2, ACVA 4 figures; each as SVG and PNG.
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(t / "a")) files.push_back(entry.path());
  EXPECT_EQ(files.size(), 2 * 18u);
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    const std::string bytes = *ReadFile(file);
    // The same inputs give the same bytes, SVG and PNG alike (so the same pixels).
    EXPECT_EQ(bytes, *ReadFile(t / "b" / file.filename()));
    if (file.extension() == ".png") {
      EXPECT_EQ(bytes.substr(1, 3), "PNG");
      continue;
    }
    EXPECT_EQ(bytes.rfind("<svg", 0), 0u) << bytes.substr(0, 80);
    // Text is drawn as the outlines of the embedded font's glyphs: no <text>, no font named.
    EXPECT_EQ(bytes.find("<text"), std::string::npos);
    EXPECT_EQ(bytes.find("font-family"), std::string::npos);
  }
  // A figure's title and axis labels became paths: the fail-rate plot has at least one per model label.
  const std::string svg = *ReadFile(t / "a" / "hues-1-fail-rates.svg");
  const Json hues = Json::parse(*ReadFile(Fixture("hues") / "summary.json"));
  size_t paths = 0;
  for (size_t at = svg.find("<path"); at != std::string::npos; at = svg.find("<path", at + 1)) ++paths;
  EXPECT_GT(paths, hues["models"].size());
}

TEST(ReportCommand, ProbeFiguresRenderInChromium) {
  testing::TempDir t;
  const fs::path html = t / "probes.html";
  ASSERT_EQ(RunVisalign({"report", "--results", Fixture("violin-probes").string(), "--out", html.string()}).exit_code,
            0);
  const Json check = CheckInChromium(html);
  EXPECT_EQ(check["errors"], Json::array()) << check["errors"].dump();
  EXPECT_EQ(check["rendered"], "true");
  size_t inertia_lines = 0;
  const std::string items = *ReadFile(Fixture("violin-probes") / "items.jsonl");
  for (std::string_view line : SplitLines(items))
    inertia_lines += line.find("\"family\":\"inertia\"") != std::string_view::npos;
  EXPECT_EQ(Count(check["marks"], "violin-1-probes-inertia", "points_marks"), inertia_lines);
  EXPECT_EQ(Count(check["marks"], "violin-1-probes-inertia", "identity_marks"), 1u);
  EXPECT_GT(Count(check["marks"], "violin-1-probes-gravity-pull", "bars_marks"), 0u);
}

}  // namespace
}  // namespace visalign
