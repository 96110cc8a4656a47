#include "visalign/core/format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "visalign/core/results.h"

namespace visalign {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(FormatNumber, NonFiniteValuesAreEmpty) {
  EXPECT_EQ(FormatNumber(kNaN), "");
  EXPECT_EQ(FormatNumber(kInf), "");
  EXPECT_EQ(FormatNumber(-kInf), "");
  EXPECT_EQ(FormatFixed(kNaN, 3), "");
  EXPECT_EQ(FormatFixed(-kInf, 3), "");
}

TEST(FormatNumber, IntegersHaveNoFractionOrExponent) {
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(3), "3");
  EXPECT_EQ(FormatNumber(-1), "-1");
  EXPECT_EQ(FormatNumber(48320), "48320");
  EXPECT_EQ(FormatNumber(1e15), "1000000000000000");
}

TEST(FormatNumber, IsTheShortestTextThatReadsBackAsTheSameDouble) {
  EXPECT_EQ(FormatNumber(0.1), "0.1");
  EXPECT_EQ(FormatNumber(0.25), "0.25");
  EXPECT_EQ(FormatNumber(8.0 / 9.0), "0.8888888888888888");
  EXPECT_EQ(FormatNumber(1e-7), "1e-07");
  for (double v : {0.1, 1.0 / 3.0, 2.0 / 3.0, 1e-300, 123456.789, -0.000123, 6.02214076e23, 0.30000000000000004}) {
    const std::string text = FormatNumber(v);
    EXPECT_EQ(std::stod(text), v) << text;
    // One digit fewer no longer reads back (shortest): drop the last significant digit.
    const size_t e = text.find('e');
    std::string mantissa = text.substr(0, e);
    if (mantissa.find('.') != std::string::npos && mantissa.size() > 3) {
      mantissa.pop_back();
      EXPECT_NE(std::stod(mantissa + (e == std::string::npos ? "" : text.substr(e))), v) << text;
    }
  }
}

TEST(FormatFixed, RoundsToTheGivenDecimals) {
  EXPECT_EQ(FormatFixed(0.25, 3), "0.250");
  EXPECT_EQ(FormatFixed(2.0 / 3.0, 4), "0.6667");
  EXPECT_EQ(FormatFixed(-1, 1), "-1.0");
}

TEST(ResultsHeader, NamesTheBenchmarkTheSchemaAndTheVersion) {
  const Json h = ResultsHeader("violin");
  EXPECT_EQ(h["benchmark"], "violin");
  EXPECT_EQ(h["schema_version"], kResultsSchemaVersion);
  EXPECT_EQ(h["visalign_version"], std::string(VisalignVersion()));
  EXPECT_FALSE(VisalignVersion().empty());
}

}  // namespace
}  // namespace visalign
