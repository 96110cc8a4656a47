// How `hues nonsense` prints a result: the JSON object and the text, field by field.
#include <gtest/gtest.h>

#include "benchmarks/hues/test_support.h"
#include "visalign/benchmarks/hues/hues.h"

namespace visalign::hues {
namespace {

NonsenseResult Collapsed() {
  NonsenseResult r;
  r.model = "m";
  r.collapse = CollapseClass::kNeutral;
  r.collapse_onto = Macro::kNeutral;
  r.entropy_bits = 0.8112781244591328;
  r.groups = {{"number", {*ParseCell("I18"), *ParseCell("I18"), *ParseCell("A1"), *ParseCell("B2")}, true,
               Macro::kNeutral},
              {"pseudoword", {0, 1, 2, 3}, false, Macro::kNeutral}};
  r.prior_cell = *ParseCell("I18");
  r.prior_count = 2;
  r.false_positive_words = {0, 1};
  return r;
}

TEST(NonsenseResultJson, NamesCellsMacrosAndWords) {
  const Vocabulary vocabulary = testing::TestVocabulary();
  const nlohmann::json j = NonsenseResultJson(Collapsed(), vocabulary);
  EXPECT_EQ(j, nlohmann::json::parse(R"({"model": "m", "class": "neutral_collapse", "onto": "Neutral",
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
  const nlohmann::json j = NonsenseResultJson(r, testing::TestVocabulary());
  EXPECT_EQ(j["class"], "high_entropy");
  EXPECT_TRUE(j["onto"].is_null());
  EXPECT_TRUE(j["prior_cell"].is_null());
  EXPECT_EQ(j["prior_count"], 0);
  EXPECT_EQ(j["false_positive_words"], nlohmann::json::array());
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

}  // namespace
}  // namespace visalign::hues
