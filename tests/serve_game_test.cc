// The Hues and Cues game of `visalign serve`, end to end: the real server on 127.0.0.1 with a real
// SQLite study store, played in headless Chromium by mouse, by typed coordinates, on a phone and
// by keyboard only; what was played is exactly what `hues export-humans` writes, and what `hues
// humans` reads. Zero console errors and no request to another origin on every page.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <map>
#include <set>

#include "server/plates.h"
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
      .Write("study.json", Json({{"words_per_participant", 4},
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
  // The first participant (id 1) reads the control plate and three of the four confusion plates
  // (the plates are drawn from the participant's id): a plate score of 0.75, not colour-blind.
  Json plate_answers = Json::array();
  for (const server::Plate& plate : server::ScreeningPlates(1))
    plate_answers.push_back(plate_answers.size() == 2 ? Json("none") : Json(plate.digit));
  BrowserRun run = RunBrowserScenario(
      Scenarios(), "game_session", serve.url(),
      {{"cells", cells}, {"plateAnswers", plate_answers}, {"redirectGlob", "https://app.prolific.com/**"}}, dir.path());
  ExpectCleanPage(run);
  const Json& items = run.result["items"];
  ASSERT_EQ(items.size(), 5u) << run.result.dump();
  EXPECT_EQ(items[2]["kind"], "attention");
  EXPECT_EQ(items[2]["cell"], "H15");
  for (size_t i : {0, 1, 3, 4}) {
    EXPECT_EQ(items[i]["kind"], "word");
    EXPECT_GT(items[i]["heatCells"].get<int>(), 0) << "the reveal shows earlier players' answers";
    EXPECT_NE(items[i]["revealText"].get<std::string>().find("players answered this word"), std::string::npos);
  }
  // The progress counts the 4 words; the attention check is not one of them.
  const std::vector<std::string> progress = {"Word 1 of 4", "Word 2 of 4", "A quick check (not one of the 4 words)",
                                             "Word 3 of 4", "Word 4 of 4"};
  for (size_t i = 0; i < items.size(); ++i) EXPECT_EQ(items[i]["progress"], progress[i]) << i;
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
  EXPECT_EQ(nlohmann::json(p.url_params),
            nlohmann::json({{"PROLIFIC_PID", "pid-1"}, {"SESSION_ID", "session-1"}, {"STUDY_ID", "study-1"}}));
  for (const char* key : {"user_agent", "viewport", "device_pixel_ratio", "color_gamut", "dynamic_range"})
    EXPECT_TRUE(p.metadata.contains(key)) << key;
  ASSERT_TRUE(p.screen_score.has_value());
  EXPECT_EQ(*p.screen_score, 0.75);
  Json stored_answers = plate_answers;
  stored_answers[2] = nullptr;  // "none": no digit seen
  EXPECT_EQ(p.screen["answers"], stored_answers);
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

// Every word of the shipped list, played over the API in each language: the page gets the
// category's name in the participant's language (data/hues/category_names.csv), the answers keep
// the published code.
TEST(ServeGame, EachWordShowsItsCategorysNameInTheParticipantsLanguage) {
  TempDir dir;
  const fs::path store = dir / "store";
  const std::string study = dir.Write("study.json", Json({{"words_per_participant", 100},
                                                          {"cvd_screen", false},
                                                          {"attention_check", {{"enabled", false}}},
                                                          {"rate_limit_per_ip", {{"per_second", 0}}},
                                                          {"rate_limit_per_session", {{"per_second", 0}}}})
                                                        .dump())
                                .string();
  ServeProcess serve({"--store", store.string(), "--study", study}, dir.path());
  ASSERT_TRUE(serve.ok()) << serve.error();
  const CsvTable words = ReadCsv(testing::DataDir() / "hues" / "words.csv").value();
  const CsvTable names = ReadCsv(testing::DataDir() / "hues" / "category_names.csv").value();
  std::map<std::string, std::string> category_of;  // clue id -> category code
  for (const auto& row : words.rows) category_of[row[*words.Column("clue_id")]] = row[*words.Column("category")];
  httplib::Client client(serve.url());
  std::map<std::string, std::set<std::string>> shown;  // language -> category names shown
  for (const std::string language : {"es", "en"}) {
    std::map<std::string, std::string> name_of;  // category code -> name in `language`
    for (const auto& row : names.rows) name_of[row[*names.Column("category")]] = row[*names.Column(language)];
    auto session = client.Post("/api/session", R"({"consent": true})", "application/json");
    ASSERT_TRUE(session && session->status == 201);
    const std::string set_cookie = session->get_header_value("Set-Cookie");
    const httplib::Headers cookie = {{"Cookie", set_cookie.substr(0, set_cookie.find(';'))}};
    const Json profile = {{"language", language}, {"gender", "other"}, {"age_range", "30-39"}, {"colorblind", "no"}};
    auto onboarded = client.Post("/api/profile", cookie, profile.dump(), "application/json");
    ASSERT_TRUE(onboarded && onboarded->status == 200);
    auto next = client.Get("/api/next", cookie);
    ASSERT_TRUE(next && next->status == 200);
    Json item = Json::parse(next->body);
    for (int n = 0; !item["done"].get<bool>(); ++n) {
      const std::string clue = std::to_string(item["clue_id"].get<int>());
      EXPECT_EQ(item["category_code"], category_of.at(clue)) << clue;
      EXPECT_EQ(item["category"], name_of.at(category_of.at(clue))) << clue;
      shown[language].insert(item["category"].get<std::string>());
      const Json answer = {
          {"index", item["index"]}, {"coordinate", "A1"}, {"client_id", language + "-answer-" + std::to_string(n)}};
      auto answered = client.Post("/api/answer", cookie, answer.dump(), "application/json");
      ASSERT_TRUE(answered && answered->status == 201);
      item = Json::parse(answered->body);
    }
  }
  EXPECT_EQ(shown["es"], (std::set<std::string>{"Animal", "Comida", "Cultura popular", "Entorno", "Piedras y minerales",
                                                "Planta", "Subjetivo"}));
  EXPECT_EQ(shown["en"], (std::set<std::string>{"Animal", "Environment", "Food", "Pop culture", "Plant",
                                                "Stones and minerals", "Subjective"}));
  serve.Stop();
  const CsvTable t = Export(store, dir / "answers.csv");
  std::set<std::string> stored;
  for (size_t r = 0; r < t.rows.size(); ++r) stored.insert(Cell(t, r, "clueCategory"));
  EXPECT_EQ(t.rows.size(), 200u);
  EXPECT_TRUE(stored.count("SUBJETIVO") && stored.count("SUBJETIVE") && stored.count("PIEDRA") && stored.count("POP"))
      << "the answers keep the published codes: " << ::testing::PrintToString(stored);
}

TEST(ServeGame, OnAPortraitPhoneTheWholeBoardIsVisible) {
  TempDir dir;
  ServeProcess serve({"--store", (dir / "store").string(), "--study", StudyFile(dir, false)}, dir.path());
  ASSERT_TRUE(serve.ok()) << serve.error();
  BrowserRun run = RunBrowserScenario(
      Scenarios(), "phone", serve.url(),
      {{"viewport", {{"width", 390}, {"height", 844}}}, {"isMobile", true}, {"deviceScaleFactor", 3}}, dir.path());
  ExpectCleanPage(run);
  const Json& box = run.result["box"];
  EXPECT_GE(box["x"].get<double>(), 0);
  EXPECT_GE(box["y"].get<double>(), 0);
  EXPECT_LE(box["x"].get<double>() + box["width"].get<double>(), 390);
  EXPECT_LE(box["y"].get<double>() + box["height"].get<double>(), 844);
  EXPECT_LE(run.result["scrollWidth"].get<int>(), 390) << "no sideways scrolling";
  EXPECT_GE(run.result["cell"].get<double>(), 11) << "cells large enough to tap";
  EXPECT_TRUE(fs::exists(dir / "phone.png"));
  if (const char* keep = std::getenv("VISALIGN_KEEP_SCREENSHOT"))
    fs::copy_file(dir / "phone.png", keep, fs::copy_options::overwrite_existing);
}

// The board's cells are about 12 px wide on a 390 px phone, far below a finger. The rule chosen
// (docs/serve.md): every touch pick happens on a target at least 48 CSS px square (Android's 48 dp,
// above Apple's 44 pt and WCAG 2.5.8's 24 px). A tap opens a loupe of 7 x 7 cells of that size
// around it, inside the screen; tapping the meant cell (here the one next to the tap) picks it, and
// the page may still be pinch-zoomed.
TEST(ServeGame, OnAPhoneATapOpensALoupeWhoseCellsMeetTheTouchTargetSize) {
  TempDir dir;
  const fs::path store = dir / "store";
  ServeProcess serve({"--store", store.string(), "--study", StudyFile(dir, false)}, dir.path());
  ASSERT_TRUE(serve.ok()) << serve.error();
  BrowserRun run = RunBrowserScenario(Scenarios(), "phone_zoom_pick", serve.url(),
                                      {{"viewport", {{"width", 390}, {"height", 844}}},
                                       {"isMobile", true},
                                       {"deviceScaleFactor", 3},
                                       {"tap", "H14"},
                                       {"cell", "H15"}},
                                      dir.path());
  ExpectCleanPage(run);
  EXPECT_LT(run.result["boardCell"].get<double>(), 24) << "the board's own cells are too small to tap: why the loupe";
  EXPECT_EQ(run.result["before"], "") << "the tap on the small board picked nothing yet";
  const Json& loupe = run.result["loupe"];
  ASSERT_EQ(loupe.size(), 49u) << run.result.dump();
  std::set<std::string> cells;
  for (const Json& c : loupe) {
    cells.insert(c["cell"].get<std::string>());
    EXPECT_GE(c["width"].get<double>(), 48) << c.dump();
    EXPECT_GE(c["height"].get<double>(), 48) << c.dump();
    EXPECT_GE(c["x"].get<double>(), 0) << c.dump();
    EXPECT_LE(c["x"].get<double>() + c["width"].get<double>(), 390) << c.dump();
    EXPECT_LE(c["y"].get<double>() + c["height"].get<double>(), 844) << c.dump();
  }
  for (const char* c : {"E11", "H14", "H15", "K17"}) EXPECT_TRUE(cells.count(c)) << c << " is around the tap";
  EXPECT_EQ(run.result["picked"], "H15");
  EXPECT_EQ(run.result["answer"], "H15");
  const std::string meta = run.result["viewportMeta"];
  EXPECT_EQ(meta.find("user-scalable"), std::string::npos) << meta;
  EXPECT_EQ(meta.find("maximum-scale"), std::string::npos) << meta;
  EXPECT_EQ(run.result["touchAction"], "manipulation") << "pans and pinch-zooms, no double-tap delay";
  serve.Stop();
  const CsvTable t = Export(store, dir / "answers.csv");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(Cell(t, 0, "coordinate"), "H15");
}

TEST(ServeGame, TheWholeGameCanBePlayedWithTheKeyboardOnly) {
  TempDir dir;
  const fs::path store = dir / "store";
  ServeProcess serve({"--store", store.string(), "--study", StudyFile(dir, true)}, dir.path());
  ASSERT_TRUE(serve.ok()) << serve.error();
  const Json moves = {{"ArrowRight", "ArrowRight", "ArrowDown"}, {"End", "PageDown"}, {"ArrowDown"}, {"Home"}};
  Json attention = Json::array();
  for (int i = 0; i < 7; ++i) attention.push_back("ArrowDown");
  for (int i = 0; i < 14; ++i) attention.push_back("ArrowRight");
  BrowserRun run = RunBrowserScenario(Scenarios(), "keyboard", serve.url(),
                                      {{"moves", moves}, {"attentionMoves", attention}}, dir.path());
  ExpectCleanPage(run);
  // Every board starts with the focus on A1.
  const std::vector<std::string> expected = {"B3", "P30", "H15", "B1", "A1"};
  const Json& answers = run.result["answers"];
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
