// Study files: defaults for what is left out, JSON and TOML read the same, and each wrong setting
// named with its field.
#include "visalign/server/study.h"

#include <gtest/gtest.h>

#include "testing/dirs.h"

namespace visalign::server {
namespace {

TEST(Study, AnEmptyStudyKeepsTheDefaults) {
  auto study = StudyConfigFromJson(Json::object(), "study file s.json");
  ASSERT_TRUE(study.ok());
  EXPECT_EQ(study->languages, (std::vector<std::string>{"es", "en"}));
  EXPECT_EQ(study->words_per_participant, 15);
  EXPECT_TRUE(study->cvd_screen);
  EXPECT_EQ(study->attention_check.cell, "H15");
  EXPECT_FALSE(study->PublicJson().contains("completion_codes"));
}

TEST(Study, EachPageHasItsOwnConsentTextAndAnOldStudyFilesTextIsTheGames) {
  const StudyConfig defaults;
  EXPECT_NE(defaults.consent_text.find("a board of 480 colours and a word"), std::string::npos);
  EXPECT_NE(defaults.regions_consent_text.find("paint each colour with one of 8 colour names"), std::string::npos);
  EXPECT_NE(defaults.rate_consent_text.find("images made by AI image generators"), std::string::npos);
  for (const std::string* text : {&defaults.regions_consent_text, &defaults.rate_consent_text})
    EXPECT_EQ(text->find("a word"), std::string::npos) << "not the game's task: " << *text;
  // A study file of before the tools had their own text: its one text is the game's.
  auto old = StudyConfigFromJson({{"consent_text", "Our game consent."}}, "study file s.json");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->consent_text, "Our game consent.");
  EXPECT_EQ(old->regions_consent_text, defaults.regions_consent_text);
  EXPECT_EQ(old->rate_consent_text, defaults.rate_consent_text);
  auto all = StudyConfigFromJson({{"consent_text", "G"}, {"regions_consent_text", "R"}, {"rate_consent_text", "A"}},
                                 "study file s.json");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->PublicJson()["consent_text"], "G");
  EXPECT_EQ(all->PublicJson()["regions_consent_text"], "R");
  EXPECT_EQ(all->PublicJson()["rate_consent_text"], "A");
}

TEST(Study, JsonAndTomlFilesReadTheSame) {
  visalign::testing::TempDir dir;
  auto json = LoadStudyConfig(dir.Write("s.json", R"({"languages": ["en"], "words_per_participant": 8,
      "completion_codes": ["A1", "B2"], "completion_url": "https://example.org/done?cc={code}",
      "attention_check": {"cell": "c3", "position": 2}, "rate_limit_per_ip": {"per_second": 5, "burst": 10}})"));
  auto toml = LoadStudyConfig(dir.Write("s.toml",
                                        "languages = [\"en\"]\nwords_per_participant = 8\n"
                                        "completion_codes = [\"A1\", \"B2\"]\n"
                                        "completion_url = \"https://example.org/done?cc={code}\"\n"
                                        "[attention_check]\ncell = \"c3\"\nposition = 2\n"
                                        "[rate_limit_per_ip]\nper_second = 5\nburst = 10\n"));
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  ASSERT_TRUE(toml.ok()) << toml.status().ToString();
  for (const StudyConfig* s : {&*json, &*toml}) {
    EXPECT_EQ(s->languages, std::vector<std::string>{"en"});
    EXPECT_EQ(s->words_per_participant, 8);
    EXPECT_EQ(s->completion_codes, (std::vector<std::string>{"A1", "B2"}));
    EXPECT_EQ(s->attention_check.cell, "C3");
    EXPECT_EQ(s->attention_check.position, 2);
    EXPECT_EQ(s->per_ip.per_second, 5);
  }
  auto broken = LoadStudyConfig(dir.Write("b.toml", "languages = [\"en\"\nwords = 3\n"));
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().where().rfind("study file " + (dir / "b.toml").string() + ":", 0), 0u);
}

TEST(Study, EachWrongSettingIsNamed) {
  const std::vector<std::pair<Json, std::string>> cases = {
      {{{"languages", {"fr"}}}, "study file s.json field languages"},
      {{{"languages", Json::array()}}, "study file s.json field languages"},
      {{{"words_per_participant", 0}}, "study file s.json field words_per_participant"},
      {{{"words_per_participant", "15"}}, "study file s.json field words_per_participant"},
      {{{"completion_url", "javascript:alert(1)"}}, "study file s.json field completion_url"},
      {{{"attention_check", {{"cell", "Z9"}}}}, "study file s.json field attention_check field cell"},
      {{{"rate_limit_per_session", {{"per_second", -1}}}}, "study file s.json field rate_limit_per_session"},
      {{{"max_body_bytes", 10}}, "study file s.json field max_body_bytes"},
      {{{"cvd", true}}, "study file s.json"},
      {{{"rate_consent_text", " \n"}}, "study file s.json field rate_consent_text"},
      {{{"regions_consent_text", 3}}, "study file s.json field regions_consent_text"},
  };
  for (const auto& [doc, where] : cases) {
    auto study = StudyConfigFromJson(doc, "study file s.json");
    ASSERT_FALSE(study.ok()) << doc.dump();
    EXPECT_EQ(study.status().where(), where) << doc.dump();
    EXPECT_EQ(study.status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace visalign::server
