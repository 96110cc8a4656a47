// InAllSpaces and CompareColors: the path each notation takes through the spaces, and every
// difference of two colors, against the single-space functions they are made of.
#include <gtest/gtest.h>

#include "visalign/color.h"

namespace visalign::color {
namespace {

const IsccNbs& Names() {
  static const IsccNbs table = *IsccNbs::Load(std::filesystem::path(VISALIGN_TEST_DATA_DIR) / "color");
  return table;
}

ParsedColor Parse(const char* text) {
  Result<ParsedColor> c = ParseColor(text, Names());
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return *c;
}

TEST(InAllSpaces, RgbNotationsGoThroughLinearThenXyz) {
  const ParsedColor c = Parse("#D9B451");
  const ColorSpaces s = InAllSpaces(c);
  EXPECT_EQ(s.srgb.r, c.rgb.r);
  EXPECT_EQ(s.clipped.g, c.rgb.g);  // in gamut: nothing clipped
  const LinearRgb linear = ToLinear(c.rgb);
  EXPECT_EQ(s.linear.r, linear.r);
  const Xyz xyz = LinearToXyz(linear);
  EXPECT_EQ(s.xyz.y, xyz.y);
  EXPECT_EQ(s.xyy.x, XyzToXyy(xyz).x);
  EXPECT_EQ(s.lab.L, c.lab.L);
  EXPECT_EQ(s.lch.h, LabToLch(c.lab).h);
  EXPECT_EQ(s.hsl.h, RgbToHsl(c.rgb).h);
}

TEST(InAllSpaces, LabNotationGoesThroughXyzThenLinearAndKeepsItsNumbers) {
  const ParsedColor c = Parse("lab(50, 120, -120)");  // outside sRGB
  ASSERT_FALSE(c.in_gamut);
  const ColorSpaces s = InAllSpaces(c);
  EXPECT_EQ(s.lab.a, 120);
  EXPECT_EQ(s.lab.b, -120);
  const Xyz xyz = LabToXyz(c.lab);
  EXPECT_EQ(s.xyz.x, xyz.x);
  EXPECT_EQ(s.linear.b, XyzToLinear(xyz).b);
  const Rgb clipped = ClipToGamut(c.rgb);
  EXPECT_EQ(s.clipped.r, clipped.r);
  EXPECT_FALSE(s.srgb.r == s.clipped.r && s.srgb.g == s.clipped.g && s.srgb.b == s.clipped.b);  // srgb unclipped
}

TEST(CompareColors, EveryDifferenceOfTheParsedColors) {
  const ParsedColor p = Parse("lab(50, 2.6772, -79.7751)"), q = Parse("lab(50, 0, -82.7485)");
  const ColorDifferences d = CompareColors(p, q);
  EXPECT_NEAR(d.de2000, 2.0425, 5e-5);  // Sharma pair 1
  EXPECT_EQ(d.de76, DeltaE76(p.lab, q.lab));
  EXPECT_EQ(d.hue, HueDifference(p.lab, q.lab));
  EXPECT_EQ(d.chroma, ChromaDistance(p.lab, q.lab));
  EXPECT_EQ(d.hyab, HyAB(p.lab, q.lab));
  EXPECT_EQ(d.rgb_ed, RgbEuclidean(ToRgb255(p.rgb), ToRgb255(q.rgb)));
  EXPECT_EQ(d.rgb_redmean, RgbRedmean(ToRgb255(p.rgb), ToRgb255(q.rgb)));
  const ColorDifferences same = CompareColors(p, p);
  EXPECT_EQ(same.de2000, 0);
  EXPECT_EQ(same.rgb_ed, 0);
}

}  // namespace
}  // namespace visalign::color
