// Color differences: the Sharma et al. (2005) CIEDE2000 conformance pairs, symmetry, and
// hand-computed values of the simpler metrics.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "visalign/color.h"
#include "visalign/core/io.h"

namespace visalign::color {
namespace {

struct SharmaPair {
  int pair;
  Lab p, q;
  double de2000;
};

// data/color/ciede2000_sharma.csv: Sharma, Wu & Dalal (2005), Table 1.
std::vector<SharmaPair> LoadSharmaPairs() {
  const auto table = ReadCsv(std::filesystem::path(VISALIGN_TEST_DATA_DIR) / "color" / "ciede2000_sharma.csv");
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  std::vector<SharmaPair> pairs;
  if (!table.ok()) return pairs;
  for (size_t row = 0; row < table->rows.size(); ++row) {
    double v[8];
    for (int i = 0; i < 8; ++i) v[i] = *ParseDouble(table->rows[row][i], table->Where(row));
    pairs.push_back({int(v[0]), {v[1], v[2], v[3]}, {v[4], v[5], v[6]}, v[7]});
  }
  return pairs;
}

TEST(DeltaE2000, AllThirtyFourSharmaPairsWithin1e4) {
  const std::vector<SharmaPair> pairs = LoadSharmaPairs();
  ASSERT_EQ(pairs.size(), 34u);
  for (const SharmaPair& s : pairs) EXPECT_NEAR(DeltaE2000(s.p, s.q), s.de2000, 1e-4) << "pair " << s.pair;
}

TEST(DeltaE2000, Pair10OnTheHueMeanDiscontinuity) {
  // Pair 10: h'1 and h'2 are 180° apart up to rounding (|h'1 − h'2| = 179.99999999999997 in
  // double); the "≤ 180°" branch of the hue mean gives the published 7.1792. Pair 11 differs by
  // 0.0001 in b2 and is on the "> 180°" branch.
  EXPECT_NEAR(DeltaE2000({50.0000, 2.4900, -0.0010}, {50.0000, -2.4900, 0.0010}), 7.1792, 1e-4);
  EXPECT_NEAR(DeltaE2000({50.0000, 2.4900, -0.0010}, {50.0000, -2.4900, 0.0011}), 7.2195, 1e-4);
}

TEST(DeltaE2000, IsSymmetric) {
  for (const SharmaPair& s : LoadSharmaPairs())
    EXPECT_NEAR(DeltaE2000(s.q, s.p), DeltaE2000(s.p, s.q), 1e-12) << "pair " << s.pair;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> lightness(0, 100), ab(-128, 128);
  for (int i = 0; i < 10000; ++i) {
    const Lab p{lightness(rng), ab(rng), ab(rng)}, q{lightness(rng), ab(rng), ab(rng)};
    ASSERT_NEAR(DeltaE2000(p, q), DeltaE2000(q, p), 1e-12);
  }
}

TEST(DeltaE2000, IdenticalColorsAndAchromaticPairs) {
  EXPECT_EQ(DeltaE2000({50, 10, -20}, {50, 10, -20}), 0.0);
  // Both gray: only the lightness term ΔL/SL, SL = 1 + 0.015·(L̄−50)²/sqrt(20 + (L̄−50)²), L̄ = 55.
  const double sl = 1 + 0.015 * 25.0 / std::sqrt(20.0 + 25.0);
  EXPECT_NEAR(DeltaE2000({50, 0, 0}, {60, 0, 0}), 10.0 / sl, 1e-12);
}

TEST(RgbDistances, HandComputedValues) {
  EXPECT_DOUBLE_EQ(RgbEuclidean({0, 0, 0}, {3, 4, 0}), 5.0);
  // r̄ = 127.5: sqrt((2 + 127.5/256)·255²) = sqrt(2.498046875 · 65025)
  EXPECT_NEAR(RgbRedmean({255, 0, 0}, {0, 0, 0}), std::sqrt(162435.498046875), 1e-9);
  EXPECT_NEAR(RgbRedmean({255, 0, 0}, {0, 0, 0}), 403.0328746478071, 1e-9);
  // r̄ = 128, ΔG = 50, ΔB = 30: 4·2500 + (2 + 127/256)·900 = 10000 + 2246.484375
  EXPECT_NEAR(RgbRedmean({128, 100, 60}, {128, 50, 30}), std::sqrt(12246.484375), 1e-9);
  EXPECT_EQ(ToRgb255(Srgb8{255, 128, 0}).g, 128.0);
  EXPECT_EQ(ToRgb255(Rgb{1, 0.5, 0}).g, 127.5);
}

TEST(RgbDistances, OutOfGamutColorsAreMeasuredAsTheirClippedColor) {
  // Extended sRGB of the README's lab(50, 2.6772, -79.7751) and lab(50, 0, -82.7485) on 0-255:
  // a red far below 0 made the redmean weight 2 + r̄/256 negative (-nan).
  const Rgb255 p = ToRgb255(LabToSrgb({50, 2.6772, -79.7751}));
  const Rgb255 q = ToRgb255(LabToSrgb({50, 0, -82.7485}));
  EXPECT_EQ(RgbRedmean(p, q), RgbRedmean(ClipToGamut(p), ClipToGamut(q)));
  EXPECT_EQ(RgbEuclidean(p, q), RgbEuclidean(ClipToGamut(p), ClipToGamut(q)));
  EXPECT_TRUE(std::isfinite(RgbRedmean(p, q)));
  EXPECT_EQ(RgbRedmean({-700, 0, 0}, {-900, 0, 0}), 0.0);  // both clip to black
  EXPECT_EQ(RgbEuclidean({300, 128, 0}, {255, 128, 0}), 0.0);
  EXPECT_NEAR(RgbRedmean({-100, 0, 0}, {400, 0, 0}), 403.0328746478071, 1e-9);  // black vs red
}

TEST(LabDistances, HandComputedValues) {
  EXPECT_DOUBLE_EQ(DeltaE76({50, 0, 0}, {53, 4, 0}), 5.0);
  EXPECT_DOUBLE_EQ(ChromaDistance({50, 3, 0}, {60, 0, 4}), 5.0);
  EXPECT_DOUBLE_EQ(HyAB({50, 3, 0}, {60, 0, 4}), 15.0);
  EXPECT_DOUBLE_EQ(HyAB({60, 3, 0}, {50, 0, 4}), 15.0);
}

TEST(HueDifference, IsCircularBetweenZeroAnd180) {
  EXPECT_NEAR(HueDifference({50, 1, 0}, {50, -1, 0}), 180.0, 1e-12);
  // 350° vs 10°: 20°, not 340°.
  const Lab h350 = LchToLab({50, 30, 350}), h10 = LchToLab({50, 30, 10});
  EXPECT_NEAR(HueDifference(h350, h10), 20.0, 1e-9);
  EXPECT_NEAR(HueDifference(h10, h350), 20.0, 1e-9);
  EXPECT_NEAR(HueDifference({50, 0, 5}, {20, 5, 0}), 90.0, 1e-12);
  EXPECT_EQ(HueDifference({50, 0, 0}, {50, 0, 0}), 0.0);
}

}  // namespace
}  // namespace visalign::color
