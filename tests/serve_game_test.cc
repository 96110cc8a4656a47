// The Hues and Cues game of `visalign serve`, end to end: the real server on 127.0.0.1 with a real
// SQLite study store, played in headless Chromium by mouse, by typed coordinates, on a phone and
// by keyboard only; what was played is exactly what `hues export-humans` writes, and what `hues
// humans` reads. Zero console errors and no request to another origin on every page.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>

#include "testing/serve_process.h"
#include "visalign/core/io.h"
#include "visalign/store/study_store.h"

namespace visalign {
namespace {

namespace fs = std::filesystem;
using testing::BrowserRun;
using testing::RunBrowserScenario;
using testing::RunVisalign;
using testing::ServeProcess;
using testing::TempDir;

constexpr char kToken[] = "test-admin-token-0123456789";
constexpr char kRedirect[] = "https://app.prolific.com/submissions/complete?cc={code}";

// A study of 4 words with the attention check third, one completion code and a Prolific redirect.
std::string StudyFile(const TempDir& dir, bool cvd_screen) {
  return dir
      .Write("study.json", nlohmann::json({{"words_per_participant", 4},
                                           {"attention_check", {{"cell", "H15"}, {"position", 2}}},
                                           {"completion_codes", {"C0DE1"}},
                                           {"completion_url", kRedirect},
                                           {"cvd_screen", cvd_screen}})
                               .dump())
      .string();
}

fs::path Scenarios() { return testing::TestingDir() / "serve_game_scenarios.cjs"; }

void ExpectCleanPage(const BrowserRun& run) {
  EXPECT_EQ(run.exit_code, 0) << run.stderr_text;
  EXPECT_TRUE(run.errors.empty()) << ::testing::PrintToString(run.errors);
}

CsvTable Export(const fs::path& store, const fs::path& out) {
  auto exported = RunVisalign({"hues", "export-humans", "--store", store.string(), "--out", out.string()});
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  auto table = ReadCsv(out);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return table.ok() ? *table : CsvTable{};
}

std::string Cell(const CsvTable& t, size_t row, const char* column) { return t.rows[row][*t.Column(column)]; }

TEST(ServeGame, ASessionByClickAndTypedCoordinateIsExactlyWhatExportHumansWrites) {
  TempDir dir;
  const fs::path store = dir / "store";
  ServeProcess serve({"--store", store.string(), "--study", StudyFile(dir, true), "--admin-token-env", "STUDY_TOKEN"},
                     dir.path(), {{"STUDY_TOKEN", kToken}});
  ASSERT_TRUE(serve.ok()) << serve.error();
  const std::vector<std::string> cells = {"C12", "P30", "", "A1", "H7"};  // item 2 is the attention check
  BrowserRun run = RunBrowserScenario(Scenarios(), "game_session", serve.url(),
                                      {{"cells", cells}, {"plateAnswers", {"none", 3}},
                                       {"redirectGlob", "https://app.prolific.com/**"}},
                                      dir.path());
  ExpectCleanPage(run);
  const nlohmann::json& items = run.result["items"];
  ASSERT_EQ(items.size(), 5u) << run.result.dump();
  EXPECT_EQ(items[2]["kind"], "attention");
  EXPECT_EQ(items[2]["cell"], "H15");
  for (size_t i : {0, 1, 3, 4}) {
    EXPECT_EQ(items[i]["kind"], "word");
    EXPECT_GT(items[i]["heatCells"].get<int>(), 0) << "the reveal shows earlier players' answers";
    EXPECT_NE(items[i]["revealText"].get<std::string>().find("players answered this word"), std::string::npos);
  }
  EXPECT_EQ(items[0]["how"], "click");
  EXPECT_EQ(items[1]["how"], "type");
  EXPECT_EQ(run.result["code"], "C0DE1");
  EXPECT_EQ(run.result["finalUrl"], "https://app.prolific.com/submissions/complete?cc=C0DE1");
  EXPECT_EQ(run.external_requests, std::vector<std::string>{"https://app.prolific.com/submissions/complete?cc=C0DE1"})
      << "the completion redirect is the only request that leaves the server";
  EXPECT_EQ(run.result["plates"].size(), 5u);

  // The admin export over HTTP and the command's file hold the same rows.
  httplib::Client client(serve.url());
  auto admin = client.Get("/api/admin/export", httplib::Headers{{"Authorization", std::string("Bearer ") + kToken}});
  ASSERT_TRUE(admin);
  EXPECT_EQ(admin->status, 200);
  serve.Stop();

  const CsvTable t = Export(store, dir / "answers.csv");
  EXPECT_EQ(ReadFile(dir / "answers.csv").value(), admin->body);
  ASSERT_EQ(t.rows.size(), 4u);
  const std::vector<size_t> words = {0, 1, 3, 4};
  for (size_t r = 0; r < 4; ++r) {
    SCOPED_TRACE(r);
    EXPECT_EQ(Cell(t, r, "userId"), Cell(t, 0, "userId"));
    EXPECT_EQ(Cell(t, r, "word"), items[words[r]]["word"]);
    EXPECT_EQ(Cell(t, r, "coordinate"), cells[words[r]]);
    EXPECT_EQ(Cell(t, r, "language"), "english");
    EXPECT_EQ(Cell(t, r, "gender"), "female");
    EXPECT_EQ(Cell(t, r, "ageRange"), "20-29");
    EXPECT_EQ(Cell(t, r, "colorblind"), "no");
  }
  EXPECT_EQ(t.header, (std::vector<std::string>{"userId", "timestamp", "clueCategory", "clueId", "word", "coordinate",
                                                "language", "gender", "ageRange", "colorblind", "word_en"}));

  // The session's metadata, URL parameters, screen and attention check are in the study store.
  auto study = store::StudyStore::Open(store.string());
  ASSERT_TRUE(study.ok());
  auto participants = (*study)->Participants();
  ASSERT_EQ(participants->size(), 1u);
  const store::Participant& p = participants->front();
  EXPECT_EQ(p.user_id, Cell(t, 0, "userId"));
  EXPECT_EQ(p.url_params, nlohmann::json({{"PROLIFIC_PID", "pid-1"}, {"SESSION_ID", "session-1"}, {"STUDY_ID", "study-1"}}));
  for (const char* key : {"user_agent", "viewport", "device_pixel_ratio", "color_gamut", "dynamic_range"})
    EXPECT_TRUE(p.metadata.contains(key)) << key;
  ASSERT_TRUE(p.screen_score.has_value());
  EXPECT_EQ(p.screen["answers"], nlohmann::json({nullptr, 3, nullptr, nullptr, nullptr}));
  EXPECT_FALSE(p.completed_at.empty());
  auto events = (*study)->Events(p.id);
  ASSERT_TRUE(events.ok());
  std::vector<std::string> types;
  for (const store::StudyEvent& e : *events) types.push_back(e.type);
  EXPECT_NE(std::find(types.begin(), types.end(), "blur"), types.end()) << ::testing::PrintToString(types);
  EXPECT_NE(std::find(types.begin(), types.end(), "focus"), types.end());
  auto checks = (*study)->Records("attention_check");
  ASSERT_EQ(checks->size(), 1u);
  EXPECT_EQ(checks->front().payload["passed"], true);

  // `hues humans` reads the export unchanged.
  auto humans = RunVisalign({"hues", "humans", "--humans", (dir / "answers.csv").string(), "--json"});
  EXPECT_EQ(humans.exit_code, 0) << humans.err;
}

TEST(ServeGame, OnAPortraitPhoneTheWholeBoardIsVisible) {
  TempDir dir;
  ServeProcess serve({"--store", (dir / "store").string(), "--study", StudyFile(dir, false)}, dir.path());
  ASSERT_TRUE(serve.ok()) << serve.error();
  BrowserRun run = RunBrowserScenario(Scenarios(), "phone", serve.url(),
                                      {{"viewport", {{"width", 390}, {"height", 844}}}, {"isMobile", true},
                                       {"deviceScaleFactor", 3}},
                                      dir.path());
  ExpectCleanPage(run);
  const nlohmann::json& box = run.result["box"];
  EXPECT_GE(box["x"].get<double>(), 0);
  EXPECT_GE(box["y"].get<double>(), 0);
  EXPECT_LE(box["x"].get<double>() + box["width"].get<double>(), 390);
  EXPECT_LE(box["y"].get<double>() + box["height"].get<double>(), 844);
  EXPECT_LE(run.result["scrollWidth"].get<int>(), 390) << "no sideways scrolling";
  EXPECT_GE(run.result["cell"].get<double>(), 11) << "cells large enough to tap";
  EXPECT_TRUE(fs::exists(dir / "phone.png"));
  if (const char* keep = std::getenv("VISALIGN_KEEP_SCREENSHOT")) fs::copy_file(dir / "phone.png", keep, fs::copy_options::overwrite_existing);
}

TEST(ServeGame, TheWholeGameCanBePlayedWithTheKeyboardOnly) {
  TempDir dir;
  const fs::path store = dir / "store";
  ServeProcess serve({"--store", store.string(), "--study", StudyFile(dir, true)}, dir.path());
  ASSERT_TRUE(serve.ok()) << serve.error();
  const nlohmann::json moves = {{"ArrowRight", "ArrowRight", "ArrowDown"}, {"End", "PageDown"}, {"ArrowDown"}, {"Home"}};
  nlohmann::json attention = nlohmann::json::array();
  for (int i = 0; i < 7; ++i) attention.push_back("ArrowDown");
  for (int i = 0; i < 14; ++i) attention.push_back("ArrowRight");
  BrowserRun run = RunBrowserScenario(Scenarios(), "keyboard", serve.url(), {{"moves", moves}, {"attentionMoves", attention}},
                                      dir.path());
  ExpectCleanPage(run);
  // Every board starts with the focus on A1.
  const std::vector<std::string> expected = {"B3", "P30", "H15", "B1", "A1"};
  const nlohmann::json& answers = run.result["answers"];
  ASSERT_EQ(answers.size(), 5u) << run.result.dump();
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(answers[i]["cell"], expected[i]) << i;
  EXPECT_EQ(run.result["plates"], 5);
  serve.Stop();
  const CsvTable t = Export(store, dir / "answers.csv");
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(Cell(t, 0, "coordinate"), "B3");
  EXPECT_EQ(Cell(t, 3, "coordinate"), "A1");
  EXPECT_EQ(Cell(t, 0, "gender"), "male");
}

}  // namespace
}  // namespace visalign
