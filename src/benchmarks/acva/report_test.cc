#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "visalign/benchmarks/acva/acva.h"

namespace visalign::acva {
namespace {

TEST(FormatPValue, TwoSignificantDigitsNeverRoundedToZero) {
  EXPECT_EQ(FormatPValue(1.23456e-5, 0), "1.2e-05");
  EXPECT_EQ(FormatPValue(0.000312, 0), "0.00031");
  EXPECT_EQ(FormatPValue(0.0346, 0), "0.035");
  EXPECT_EQ(FormatPValue(0.5, 0), "0.5");
  EXPECT_EQ(FormatPValue(1.0, 0), "1");
}

TEST(FormatPValue, BelowTheResolutionOfTheTestItIsAnUpperBound) {
  // A paired bootstrap with 2000 resamples gives p in steps of 2/2000: p = 0 means p < 0.001.
  EXPECT_EQ(FormatPValue(0.0, 2.0 / 2000), "< 0.001");
  EXPECT_EQ(FormatPValue(0.001, 2.0 / 2000), "0.001");
  // Without a resolution (an exact test), 0 is 0: Spearman's t-test at |rho| = 1.
  EXPECT_EQ(FormatPValue(0.0, 0), "0");
}

TEST(FormatPValue, UndefinedIsADash) { EXPECT_EQ(FormatPValue(std::numeric_limits<double>::quiet_NaN(), 0), "–"); }

}  // namespace
}  // namespace visalign::acva
