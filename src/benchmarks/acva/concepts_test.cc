#include <gtest/gtest.h>

#include "visalign/benchmarks/acva/acva.h"

namespace visalign::acva {
namespace {

const char* kConcept =
    R"({"id": "loyalty", "word": "忠诚", "gloss_en": "loyalty", "category": "moral", "ratings": {"imageability": 3.1},)"
    R"( "rubric": [{"id": "relationship", "text_zh": "是否存在持续的关系？", "text_en": "Is there an ongoing relationship?",)"
    R"( "weight": 2, "framework": "componential"}]})";

std::string ConceptLine(const std::string& id, const std::string& category = "moral",
                        const std::string& rubric =
                            R"([{"id": "q", "text_zh": "问", "text_en": "Q?", "weight": 1, "framework": "frame"}])") {
  return R"({"id": ")" + id + R"(", "word": "词", "gloss_en": "word", "category": ")" + category + R"(", "rubric": )" +
         rubric + "}\n";
}

TEST(ParseConcepts, ReadsEveryField) {
  auto concepts = ParseConcepts(kConcept, "concepts.jsonl");
  ASSERT_TRUE(concepts.ok()) << concepts.status().ToString();
  ASSERT_EQ(concepts->size(), 1u);
  const Concept& c = concepts->front();
  EXPECT_EQ(c.id, "loyalty");
  EXPECT_EQ(c.word, "忠诚");
  EXPECT_EQ(c.category, Category::kMoral);
  EXPECT_EQ(c.ratings.at("imageability"), 3.1);
  ASSERT_EQ(c.rubric.size(), 1u);
  EXPECT_EQ(c.rubric[0].weight, 2.0);
  EXPECT_EQ(c.rubric[0].framework, Framework::kComponential);
  EXPECT_EQ(c.rubric[0].text_en, "Is there an ongoing relationship?");
}

struct BadInput {
  std::string text;
  std::string where;      // expected location
  std::string what_part;  // expected part of the message
};

class ParseConceptsRejects : public ::testing::TestWithParam<BadInput> {};

TEST_P(ParseConceptsRejects, WithFileLineAndReason) {
  auto r = ParseConcepts(GetParam().text, "c.jsonl");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().where().rfind(GetParam().where, 0), 0u) << r.status().ToString();
  EXPECT_NE(r.status().what().find(GetParam().what_part), std::string::npos) << r.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseConceptsRejects,
    ::testing::Values(
        BadInput{ConceptLine("a") + ConceptLine("b", "feelings"), "c.jsonl:2 field category",
                 "unknown category \"feelings\""},
        BadInput{ConceptLine("a", "moral", "[]"), "c.jsonl:1 field rubric", "empty rubric"},
        BadInput{ConceptLine("a", "moral",
                             R"([{"id": "q", "text_zh": "问", "text_en": "Q", "weight": 0, "framework": "frame"}])"),
                 "c.jsonl:1 field rubric[0] field weight", "weight 0"},
        BadInput{ConceptLine("a", "moral",
                             R"([{"id": "q", "text_zh": "问", "text_en": "Q", "weight": -1, "framework": "frame"}])"),
                 "c.jsonl:1 field rubric[0] field weight", "weight -1"},
        BadInput{ConceptLine("a") + "\n" + ConceptLine("a"), "c.jsonl:3 field id",
                 "duplicate concept id \"a\" (first at c.jsonl:1)"},
        BadInput{
            ConceptLine("a", "moral",
                        R"([{"id": "q", "text_zh": "问", "text_en": "Q", "weight": 1, "framework": "prototype"}])"),
            "c.jsonl:1 field rubric[0] field framework", "unknown framework"},
        BadInput{"{not json\n", "c.jsonl:1", "not valid JSON"},
        BadInput{R"({"id": "a", "word": "词", "gloss_en": "w", "category": "moral", "rubrik": []})", "c.jsonl:1",
                 "unknown field \"rubrik\""}));

TEST(ParsePairs, RejectsPairsNamingUnknownConceptsWithFileAndLine) {
  auto concepts = ParseConcepts(ConceptLine("oath") + ConceptLine("promise"), "c.jsonl");
  ASSERT_TRUE(concepts.ok());
  auto ok = ParsePairs(R"({"a": "oath", "b": "promise"})", "p.jsonl", *concepts);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->front().b, "promise");
  auto bad =
      ParsePairs("{\"a\": \"oath\", \"b\": \"promise\"}\n{\"a\": \"oath\", \"b\": \"vow\"}\n", "p.jsonl", *concepts);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().where(), "p.jsonl:2 field b");
  EXPECT_NE(bad.status().what().find("unknown concept \"vow\""), std::string::npos);
  auto dup = ParsePairs("{\"a\": \"oath\", \"b\": \"promise\"}\n{\"a\": \"promise\", \"b\": \"oath\"}\n", "p.jsonl",
                        *concepts);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().where(), "p.jsonl:2");
}

TEST(StarterSet, HasFourConceptsPerCategoryAndTheRequiredPairs) {
  auto concepts = StarterConceptsFile();
  auto pairs = StarterPairsFile();
  ASSERT_TRUE(concepts.ok() && pairs.ok());
  auto set = LoadConceptSet(*concepts, *pairs);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_GE(set->concepts.size(), 24u);
  std::map<Category, int> per_category;
  for (const Concept& c : set->concepts) {
    ++per_category[c.category];
    EXPECT_GE(c.rubric.size(), 4u) << c.id;
    EXPECT_LE(c.rubric.size(), 6u) << c.id;
  }
  for (Category cat : kCategories) EXPECT_GE(per_category[cat], 4) << CategoryName(cat);
  EXPECT_GE(set->pairs.size(), 6u);
  auto has_pair = [&](const std::string& wa, const std::string& wb) {
    for (const ConceptPair& p : set->pairs)
      if (set->concepts[*set->IndexOf(p.a)].word == wa && set->concepts[*set->IndexOf(p.b)].word == wb) return true;
    return false;
  };
  EXPECT_TRUE(has_pair("誓言", "诺言"));
  EXPECT_TRUE(has_pair("婚姻", "家庭"));
  EXPECT_EQ(set->fingerprint.size(), 64u);
}

}  // namespace
}  // namespace visalign::acva
