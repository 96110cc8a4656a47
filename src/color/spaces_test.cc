// Conversions: agreement with scikit-image's rgb2lab, round trips over the 8-bit sRGB cube, the
// batch path against the scalar path, and hand-checked values of each space.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <random>
#include <vector>

#include "visalign/color.h"

namespace visalign::color {
namespace {

// An independent long-double evaluation of skimage.color.rgb2lab (skimage/color/colorconv.py):
// gamma expansion, `arr @ xyz_from_rgb.T`, division by the D65 white, cbrt above 0.008856 else
// 7.787·t + 16/116, then L = 116·fy − 16, a = 500·(fx − fy), b = 200·(fy − fz).
Lab SkimageRgb2Lab(double r, double g, double b) {
  auto expand = [](long double c) { return c > 0.04045L ? std::pow((c + 0.055L) / 1.055L, 2.4L) : c / 12.92L; };
  const long double lin[3] = {expand(r), expand(g), expand(b)};
  const long double m[3][3] = {
      {0.412453L, 0.357580L, 0.180423L}, {0.212671L, 0.715160L, 0.072169L}, {0.019334L, 0.119193L, 0.950227L}};
  const long double white[3] = {0.95047L, 1.0L, 1.08883L};
  long double f[3];
  for (int i = 0; i < 3; ++i) {
    const long double t = (m[i][0] * lin[0] + m[i][1] * lin[1] + m[i][2] * lin[2]) / white[i];
    f[i] = t > 0.008856L ? std::cbrt(t) : 7.787L * t + 16.0L / 116.0L;
  }
  return {double(116.0L * f[1] - 16.0L), double(500.0L * (f[0] - f[1])), double(200.0L * (f[1] - f[2]))};
}

void ExpectLabNear(const Lab& got, const Lab& want, double tol) {
  EXPECT_NEAR(got.L, want.L, tol);
  EXPECT_NEAR(got.a, want.a, tol);
  EXPECT_NEAR(got.b, want.b, tol);
}

// Every 5th level of each channel: 0, 5, ..., 255 (52 levels, 140 608 colors).
std::vector<Srgb8> CubeEvery5() {
  std::vector<Srgb8> out;
  constexpr int kStep = 5;
  for (int r = 0; r <= 255; r += kStep)
    for (int g = 0; g <= 255; g += kStep)
      for (int b = 0; b <= 255; b += kStep) out.push_back({uint8_t(r), uint8_t(g), uint8_t(b)});
  return out;
}

TEST(SrgbToLab, PureRedMatchesScikitImage) {
  // skimage.color.rgb2lab([[[1, 0, 0]]]) -> [53.24058794, 80.09230823, 67.20275104]. (The often
  // quoted 53.2408, 80.0925, 67.2032 come from the 0.4124564... matrix, not skimage's 0.412453.)
  ExpectLabNear(Srgb8ToLab({255, 0, 0}), {53.24058794, 80.09230823, 67.20275104}, 1e-8);
}

TEST(SrgbToLab, WhiteHasLightness100AndTheSmallChromaOfSkimagesMatrix) {
  // The rows of skimage's matrix sum to 0.950456, 1.0, 1.088754, not exactly the white point,
  // so sRGB white is L = 100 with a tiny a*, b* (skimage gives the same).
  const Lab white = Srgb8ToLab({255, 255, 255});
  EXPECT_NEAR(white.L, 100.0, 1e-12);
  ExpectLabNear(white, SkimageRgb2Lab(1, 1, 1), 1e-12);
  EXPECT_LT(std::hypot(white.a, white.b), 0.006);
}

TEST(SrgbToLab, AgreesWithLongDoubleSkimageFormulasOverTheCube) {
  double worst = 0;
  for (const Srgb8& c : CubeEvery5()) {
    const Lab got = Srgb8ToLab(c);
    const Lab want = SkimageRgb2Lab(c.r / 255.0, c.g / 255.0, c.b / 255.0);
    worst = std::max({worst, std::fabs(got.L - want.L), std::fabs(got.a - want.a), std::fabs(got.b - want.b)});
  }
  EXPECT_LT(worst, 1e-9);
}

TEST(SrgbToLab, BlackAndDarkColorsUseTheLinearBranch) {
  ExpectLabNear(Srgb8ToLab({0, 0, 0}), {0, 0, 0}, 1e-12);
  // #010101: Y = 0.212671·l + 0.715160·l + 0.072169·l = l with l = (1/255)/12.92, below ε.
  const double y = (1.0 / 255.0) / 12.92;
  EXPECT_NEAR(Srgb8ToLab({1, 1, 1}).L, 116.0 * (7.787 * y + 16.0 / 116.0) - 16.0, 1e-12);
}

TEST(TransferFunction, FollowsIec61966AtAndAroundTheThresholds) {
  EXPECT_DOUBLE_EQ(SrgbToLinear(0.04045), 0.04045 / 12.92);
  EXPECT_DOUBLE_EQ(SrgbToLinear(0.5), std::pow((0.5 + 0.055) / 1.055, 2.4));
  EXPECT_DOUBLE_EQ(SrgbToLinear(1.0), 1.0);
  EXPECT_DOUBLE_EQ(LinearToSrgb(0.0031308), 0.0031308 * 12.92);
  EXPECT_DOUBLE_EQ(LinearToSrgb(0.2), 1.055 * std::pow(0.2, 1 / 2.4) - 0.055);
  EXPECT_DOUBLE_EQ(SrgbToLinear(-0.03), -0.03 / 12.92);  // the linear toe, mirrored
}

// The IEC formulas verbatim, as every in-gamut value must still get them bit for bit.
TEST(TransferFunction, NonNegativeValuesAreTheIecFormulasBitForBit) {
  constexpr int kSteps = 100000;
  for (int i = 0; i <= kSteps; ++i) {
    const double c = double(i) / kSteps;
    const double linear = c > 0.04045 ? std::pow((c + 0.055) / 1.055, 2.4) : c / 12.92;
    const double encoded = c > 0.0031308 ? 1.055 * std::pow(c, 1.0 / 2.4) - 0.055 : c * 12.92;
    ASSERT_EQ(SrgbToLinear(c), linear) << c;
    ASSERT_EQ(LinearToSrgb(c), encoded) << c;
  }
}

TEST(TransferFunction, NegativeValuesMapSignSymmetrically) {
  for (double v : {1e-300, 0.001, 0.0031308, 0.0031309, 0.04045, 0.04046, 0.191782, 0.5, 1.0, 1.8, 27.0}) {
    EXPECT_EQ(LinearToSrgb(-v), -LinearToSrgb(v)) << v;
    EXPECT_EQ(SrgbToLinear(-v), -SrgbToLinear(v)) << v;
    EXPECT_NEAR(SrgbToLinear(LinearToSrgb(-v)), -v, 1e-15 * std::max(1.0, v)) << v;
  }
  // The README's lab(50, 2.6772, -79.7751) has linear red -0.191782: sRGB -0.4752 (the mirror of
  // 0.4752), not the -2.4778 that the linear toe 12.92·v gives.
  EXPECT_NEAR(LinearToSrgb(-0.191782), -(1.055 * std::pow(0.191782, 1 / 2.4) - 0.055), 1e-15);
  EXPECT_NEAR(LinearToSrgb(-0.191782), -0.4752, 1e-4);
  // Strictly increasing through zero and across both mirrored thresholds.
  double previous = LinearToSrgb(-2.0);
  for (double v = -2.0 + 1e-3; v <= 2.0; v += 1e-3) {
    ASSERT_GT(LinearToSrgb(v), previous) << v;
    previous = LinearToSrgb(v);
  }
}

TEST(Gamut, InGamutAllowsHalfAnEightBitStep) {
  EXPECT_TRUE(InGamut({0, 0.5, 1}));
  EXPECT_TRUE(InGamut({-kGamutTolerance, 1 + kGamutTolerance, 0}));
  EXPECT_FALSE(InGamut({-1.01 * kGamutTolerance, 0.5, 0.5}));
  EXPECT_FALSE(InGamut({0.5, 1 + 1.01 * kGamutTolerance, 0.5}));
  EXPECT_FALSE(InGamut(LabToSrgb({50, 2.6772, -79.7751})));
}

TEST(Gamut, ClipToGamutClampsEachChannel) {
  const Rgb clipped = ClipToGamut(Rgb{-0.47, 0.5, 1.3});
  EXPECT_EQ(clipped.r, 0.0);
  EXPECT_EQ(clipped.g, 0.5);
  EXPECT_EQ(clipped.b, 1.0);
  EXPECT_EQ(ClipToGamut(Rgb{std::nan(""), 0, 0}).r, 0.0);
  const Rgb255 clipped255 = ClipToGamut(Rgb255{-120, 300, 17.25});
  EXPECT_EQ(clipped255.r, 0.0);
  EXPECT_EQ(clipped255.g, 255.0);
  EXPECT_EQ(clipped255.b, 17.25);
  for (const Srgb8& c : CubeEvery5()) {  // identity on the cube
    const Rgb rgb = FromSrgb8(c);
    const Rgb same = ClipToGamut(rgb);
    ASSERT_TRUE(same.r == rgb.r && same.g == rgb.g && same.b == rgb.b) << ToHex(c);
  }
}

TEST(XyzToLinear, IsTheExactInverseOfTheMatrix) {
  for (const LinearRgb& v : {LinearRgb{1, 0, 0}, LinearRgb{0, 1, 0}, LinearRgb{0, 0, 1}, LinearRgb{0.3, 0.6, 0.9}}) {
    const LinearRgb back = XyzToLinear(LinearToXyz(v));
    EXPECT_NEAR(back.r, v.r, 1e-15);
    EXPECT_NEAR(back.g, v.g, 1e-15);
    EXPECT_NEAR(back.b, v.b, 1e-15);
  }
  const Xyz red = LinearToXyz({1, 0, 0});  // the first column of the published matrix
  EXPECT_DOUBLE_EQ(red.x, 0.412453);
  EXPECT_DOUBLE_EQ(red.y, 0.212671);
  EXPECT_DOUBLE_EQ(red.z, 0.019334);
}

TEST(Xyy, BlackTakesTheWhitePointChromaticity) {
  const Xyy black = XyzToXyy({0, 0, 0});
  const double sum = 0.95047 + 1.0 + 1.08883;
  EXPECT_DOUBLE_EQ(black.x, 0.95047 / sum);
  EXPECT_DOUBLE_EQ(black.y, 1.0 / sum);
  EXPECT_EQ(black.Y, 0.0);
  const Xyy white = XyzToXyy(kD65White);
  EXPECT_NEAR(white.x, 0.312727, 1e-6);  // D65 chromaticity with these constants
  EXPECT_NEAR(white.y, 0.329023, 1e-6);
  EXPECT_EQ(white.Y, 1.0);
}

TEST(Lch, HueIsInDegreesWithinZeroTo360) {
  EXPECT_NEAR(LabToLch({50, 0, -10}).h, 270.0, 1e-12);
  EXPECT_NEAR(LabToLch({50, -3, 0}).h, 180.0, 1e-12);
  EXPECT_NEAR(LabToLch({50, 3, 4}).C, 5.0, 1e-12);
  const double h = LabToLch({50, 1, -1e-300}).h;  // -5.7e-299 + 360 rounds to 360: wrapped to 0
  EXPECT_GE(h, 0.0);
  EXPECT_LT(h, 360.0);
  EXPECT_EQ(LabToLch({50, 0, 0}).h, 0.0);
  EXPECT_EQ(LabToLch({50, -0.0, -0.0}).h, 0.0);  // atan2(-0, -0) would be -180
}

TEST(Hsl, MatchesCssExamples) {
  struct Case {
    Rgb rgb;
    Hsl hsl;
  };
  const Case cases[] = {
      {{1, 0, 0}, {0, 1, 0.5}},       {{0, 1, 0}, {120, 1, 0.5}},
      {{0, 0, 1}, {240, 1, 0.5}},     {{0.25, 0.5, 0.75}, {210, 0.5, 0.5}},
      {{0.5, 0.5, 0.5}, {0, 0, 0.5}}, {{1, 0, 0.5}, {330, 1, 0.5}},
  };
  for (const Case& c : cases) {
    const Hsl got = RgbToHsl(c.rgb);
    EXPECT_NEAR(got.h, c.hsl.h, 1e-12);
    EXPECT_NEAR(got.s, c.hsl.s, 1e-12);
    EXPECT_NEAR(got.l, c.hsl.l, 1e-12);
    const Rgb back = HslToRgb(c.hsl);
    EXPECT_NEAR(back.r, c.rgb.r, 1e-12);
    EXPECT_NEAR(back.g, c.rgb.g, 1e-12);
    EXPECT_NEAR(back.b, c.rgb.b, 1e-12);
  }
  EXPECT_NEAR(HslToRgb({-240, 1, 0.5}).g, 1.0, 1e-12);  // hue wraps: -240 == 120
}

void ExpectHslEq(const Hsl& got, const Hsl& want) {
  EXPECT_EQ(got.h, want.h);
  EXPECT_EQ(got.s, want.s);
  EXPECT_EQ(got.l, want.l);
}

TEST(Hsl, OutOfGamutColorsGetTheHslOfTheirClippedColor) {
  // The README's Sharma pair 1 color: extended sRGB (-0.4752, 0.4978, 1.0071), which CSS's
  // out-of-gamut rgbToHsl turned into s = 237 %, l = -74 %. Clipped: (0, 0.4978, 1).
  const Rgb readme = LabToSrgb({50, 2.6772, -79.7751});
  const Hsl hsl = RgbToHsl(readme);
  ExpectHslEq(hsl, RgbToHsl(ClipToGamut(readme)));
  EXPECT_NEAR(hsl.h, 210.1, 0.1);
  EXPECT_EQ(hsl.s, 1.0);
  EXPECT_EQ(hsl.l, 0.5);
  ExpectHslEq(RgbToHsl({0.72, -0.90, 1.30}), RgbToHsl({0.72, 0.0, 1.0}));
  // lab(100, 0, 0) is in gamut but 3.6e-5 above the cube: l is 1 at most, not 100.0016 %.
  const Hsl white = RgbToHsl(LabToSrgb({100, 0, 0}));
  EXPECT_LE(white.l, 1.0);
  EXPECT_LE(white.s, 1.0);
  ExpectHslEq(RgbToHsl({1.2, 1.3, 1.1}), {0, 0, 1});  // clips to white
  ExpectHslEq(RgbToHsl({-0.2, -0.3, -0.1}), {0, 0, 0});
}

TEST(ToSrgb8, RoundsHalfAwayAndClamps) {
  EXPECT_EQ(ToSrgb8({0.5 / 255.0, 1.49 / 255.0, 254.5 / 255.0}), (Srgb8{1, 1, 255}));
  EXPECT_EQ(ToSrgb8({-0.2, 1.3, std::nan("")}), (Srgb8{0, 255, 0}));
  EXPECT_EQ(ToHex({255, 136, 0}), "#FF8800");
  EXPECT_EQ(ToHex({0, 10, 171}), "#000AAB");
}

TEST(RoundTrip, EightBitColorsSurviveLabXyzXyyAndHslExactly) {
  for (const Srgb8& c : CubeEvery5()) {
    const Rgb rgb = FromSrgb8(c);
    ASSERT_EQ(ToSrgb8(LabToSrgb(Srgb8ToLab(c))), c) << ToHex(c);
    ASSERT_EQ(ToSrgb8(LabToSrgb(LchToLab(LabToLch(Srgb8ToLab(c))))), c) << ToHex(c);
    ASSERT_EQ(ToSrgb8(FromLinear(XyzToLinear(XyyToXyz(XyzToXyy(LinearToXyz(ToLinear(rgb))))))), c) << ToHex(c);
    ASSERT_EQ(ToSrgb8(HslToRgb(RgbToHsl(rgb))), c) << ToHex(c);
  }
}

TEST(RoundTrip, FloatValuesSurviveWithin1e9) {
  double worst_lab = 0, worst_xyz = 0, worst_hsl = 0;
  auto err = [](Rgb p, Rgb q) { return std::max({std::fabs(p.r - q.r), std::fabs(p.g - q.g), std::fabs(p.b - q.b)}); };
  for (const Srgb8& c : CubeEvery5()) {
    const Rgb rgb = FromSrgb8(c);
    worst_lab = std::max(worst_lab, err(LabToSrgb(SrgbToLab(rgb)), rgb));
    worst_xyz = std::max(worst_xyz, err(FromLinear(XyzToLinear(LinearToXyz(ToLinear(rgb)))), rgb));
    worst_hsl = std::max(worst_hsl, err(HslToRgb(RgbToHsl(rgb)), rgb));
  }
  EXPECT_LT(worst_lab, 1e-9);
  EXPECT_LT(worst_xyz, 1e-9);
  EXPECT_LT(worst_hsl, 1e-9);
}

TEST(RoundTrip, OutOfGamutLabSurvivesUnclamped) {
  for (const Lab& lab : {Lab{50, 200, 0}, Lab{90, -120, 100}, Lab{5, 0, -80}, Lab{100, 0, 0}}) {
    const Rgb rgb = LabToSrgb(lab);
    ExpectLabNear(SrgbToLab(rgb), lab, 1e-9);
  }
}

bool AllFinite(std::initializer_list<double> values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); });
}

// Every conversion and difference of every Lab color on a grid (L* 0..100 by 2.5, a*, b*
// -200..200 by 5, plus the ±kMaxLabAb corners) is finite, and the cube-only values (HSL, 8-bit,
// RGB distances) stay on the cube.
TEST(LabGrid, EveryConversionAndDifferenceIsFinite) {
  std::vector<Lab> grid;
  for (double L = 0; L <= 100; L += 2.5)
    for (double a = -200; a <= 200; a += 5)
      for (double b = -200; b <= 200; b += 5) grid.push_back({L, a, b});
  for (double L : {0.0, 50.0, 100.0})
    for (double a : {-kMaxLabAb, kMaxLabAb})
      for (double b : {-kMaxLabAb, kMaxLabAb}) grid.push_back({L, a, b});
  const Lab in_gamut = Srgb8ToLab({217, 180, 81});
  const Rgb255 in_gamut255 = ToRgb255(Srgb8{217, 180, 81});
  size_t out_of_gamut = 0;
  Lab previous = grid.front();
  for (const Lab& lab : grid) {
    const Xyz xyz = LabToXyz(lab);
    const LinearRgb linear = XyzToLinear(xyz);
    const Rgb rgb = FromLinear(linear);
    const Rgb clipped = ClipToGamut(rgb);
    const Xyy xyy = XyzToXyy(xyz);
    const Lch lch = LabToLch(lab);
    const Hsl hsl = RgbToHsl(rgb);
    const Lab back = SrgbToLab(rgb);
    const Rgb255 rgb255 = ToRgb255(rgb);
    out_of_gamut += !InGamut(rgb);
    ASSERT_TRUE(AllFinite({xyz.x, xyz.y, xyz.z, linear.r, linear.g, linear.b, rgb.r, rgb.g, rgb.b, xyy.x, xyy.y, xyy.Y,
                           lch.C, lch.h, back.L, back.a, back.b}))
        << lab.L << " " << lab.a << " " << lab.b;
    ASSERT_TRUE(hsl.h >= 0 && hsl.h < 360 && hsl.s >= 0 && hsl.s <= 1 && hsl.l >= 0 && hsl.l <= 1)
        << lab.L << " " << lab.a << " " << lab.b << ": hsl " << hsl.h << " " << hsl.s << " " << hsl.l;
    ASSERT_TRUE(clipped.r >= 0 && clipped.r <= 1 && clipped.g >= 0 && clipped.g <= 1 && clipped.b >= 0 &&
                clipped.b <= 1);
    ASSERT_TRUE(AllFinite({RgbEuclidean(rgb255, in_gamut255), RgbRedmean(rgb255, in_gamut255),
                           RgbRedmean(rgb255, ToRgb255(LabToSrgb(previous))), DeltaE76(lab, previous),
                           DeltaE2000(lab, previous), DeltaE2000(lab, in_gamut), HueDifference(lab, in_gamut),
                           ChromaDistance(lab, in_gamut), HyAB(lab, in_gamut)}))
        << lab.L << " " << lab.a << " " << lab.b;
    // Extended sRGB keeps out-of-gamut colors: Lab -> sRGB -> Lab returns the grid point.
    ASSERT_NEAR(back.L, lab.L, 1e-8);
    ASSERT_NEAR(back.a, lab.a, 1e-8);
    ASSERT_NEAR(back.b, lab.b, 1e-8);
    previous = lab;
  }
  EXPECT_GT(out_of_gamut, grid.size() / 2);  // the grid is mostly outside sRGB
}

TEST(Batch, Srgb8ToLabEqualsScalarWithin1e12) {
  std::vector<uint8_t> pixels;
  for (const Srgb8& c : CubeEvery5()) pixels.insert(pixels.end(), {c.r, c.g, c.b});
  std::mt19937 rng(7);
  for (int i = 0; i < 300000; ++i) pixels.push_back(uint8_t(rng()));
  pixels.resize(pixels.size() / 3 * 3);
  const size_t n = pixels.size() / 3;
  std::vector<double> lab(3 * n);
  Srgb8ToLabBatch(pixels.data(), n, lab.data());
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const Lab s = Srgb8ToLab({pixels[3 * i], pixels[3 * i + 1], pixels[3 * i + 2]});
    worst = std::max(
        {worst, std::fabs(s.L - lab[3 * i]), std::fabs(s.a - lab[3 * i + 1]), std::fabs(s.b - lab[3 * i + 2])});
  }
  EXPECT_LT(worst, 1e-12);
}

TEST(Batch, SrgbToLabEqualsScalarIncludingOutOfRangeInput) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> channel(-0.2, 2.0);  // t > 2 exercises the fallback
  std::vector<double> rgb(3 * 100000);
  for (double& v : rgb) v = channel(rng);
  std::vector<double> lab(rgb.size());
  SrgbToLabBatch(rgb.data(), rgb.size() / 3, lab.data());
  double worst = 0;
  for (size_t i = 0; i < rgb.size() / 3; ++i) {
    const Lab s = SrgbToLab({rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]});
    worst = std::max(
        {worst, std::fabs(s.L - lab[3 * i]), std::fabs(s.a - lab[3 * i + 1]), std::fabs(s.b - lab[3 * i + 2])});
  }
  EXPECT_LT(worst, 1e-12);
}

}  // namespace
}  // namespace visalign::color
