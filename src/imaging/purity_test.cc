#include "visalign/imaging/purity.h"

#include <gtest/gtest.h>

#include "imaging/test_planes.h"

#include <cmath>
#include <complex>
#include <functional>
#include <numbers>
#include <random>

namespace visalign::imaging {
namespace {

using testing::Plane;

Image Rgb(int w, int h, const std::function<std::array<uint8_t, 3>(int, int)>& f) {
  Image img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      auto c = f(x, y);
      std::copy(c.begin(), c.end(), img.pixel(x, y));
    }
  return img;
}

// The definition, evaluated literally: every DFT bin by direct summation, frequencies and the
// mask exactly as numpy computes them (fftfreq = k * (1.0 / n), r = sqrt(fx**2 + fy**2)).
double BruteForceHf(const GrayImage& g) {
  const int w = g.width, h = g.height;
  auto freq = [](int k, int n) { return (k <= (n - 1) / 2 ? k : k - n) * (1.0 / n); };
  double high = 0, total = 0;
  for (int ky = 0; ky < h; ++ky)
    for (int kx = 0; kx < w; ++kx) {
      std::complex<double> sum = 0;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          sum += (g.pixels[static_cast<size_t>(y) * w + x] / 255.0) *
                 std::polar(1.0, -2 * std::numbers::pi * (double(kx) * x / w + double(ky) * y / h));
      const double p = std::norm(sum);
      total += p;
      const double fx = freq(kx, w), fy = freq(ky, h);
      if (std::sqrt(fx * fx + fy * fy) > 0.25) high += p;
    }
  return total == 0 ? 0 : high / total;
}

TEST(GrayLevel, IsOpenCvFixedPointFormula) {
  EXPECT_EQ(GrayLevel(255, 255, 255), 255);
  EXPECT_EQ(GrayLevel(255, 0, 0), 76);   // (9798*255 + 16384) >> 15 = 76.75 -> 76
  EXPECT_EQ(GrayLevel(0, 255, 0), 150);  // 19235*255 = 4904925; +16384 >> 15 = 150
  EXPECT_EQ(GrayLevel(0, 0, 255), 29);   // 3735*255 = 952425;  +16384 >> 15 = 29
}

TEST(AnalyzeRegion, SolidRegionHasExactMeanAndZeroPurity) {
  Image img = Rgb(37, 23, [](int, int) { return std::array<uint8_t, 3>{217, 180, 81}; });
  auto s = AnalyzeRegion(img, {0, 0, 37, 23});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->mean, (std::array<double, 3>{217, 180, 81}));
  EXPECT_EQ(s->sd, 0.0);
  EXPECT_EQ(s->ced, 0.0);
  EXPECT_EQ(s->hf, 0.0);
}

TEST(AnalyzeRegion, GradientStandardDeviationIsHandComputed) {
  // R = x (0..255), G = 128, B = 255 - x: each ramp has population variance (256^2 - 1)/12.
  Image img = Rgb(256, 3, [](int x, int) { return std::array<uint8_t, 3>{uint8_t(x), 128, uint8_t(255 - x)}; });
  auto s = AnalyzeRegion(img, {0, 0, 256, 3});
  ASSERT_TRUE(s.ok());
  const double ramp_sd = std::sqrt((256.0 * 256.0 - 1.0) / 12.0) / 255.0;  // 0.289805...
  EXPECT_NEAR(s->sd, (ramp_sd + 0.0 + ramp_sd) / 3.0, 1e-15);
  EXPECT_DOUBLE_EQ(s->mean[0], 127.5);
  EXPECT_DOUBLE_EQ(s->mean[1], 128.0);
  EXPECT_DOUBLE_EQ(s->mean[2], 127.5);
}

TEST(AnalyzeRegion, WideRowsSumExactly) {
  // 20,000 pixels in one row (beyond the 16,384-pixel partial-sum chunk): R alternates 0/255, so
  // its mean is 127.5 and its population sd 127.5/255 = 0.5; G and B are flat.
  Image img = Rgb(20000, 1, [](int x, int) { return std::array<uint8_t, 3>{uint8_t(x % 2 ? 255 : 0), 7, 7}; });
  auto s = AnalyzeRegion(img, {0, 0, 20000, 1});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->mean[0], 127.5);
  EXPECT_EQ(s->sd, 0.5 / 3.0);
}

TEST(AnalyzeRegion, MeasuresOnlyTheCroppedRegion) {
  // Left 5 columns black, right 6 white: each side on its own is flat.
  Image img = Rgb(11, 4, [](int x, int) {
    return x < 5 ? std::array<uint8_t, 3>{0, 0, 0} : std::array<uint8_t, 3>{255, 255, 255};
  });
  auto right = AnalyzeRegion(img, {5, 0, 6, 4});
  ASSERT_TRUE(right.ok());
  EXPECT_EQ(right->mean[0], 255.0);
  EXPECT_EQ(right->sd + right->ced + right->hf, 0.0);
  auto whole = AnalyzeRegion(img, {0, 0, 11, 4});
  ASSERT_TRUE(whole.ok());
  EXPECT_GT(whole->ced, 0.0);
}

TEST(AnalyzeRegion, RejectsEmptyOrOutsideRegions) {
  Image img(4, 4);
  EXPECT_EQ(AnalyzeRegion(img, {0, 0, 0, 4}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(AnalyzeRegion(img, {2, 0, 3, 4}).status().code(), StatusCode::kInvalidArgument);
}

TEST(CannyEdgeDensity, VerticalStepsMarkOnePixelPerRowOnTheirLeftSide) {
  // Stripes 4 wide: 0,0,0,0,255,255,255,255,0,... in a 16x5 plane. Each of the 3 boundaries has
  // |dx| = 4*255 on both adjacent columns; non-maximum suppression keeps the left one
  // (m > left && m >= right), so 3 edge pixels per row: 3/16.
  GrayImage g = Plane(16, 5, [](int x, int) { return uint8_t((x / 4) % 2 ? 255 : 0); });
  EXPECT_DOUBLE_EQ(CannyEdgeDensity(g), 3.0 / 16.0);
}

TEST(CannyEdgeDensity, CheckerboardHasOneEdgePerBoundaryRowExceptAtJunctions) {
  // N x N checkerboard of S x S cells: N/S - 1 vertical and as many horizontal boundary lines.
  // Each line has one edge pixel per pixel of its length, except the two pixels nearest each of
  // its N/S - 1 junctions, where the gradient is diagonal and both diagonal neighbours have the
  // same magnitude (suppressed). Edges = 2 * lines * (N - 2 * lines).
  for (int cell : {4, 5, 8}) {
    const int n = 4 * cell, lines = n / cell - 1;
    GrayImage g = Plane(n, n, [cell](int x, int y) { return uint8_t((x / cell + y / cell) % 2 ? 255 : 0); });
    const double expected = 2.0 * lines * (n - 2 * lines) / (double(n) * n);
    EXPECT_DOUBLE_EQ(CannyEdgeDensity(g), expected) << "cell " << cell;  // 60/256 for cell 4
  }
}

TEST(CannyEdgeDensity, LowContrastCannotReachTheHighThreshold) {
  // Range 24: |dx| + |dy| <= 8 * 24 = 192 < 200, so no edge can start.
  GrayImage g = Plane(9, 9, [](int x, int y) { return uint8_t((x + y) % 2 ? 124 : 100); });
  EXPECT_EQ(CannyEdgeDensity(g), 0.0);
  // Range 26 on a step: |dx| = 4 * 26 = 104 <= 200, still no edge, consistent with the bound.
  GrayImage step = Plane(8, 4, [](int x, int) { return uint8_t(x < 4 ? 100 : 126); });
  EXPECT_EQ(CannyEdgeDensity(step), 0.0);
}

TEST(HighFrequencyRatio, PeriodTwoStripesPutHalfThePowerAtNyquist) {
  // g = 0,1,0,1,...: DC and fx = -0.5 carry (N/2)^2 each; |fx| = 0.5 > 0.25.
  EXPECT_DOUBLE_EQ(HighFrequencyRatio(Plane(16, 6, [](int x, int) { return uint8_t(x % 2 ? 255 : 0); })), 0.5);
  EXPECT_DOUBLE_EQ(HighFrequencyRatio(Plane(6, 16, [](int, int y) { return uint8_t(y % 2 ? 255 : 0); })), 0.5);
  // 1-pixel checkerboard: all non-DC power at (0.5, 0.5).
  EXPECT_DOUBLE_EQ(HighFrequencyRatio(Plane(8, 8, [](int x, int y) { return uint8_t((x + y) % 2 ? 255 : 0); })), 0.5);
}

TEST(HighFrequencyRatio, PeriodFourStripesSitExactlyOnTheCutAndAreExcluded) {
  // 0,0,1,1 repeated: power at DC and fx = +-0.25 only; r = 0.25 is not > 0.25.
  EXPECT_EQ(HighFrequencyRatio(Plane(16, 4, [](int x, int) { return uint8_t((x / 2) % 2 ? 255 : 0); })), 0.0);
}

TEST(HighFrequencyRatio, PeriodThreeStripesAreAboveTheCut) {
  // 0,0,1 repeated: |X0|^2 = |X(1/3)|^2 = |X(-1/3)|^2 per period, so hf = 2/3.
  EXPECT_NEAR(HighFrequencyRatio(Plane(12, 5, [](int x, int) { return uint8_t(x % 3 == 2 ? 255 : 0); })), 2.0 / 3.0,
              1e-14);
}

TEST(HighFrequencyRatio, ConstantAndBlackPlanesAreZero) {
  EXPECT_EQ(HighFrequencyRatio(Plane(7, 5, [](int, int) { return uint8_t(0); })), 0.0);
  EXPECT_EQ(HighFrequencyRatio(Plane(7, 5, [](int, int) { return uint8_t(200); })), 0.0);
}

TEST(HighFrequencyRatio, MatchesTheLiteralDefinitionOnOddAndEvenSizes) {
  std::mt19937 rng(7);
  // Power-of-two sizes from 8 up take the radix-2 path, the others OpenCV's DFT.
  for (auto [w, h] : {std::pair{7, 10},
                      {10, 7},
                      {9, 5},
                      {12, 12},
                      {20, 20},
                      {1, 9},
                      {9, 1},
                      {2, 3},
                      {16, 13},
                      {8, 8},
                      {16, 8},
                      {8, 32},
                      {32, 16},
                      {4, 8}}) {
    GrayImage g = Plane(w, h, [&](int, int) { return uint8_t(rng() % 256); });
    EXPECT_NEAR(HighFrequencyRatio(g), BruteForceHf(g), 1e-12) << w << "x" << h;
  }
}

}  // namespace
}  // namespace visalign::imaging
