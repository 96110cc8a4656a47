// How `hues nonsense` prints a result: the JSON object and the text, field by field; and the
// results folder it writes (its summary.csv row and items.jsonl lines).
#include <gtest/gtest.h>

#include "benchmarks/hues/test_support.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"

namespace visalign::hues {
namespace {

NonsenseResult Collapsed() {
  NonsenseResult r;
  r.model = "m";
  r.collapse = CollapseClass::kNeutral;
  r.collapse_onto = Macro::kNeutral;
  r.entropy_bits = 0.8112781244591328;
  r.groups = {
      {"number", {*ParseCell("I18"), *ParseCell("I18"), *ParseCell("A1"), *ParseCell("B2")}, true, Macro::kNeutral},
      {"pseudoword", {0, 1, 2, 3}, false, Macro::kNeutral}};
  r.prior_cell = *ParseCell("I18");
  r.prior_count = 2;
  r.false_positive_words = {0, 1};
  return r;
}

TEST(NonsenseResultJson, NamesCellsMacrosAndWords) {
  const Vocabulary vocabulary = testing::TestVocabulary();
  const Json j = NonsenseResultJson(Collapsed(), vocabulary);
  EXPECT_EQ(j, Json::parse(R"({"model": "m", "class": "neutral_collapse", "onto": "Neutral",
      "entropy_bits": 0.8112781244591328,
      "groups": [{"group": "number", "top1": ["I18", "I18", "A1", "B2"], "collapsed": true, "onto": "Neutral"},
                 {"group": "pseudoword", "top1": ["A1", "A2", "A3", "A4"], "collapsed": false, "onto": null}],
      "prior_cell": "I18", "prior_count": 2, "false_positive_words": ["SALMON", "WHALE"]})"));
  // Key order is part of the output.
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys.size(), 8u);
}

TEST(NonsenseResultJson, NullsWithoutCollapseOrPrior) {
  NonsenseResult r;
  r.model = "flat";
  const Json j = NonsenseResultJson(r, testing::TestVocabulary());
  EXPECT_EQ(j["class"], "high_entropy");
  EXPECT_TRUE(j["onto"].is_null());
  EXPECT_TRUE(j["prior_cell"].is_null());
  EXPECT_EQ(j["prior_count"], 0);
  EXPECT_EQ(j["false_positive_words"], Json::array());
}

TEST(NonsenseResultText, HeadlineGroupsAndPrior) {
  const Vocabulary vocabulary = testing::TestVocabulary();
  EXPECT_EQ(NonsenseResultText(Collapsed(), vocabulary, 16),
            "m: neutral_collapse onto Neutral, entropy 0.81 bits\n"
            "  number         I18 I18 A1 B2    collapsed onto Neutral\n"
            "  pseudoword     A1 A2 A3 A4      \n"
            "  nonsense prior: I18 (2 of 16 nonsense words); valid words answered with it: SALMON, WHALE\n");
  NonsenseResult r = Collapsed();
  r.false_positive_words.clear();
  EXPECT_NE(NonsenseResultText(r, vocabulary, 16).find("answered with it: none\n"), std::string::npos);
  r.prior_cell.reset();
  EXPECT_EQ(NonsenseResultText(r, vocabulary, 16).find("nonsense prior"), std::string::npos);
}

TEST(WriteNonsense, OneCsvRowPerModelAndOneItemPerNonsenseWord) {
  visalign::testing::TempDir t;
  // Collapsed()'s groups against a vocabulary of 4 number and 4 pseudoword words, in that order.
  NonsenseRun run;
  run.results = {Collapsed()};
  run.prediction_sources = {(t / "p.jsonl").string()};
  for (const char* w : {"0000", "1234", "42", "7"}) run.words.push_back({w, "number"});
  for (const char* w : {"GLIMBOR", "ZIZAX", "Glimborp", "WUG"}) run.words.push_back({w, "pseudoword"});
  run.vocabulary_source = "eight words";
  ASSERT_TRUE(WriteNonsense(run, testing::TestMacro(), testing::TestVocabulary(), t / "out").ok());
  EXPECT_EQ(*ReadFile(t / "out" / "summary.csv"),
            "model,class,onto,entropy_bits,groups,collapsed_groups,prior_cell,prior_count,false_positive_words\n"
            "m,neutral_collapse,Neutral,0.8112781244591328,2,number:Neutral,I18,2,SALMON;WHALE\n");
  const std::string items_text = *ReadFile(t / "out" / "items.jsonl");
  const std::vector<std::string_view> items = SplitLines(items_text);
  ASSERT_GE(items.size(), 8u);
  EXPECT_EQ(items[2], R"({"model":"m","word":"42","group":"number","top1":"A1","top1_macro":"Brown"})");
  EXPECT_EQ(items[4], R"({"model":"m","word":"GLIMBOR","group":"pseudoword","top1":"A1","top1_macro":"Brown"})");
  const Json summary = Json::parse(*ReadFile(t / "out" / "summary.json"));
  EXPECT_EQ(summary["benchmark"], "hues-nonsense");
  EXPECT_EQ(summary["classes"]["neutral_collapse"], 1);
  EXPECT_EQ(summary["models"][0], NonsenseResultJson(Collapsed(), testing::TestVocabulary()));
  // What is not a file is named, not fingerprinted.
  EXPECT_EQ(summary["inputs"]["vocabulary"], Json::parse(R"({"source": "eight words"})"));
  EXPECT_EQ(summary["inputs"]["predictions"][0],
            Json::parse(R"({"model": "m", "source": ")" + (t / "p.jsonl").string() + R"("})"));
}

}  // namespace
}  // namespace visalign::hues
