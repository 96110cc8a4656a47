// Hand-computed values for every statistic in stats.h.
#include "visalign/stats/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace visalign::stats {
namespace {

constexpr double kTight = 1e-14;

TEST(Stats, MeanOfValuesAndPoints) {
  const std::vector<double> v{1, 2, 6};
  EXPECT_DOUBLE_EQ(Mean(v), 3.0);
  EXPECT_TRUE(std::isnan(Mean(std::span<const double>{})));
  const std::vector<Vec2> p{{0, 0}, {1, 0}, {0, 1}};
  EXPECT_NEAR(Mean(p)[0], 1.0 / 3, kTight);
  EXPECT_NEAR(Mean(p)[1], 1.0 / 3, kTight);
}

TEST(Stats, CovarianceUsesNMinusOne) {
  // Points (0,0), (1,0), (0,1): deviations (-1/3,-1/3), (2/3,-1/3), (-1/3,2/3).
  // Sxx = (1/9 + 4/9 + 1/9)/2 = 1/3, Sxy = (1/9 - 2/9 - 2/9)/2 = -1/6, Syy = 1/3.
  const std::vector<Vec2> p{{0, 0}, {1, 0}, {0, 1}};
  auto cov = Covariance(p);
  ASSERT_TRUE(cov.ok());
  EXPECT_NEAR((*cov)[0][0], 1.0 / 3, kTight);
  EXPECT_NEAR((*cov)[0][1], -1.0 / 6, kTight);
  EXPECT_NEAR((*cov)[1][0], -1.0 / 6, kTight);
  EXPECT_NEAR((*cov)[1][1], 1.0 / 3, kTight);
}

TEST(Stats, MahalanobisEllipsePointsLieAtTheGivenDistance) {
  const Vec2 mean{0.3, 0.4};
  const Mat2 cov{{{4e-4, 1e-4}, {1e-4, 2e-4}}};
  const std::vector<Vec2> ellipse = MahalanobisEllipse(mean, cov, 5.991, 72);
  ASSERT_EQ(ellipse.size(), 73u);
  EXPECT_NEAR(ellipse.front()[0], ellipse.back()[0], 1e-15);  // closed
  EXPECT_NEAR(ellipse.front()[1], ellipse.back()[1], 1e-15);
  const Mat2 inverse = *Inverse(cov);
  for (const Vec2& p : ellipse) EXPECT_NEAR(MahalanobisSquared(p, mean, inverse), 5.991, 1e-9);
}

TEST(Stats, CovarianceNeedsTwoPoints) {
  const std::vector<Vec2> one{{1, 1}};
  EXPECT_FALSE(Covariance(one).ok());
}

TEST(Stats, WeightedCovarianceMatchesNumpyAweights) {
  // Points (0,0), (2,0), (0,2), weights 1, 1, 2: Σw = 4, Σw² = 6, denominator 4 - 6/4 = 2.5,
  // mean (0.5, 1); Sxx = (0.25 + 2.25 + 2·0.25)/2.5 = 1.2, Sxy = (0.5 - 1.5 - 2·0.5)/2.5 = -0.8,
  // Syy = (1 + 1 + 2)/2.5 = 1.6.
  const std::vector<Vec2> p{{0, 0}, {2, 0}, {0, 2}};
  const std::vector<double> w{1, 1, 2};
  auto m = WeightedCovariance(p, w);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_NEAR(m->mean[0], 0.5, kTight);
  EXPECT_NEAR(m->mean[1], 1.0, kTight);
  EXPECT_NEAR(m->cov[0][0], 1.2, kTight);
  EXPECT_NEAR(m->cov[0][1], -0.8, kTight);
  EXPECT_NEAR(m->cov[1][1], 1.6, kTight);
}

TEST(Stats, UniformWeightsGiveTheOrdinaryCovariance) {
  const std::vector<Vec2> p{{0.3, 0.2}, {0.31, 0.25}, {0.28, 0.21}, {0.35, 0.3}, {0.29, 0.22}};
  const std::vector<double> w(p.size(), 1.0);
  auto weighted = WeightedCovariance(p, w);
  auto plain = Covariance(p);
  ASSERT_TRUE(weighted.ok() && plain.ok());
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) EXPECT_NEAR(weighted->cov[i][j], (*plain)[i][j], kTight);
}

TEST(Stats, WeightedCovarianceRejectsBadWeights) {
  const std::vector<Vec2> p{{0, 0}, {1, 1}};
  EXPECT_FALSE(WeightedCovariance(p, std::vector<double>{1, -1}).ok());
  EXPECT_FALSE(WeightedCovariance(p, std::vector<double>{1, 0}).ok());  // one effective point
  EXPECT_FALSE(WeightedCovariance(p, std::vector<double>{1}).ok());
}

TEST(Stats, InverseDetectsSingularMatrices) {
  EXPECT_FALSE(Inverse(Mat2{{{1, 2}, {2, 4}}}).has_value());
  EXPECT_FALSE(Inverse(Mat2{{{0, 0}, {0, 1}}}).has_value());
  EXPECT_FALSE(Inverse(Mat2{{{1, 1 - 1e-13}, {1 - 1e-13, 1}}}).has_value());  // |r| ≈ 1
  auto inv = Inverse(Mat2{{{4, 1}, {1, 2}}});                                 // det 7 -> [[2, -1], [-1, 4]] / 7
  ASSERT_TRUE(inv.has_value());
  EXPECT_NEAR((*inv)[0][0], 2.0 / 7, kTight);
  EXPECT_NEAR((*inv)[0][1], -1.0 / 7, kTight);
  EXPECT_NEAR((*inv)[1][1], 4.0 / 7, kTight);
  // Badly scaled but well conditioned in the relative sense: not singular.
  EXPECT_TRUE(Inverse(Mat2{{{1e-8, 0}, {0, 1e8}}}).has_value());
}

TEST(Stats, MahalanobisSquared) {
  // Σ = diag(4, 1), μ = 0, point (2, 1): 2²/4 + 1²/1 = 2.
  auto inv = Inverse(Mat2{{{4, 0}, {0, 1}}});
  ASSERT_TRUE(inv.has_value());
  EXPECT_NEAR(MahalanobisSquared({2, 1}, {0, 0}, *inv), 2.0, kTight);
}

TEST(Stats, LeaveOneOutMahalanobisByHand) {
  // Point (5,5) vs the unit square corners: mean (.5,.5), cov diag(1/3, 1/3) -> d² = 2·4.5²·3 = 121.5.
  // Point (0,0) vs (1,0), (0,1), (1,1), (5,5): mean (7/4, 7/4), S = [[14.75, 13.75], [13.75, 14.75]]/3;
  // the offset (-7/4, -7/4) lies along the eigenvector (1,1) with eigenvalue 28.5/3 = 9.5, so
  // d² = 2·(7/4)²/9.5 = 6.125/9.5.
  const std::vector<Vec2> p{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {5, 5}};
  const std::vector<double> d2 = LeaveOneOutMahalanobis(p);
  ASSERT_EQ(d2.size(), 5u);
  EXPECT_NEAR(d2[4], 121.5, 1e-10);
  EXPECT_NEAR(d2[0], 6.125 / 9.5, 1e-12);
  // With only collinear others the covariance is singular: NaN, not a number pretending to be a test.
  const std::vector<Vec2> line{{0, 0}, {1, 1}, {2, 2}, {0, 1}};
  const std::vector<double> d2_line = LeaveOneOutMahalanobis(line);
  EXPECT_TRUE(std::isnan(d2_line[3]));
  EXPECT_FALSE(std::isnan(d2_line[0]));
  EXPECT_TRUE(std::isnan(LeaveOneOutMahalanobis(std::vector<Vec2>{{0, 0}, {1, 1}})[0]));
}

TEST(Stats, HotellingTwoSampleClosedForm) {
  // Identity covariances, n_x = 10, n_y = 5, means 1 apart: pooled = I, T² = 50/15 = 10/3,
  // F = T²·12/(2·13) = 20/13 on (2, 12) df. For df1 = 2 the F tail is (1 + 2f/12)^-6 = (39/49)^6.
  const Mat2 identity{{{1, 0}, {0, 1}}};
  auto r = HotellingTwoSample({0, 0}, identity, 10, {1, 0}, identity, 5);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->singular);
  EXPECT_NEAR(r->t2, 10.0 / 3, kTight);
  EXPECT_NEAR(r->f, 20.0 / 13, kTight);
  EXPECT_EQ(r->df1, 2);
  EXPECT_EQ(r->df2, 12);
  const double expected_p = std::pow(39.0 / 49.0, 6);
  EXPECT_NEAR(r->p_value / expected_p, 1.0, 1e-13);
  EXPECT_NEAR(r->p_cdf / expected_p, 1.0, 1e-12);
}

TEST(Stats, SurvivalFunctionKeepsTinyPValuesThatOneMinusCdfLoses) {
  // df1 = 2: P(F > f) = (1 + 2f/d2)^(-d2/2). At f = 1e4, d2 = 20 this is ~1e-30.
  const double f = 1e4, d2 = 20;
  const double exact = std::pow(1 + 2 * f / d2, -d2 / 2);
  EXPECT_NEAR(FisherFSurvival(f, 2, d2) / exact, 1.0, 1e-12);
  EXPECT_EQ(1.0 - FisherFCdf(f, 2, d2), 0.0);
}

TEST(Stats, HotellingReportsSingularPooledCovariance) {
  const Mat2 zero{};
  auto r = HotellingTwoSample({0, 0}, zero, 4, {1, 0}, zero, 5);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->singular);
  EXPECT_TRUE(std::isnan(r->p_value));
  EXPECT_FALSE(HotellingTwoSample({0, 0}, zero, 1, {1, 0}, zero, 5).ok());
}

TEST(Stats, ChiSquareQuantileTwoDegreesOfFreedom) {
  // For 2 dof the quantile is -2 ln(1 - p): 5.991464547107979 at 0.95.
  auto q = ChiSquareQuantile(0.95, 2);
  ASSERT_TRUE(q.ok());
  EXPECT_NEAR(*q, -2 * std::log(0.05), 1e-12);
  EXPECT_NEAR(*q, 5.991464547107979, 1e-12);
  EXPECT_FALSE(ChiSquareQuantile(1.0, 2).ok());
}

TEST(Stats, BenjaminiHochbergStepUp) {
  // Sorted p: .005 .01 .03 .04 (m = 4) -> p·m/rank = .02 .02 .04 .04, already monotone.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> p{0.01, 0.04, nan, 0.03, 0.005};
  const std::vector<double> q = BenjaminiHochberg(p);
  ASSERT_EQ(q.size(), 5u);
  EXPECT_NEAR(q[0], 0.02, kTight);
  EXPECT_NEAR(q[1], 0.04, kTight);
  EXPECT_TRUE(std::isnan(q[2]));
  EXPECT_NEAR(q[3], 0.04, kTight);
  EXPECT_NEAR(q[4], 0.02, kTight);
  // Monotonicity enforcement: p = .01, .011 (m = 2): raw .02, .011 -> both .011.
  const std::vector<double> q2 = BenjaminiHochberg(std::vector<double>{0.01, 0.011});
  EXPECT_NEAR(q2[0], 0.011, kTight);
  EXPECT_NEAR(q2[1], 0.011, kTight);
}

TEST(Stats, EntropyInBits) {
  EXPECT_NEAR(EntropyBits(std::vector<double>{1, 1, 1, 1}), 2.0, kTight);
  EXPECT_NEAR(EntropyBits(std::vector<double>{2, 1, 1}), 1.5, kTight);
  EXPECT_EQ(EntropyBits(std::vector<double>{4, 0}), 0.0);
  EXPECT_EQ(EntropyBits(std::vector<double>{}), 0.0);
}

TEST(WilsonInterval, MatchesTheClosedFormAndStaysInsideZeroToOne) {
  // 3 refusals in 40 requests: 7.5 %, Wilson 95 % [2.58 %, 19.86 %] (the closed form, evaluated in Python).
  const Proportion p = WilsonInterval(3, 40);
  EXPECT_DOUBLE_EQ(p.rate, 0.075);
  EXPECT_NEAR(p.lo, 0.025836, 1e-6);
  EXPECT_NEAR(p.hi, 0.198642, 1e-6);
  EXPECT_EQ(WilsonInterval(0, 10).lo, 0.0);
  EXPECT_NEAR(WilsonInterval(0, 10).hi, 0.277533, 1e-6);
  EXPECT_EQ(WilsonInterval(10, 10).hi, 1.0);
  EXPECT_TRUE(std::isnan(WilsonInterval(0, 0).rate));
}

}  // namespace
}  // namespace visalign::stats
