#include "clip/kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace visalign::clip {
namespace {

TEST(KernelsTest, FastErfIsAccurateEverywhere) {
  double worst = 0.0;
  for (double x = -8.0; x <= 8.0; x += 1e-3) {
    worst = std::max(worst, std::abs(static_cast<double>(FastErf(static_cast<float>(x))) - std::erf(static_cast<float>(x))));
  }
  EXPECT_LT(worst, 1e-6);
}

TEST(KernelsTest, FastExpHasSmallRelativeError) {
  double worst = 0.0;
  for (double x = -87.0; x <= 88.0; x += 1e-3) {
    const double exact = std::exp(static_cast<double>(static_cast<float>(x)));
    worst = std::max(worst, std::abs(FastExp(static_cast<float>(x)) - exact) / exact);
  }
  EXPECT_LT(worst, 1e-6);
  EXPECT_EQ(FastExp(-1000.0f) < 1e-37f, true);
}

TEST(KernelsTest, LayerNormMatchesHandComputation) {
  // Row [1, 2, 3, 4]: mean 2.5, biased variance 1.25.
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<float> gain = {1, 1, 2, 1};
  const std::vector<float> bias = {0, 0, 0, 1};
  std::vector<float> y(4);
  LayerNorm(x.data(), y.data(), 1, 4, gain.data(), bias.data(), 0.0f);
  const float s = 1.0f / std::sqrt(1.25f);
  EXPECT_NEAR(y[0], -1.5f * s, 1e-6);
  EXPECT_NEAR(y[2], 2 * 0.5f * s, 1e-6);
  EXPECT_NEAR(y[3], 1.5f * s + 1, 1e-6);
}

TEST(KernelsTest, GeluVariants) {
  std::vector<float> y = {-1.0f, 0.0f, 2.0f};
  const std::vector<float> zero(3, 0.0f);
  AddBiasActivate(y.data(), 1, 3, zero.data(), Activation::kGelu);
  EXPECT_NEAR(y[0], -0.15865525f, 1e-6);  // 0.5 * -1 * (1 + erf(-1/sqrt 2))
  EXPECT_NEAR(y[1], 0.0f, 1e-7);
  EXPECT_NEAR(y[2], 1.95449974f, 1e-6);
  std::vector<float> q = {2.0f};
  AddBiasActivate(q.data(), 1, 1, zero.data(), Activation::kQuickGelu);
  EXPECT_NEAR(q[0], 2.0f / (1.0f + std::exp(-3.404f)), 1e-6);
}

TEST(KernelsTest, CausalAttentionOfFirstPositionIsItsValue) {
  // batch 1, seq 2, width 2, 1 head: position 0 only sees itself; position 1 averages by softmax.
  const std::vector<float> qkv = {
      1, 0, /*k*/ 1, 0, /*v*/ 10, 20,  // t = 0
      0, 1, /*k*/ 0, 1, /*v*/ 30, 40,  // t = 1
  };
  std::vector<float> out(4);
  Attention(qkv.data(), out.data(), 1, 2, 2, 1, /*causal=*/true);
  EXPECT_FLOAT_EQ(out[0], 10);
  EXPECT_FLOAT_EQ(out[1], 20);
  // scores for t = 1: q·k / sqrt(2) = [0, 1/sqrt 2].
  const double p1 = 1.0 / (1.0 + std::exp(-1.0 / std::sqrt(2.0)));
  EXPECT_NEAR(out[2], 10 * (1 - p1) + 30 * p1, 1e-5);
  Attention(qkv.data(), out.data(), 1, 2, 2, 1, /*causal=*/false);
  const double p0 = 1.0 / (1.0 + std::exp(1.0 / std::sqrt(2.0)));  // t = 0 now also sees t = 1
  EXPECT_NEAR(out[0], 10 * (1 - p0) + 30 * p0, 1e-5);
}

}  // namespace
}  // namespace visalign::clip
