#include "visalign/benchmarks/violin/generation.h"

#include <gtest/gtest.h>

namespace visalign::violin {
namespace {

ManifestItem Item(std::string id, int variation, std::string split, Layout layout = Layout::kSingle) {
  ManifestItem it;
  it.id = std::move(id);
  it.prompt = "Paint " + it.id;
  it.variation = variation;
  it.split = std::move(split);
  it.layout = layout;
  it.language = "en";
  it.notation = "hex";
  it.prompt_split = "train";
  it.hue_split1 = "test";
  it.hue_split2 = "train";
  return it;
}

std::vector<std::string> Ids(const std::vector<GenerationItem>& work) {
  std::vector<std::string> out;
  for (const GenerationItem& w : work) out.push_back(w.id + "/" + std::to_string(w.k));
  return out;
}

// The seeds runs were made with: changing them orphans every existing run's rows.
TEST(ItemSeed, IsFnv1aOfTheIdPlusSamplePlusBaseModulo2To31) {
  EXPECT_EQ(ItemSeed("", 0, 0), 1939669891);
  EXPECT_EQ(ItemSeed("v1-t00-00000", 0, 0), 906895046);
  EXPECT_EQ(ItemSeed("v1-t00-00000", 1, 0), 906895047);
  EXPECT_EQ(ItemSeed("v3-t12-00451", 2, 7), 1707361394);
  EXPECT_EQ(ItemSeed("a", 0, 0), 1942853894);
  EXPECT_EQ(ItemSeed("a", 0, -1), 1942853893);
  for (int k = 0; k < 50; ++k) {
    EXPECT_GE(ItemSeed("v2-t03-00007", k, 1LL << 40), 0);
    EXPECT_LE(ItemSeed("v2-t03-00007", k, 1LL << 40), 0x7FFFFFFF);
  }
}

TEST(GenerationFilterKeys, AreTheManifestFieldsInHelpOrder) {
  EXPECT_EQ(GenerationFilterKeys(), (std::vector<std::string>{"variation", "split", "language", "ids", "notation",
                                                              "layout", "prompt_split", "hue_split1", "hue_split2"}));
}

TEST(MatchesFilters, EveryKeyMustAcceptTheItemsValue) {
  const ManifestItem it = Item("v2-t03-00007", 2, "test", Layout::kH2);
  EXPECT_TRUE(MatchesFilters(it, {}));
  EXPECT_TRUE(MatchesFilters(it, {{"variation", {"1", "2"}}}));
  EXPECT_FALSE(MatchesFilters(it, {{"variation", {"1"}}}));
  EXPECT_TRUE(MatchesFilters(it, {{"variation", {"2"}}, {"split", {"test"}}}));
  EXPECT_FALSE(MatchesFilters(it, {{"variation", {"2"}}, {"split", {"train"}}}));  // keys are ANDed
  EXPECT_TRUE(MatchesFilters(it, {{"layout", {"h2"}}}));                           // by LayoutName
  EXPECT_FALSE(MatchesFilters(it, {{"layout", {"single"}}}));
  EXPECT_TRUE(MatchesFilters(it, {{"ids", {"v2-t03-00007"}}}));
  EXPECT_TRUE(MatchesFilters(it, {{"language", {"en"}}, {"notation", {"hex"}}}));
  EXPECT_TRUE(MatchesFilters(it, {{"prompt_split", {"train"}}, {"hue_split1", {"test"}}, {"hue_split2", {"train"}}}));
  EXPECT_FALSE(MatchesFilters(it, {{"hue_split1", {"train"}}}));
  EXPECT_FALSE(MatchesFilters(it, {{"split", {}}}));  // a key with no value accepts nothing
}

TEST(GenerationItems, SamplesOfTheFirstLimitMatchingItemsInManifestOrder) {
  const std::vector<ManifestItem> items = {Item("a", 1, "train"), Item("b", 2, "test"), Item("c", 1, "test"),
                                           Item("d", 1, "test")};
  const std::vector<GenerationItem> all = GenerationItems(items, {}, 1, 0, 0);
  EXPECT_EQ(Ids(all), (std::vector<std::string>{"a/0", "b/0", "c/0", "d/0"}));
  EXPECT_EQ(all[1].prompt, "Paint b");
  EXPECT_EQ(all[1].seed, ItemSeed("b", 0, 0));

  const std::vector<GenerationItem> work = GenerationItems(items, {{"variation", {"1"}}}, 2, 5, 2);
  EXPECT_EQ(Ids(work), (std::vector<std::string>{"a/0", "a/1", "c/0", "c/1"}));  // limit counts items, not samples
  EXPECT_EQ(work[1].seed, ItemSeed("a", 1, 5));
  EXPECT_EQ(work[3].seed, ItemSeed("c", 1, 5));

  EXPECT_TRUE(GenerationItems(items, {{"variation", {"9"}}}, 1, 0, 0).empty());
  EXPECT_TRUE(GenerationItems(items, {}, 0, 0, 0).empty());
}

}  // namespace
}  // namespace visalign::violin
