#include "dataset_sampling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace visalign::violin {
namespace {

const color::IsccNbs& Iscc() {
  auto iscc = color::IsccNbs::Default();
  EXPECT_TRUE(iscc.ok()) << iscc.status().ToString();
  return **iscc;
}

double Hue(color::Srgb8 c) { return color::RgbToHsl(color::FromSrgb8(c)).h; }

TEST(Rng, FollowsTheStandardMt19937_64Sequence) {
  // The C++ standard fixes mt19937_64's output: the first value for the default seed 5489 is
  // 14514284786278117030. For n = 2^63 nothing is rejected, so UniformIndex returns it mod 2^63.
  Rng rng(5489);
  EXPECT_EQ(rng.UniformIndex(uint64_t{1} << 63), 14514284786278117030ULL - (uint64_t{1} << 63));
}

TEST(Rng, UniformIndexCoversTheRangeEvenly) {
  Rng rng(42);
  constexpr int kDraws = 60000, kN = 6;
  std::map<uint64_t, int> counts;
  for (int i = 0; i < kDraws; ++i) ++counts[rng.UniformIndex(kN)];
  ASSERT_EQ(counts.size(), size_t{kN});
  for (const auto& [value, n] : counts) {
    EXPECT_LT(value, uint64_t{kN});
    EXPECT_NEAR(n, kDraws / kN, kDraws / kN / 20) << "value " << value;  // within 5%
  }
  EXPECT_EQ(rng.UniformIndex(1), 0u);
}

TEST(Rng, ShuffleIsASeededPermutation) {
  std::vector<size_t> a = ShuffledIndices(50, 7), b = ShuffledIndices(50, 7), c = ShuffledIndices(50, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::sort(c.begin(), c.end());
  for (size_t i = 0; i < c.size(); ++i) EXPECT_EQ(c[i], i);
}

TEST(Rng, StreamSeedsDifferByLabelAndSeed) {
  EXPECT_EQ(StreamSeed(1, "v1/en/hex"), StreamSeed(1, "v1/en/hex"));
  EXPECT_NE(StreamSeed(1, "v1/en/hex"), StreamSeed(1, "v2/en/hex"));
  EXPECT_NE(StreamSeed(1, "v1/en/hex"), StreamSeed(2, "v1/en/hex"));
}

TEST(AllocateLevels, ProportionalToPoolSizesByLargestRemainder) {
  const std::array<size_t, kLevelCount> pools{13, 29, 267};
  // 3020 * (13, 29, 267) / 309 = 127.06, 283.43, 2609.51 -> floors sum to 3019; level 3 has the
  // largest remainder and gets the last item.
  EXPECT_EQ(AllocateLevels(3020, pools), (std::array<size_t, 3>{127, 283, 2610}));
  // 30 -> 1.26, 2.82, 25.92 -> 1, 2, 25 + the two largest remainders (levels 3 and 2).
  EXPECT_EQ(AllocateLevels(30, pools), (std::array<size_t, 3>{1, 3, 26}));
  // 3 -> 0.13, 0.28, 2.59 -> 0, 0, 3, then every level gets at least one item.
  EXPECT_EQ(AllocateLevels(3, pools), (std::array<size_t, 3>{1, 1, 1}));
  EXPECT_EQ(AllocateLevels(1, pools), (std::array<size_t, 3>{0, 0, 1}));
  EXPECT_EQ(AllocateLevels(12080, pools), (std::array<size_t, 3>{508, 1134, 10438}));
}

TEST(Deck, EveryPassUsesEveryCardOnceAndExclusionsHold) {
  Deck deck(13, 99);
  std::multiset<size_t> first_pass;
  for (int i = 0; i < 13; ++i) first_pass.insert(deck.Draw());
  for (size_t c = 0; c < 13; ++c) EXPECT_EQ(first_pass.count(c), 1u);
  for (int item = 0; item < 200; ++item) {
    std::vector<size_t> cards;
    for (int b = 0; b < 4; ++b) cards.push_back(deck.Draw(cards));
    EXPECT_EQ(std::set<size_t>(cards.begin(), cards.end()).size(), 4u);
  }
}

TEST(Pools, LevelsHave13And29And267Colors) {
  EXPECT_EQ(LevelPool(Iscc(), 1).size(), 13u);
  EXPECT_EQ(LevelPool(Iscc(), 2).size(), 29u);
  const std::vector<PoolColor> l3 = LevelPool(Iscc(), 3);
  ASSERT_EQ(l3.size(), 267u);
  EXPECT_EQ(l3.front().name, "vivid pink");
  EXPECT_EQ(color::ToHex(l3.front().rgb), "#FFB5BA");
}

TEST(Pools, FuzzyPairsAreRelatedDistinctAndWithinTheHueGap) {
  for (int level = 1; level <= kLevelCount; ++level) {
    const std::vector<ColorPair> pairs = FuzzyPairPool(Iscc(), level);
    EXPECT_GE(pairs.size(), 10u) << "level " << level;
    for (const ColorPair& p : pairs) {
      EXPECT_EQ(p.low.level, level);
      EXPECT_FALSE(p.low.rgb == p.high.rgb);
      EXPECT_LE(std::abs(Hue(p.low.rgb) - Hue(p.high.rgb)), kMaxFuzzyHueGap) << p.low.name << " " << p.high.name;
      EXPECT_LE(color::Srgb8ToLab(p.low.rgb).L, color::Srgb8ToLab(p.high.rgb).L);
      if (level == 3) {
        EXPECT_EQ(Iscc().CentroidById(p.low.id)->level2, Iscc().CentroidById(p.high.id)->level2);
      }
      if (level == 2) {
        EXPECT_EQ(Iscc().level2()[p.low.id - 1].parent_level1, Iscc().level2()[p.high.id - 1].parent_level1);
      }
    }
  }
  // Level 1: pink (#E4717A, hue 355.3°) and red (#BE0032, hue 344.2°) are 11° apart: a pair, red
  // (the darker) low. Red and orange (#F38400, 32.6°) are 311.6° apart linearly: not a pair.
  const std::vector<ColorPair> l1 = FuzzyPairPool(Iscc(), 1);
  auto has = [&](std::string_view low, std::string_view high) {
    return std::any_of(l1.begin(), l1.end(),
                       [&](const ColorPair& p) { return p.low.name == low && p.high.name == high; });
  };
  EXPECT_TRUE(has("red", "pink"));
  EXPECT_FALSE(has("red", "orange") || has("orange", "red"));
}

TEST(HslMidpoint, AveragesHueSaturationAndLightnessLinearly) {
  // red (0°, 100%, 50%) and blue (240°, 100%, 50%) -> 120°: pure green, not magenta.
  EXPECT_EQ(color::ToHex(HslMidpoint({255, 0, 0}, {0, 0, 255})), "#00FF00");
  // black (l 0) and white (l 1) -> l 0.5 -> 127.5 rounds half away to 128.
  EXPECT_EQ(color::ToHex(HslMidpoint({0, 0, 0}, {255, 255, 255})), "#808080");
  // Symmetric in its arguments.
  EXPECT_EQ(HslMidpoint({228, 113, 122}, {190, 0, 50}), HslMidpoint({190, 0, 50}, {228, 113, 122}));
}

}  // namespace
}  // namespace visalign::violin
