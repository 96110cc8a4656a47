// The strided depthwise convolution against torch.nn.Conv2d(groups = channels)'s definition written
// out in loops (double sums, exact erf GELU), and AvgPool2d(count_include_pad=False) against windows
// averaged by hand.
#include "clip/conv_blocks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace visalign::clip {
namespace {

FeatureMap RandomMap(int n, int h, int w, int c, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  FeatureMap x(n, h, w, c);
  for (float& v : x.data) v = normal(rng);
  return x;
}

TEST(DepthwiseConv2dStridedTest, MatchesTheDefinitionForOddSizesAndBothEpilogues) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  constexpr int kC = 37;  // vector bodies and scalar tails
  constexpr int kKernel = 3;
  std::vector<float> torch_weight(static_cast<size_t>(kC) * kKernel * kKernel), bias(kC);
  for (float& v : torch_weight) v = normal(rng);
  for (float& v : bias) v = normal(rng);
  const DepthwiseWeights dw = MakeDepthwise(torch_weight.data(), bias.data(), kC, kKernel);
  for (const int stride : {1, 2}) {
    for (const auto epilogue : {DepthwiseEpilogue::kBias, DepthwiseEpilogue::kBiasGelu}) {
      const FeatureMap x = RandomMap(2, 7, 6, kC, rng);
      const FeatureMap y = DepthwiseConv2dStrided(dw, x, stride, epilogue);
      const int oh = (7 + 2 - kKernel) / stride + 1, ow = (6 + 2 - kKernel) / stride + 1;
      ASSERT_EQ(y.h, oh);
      ASSERT_EQ(y.w, ow);
      for (int i = 0; i < x.n; ++i) {
        for (int oy = 0; oy < oh; ++oy) {
          for (int ox = 0; ox < ow; ++ox) {
            for (int c = 0; c < kC; ++c) {
              double sum = bias[c];
              for (int ky = 0; ky < kKernel; ++ky) {
                for (int kx = 0; kx < kKernel; ++kx) {
                  const int iy = oy * stride - 1 + ky, ix = ox * stride - 1 + kx;
                  if (iy < 0 || iy >= x.h || ix < 0 || ix >= x.w) continue;
                  sum += static_cast<double>(torch_weight[(c * kKernel + ky) * kKernel + kx]) *
                         x.data[((static_cast<size_t>(i) * x.h + iy) * x.w + ix) * kC + c];
                }
              }
              if (epilogue == DepthwiseEpilogue::kBiasGelu) sum = 0.5 * sum * (1.0 + std::erf(sum / std::sqrt(2.0)));
              EXPECT_NEAR(y.data[((static_cast<size_t>(i) * oh + oy) * ow + ox) * kC + c], sum, 1e-5)
                  << "stride " << stride << " at " << i << "," << oy << "," << ox << "," << c;
            }
          }
        }
      }
    }
  }
}

TEST(DepthwiseConv2dStridedTest, StrideOneEqualsTheSameSizeDepthwiseConvolution) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  constexpr int kC = 16, kKernel = 7;
  std::vector<float> torch_weight(static_cast<size_t>(kC) * kKernel * kKernel), bias(kC);
  for (float& v : torch_weight) v = normal(rng);
  for (float& v : bias) v = normal(rng);
  const DepthwiseWeights dw = MakeDepthwise(torch_weight.data(), bias.data(), kC, kKernel);
  const FeatureMap x = RandomMap(1, 9, 9, kC, rng);
  const FeatureMap same = DepthwiseConv2d(dw, x);
  const FeatureMap strided = DepthwiseConv2dStrided(dw, x, 1, DepthwiseEpilogue::kBias);
  ASSERT_EQ(strided.data.size(), same.data.size());
  for (size_t k = 0; k < same.data.size(); ++k) EXPECT_NEAR(strided.data[k], same.data[k], 1e-5) << k;
}

TEST(AvgPool2dExcludePadTest, AveragesOnlyTheCoveredPixels) {
  // One 5×5 channel holding 1..25 row-major; 3×3 windows, stride 2, padding 1 -> 3×3.
  FeatureMap x(1, 5, 5, 1);
  for (int k = 0; k < 25; ++k) x.data[k] = static_cast<float>(k + 1);
  const FeatureMap y = AvgPool2dExcludePad(x, 3, 2, 1);
  ASSERT_EQ(y.h, 3);
  ASSERT_EQ(y.w, 3);
  EXPECT_FLOAT_EQ(y.data[0], (1 + 2 + 6 + 7) / 4.0f);          // corner: 4 pixels, not 9
  EXPECT_FLOAT_EQ(y.data[1], (2 + 3 + 4 + 7 + 8 + 9) / 6.0f);  // top edge: 6
  EXPECT_FLOAT_EQ(y.data[2], (4 + 5 + 9 + 10) / 4.0f);
  EXPECT_FLOAT_EQ(y.data[4], 13.0f);  // inside: 7..9, 12..14, 17..19
  EXPECT_FLOAT_EQ(y.data[8], (19 + 20 + 24 + 25) / 4.0f);
  // An even size: 4 -> 2, the last window reaching into the padding on one side only.
  FeatureMap even(1, 4, 4, 2);
  for (size_t k = 0; k < even.data.size(); ++k) even.data[k] = static_cast<float>(k % 2 == 0 ? k / 2 : 100);
  const FeatureMap z = AvgPool2dExcludePad(even, 3, 2, 1);
  ASSERT_EQ(z.h, 2);
  EXPECT_FLOAT_EQ(z.data[0], (0 + 1 + 4 + 5) / 4.0f);                           // channel 0 of (0, 0)
  EXPECT_FLOAT_EQ(z.data[1], 100.0f);                                           // channel 1: constant
  EXPECT_FLOAT_EQ(z.data[6], (5 + 6 + 7 + 9 + 10 + 11 + 13 + 14 + 15) / 9.0f);  // (1, 1)
}

}  // namespace
}  // namespace visalign::clip
