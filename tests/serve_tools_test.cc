// The tools of `visalign serve`, end to end: the real server on 127.0.0.1 with a real SQLite study
// store, worked in headless Chromium. A regionalization session (fill, brush, undo) exports exactly
// what was painted and `--regions` reads it; the explorer shows the heat map, ellipse and a model's
// top-5 the Hues library computes for the same input, and its filters change them; ACVA raters rate
// fewest-rated images first and their export gives `acva agreement` the expected numbers. Abuse of
// the APIs answers 4xx and leaves the store as it was; no page logs a console error.
#include <gtest/gtest.h>
#include <httplib.h>

#include <numeric>

#include "testing/serve_process.h"
#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"
#include "visalign/server/study.h"
#include "visalign/server/tool_exports.h"
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

fs::path Scenarios() { return testing::TestingDir() / "serve_tools_scenarios.cjs"; }

void ExpectCleanPage(const BrowserRun& run) {
  EXPECT_EQ(run.exit_code, 0) << run.stderr_text;
  EXPECT_TRUE(run.errors.empty()) << ::testing::PrintToString(run.errors);
  EXPECT_TRUE(run.external_requests.empty()) << ::testing::PrintToString(run.external_requests);
}

httplib::Headers Admin() { return {{"Authorization", std::string("Bearer ") + kToken}}; }

// A consenting participant's cookie header.
httplib::Headers Session(httplib::Client& client) {
  auto created = client.Post("/api/session", R"({"consent": true})", "application/json");
  EXPECT_TRUE(created && created->status == 201);
  const std::string cookie = created ? created->get_header_value("Set-Cookie") : "";
  return {{"Cookie", cookie.substr(0, cookie.find(';'))}};
}

int64_t Records(const fs::path& store, const std::string& kind) {
  auto study = store::StudyStore::Open(store.string());
  EXPECT_TRUE(study.ok()) << study.status().ToString();
  auto counts = (*study)->Counts();
  return counts.ok() && counts->records.count(kind) ? counts->records.at(kind) : 0;
}

// ---- Consent --------------------------------------------------------------------------------------

// Each page asks for consent to its own task: the study file's texts, or each page's default.
TEST(ServeTools, EachPageShowsItsOwnConsentText) {
  TempDir dir;
  const Json paths = {"/", "/regions", "/rate"};
  const server::StudyConfig defaults;
  {
    ServeProcess serve({"--store", (dir / "a").string()}, dir.path());
    ASSERT_TRUE(serve.ok()) << serve.error();
    BrowserRun run = RunBrowserScenario(Scenarios(), "consent_texts", serve.url(), {{"paths", paths}}, dir.path());
    ExpectCleanPage(run);
    EXPECT_EQ(run.result["texts"], Json({{"/", defaults.consent_text},
                                         {"/regions", defaults.regions_consent_text},
                                         {"/rate", defaults.rate_consent_text}}));
  }
  const fs::path study = dir.Write("study.json", Json({{"consent_text", "Game: pick colours for words."},
                                                       {"regions_consent_text", "Regions: paint the board."},
                                                       {"rate_consent_text", "Rating: rate images."}})
                                                     .dump());
  ServeProcess serve({"--store", (dir / "b").string(), "--study", study.string()}, dir.path());
  ASSERT_TRUE(serve.ok()) << serve.error();
  BrowserRun run = RunBrowserScenario(Scenarios(), "consent_texts", serve.url(), {{"paths", paths}}, dir.path());
  ExpectCleanPage(run);
  EXPECT_EQ(run.result["texts"], Json({{"/", "Game: pick colours for words."},
                                       {"/regions", "Regions: paint the board."},
                                       {"/rate", "Rating: rate images."}}));
}

// ---- Regionalization ----------------------------------------------------------------------------

// Fill everything Green, brush three cells Red and P30 Pink, undo the Pink, drag the brush Yellow
// over row D and undo that stroke, drag it down column 2 from E to G, fill the Red region Blue.
const Json kPaintSteps = Json::array({{{"tool", "fill"}, {"category", "Green"}, {"cell", "H15"}},
                                      {{"tool", "brush"}, {"category", "Red"}, {"cell", "A1"}},
                                      {{"tool", "brush"}, {"category", "Red"}, {"cell", "A2"}},
                                      {{"tool", "brush"}, {"category", "Red"}, {"cell", "B1"}},
                                      {{"tool", "brush"}, {"category", "Pink"}, {"cell", "P30"}},
                                      {{"undo", true}},
                                      {{"tool", "brush"}, {"category", "Yellow"}, {"drag", {"D3", "D9"}}},
                                      {{"undo", true}},
                                      {{"tool", "brush"}, {"category", "Yellow"}, {"drag", {"E2", "G2"}}},
                                      {{"tool", "fill"}, {"category", "Blue"}, {"cell", "A2"}}});

TEST(ServeTools, ARegionalizationSessionExportsExactlyWhatWasPainted) {
  TempDir dir;
  const fs::path store = dir / "store";
  ServeProcess serve({"--store", store.string(), "--admin-token-env", "STUDY_TOKEN"}, dir.path(),
                     {{"STUDY_TOKEN", kToken}});
  ASSERT_TRUE(serve.ok()) << serve.error();
  BrowserRun run =
      RunBrowserScenario(Scenarios(), "regions_session", serve.url(), {{"steps", kPaintSteps}}, dir.path());
  ExpectCleanPage(run);
  const Json& shown = run.result["shown"];
  ASSERT_EQ(shown.size(), kPaintSteps.size()) << run.result.dump();
  EXPECT_EQ(shown[0].size(), size_t(hues::kCells));  // the fill covers the unpainted board
  EXPECT_EQ(shown[3]["B1"], "Red");
  EXPECT_EQ(shown[4]["P30"], "Pink");
  EXPECT_EQ(shown[5]["P30"], "Green");  // undone
  for (int c = 3; c <= 9; ++c) {
    const std::string cell = "D" + std::to_string(c);
    EXPECT_EQ(shown[6][cell], "Yellow") << cell << ": every cell the stroke crossed, in 3 pointer moves";
    EXPECT_EQ(shown[7][cell], "Green") << cell << ": one undo takes the whole stroke";
  }
  EXPECT_EQ(shown[6]["D2"], "Green");
  EXPECT_EQ(shown[6]["D10"], "Green");
  const Json& final_paint = shown[9];
  for (const char* cell : {"E2", "F2", "G2"}) EXPECT_EQ(final_paint[cell], "Yellow") << cell;
  EXPECT_EQ(final_paint["H2"], "Green");
  EXPECT_EQ(final_paint["E3"], "Green");
  EXPECT_EQ(final_paint["A1"], "Blue");  // the fill took the connected Red region
  EXPECT_EQ(final_paint["A2"], "Blue");
  EXPECT_EQ(final_paint["B1"], "Blue");
  EXPECT_EQ(final_paint["B2"], "Green");
  EXPECT_EQ(run.result["saved"], "Saved: 480 cells.");
  EXPECT_EQ(run.result["reloaded"], final_paint);

  // The CLI export and the admin export are the same consensus; with one painting it is the painting.
  const fs::path csv = dir / "consensus.csv";
  auto exported = RunVisalign({"hues", "export-regions", "--store", store.string(), "--out", csv.string()});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_NE(exported.out.find("Consensus of 1 paintings"), std::string::npos) << exported.out;
  auto map = hues::MacroMap::Load(csv);
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  for (int i = 0; i < hues::kCells; ++i) {
    EXPECT_EQ(hues::MacroName(map->at(i).category), final_paint[hues::CellName(i)].get<std::string>())
        << hues::CellName(i);
    EXPECT_EQ(map->at(i).confidence, 1.0);
  }
  httplib::Client client(serve.url());
  auto admin = client.Get("/api/admin/regions.csv", Admin());
  ASSERT_TRUE(admin);
  EXPECT_EQ(admin->status, 200);
  EXPECT_EQ(admin->body, *ReadFile(csv));
  auto board = RunVisalign({"--json", "hues", "board", "--regions", csv.string()});
  ASSERT_EQ(board.exit_code, 0) << board.err;
  EXPECT_EQ(Json::parse(board.out)["cells"][0]["macro"], "Blue");

  // A second participant paints everything Red: ties go to the earlier category (Red before Green
  // and Blue), each at agreement 1/2.
  BrowserRun second = RunBrowserScenario(
      Scenarios(), "regions_session", serve.url(),
      {{"steps", Json::array({{{"tool", "fill"}, {"category", "Red"}, {"cell", "A1"}}})}}, dir.path());
  ExpectCleanPage(second);
  auto both = client.Get("/api/admin/regions.csv", Admin());
  ASSERT_TRUE(both);
  EXPECT_NE(both->body.find("\nA1,Red,0.5,false\n"), std::string::npos);
  EXPECT_NE(both->body.find("\nH15,Red,0.5,false\n"), std::string::npos);
}

TEST(ServeTools, RegionAbuseAnswers4xxAndStoresNothing) {
  TempDir dir;
  const fs::path store = dir / "store";
  ServeProcess serve({"--store", store.string(), "--admin-token-env", "STUDY_TOKEN"}, dir.path(),
                     {{"STUDY_TOKEN", kToken}});
  ASSERT_TRUE(serve.ok()) << serve.error();
  httplib::Client client(serve.url());
  const std::string good = R"({"client_id": "painting-0001", "cells": {"A1": "Red"}})";
  auto anonymous = client.Post("/api/regions", good, "application/json");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  const httplib::Headers session = Session(client);
  const auto status = [&](const std::string& body) {
    auto r = client.Post("/api/regions", session, body, "application/json");
    return r ? r->status : -1;
  };
  EXPECT_EQ(status(R"({"client_id": "painting-0002", "cells": {"Q31": "Red"}})"), 400);
  EXPECT_EQ(status(R"({"client_id": "painting-0002", "cells": {"A1": "Teal"}})"), 400);
  EXPECT_EQ(status(R"({"client_id": "painting-0002", "cells": {}})"), 400);
  EXPECT_EQ(status(R"({"client_id": "x", "cells": {"A1": "Red"}})"), 400);
  EXPECT_EQ(status(R"({"cells": {"A1": "Red"}})"), 400);
  EXPECT_EQ(status("not json"), 400);
  EXPECT_EQ(Records(store, server::kRegionsRecord), 0);
  EXPECT_EQ(status(good), 200);
  EXPECT_EQ(status(good), 409);  // replayed
  EXPECT_EQ(Records(store, server::kRegionsRecord), 1);
  auto refused = client.Post("/api/regions", session, R"({"client_id": "painting-0003", "cells": {"A1": "Mauve"}})",
                             "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(Json::parse(refused->body)["error"]["what"], "unknown category \"Mauve\" for cell A1");
  auto no_token = client.Get("/api/admin/regions.csv");
  ASSERT_TRUE(no_token);
  EXPECT_EQ(no_token->status, 403);
  auto incomplete = client.Get("/api/admin/regions.csv", Admin());  // one painting of one cell
  ASSERT_TRUE(incomplete);
  EXPECT_EQ(incomplete->status, 409);
  EXPECT_EQ(Json::parse(incomplete->body)["error"]["what"], "479 cells painted by nobody (first: A2)");
}

// ---- Explorer -----------------------------------------------------------------------------------

TEST(ServeTools, TheExplorerShowsTheLibrarysHeatMapEllipseAndTopFiveAndItsFiltersWork) {
  TempDir dir;
  const fs::path eval = dir / "eval";
  auto evaluated = RunVisalign({"hues", "evaluate", "--predictions", (testing::DataDir() / "hues/peer-sample").string(),
                                "--out", eval.string()});
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.err;
  // What the Hues library computes for the same word, filters and model; the word is the first that
  // colour-blind players answered more than once, so every filter below shows something.
  auto vocabulary = hues::Vocabulary::Default();
  auto board = hues::Board::Default(hues::Chromaticity::kDisplay);
  hues::HumanLoadOptions keep;
  keep.include_colorblind = true;
  auto humans = hues::DefaultHumans(*vocabulary, keep);
  ASSERT_TRUE(humans.ok()) << humans.status().ToString();
  auto only = hues::ParseHumanFilter("only", "", "", "", *humans);
  int word = 0;
  while (hues::ViewWord(*humans, *board, word, *only, 1).n < 2) ++word;
  const std::string word_name = vocabulary->words()[static_cast<size_t>(word)].en;
  auto models = hues::LoadEvaluatedModels(eval, *vocabulary, *board);
  ASSERT_TRUE(models.ok()) << models.status().ToString();
  ASSERT_EQ(models->front().name, "RN50-openai");

  ServeProcess serve({"--store", (dir / "store").string(), "--results", eval.string()}, dir.path());
  ASSERT_TRUE(serve.ok()) << serve.error();
  const Json filters = Json::array({{{"colorblind", "only"}},
                                    {{"colorblind", "include"}},
                                    {{"colorblind", "exclude"}, {"gender", "female"}, {"age", "<30"}}});
  BrowserRun run =
      RunBrowserScenario(Scenarios(), "explorer_session", serve.url(),
                         {{"word", word_name}, {"model", "RN50-openai"}, {"filters", filters}}, dir.path());
  ExpectCleanPage(run);
  const Json& views = run.result["views"];
  ASSERT_EQ(views.size(), 1 + filters.size()) << run.result.dump();
  Json expected_marks = Json::object();
  const Json top = hues::ModelTopJson(models->front(), word, *vocabulary);
  for (const Json& t : top["top"]) expected_marks[t["cell"].get<std::string>()] = std::to_string(t["rank"].get<int>());
  ASSERT_EQ(expected_marks.size(), size_t(hues::kTopK));
  const std::vector<std::array<std::string, 4>> applied = {
      {"exclude", "", "", ""}, {"only", "", "", ""}, {"include", "", "", ""}, {"exclude", "female", "<30", ""}};
  for (size_t v = 0; v < views.size(); ++v) {
    SCOPED_TRACE(views[v].dump());
    auto filter = hues::ParseHumanFilter(applied[v][0], applied[v][1], applied[v][2], applied[v][3], *humans);
    ASSERT_TRUE(filter.ok()) << filter.status().ToString();
    const hues::WordView expected = hues::ViewWord(*humans, *board, word, *filter, 5.991464547107979);
    const int cells =
        static_cast<int>(std::count_if(expected.counts.begin(), expected.counts.end(), [](int n) { return n > 0; }));
    EXPECT_EQ(views[v]["heatCells"], cells);
    EXPECT_EQ(views[v]["plotHumans"], cells);
    int answers = 0;
    for (const Json& label : views[v]["heatLabels"])
      answers += std::stoi(label.get<std::string>().substr(label.get<std::string>().find(": ") + 2));
    EXPECT_EQ(answers, expected.n);
    EXPECT_NE(views[v]["summary"].get<std::string>().find(": " + std::to_string(expected.n) + " answers"),
              std::string::npos);
    EXPECT_EQ(views[v]["ellipsePoints"], expected.ellipse.size());
    EXPECT_EQ(nlohmann::json(views[v]["marks"]),
              nlohmann::json(expected_marks));  // the model's 5 cells, numbered by rank
    EXPECT_EQ(views[v]["plotModel"].size(), size_t(hues::kTopK));
    EXPECT_EQ(views[v]["top"].size(), size_t(hues::kTopK));
  }
  EXPECT_LT(views[1]["heatCells"], views[0]["heatCells"]) << "colour-blind players only: fewer answers";
  EXPECT_GT(views[2]["heatCells"], views[0]["heatCells"]) << "everyone: more answers";
  EXPECT_EQ(views[0]["ellipsePoints"], hues::kEllipseSegments + 1);

  // A --results folder that is not there stops the server before it listens.
  auto missing = RunVisalign(
      {"serve", "--store", (dir / "store").string(), "--port", "0", "--results", (dir / "nowhere").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err.rfind("error: ", 0), 0u) << missing.err;
  EXPECT_NE(missing.err.find("(--results " + (dir / "nowhere").string()), std::string::npos) << missing.err;

  httplib::Client client(serve.url());
  for (const char* bad :
       {"/api/explorer/word?word=NOTAWORD", "/api/explorer/word?word=SALMON&gender=%3Cscript%3E",
        "/api/explorer/word?word=SALMON&model=nobody", "/api/explorer/word?word=SALMON&colorblind=maybe"}) {
    auto r = client.Get(bad);
    ASSERT_TRUE(r) << bad;
    EXPECT_GE(r->status, 400) << bad;
    EXPECT_LT(r->status, 500) << bad;
  }
}

// ---- ACVA rating --------------------------------------------------------------------------------

// An ACVA run of the starter concept set (2 concepts, 2 samples each) generated, judged and analyzed
// with the reference server: judge ratings 0.75 for sample 0 and 0.25 for sample 1.
class ServeAcvaRating : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = acva::ReferenceServer::Start({});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    reference_ = std::move(*server);
    auto r = RunVisalign({"--json",
                          "acva",
                          "run",
                          "--store",
                          store_.string(),
                          "--run",
                          "rated",
                          "--model",
                          "mixed",
                          "--endpoint",
                          reference_->url(),
                          "--seed",
                          "0",
                          "--param",
                          "seed={seed}",
                          "--samples",
                          "2",
                          "--limit",
                          "2",
                          "--judge-endpoint",
                          reference_->url(),
                          "--judge-model",
                          "ref",
                          "--clip-model",
                          (testing::SharedDir() / "fixtures" / "clip-tiny").string(),
                          "--bootstrap",
                          "50",
                          "--out",
                          results_.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto items = acva::ReadItems(results_ / "items.jsonl");
    ASSERT_TRUE(items.ok()) << items.status().ToString();
    items_ = *items;
    ASSERT_EQ(items_.size(), 4u);
  }
  TempDir dir_;
  fs::path store_ = dir_ / "store";
  fs::path results_ = dir_ / "results";
  std::unique_ptr<acva::ReferenceServer> reference_;
  std::vector<Json> items_;
};

TEST_F(ServeAcvaRating, RatersGetFewestRatedImagesFirstAndTheExportGivesTheExpectedAgreement) {
  ServeProcess serve({"--store", store_.string(), "--acva-run", "rated", "--admin-token-env", "STUDY_TOKEN"},
                     dir_.path(), {{"STUDY_TOKEN", kToken}});
  ASSERT_TRUE(serve.ok()) << serve.error();
  std::vector<std::string> ids;
  for (const Json& item : items_) ids.push_back(item["image_id"]);
  // Rater A answers every question 1 on sample 0 and 0 on sample 1, in Chinese, and stops after two
  // images; rater B answers 0.5 everywhere and rates them all: the two A left unrated come first.
  BrowserRun a = RunBrowserScenario(Scenarios(), "rating_session", serve.url(),
                                    {{"language", "zh"}, {"levels", {1, 0}}, {"max", 2}}, dir_.path());
  ExpectCleanPage(a);
  BrowserRun b = RunBrowserScenario(Scenarios(), "rating_session", serve.url(), {{"language", "en"}, {"levels", {0.5}}},
                                    dir_.path());
  ExpectCleanPage(b);
  const Json& rated_a = a.result["rated"];
  const Json& rated_b = b.result["rated"];
  ASSERT_EQ(rated_a.size(), 2u) << a.result.dump();
  ASSERT_EQ(rated_b.size(), 4u) << b.result.dump();
  EXPECT_EQ(rated_a[0]["image"], ids[0]);
  EXPECT_EQ(rated_a[1]["image"], ids[1]);
  EXPECT_EQ(rated_b[0]["image"], ids[2]);
  EXPECT_EQ(rated_b[1]["image"], ids[3]);
  EXPECT_EQ(rated_b[2]["image"], ids[0]);
  EXPECT_EQ(b.result["done"], "Thank you! You have rated every image.");

  // The rubric in the chosen language, on the judge's scale.
  auto set = acva::LoadConceptSet(*acva::StarterConceptsFile(), *acva::StarterPairsFile());
  ASSERT_TRUE(set.ok());
  const acva::Concept& first = set->concepts[*set->IndexOf(items_[0]["concept"].get<std::string>())];
  ASSERT_EQ(rated_a[0]["questions"].size(), first.rubric.size());
  EXPECT_EQ(rated_a[0]["questions"][0], first.rubric[0].text_zh);
  EXPECT_EQ(rated_b[2]["questions"][0], first.rubric[0].text_en);
  EXPECT_EQ(rated_b[0]["scale"],
            "Scale: 0, 0.25, 0.5, 0.75, 1 — 0 = " + acva::JudgeRatingScale(acva::Language::kEn).low +
                ", 1 = " + acva::JudgeRatingScale(acva::Language::kEn).high + ".");

  // The export is what `acva agreement --human` reads, with the numbers its definition gives.
  const fs::path csv = dir_ / "ratings.csv";
  auto exported =
      RunVisalign({"acva", "export-ratings", "--store", store_.string(), "--run", "rated", "--out", csv.string()});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  httplib::Client client(serve.url());
  auto admin = client.Get("/api/admin/acva/ratings.csv?run=rated", Admin());
  ASSERT_TRUE(admin);
  EXPECT_EQ(admin->body, *ReadFile(csv));
  auto agreement = RunVisalign(
      {"--json", "acva", "agreement", "--items", (results_ / "items.jsonl").string(), "--human", csv.string()});
  ASSERT_EQ(agreement.exit_code, 0) << agreement.err;
  const Json got = Json::parse(agreement.out);
  std::map<std::string, double> adequacy;
  for (const Json& item : items_) adequacy[item["image_id"]] = item["adequacy"];
  double exact = 0, within = 0;
  std::vector<std::pair<std::string, double>> scores;
  for (const Json& r : rated_a) scores.emplace_back(r["image"], r["level"]);
  for (const Json& r : rated_b) scores.emplace_back(r["image"], r["level"]);
  for (const auto& [image, score] : scores) {  // a rater's constant answers give that score
    exact += acva::ScoreBin(score) == acva::ScoreBin(adequacy[image]);
    within += std::abs(acva::ScoreBin(score) - acva::ScoreBin(adequacy[image])) <= 1;
  }
  EXPECT_EQ(got["n_ratings"], scores.size());
  EXPECT_EQ(got["n_images"], ids.size());
  EXPECT_DOUBLE_EQ(got["exact_agreement"].get<double>(), exact / scores.size());
  EXPECT_DOUBLE_EQ(got["within_one_bin"].get<double>(), within / scores.size());
  EXPECT_TRUE(got["unmatched"].empty());
}

TEST_F(ServeAcvaRating, RatingAbuseAnswers4xxAndStoresNothing) {
  ServeProcess serve({"--store", store_.string(), "--acva-run", "rated", "--admin-token-env", "STUDY_TOKEN"},
                     dir_.path(), {{"STUDY_TOKEN", kToken}});
  ASSERT_TRUE(serve.ok()) << serve.error();
  httplib::Client client(serve.url());
  const std::string image = items_[0]["image_id"];
  auto set = acva::LoadConceptSet(*acva::StarterConceptsFile(), *acva::StarterPairsFile());
  Json answers = Json::object();
  for (const acva::RubricQuestion& q : set->concepts[*set->IndexOf(items_[0]["concept"].get<std::string>())].rubric)
    answers[q.id] = 0.75;
  const auto body = [&](const std::string& client_id, const std::string& img, const Json& a) {
    return Json({{"client_id", client_id}, {"image", img}, {"language", "en"}, {"answers", a}}).dump();
  };
  auto anonymous = client.Post("/api/acva/rating", body("rating-0001", image, answers), "application/json");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_EQ(client.Get("/api/acva/next")->status, 401);
  const httplib::Headers session = Session(client);
  const auto status = [&](const std::string& text) {
    auto r = client.Post("/api/acva/rating", session, text, "application/json");
    return r ? r->status : -1;
  };
  Json off_scale = answers;
  off_scale.begin().value() = 0.6;
  Json missing = answers;
  missing.erase(missing.begin());
  Json extra = answers;
  extra["not-a-question"] = 1;
  EXPECT_EQ(status(body("rating-0002", "rated/no-such-concept/0", answers)), 404);
  EXPECT_EQ(status(body("rating-0002", "other-run/" + image.substr(6), answers)), 404);
  EXPECT_EQ(status(body("rating-0002", image, off_scale)), 400);
  EXPECT_EQ(status(body("rating-0002", image, missing)), 400);
  EXPECT_EQ(status(body("rating-0002", image, extra)), 400);
  EXPECT_EQ(
      status(Json({{"client_id", "rating-0002"}, {"image", image}, {"language", "fr"}, {"answers", answers}}).dump()),
      400);
  EXPECT_EQ(Records(store_, server::kAcvaRatingRecord), 0);
  EXPECT_EQ(status(body("rating-0002", image, answers)), 200);
  EXPECT_EQ(status(body("rating-0002", image, answers)), 409);  // replayed
  EXPECT_EQ(status(body("rating-0003", image, answers)), 409);  // the same image twice by one rater
  EXPECT_EQ(Records(store_, server::kAcvaRatingRecord), 1);
  EXPECT_EQ(client.Get("/api/acva/image?id=..%2F..%2Fvisalign.db", session)->status, 404);
  EXPECT_EQ(client.Get("/api/acva/image?id=" + image, session)->status, 200);
  EXPECT_EQ(client.Get("/api/admin/acva/ratings.csv?run=rated")->status, 403);
  EXPECT_EQ(client.Get("/api/admin/acva/ratings.csv?run=unrated", Admin())->status, 404);
  auto unknown_run = RunVisalign({"serve", "--store", store_.string(), "--port", "0", "--acva-run", "unrated"});
  EXPECT_EQ(unknown_run.exit_code, 2);
  EXPECT_NE(unknown_run.err.find("run \"unrated\" not in the store"), std::string::npos) << unknown_run.err;
  auto no_ratings = RunVisalign({"acva", "export-ratings", "--store", store_.string(), "--run", "unrated", "--out",
                                 (dir_ / "none.csv").string()});
  EXPECT_EQ(no_ratings.exit_code, 2);
  EXPECT_EQ(no_ratings.err,
            "error: no ratings of run \"unrated\" (--run): a run rated on the rating page of "
            "`visalign serve --acva-run unrated`\n");
}

}  // namespace
}  // namespace visalign
