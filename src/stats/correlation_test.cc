#include <gtest/gtest.h>

#include <cmath>

#include "visalign/stats/resampling.h"

namespace visalign::stats {
namespace {

TEST(AverageRanks, TiesShareTheMeanOfTheirRanks) {
  EXPECT_EQ(AverageRanks({10, 20, 20, 5}), (std::vector<double>{2, 3.5, 3.5, 1}));
  EXPECT_EQ(AverageRanks({7, 7, 7}), (std::vector<double>{2, 2, 2}));
}

// Wikipedia's worked example (IQ vs hours of TV per week): rho = -29/165, p = 0.627188.
TEST(SpearmanCorrelation, MatchesTheWikipediaWorkedExample) {
  const std::vector<double> iq = {106, 100, 86, 101, 99, 103, 97, 113, 112, 110};
  const std::vector<double> tv = {7, 27, 2, 50, 28, 29, 20, 12, 6, 17};
  auto r = SpearmanCorrelation(iq, tv);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->rho, -29.0 / 165.0, 1e-12);
  EXPECT_NEAR(r->p_value, 0.627188, 1e-6);
  EXPECT_EQ(r->n, 10u);
}

// Ties by hand: ranks of y = {1.5, 1.5, 3.5, 3.5, 5} give rho = 9 / sqrt(90) = 3 / sqrt(10); then
// t = sqrt(27) with 3 df, whose two-sided p has the closed form 1 - 2/pi (atan(3) + 3/10).
TEST(SpearmanCorrelation, HandlesTiesWithAverageRanks) {
  auto r = SpearmanCorrelation({1, 2, 3, 4, 5}, {1, 1, 2, 2, 3});
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->rho, 3.0 / std::sqrt(10.0), 1e-12);
  EXPECT_NEAR(r->p_value, 1.0 - 2.0 / M_PI * (std::atan(3.0) + 0.3), 1e-10);
}

TEST(SpearmanCorrelation, PerfectMonotoneAgreementHasRhoOneAndPZero) {
  auto r = SpearmanCorrelation({1, 2, 3, 4}, {1, 4, 9, 16});
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->rho, 1.0);
  EXPECT_EQ(r->p_value, 0.0);
  auto inverse = SpearmanCorrelation({1, 2, 3, 4}, {4, 3, 2, 1});
  ASSERT_TRUE(inverse.ok());
  EXPECT_DOUBLE_EQ(inverse->rho, -1.0);
}

TEST(SpearmanCorrelation, RefusesDegenerateInputsWithAReason) {
  auto constant = SpearmanCorrelation({1, 2, 3}, {5, 5, 5}, "adequacy vs imageability");
  ASSERT_FALSE(constant.ok());
  EXPECT_NE(constant.status().what().find("constant"), std::string::npos);
  EXPECT_EQ(constant.status().where(), "adequacy vs imageability");
  EXPECT_FALSE(SpearmanCorrelation({1, 2}, {1, 2}).ok());
  EXPECT_FALSE(SpearmanCorrelation({1, 2, 3}, {1, 2}).ok());
  EXPECT_FALSE(SpearmanCorrelation({1, 2, NAN}, {1, 2, 3}).ok());
}

TEST(Quantile, InterpolatesLinearlyBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(Quantile({4, 1, 3, 2}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(Quantile({4, 1, 3, 2}, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(Quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Quantile({10, 20}, 0.25), 12.5);
}

}  // namespace
}  // namespace visalign::stats
