#include <gtest/gtest.h>

#include <cmath>

#include "visalign/benchmarks/violin/evaluate.h"

namespace visalign::violin {
namespace {

using color::Srgb8;

size_t I(Metric m) { return static_cast<size_t>(m); }

imaging::Image Solid(int w, int h, Srgb8 c) {
  imaging::Image img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = img.pixel(x, y);
      p[0] = c.r, p[1] = c.g, p[2] = c.b;
    }
  return img;
}

void Fill(imaging::Image& img, Rect r, Srgb8 c) {
  for (int y = r.y; y < r.y + r.h; ++y)
    for (int x = r.x; x < r.x + r.w; ++x) {
      uint8_t* p = img.pixel(x, y);
      p[0] = c.r, p[1] = c.g, p[2] = c.b;
    }
}

// The ground truth of a layout: every block filled with its target (BlockRect geometry).
imaging::Image GroundTruth(int w, int h, Layout layout, const std::vector<Srgb8>& targets) {
  imaging::Image img(w, h);
  for (int b = 0; b < BlockCount(layout); ++b) Fill(img, BlockRect(layout, b, w, h), targets[static_cast<size_t>(b)]);
  return img;
}

void ExpectAllZero(const Metrics& m) {
  for (Metric metric : kAllMetrics) {
    EXPECT_EQ(m.raw[I(metric)], 0.0) << RawName(metric);
    EXPECT_EQ(m.norm[I(metric)], 0.0) << NormName(metric);
  }
  EXPECT_EQ(m.pre_mean, 0.0);
  EXPECT_EQ(m.pur_mean, 0.0);
}

TEST(Normalise, DividesByEachMetricsMaximumAndClamps) {
  EXPECT_NEAR(Normalise(Metric::kRgbEd, 255.0 * std::sqrt(3.0)), 1.0, 1e-15);
  EXPECT_NEAR(Normalise(Metric::kRgbRm, 255.0 * std::sqrt(8.0 + 255.0 / 256.0)), 1.0, 1e-15);
  EXPECT_DOUBLE_EQ(Normalise(Metric::kDe00, 25.0), 0.25);
  EXPECT_DOUBLE_EQ(Normalise(Metric::kHue, 90.0), 0.5);
  EXPECT_DOUBLE_EQ(Normalise(Metric::kChroma, 65.0), 0.25);
  EXPECT_DOUBLE_EQ(Normalise(Metric::kHyab, 90.0), 0.25);
  EXPECT_DOUBLE_EQ(Normalise(Metric::kSd, 0.1), 0.2);  // sd_n = 2 sd
  EXPECT_DOUBLE_EQ(Normalise(Metric::kCed, 0.3), 0.3);
  EXPECT_DOUBLE_EQ(Normalise(Metric::kHf, 0.3), 0.3);
  // Clamping: chroma and hyab of out-of-range pairs can exceed their nominal maxima.
  EXPECT_EQ(Normalise(Metric::kChroma, 300.0), 1.0);
  EXPECT_EQ(Normalise(Metric::kSd, 0.5), 1.0);
  EXPECT_EQ(Normalise(Metric::kDe00, 120.0), 1.0);
  EXPECT_EQ(NormName(Metric::kSd), "sd_n");
  EXPECT_EQ(RawName(Metric::kSd), "sd");
}

TEST(ScoreImage, BlackAgainstWhiteIsTheRgbMaximum) {
  auto m = ScoreImage(Solid(8, 8, {0, 0, 0}), {Layout::kSingle, {{255, 255, 255}}, std::nullopt});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_NEAR(m->raw[I(Metric::kRgbEd)], 255.0 * std::sqrt(3.0), 1e-12);
  // redmean with r̄ = 127.5: (2 + 127.5/256 + 4 + 2 + 127.5/256) * 255^2 = (8 + 255/256) * 255^2.
  EXPECT_NEAR(m->norm[I(Metric::kRgbRm)], 1.0, 1e-15);
  EXPECT_NEAR(m->raw[I(Metric::kDe00)], 100.0, 1e-6);  // L* 0 vs 100
  EXPECT_NEAR(m->norm[I(Metric::kRgbEd)], 1.0, 1e-15);
}

TEST(ScoreImage, HandComputedSmallRedError) {
  // Mean (200, 100, 50) vs target (210, 100, 50): ΔR = 10, r̄ = 205.
  auto m = ScoreImage(Solid(5, 3, {200, 100, 50}), {Layout::kSingle, {{210, 100, 50}}, std::nullopt});
  ASSERT_TRUE(m.ok());
  EXPECT_DOUBLE_EQ(m->raw[I(Metric::kRgbEd)], 10.0);
  EXPECT_DOUBLE_EQ(m->raw[I(Metric::kRgbRm)], std::sqrt((2.0 + 205.0 / 256.0) * 100.0));
  EXPECT_DOUBLE_EQ(m->norm[I(Metric::kRgbEd)], 10.0 / (255.0 * std::sqrt(3.0)));
  // hyab = |ΔL| + chroma distance, so hyab >= chroma; hue in [0, 180].
  EXPECT_GE(m->raw[I(Metric::kHyab)], m->raw[I(Metric::kChroma)]);
  const color::Lab a = color::Srgb8ToLab({200, 100, 50}), b = color::Srgb8ToLab({210, 100, 50});
  EXPECT_DOUBLE_EQ(m->raw[I(Metric::kDe00)], color::DeltaE2000(b, a));
  EXPECT_DOUBLE_EQ(m->raw[I(Metric::kHue)], color::HueDifference(a, b));
  EXPECT_DOUBLE_EQ(m->raw[I(Metric::kHyab)], std::abs(a.L - b.L) + std::hypot(a.a - b.a, a.b - b.b));
  double mean6 = 0;
  for (size_t i = 0; i < kPrecisionCount; ++i) mean6 += m->norm[i] / 6.0;
  EXPECT_NEAR(m->pre_mean, mean6, 1e-15);
  EXPECT_EQ(m->pur_mean, 0.0);
}

TEST(ScoreImage, WeightsSelectMetrics) {
  Weights de00_only;
  de00_only.precision = {0, 0, 1, 0, 0, 0};
  auto m = ScoreImage(Solid(4, 4, {10, 200, 30}), {Layout::kSingle, {{40, 180, 90}}, std::nullopt}, de00_only);
  ASSERT_TRUE(m.ok());
  EXPECT_DOUBLE_EQ(m->pre_mean, m->norm[I(Metric::kDe00)]);
  Weights zero;
  zero.precision = {0, 0, 0, 0, 0, 0};
  EXPECT_FALSE(ScoreImage(Solid(4, 4, {0, 0, 0}), {Layout::kSingle, {{0, 0, 0}}, std::nullopt}, zero).ok());
}

TEST(ParseWeights, AcceptsSixNonNegativeNumbers) {
  auto w = ParseWeights("1,2,0,0.5,1,1");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->precision, (std::array<double, 6>{1, 2, 0, 0.5, 1, 1}));
  EXPECT_FALSE(ParseWeights("1,1,1,1,1").ok());
  EXPECT_FALSE(ParseWeights("1,1,1,1,1,1,1").ok());
  EXPECT_FALSE(ParseWeights("1,1,1,-1,1,1").ok());
  EXPECT_FALSE(ParseWeights("0,0,0,0,0,0").ok());
  EXPECT_FALSE(ParseWeights("1,1,x,1,1,1").ok());
  EXPECT_EQ(w->purity, (std::array<double, 3>{1, 1, 1}));  // six weights leave pur_mean equal-weighted
}

TEST(ParseWeights, NineNumbersAlsoWeightThePurityMetrics) {
  auto w = ParseWeights("1,1,1,1,1,1,2,0,1");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->purity, (std::array<double, 3>{2, 0, 1}));
  EXPECT_FALSE(ParseWeights("1,1,1,1,1,1,0,0,0").ok());  // purity all zero
  EXPECT_FALSE(ParseWeights("1,1,1,1,1,1,1,1").ok());    // eight
  EXPECT_FALSE(ParseWeights("1,1,1,1,1,1,1,1,1,1").ok());
  // pur_mean = (2 sd_n + hf) / 3 by hand.
  Metrics m;
  m.norm = {0, 0, 0, 0, 0, 0, 0.3, 0.9, 0.6};
  WeightMeans(m, *w);
  EXPECT_DOUBLE_EQ(m.pur_mean, (2 * 0.3 + 0.6) / 3);
  EXPECT_EQ(m.pre_mean, 0.0);
}

TEST(ScoreImage, GroundTruthOfEveryLayoutIsExactlyZeroAtOddSizes) {
  const std::vector<Srgb8> four = {{0x72, 0x67, 0x2C}, {0xD9, 0xB4, 0x51}, {0xB9, 0x28, 0x42}, {3, 250, 128}};
  for (Layout layout : {Layout::kSingle, Layout::kH2, Layout::kV2, Layout::kQ4}) {
    const std::vector<Srgb8> targets(four.begin(), four.begin() + BlockCount(layout));
    for (auto [w, h] : {std::pair{256, 256}, {5, 7}, {7, 5}, {2, 3}, {33, 17}}) {
      auto m = ScoreImage(GroundTruth(w, h, layout, targets), {layout, targets, std::nullopt});
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      SCOPED_TRACE(std::string(LayoutName(layout)) + " " + std::to_string(w) + "x" + std::to_string(h));
      ExpectAllZero(*m);
    }
  }
}

TEST(ScoreImage, H2SplitsAtFloorHalfOnOddHeights) {
  // 6x7 image, rows 0-3 black, rows 4-6 gray 200. h2 splits at floor(7/2) = 3: the top block
  // (rows 0-2) is pure black; the bottom block (rows 3-6) has one black row and three gray rows,
  // mean 150 per channel, population sd 200 * sqrt(1/4 * 3/4) per channel.
  imaging::Image img = Solid(6, 7, {200, 200, 200});
  Fill(img, {0, 0, 6, 4}, {0, 0, 0});
  auto m = ScoreImage(img, {Layout::kH2, {{0, 0, 0}, {200, 200, 200}}, std::nullopt});
  ASSERT_TRUE(m.ok());
  EXPECT_NEAR(m->raw[I(Metric::kRgbEd)], (0.0 + 50.0 * std::sqrt(3.0)) / 2.0, 1e-12);
  EXPECT_NEAR(m->norm[I(Metric::kRgbEd)], (50.0 / 255.0) / 2.0, 1e-15);
  const double bottom_sd = 200.0 * std::sqrt(3.0 / 16.0) / 255.0;
  EXPECT_NEAR(m->raw[I(Metric::kSd)], bottom_sd / 2.0, 1e-15);
  EXPECT_NEAR(m->norm[I(Metric::kSd)], std::min(1.0, 2.0 * bottom_sd) / 2.0, 1e-15);
}

TEST(ScoreImage, V2AndQ4SplitAtFloorHalfOnOddWidths) {
  // 5x5: v2 puts columns 0-1 left, 2-4 right; q4 blocks are 2x2, 3x2, 2x3, 3x3.
  const std::vector<Srgb8> lr = {{255, 0, 0}, {0, 0, 255}};
  imaging::Image v2 = GroundTruth(5, 5, Layout::kV2, lr);
  EXPECT_EQ(v2.pixel(1, 0)[0], 255);
  EXPECT_EQ(v2.pixel(2, 0)[2], 255);
  auto ok = ScoreImage(v2, {Layout::kV2, lr, std::nullopt});
  ASSERT_TRUE(ok.ok());
  ExpectAllZero(*ok);
  // Splitting at ceil instead (column 2 red) would leave a third of the right block red.
  Fill(v2, {2, 0, 1, 5}, lr[0]);
  auto off = ScoreImage(v2, {Layout::kV2, lr, std::nullopt});
  ASSERT_TRUE(off.ok());
  EXPECT_NEAR(off->raw[I(Metric::kRgbEd)], std::hypot(85.0, 85.0) / 2.0, 1e-12);  // right mean (85, 0, 170)
}

TEST(ScoreImage, ImagesTooSmallForTheLayoutAreErrors) {
  auto m =
      ScoreImage(Solid(1, 1, {0, 0, 0}), {Layout::kQ4, {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, std::nullopt});
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ScoreImage(Solid(4, 4, {0, 0, 0}), {Layout::kH2, {{0, 0, 0}}, std::nullopt}).ok());
}

TEST(FuzzyTarget, InsideTheRangeTheTargetIsTheColorItself) {
  // hsl(200, 50%, 40%) lies on the segment between hsl(180, 50%, 40%) and hsl(220, 50%, 40%).
  const color::Rgb mid = color::HslToRgb({200, 0.5, 0.4});
  const color::Rgb255 mean = color::ToRgb255(mid);
  const color::Rgb255 t = FuzzyTarget(mean, color::ToSrgb8(color::HslToRgb({180, 0.5, 0.4})),
                                      color::ToSrgb8(color::HslToRgb({220, 0.5, 0.4})));
  // The range ends are rounded to 8 bits, so the projection moves by at most that rounding.
  EXPECT_NEAR(t.r, mean.r, 0.6);
  EXPECT_NEAR(t.g, mean.g, 0.6);
  EXPECT_NEAR(t.b, mean.b, 0.6);
}

TEST(FuzzyTarget, BeyondAnEndClampsToThatEnd) {
  // Range dark red (100,0,0) .. red (200,0,0) in HSL: h = 0, s = 1, l from 0.196 to 0.392.
  const color::Rgb255 t = FuzzyTarget({250, 0, 0}, {100, 0, 0}, {200, 0, 0});
  EXPECT_NEAR(t.r, 200.0, 1e-9);
  EXPECT_NEAR(t.g, 0.0, 1e-9);
  EXPECT_NEAR(t.b, 0.0, 1e-9);
}

TEST(FuzzyTarget, RangeThroughHueZeroIsInterpolatedLinearlyNotAroundTheCircle) {
  // low = hsl(340, 100%, 50%) = (255, 0, 85), high = hsl(20, 100%, 50%) = (255, 85, 0).
  // In (h/360, s, l) the segment runs from h = 0.944 down to 0.056 through 0.5 (cyan), so:
  const Srgb8 low{255, 0, 85}, high{255, 85, 0};
  // pure red (h = 0): t = (0 - 340/360) * (-320/360) / (320/360)^2 = 340/320 -> clamped to 1 -> high;
  const color::Rgb255 red = FuzzyTarget({255, 0, 0}, low, high);
  EXPECT_NEAR(red.r, 255.0, 1e-9);
  EXPECT_NEAR(red.g, 85.0, 1e-9);
  EXPECT_NEAR(red.b, 0.0, 1e-9);
  // cyan (h = 180): t = 0.5 exactly, p = (0.5, 1, 0.5) = cyan itself (the documented limitation).
  const color::Rgb255 cyan = FuzzyTarget({0, 255, 255}, low, high);
  EXPECT_NEAR(cyan.r, 0.0, 1e-9);
  EXPECT_NEAR(cyan.g, 255.0, 1e-9);
  EXPECT_NEAR(cyan.b, 255.0, 1e-9);
  auto m = ScoreImage(Solid(4, 4, {0, 255, 255}), {Layout::kSingle, {}, std::make_pair(low, high)});
  ASSERT_TRUE(m.ok());
  EXPECT_NEAR(m->raw[I(Metric::kRgbEd)], 0.0, 1e-9);
}

TEST(FuzzyTarget, DegenerateRangeIsItsLowEnd) {
  const color::Rgb255 t = FuzzyTarget({0, 0, 0}, {10, 120, 200}, {10, 120, 200});
  EXPECT_NEAR(t.r, 10.0, 1e-9);
  EXPECT_NEAR(t.g, 120.0, 1e-9);
  EXPECT_NEAR(t.b, 200.0, 1e-9);
}

TEST(TargetSpec, ValidatesCountsAndFuzzyLayout) {
  EXPECT_FALSE((TargetSpec{Layout::kQ4, {{0, 0, 0}}, std::nullopt}.Validate().ok()));
  EXPECT_FALSE((TargetSpec{Layout::kH2, {}, std::make_pair(Srgb8{}, Srgb8{})}.Validate().ok()));
  EXPECT_TRUE((TargetSpec{Layout::kV2, {{0, 0, 0}, {1, 1, 1}}, std::nullopt}.Validate().ok()));
}

TEST(MetricsJson, HasRawNormAndMeans) {
  auto m = ScoreImage(Solid(4, 4, {1, 2, 3}), {Layout::kSingle, {{1, 2, 3}}, std::nullopt});
  ASSERT_TRUE(m.ok());
  Json j = MetricsJson(*m);
  for (const char* key : {"rgb_ed", "rgb_rm", "de00", "hue", "chroma", "hyab", "sd", "ced", "hf"})
    EXPECT_TRUE(j["raw"].contains(key)) << key;
  for (const char* key : {"rgb_ed", "rgb_rm", "de00", "hue", "chroma", "hyab", "sd_n", "ced", "hf"})
    EXPECT_TRUE(j["norm"].contains(key)) << key;
  EXPECT_EQ(j.size(), 4u);
  EXPECT_EQ(j["pre_mean"], 0.0);
  EXPECT_EQ(j["pur_mean"], 0.0);
}

}  // namespace
}  // namespace visalign::violin
