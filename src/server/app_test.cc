// The scaffold of `visalign serve` on 127.0.0.1: the board as board.csv has it, the page shell and
// its headers, consent before anything is stored, the session cookie, the error shape, admin
// endpoints closed without a token, and a study file's unknown field refused.
#include "visalign/server/app.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdlib>
#include <set>

#include "testing/dirs.h"
#include "visalign/core/io.h"

namespace visalign::server {
namespace {

class AppTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServeOptions options;
    options.store = (dir_ / "store").string();
    options.port = 0;
    auto app = App::Create(options);
    ASSERT_TRUE(app.ok()) << app.status().ToString();
    app_ = std::move(*app);
    ASSERT_TRUE(app_->Start().ok());
    client_ = std::make_unique<httplib::Client>(app_->url());
  }
  visalign::testing::TempDir dir_;
  std::unique_ptr<App> app_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(AppTest, ServesTheBoardCellByCellAsBoardCsvHasIt) {
  auto res = client_->Get("/api/board");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  const auto board = Json::parse(res->body);
  EXPECT_EQ(board["rows"].size(), 16u);
  EXPECT_EQ(board["rows"][0], "A");
  EXPECT_EQ(board["cols"], 30);
  ASSERT_EQ(board["cells"].size(), 480u);
  EXPECT_EQ(board["cells"][0], Json({{"cell", "A1"}, {"row", "A"}, {"col", 1}, {"rgb", {82, 48, 27}}}));
  EXPECT_EQ(res->get_header_value("Content-Security-Policy"), kContentSecurityPolicy);
}

TEST_F(AppTest, ThePageShellLoadsOnlyThisOriginsScriptsAndStyles) {
  auto res = client_->Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("<script type=\"module\" src=\"/static/game.js\"></script>"), std::string::npos);
  EXPECT_NE(res->body.find("<link rel=\"stylesheet\" href=\"/static/common.css\">"), std::string::npos);
  EXPECT_EQ(res->body.find("<script>"), std::string::npos);
  EXPECT_EQ(res->body.find("://"), std::string::npos);
  auto js = client_->Get("/static/common.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
  EXPECT_NE(js->body.find("export function drawBoard"), std::string::npos);
  EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
}

TEST_F(AppTest, NothingIsStoredBeforeConsentAndConsentSetsAStrictHttpOnlyCookie) {
  auto refused = client_->Post("/api/session", R"({"consent": false})", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400);
  EXPECT_EQ(Json::parse(refused->body),
            Json({{"error", {{"what", "no consent"}, {"where", "request body field consent"}, {"expected", "true"}}}}));
  EXPECT_EQ(app_->study_store().Counts()->participants, 0);

  auto created =
      client_->Post("/api/session", R"({"consent": true, "params": {"PROLIFIC_PID": "p1"}})", "application/json");
  ASSERT_TRUE(created);
  EXPECT_EQ(created->status, 201);
  const std::string cookie = created->get_header_value("Set-Cookie");
  EXPECT_EQ(cookie.rfind("visalign_session=", 0), 0u);
  EXPECT_NE(cookie.find("; HttpOnly; SameSite=Strict; Path=/"), std::string::npos);
  const std::string token = cookie.substr(17, cookie.find(';') - 17);
  auto participants = app_->study_store().Participants();
  ASSERT_GE(participants->size(), 1u);
  EXPECT_EQ((*participants)[0].url_params, Json({{"PROLIFIC_PID", "p1"}}));
  EXPECT_EQ(Json::parse(created->body)["participant"], (*participants)[0].user_id);

  auto proxied = client_->Post("/api/session", httplib::Headers{{"X-Forwarded-Proto", "https"}}, R"({"consent": true})",
                               "application/json");
  EXPECT_NE(proxied->get_header_value("Set-Cookie").find("; Secure"), std::string::npos) << "behind a TLS proxy";
  EXPECT_EQ(cookie.find("Secure"), std::string::npos) << "plain HTTP on loopback";
  auto me = client_->Get("/api/me", httplib::Headers{{"Cookie", "visalign_session=" + token}});
  EXPECT_EQ(Json::parse(me->body)["onboarded"], false);
  auto without = client_->Get("/api/next");
  EXPECT_EQ(without->status, 401);
  auto forged = client_->Get("/api/next", httplib::Headers{{"Cookie", "visalign_session=forged"}});
  EXPECT_EQ(forged->status, 401);
  EXPECT_EQ(Json::parse(forged->body)["error"]["what"], "unknown session");
}

TEST_F(AppTest, AdminEndpointsAnswer403WithoutAConfiguredToken) {
  auto counts = client_->Get("/api/admin/counts", httplib::Headers{{"Authorization", "Bearer anything"}});
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->status, 403);
  EXPECT_EQ(Json::parse(counts->body)["error"]["what"], "admin endpoints are off");
}

// Three participants of two words each over a list of three: every word is given twice.
TEST(App, WordsGoLeastAssignedFirstSoCountsStayBalanced) {
  visalign::testing::TempDir dir;
  ServeOptions options;
  options.store = (dir / "store").string();
  options.port = 0;
  options.words = dir.Write("words.csv",
                            "word_en,word_es,category,clue_id\nSALMON,SALMÓN,Animal,1\n"
                            "WHALE,BALLENA,Animal,2\nLIME,LIMA,Food,3\n");
  options.study = dir.Write("study.json", R"({"words_per_participant": 2, "attention_check": {"enabled": false}})");
  auto app = App::Create(options);
  ASSERT_TRUE(app.ok()) << app.status().ToString();
  ASSERT_TRUE((*app)->Start().ok());
  httplib::Client client((*app)->url());
  std::set<std::string> words;
  for (int p = 0; p < 3; ++p) {
    auto session = client.Post("/api/session", R"({"consent": true})", "application/json");
    const std::string set = session->get_header_value("Set-Cookie");
    const httplib::Headers cookie = {{"Cookie", set.substr(0, set.find(';'))}};
    auto profile = client.Post("/api/profile", cookie,
                               R"({"language": "es", "gender": "male", "age_range": "40-49", "colorblind": "no"})",
                               "application/json");
    ASSERT_EQ(profile->status, 200) << profile->body;
    EXPECT_EQ(Json::parse(profile->body)["items"], 2);
    auto next = Json::parse(client.Get("/api/next", cookie)->body);
    words.insert(next["word"].get<std::string>());
    // Shown by its Spanish name (data/hues/category_names.csv), not the published code COMESTIBLE.
    EXPECT_EQ(next["category"], next["clue_id"] == 3 ? "Comida" : "Animal");
    EXPECT_EQ(next["category_code"], next["clue_id"] == 3 ? "Food" : "Animal");
  }
  EXPECT_EQ(*(*app)->study_store().AssignmentCounts(), (std::map<int, int64_t>{{1, 2}, {2, 2}, {3, 2}}));
  for (const std::string& w : words) EXPECT_TRUE(w == "SALMÓN" || w == "BALLENA" || w == "LIMA") << w;
}

TEST(App, RefusesAStudyFileWithAnUnknownFieldNamingIt) {
  visalign::testing::TempDir dir;
  ServeOptions options;
  options.store = (dir / "store").string();
  options.study = dir.Write("study.json", R"({"words_per_participant": 5, "consent": "typo"})");
  auto app = App::Create(options);
  ASSERT_FALSE(app.ok());
  EXPECT_EQ(app.status().where(), "study file " + options.study.string());
  EXPECT_NE(app.status().what().find("unknown field \"consent\""), std::string::npos);
}

}  // namespace
}  // namespace visalign::server
