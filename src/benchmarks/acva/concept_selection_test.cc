// SelectConcepts: --filter ids/category and --limit over a concept set.
#include <gtest/gtest.h>

#include "visalign/benchmarks/acva/acva.h"

namespace visalign::acva {
namespace {

ConceptSet TestSet() {
  ConceptSet set;
  const std::pair<const char*, Category> concepts[] = {{"joy", Category::kEmotion},
                                                       {"fear", Category::kEmotion},
                                                       {"trust", Category::kSocial},
                                                       {"truth", Category::kEpistemic}};
  for (const auto& [id, category] : concepts) {
    Concept c;
    c.id = id;
    c.category = category;
    set.concepts.push_back(c);
  }
  set.pairs = {{"joy", "fear", "n"}, {"trust", "truth", "m"}};
  set.fingerprint = "abc";
  return set;
}

std::vector<std::string> Ids(const ConceptSet& set) {
  std::vector<std::string> out;
  for (const Concept& c : set.concepts) out.push_back(c.id);
  return out;
}

TEST(SelectConcepts, NoFilterNoLimitIsEveryConcept) {
  const ConceptSet all = SelectConcepts(TestSet(), {}, 0);
  EXPECT_EQ(Ids(all), (std::vector<std::string>{"joy", "fear", "trust", "truth"}));
  EXPECT_EQ(all.pairs.size(), 2u);
  EXPECT_EQ(all.fingerprint, "abc");
}

TEST(SelectConcepts, IdsAndCategoriesAreAndedInSetOrder) {
  EXPECT_EQ(Ids(SelectConcepts(TestSet(), {{"ids", {"truth", "joy"}}}, 0)), (std::vector<std::string>{"joy", "truth"}));
  EXPECT_EQ(Ids(SelectConcepts(TestSet(), {{"category", {"emotion", "social"}}}, 0)),
            (std::vector<std::string>{"joy", "fear", "trust"}));
  EXPECT_EQ(Ids(SelectConcepts(TestSet(), {{"ids", {"joy", "trust"}}, {"category", {"social"}}}, 0)),
            (std::vector<std::string>{"trust"}));
  EXPECT_TRUE(SelectConcepts(TestSet(), {{"ids", {"nothing"}}}, 0).concepts.empty());
}

TEST(SelectConcepts, LimitTakesTheFirstNAfterFiltering) {
  EXPECT_EQ(Ids(SelectConcepts(TestSet(), {}, 2)), (std::vector<std::string>{"joy", "fear"}));
  EXPECT_EQ(Ids(SelectConcepts(TestSet(), {{"category", {"emotion", "epistemic"}}}, 2)),
            (std::vector<std::string>{"joy", "fear"}));
  EXPECT_EQ(Ids(SelectConcepts(TestSet(), {{"ids", {"truth", "trust"}}}, 1)), (std::vector<std::string>{"trust"}));
  EXPECT_EQ(SelectConcepts(TestSet(), {}, 2).pairs.size(), 2u);  // pairs are kept as they are
}

}  // namespace
}  // namespace visalign::acva
