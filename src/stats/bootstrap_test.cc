#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "visalign/stats/resampling.h"

namespace visalign::stats {
namespace {

UnitStatistic MeanOf(std::vector<double> values) {
  return RatioOfSums(values, std::vector<double>(values.size(), 1.0));
}

TEST(ResamplingRng, SameSeedSameDrawsDifferentSeedDifferentDraws) {
  ResamplingRng a(7), b(7), c(8);
  std::vector<size_t> da, db, dc;
  a.Resample(50, da);
  b.Resample(50, db);
  c.Resample(50, dc);
  EXPECT_EQ(da, db);
  EXPECT_NE(da, dc);
  for (size_t i : da) EXPECT_LT(i, 50u);
}

TEST(ResamplingRng, BoundedDrawsCoverTheRangeUniformly) {
  ResamplingRng rng(1);
  std::vector<int> counts(4, 0);
  constexpr int kDraws = 40000;
  for (int i = 0; i < kDraws; ++i) ++counts[rng.Below(4)];
  for (int c : counts) EXPECT_NEAR(c, kDraws / 4, 400);
}

TEST(BootstrapInterval, IsDeterministicForASeedAndBracketsTheMean) {
  std::vector<double> values(40);
  std::iota(values.begin(), values.end(), 0.0);  // mean 19.5
  BootstrapOptions options{.resamples = 1000, .seed = 42, .level = 0.95};
  const Interval first = BootstrapInterval(values.size(), MeanOf(values), options);
  const Interval again = BootstrapInterval(values.size(), MeanOf(values), options);
  EXPECT_EQ(first.lo, again.lo);
  EXPECT_EQ(first.hi, again.hi);
  EXPECT_LT(first.lo, 19.5);
  EXPECT_GT(first.hi, 19.5);
  // The standard error of the mean is about 11.5 / sqrt(40) = 1.8, so the interval spans about +-3.6.
  EXPECT_NEAR(first.hi - first.lo, 2 * 1.96 * 11.54 / std::sqrt(40.0), 1.0);
  options.seed = 43;
  const Interval other = BootstrapInterval(values.size(), MeanOf(values), options);
  EXPECT_FALSE(other.lo == first.lo && other.hi == first.hi);
}

TEST(BootstrapInterval, ConstantDataGivesAPointInterval) {
  const Interval i = BootstrapInterval(5, MeanOf({0.6, 0.6, 0.6, 0.6, 0.6}), {});
  EXPECT_DOUBLE_EQ(i.lo, 0.6);
  EXPECT_DOUBLE_EQ(i.hi, 0.6);
}

TEST(BootstrapInterval, NoUnitsGiveNaN) {
  const Interval i = BootstrapInterval(0, MeanOf({}), {});
  EXPECT_TRUE(std::isnan(i.lo));
  EXPECT_TRUE(std::isnan(i.hi));
}

TEST(RatioOfSums, PoolsNumeratorsAndDenominatorsOfTheDrawnUnits) {
  const UnitStatistic rate = RatioOfSums({1, 3, 0}, {2, 3, 0});
  EXPECT_DOUBLE_EQ(rate({0, 1}), 4.0 / 5.0);
  EXPECT_DOUBLE_EQ(rate({0, 0, 1}), 5.0 / 7.0);
  EXPECT_TRUE(std::isnan(rate({2, 2})));
}

TEST(PairedBootstrap, IdenticalStatisticsDifferByZeroWithPOne) {
  const std::vector<double> v = {0.1, 0.5, 0.9, 0.4};
  const PairedDifference d = PairedBootstrap(v.size(), MeanOf(v), MeanOf(v), {.resamples = 500});
  EXPECT_EQ(d.difference, 0.0);
  EXPECT_EQ(d.interval.lo, 0.0);
  EXPECT_EQ(d.interval.hi, 0.0);
  EXPECT_EQ(d.p_value, 1.0);
}

TEST(PairedBootstrap, AConsistentAdvantageIsSignificant) {
  std::vector<double> a(30), b(30);
  for (size_t i = 0; i < a.size(); ++i) {
    b[i] = static_cast<double>(i % 7) / 7.0;
    a[i] = b[i] + 0.2 + 0.01 * static_cast<double>(i % 3);
  }
  const PairedDifference d = PairedBootstrap(a.size(), MeanOf(a), MeanOf(b), {.resamples = 1000, .seed = 3});
  EXPECT_NEAR(d.difference, 0.21, 1e-9);
  EXPECT_GT(d.interval.lo, 0.19);
  EXPECT_LT(d.interval.hi, 0.22);
  EXPECT_EQ(d.p_value, 0.0);
}

}  // namespace
}  // namespace visalign::stats
