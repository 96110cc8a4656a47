#include "clip/kernels.h"

#include "clip/row_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace visalign::clip {
namespace {

// Every row-kernel build this CPU can run: baseline x86-64, and AVX2+FMA when supported.
std::vector<const RowKernels*> RunnableRowKernels() {
  std::vector<const RowKernels*> all = {&BaselineRowKernels()};
  if (Avx2RowKernels() != nullptr) all.push_back(Avx2RowKernels());
  return all;
}

TEST(RowKernelsTest, ErfIsAccurateEverywhere) {
  for (const RowKernels* k : RunnableRowKernels()) {
    double worst = 0.0;
    for (double x = -8.0; x <= 8.0; x += 1e-3) {
      worst = std::max(worst,
                       std::abs(static_cast<double>(k->erf(static_cast<float>(x))) - std::erf(static_cast<float>(x))));
    }
    EXPECT_LT(worst, 1e-6) << k->name;
  }
}

TEST(RowKernelsTest, ExpHasSmallRelativeError) {
  for (const RowKernels* k : RunnableRowKernels()) {
    double worst = 0.0;
    for (double x = -87.0; x <= 88.0; x += 1e-3) {
      const double exact = std::exp(static_cast<double>(static_cast<float>(x)));
      worst = std::max(worst, std::abs(k->exp(static_cast<float>(x)) - exact) / exact);
    }
    EXPECT_LT(worst, 1e-6) << k->name;
    EXPECT_LT(k->exp(-1000.0f), 1e-37f) << k->name;
    EXPECT_TRUE(std::isfinite(k->exp(1000.0f))) << k->name;
  }
}

TEST(RowKernelsTest, SoftmaxMatchesDoublePrecision) {
  const std::vector<float> scores = {0.5f, -3.0f, 2.25f, 0.0f, 7.0f, -0.125f, 1.0f, 3.5f, -20.0f};
  double max_score = -1e9;
  for (float s : scores) max_score = std::max(max_score, static_cast<double>(s));
  double sum = 0.0;
  for (float s : scores) sum += std::exp(s - max_score);
  for (const RowKernels* k : RunnableRowKernels()) {
    std::vector<float> p = scores;
    k->softmax(p.data(), static_cast<int>(p.size()));
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_NEAR(p[i], std::exp(scores[i] - max_score) / sum, 1e-7) << k->name << " element " << i;
    }
  }
}

TEST(RowKernelsTest, BuildsAgreeOnLongRows) {
  // 1000 columns: vector bodies and scalar tails of every loop.
  constexpr int kCols = 1000;
  std::vector<float> x(kCols), gain(kCols), bias(kCols);
  for (int c = 0; c < kCols; ++c) {
    x[c] = std::sin(0.37f * c) * 3.0f;
    gain[c] = 1.0f + 0.001f * c;
    bias[c] = 0.01f * (c % 7) - 0.03f;
  }
  const RowKernels& base = BaselineRowKernels();
  for (const RowKernels* k : RunnableRowKernels()) {
    std::vector<float> a(kCols), b(kCols);
    base.layer_norm(x.data(), a.data(), kCols, gain.data(), bias.data(), 1e-5f);
    k->layer_norm(x.data(), b.data(), kCols, gain.data(), bias.data(), 1e-5f);
    for (int c = 0; c < kCols; ++c) EXPECT_NEAR(a[c], b[c], 1e-5) << k->name << " layer_norm " << c;
    a = x;
    b = x;
    base.bias_gelu(a.data(), kCols, bias.data());
    k->bias_gelu(b.data(), kCols, bias.data());
    for (int c = 0; c < kCols; ++c) EXPECT_NEAR(a[c], b[c], 1e-6) << k->name << " gelu " << c;
    a = x;
    b = x;
    base.bias_quick_gelu(a.data(), kCols, bias.data());
    k->bias_quick_gelu(b.data(), kCols, bias.data());
    for (int c = 0; c < kCols; ++c) EXPECT_NEAR(a[c], b[c], 1e-6) << k->name << " quick_gelu " << c;
    a = x;
    b = x;
    base.bias_gelu_tanh(a.data(), kCols, bias.data());
    k->bias_gelu_tanh(b.data(), kCols, bias.data());
    for (int c = 0; c < kCols; ++c) EXPECT_NEAR(a[c], b[c], 1e-6) << k->name << " gelu_tanh " << c;
    // DepthwiseConv2d's rows: a tap (y += x·w, which the AVX2 build may contract to an FMA) and the bias.
    a = x;
    b = x;
    base.multiply_add(a.data(), gain.data(), bias.data(), kCols);
    k->multiply_add(b.data(), gain.data(), bias.data(), kCols);
    for (int c = 0; c < kCols; ++c)
      EXPECT_NEAR(a[c], b[c], 1e-6 * std::max(1.0f, std::abs(a[c]))) << k->name << " multiply_add " << c;
    a = x;
    b = x;
    base.add_bias(a.data(), kCols, bias.data());
    k->add_bias(b.data(), kCols, bias.data());
    for (int c = 0; c < kCols; ++c) EXPECT_EQ(a[c], b[c]) << k->name << " add_bias " << c;
    // SwiGLU against its definition in double (libm exp), so both builds are checked, not only alike.
    a = x;
    k->bias_swiglu(a.data(), gain.data(), kCols, bias.data(), bias.data());
    for (int c = 0; c < kCols; ++c) {
      const double g = static_cast<double>(x[c]) + bias[c];
      const double want = g / (1.0 + std::exp(-g)) * (static_cast<double>(gain[c]) + bias[c]);
      EXPECT_NEAR(a[c], want, 1e-5 * std::max(1.0, std::abs(want))) << k->name << " swiglu " << c;
    }
    // GeGLU likewise (libm erf), and the build against the baseline.
    a = x;
    k->bias_geglu(a.data(), gain.data(), kCols, bias.data(), bias.data());
    b = x;
    base.bias_geglu(b.data(), gain.data(), kCols, bias.data(), bias.data());
    for (int c = 0; c < kCols; ++c) {
      const double g = static_cast<double>(x[c]) + bias[c];
      const double want = 0.5 * g * (1.0 + std::erf(g / std::sqrt(2.0))) * (static_cast<double>(gain[c]) + bias[c]);
      EXPECT_NEAR(a[c], want, 1e-5 * std::max(1.0, std::abs(want))) << k->name << " geglu " << c;
      EXPECT_NEAR(a[c], b[c], 1e-6 * std::max(1.0, std::abs(want))) << k->name << " geglu vs baseline " << c;
    }
  }
}

// PyTorch's gelu(approximate='tanh') written from its definition with libm's tanh, in double, on
// [-12, 12] (both clamps of the kernel, and the tails) for every build.
TEST(KernelsTest, TanhGeluMatchesItsDefinition) {
  constexpr int kCols = 2401;
  std::vector<float> x(kCols);
  const std::vector<float> zero(kCols, 0.0f);
  for (int c = 0; c < kCols; ++c) x[c] = -12.0f + 0.01f * static_cast<float>(c);
  for (const RowKernels* k : RunnableRowKernels()) {
    std::vector<float> y = x;
    k->bias_gelu_tanh(y.data(), kCols, zero.data());
    for (int c = 0; c < kCols; ++c) {
      const double v = x[c];
      const double expected = 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
      EXPECT_NEAR(y[c], expected, 1e-6 * std::max(1.0, std::abs(expected))) << k->name << " x = " << v;
    }
  }
}

TEST(KernelsTest, GeGluGatesTheValueWithExactGelu) {
  // Two rows of gelu(gate + gate_bias) * (value + value_bias); gelu(-1) = -0.15865525, gelu(2) = 1.95449974.
  std::vector<float> gate = {-1.0f, 0.0f, 1.5f, -1.0f, 3.0f, 2.0f};
  const std::vector<float> value = {2.0f, 5.0f, -0.75f, 1.0f, 1.0f, 1.0f};
  const std::vector<float> gate_bias = {0.0f, 0.0f, 0.5f};
  const std::vector<float> value_bias = {0.0f, 1.0f, 0.25f};
  AddBiasGeGlu(gate.data(), value.data(), 2, 3, gate_bias.data(), value_bias.data());
  EXPECT_NEAR(gate[0], -0.15865525f * 2.0f, 1e-6);
  EXPECT_NEAR(gate[1], 0.0f, 1e-7);
  EXPECT_NEAR(gate[2], 1.95449974f * -0.5f, 1e-6);
  EXPECT_NEAR(gate[3], -0.15865525f, 1e-6);
  EXPECT_NEAR(gate[4], 5.99190061f, 1e-5);  // gelu(3) * 2
  EXPECT_NEAR(gate[5], 3.10559480f, 1e-5);  // gelu(2.5) * 1.25
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
