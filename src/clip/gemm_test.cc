// The GEMM paths against a double-precision reference: fp32 dnnl_sgemm and the bf16 matmul (on CPUs
// with AVX512_BF16/AMX; elsewhere the test says why it is skipped), and bf16 rounding.
#include "clip/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace visalign::clip {
namespace {

float FromBf16(Bf16 b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

Bf16 OneBf16(float x) {
  Bf16 y;
  ToBf16(&x, 1, &y);
  return y;
}

TEST(ToBf16Test, RoundsToNearestEvenAndKeepsSpecialValues) {
  EXPECT_EQ(FromBf16(OneBf16(1.0f)), 1.0f);
  EXPECT_EQ(FromBf16(OneBf16(-2.5f)), -2.5f);
  // 1 + 2^-8 is halfway between bf16 1 and 1 + 2^-7: ties to even (1). 1 + 3·2^-8 ties up to 1 + 2^-6.
  EXPECT_EQ(FromBf16(OneBf16(1.0f + 0x1p-8f)), 1.0f);
  EXPECT_EQ(FromBf16(OneBf16(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);
  EXPECT_EQ(FromBf16(OneBf16(1.0f + 0x1p-8f + 0x1p-20f)), 1.0f + 0x1p-7f);  // above halfway: up
  EXPECT_TRUE(std::isnan(FromBf16(OneBf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(FromBf16(OneBf16(std::numeric_limits<float>::infinity())), std::numeric_limits<float>::infinity());
  // The largest floats round to infinity, as an IEEE conversion does.
  EXPECT_EQ(FromBf16(OneBf16(std::numeric_limits<float>::max())), std::numeric_limits<float>::infinity());
}

struct Problem {
  int m, n, k;
  std::vector<float> a, b;  // A [m, k], B [n, k] (kNK)
};

Problem MakeProblem(int m, int n, int k) {
  Problem p{m, n, k, std::vector<float>(static_cast<size_t>(m) * k), std::vector<float>(static_cast<size_t>(n) * k)};
  uint32_t s = 12345;
  auto next = [&] {
    s = s * 1664525u + 1013904223u;
    return static_cast<float>(s >> 8) / static_cast<float>(1u << 24) - 0.5f;
  };
  for (float& x : p.a) x = next();
  for (float& x : p.b) x = next();
  return p;
}

// Largest |C - reference| relative to sum |a||b| of the dot product, with C = 0.5 + A·Bᵀ (beta 1)
// and the reference in double from the given operands.
double WorstRelativeError(const Problem& p, const std::vector<float>& c) {
  double worst = 0.0;
  for (int i = 0; i < p.m; ++i) {
    for (int j = 0; j < p.n; ++j) {
      double dot = 0.5, scale = 0.0;
      for (int l = 0; l < p.k; ++l) {
        dot += static_cast<double>(p.a[i * p.k + l]) * p.b[j * p.k + l];
        scale += std::abs(static_cast<double>(p.a[i * p.k + l]) * p.b[j * p.k + l]);
      }
      worst = std::max(worst, std::abs(c[static_cast<size_t>(i) * p.n + j] - dot) / scale);
    }
  }
  return worst;
}

TEST(GemmTest, Fp32MatchesADoubleReference) {
  const Problem p = MakeProblem(37, 70, 300);
  std::vector<float> c(static_cast<size_t>(p.m) * p.n, 0.5f);
  Gemm(p.m, p.n, p.k, p.a.data(), p.k, p.b.data(), BLayout::kNK, 1.0f, c.data(), p.n);
  EXPECT_LT(WorstRelativeError(p, c), 1e-6);
}

TEST(GemmTest, Bf16MatchesADoubleReferenceWithinBf16Rounding) {
  if (!Bf16Support().available) {
    GTEST_SKIP() << "no AVX512_BF16/AMX on this CPU (oneDNN: " << Bf16Support().isa
                 << "); ClipModelTest.ReducedPrecisionEmbeddingsAreWithinTheirCosineBoundsOfFp32 tests the refusal";
  }
  for (BLayout layout : {BLayout::kNK, BLayout::kKN}) {
    Problem p = MakeProblem(37, 70, 300);
    // Exact bf16 operands: then the only error is the f32 accumulation.
    std::vector<Bf16> a16(p.a.size()), b16(p.b.size());
    ToBf16(p.a.data(), p.a.size(), a16.data());
    ToBf16(p.b.data(), p.b.size(), b16.data());
    for (size_t i = 0; i < p.a.size(); ++i) p.a[i] = FromBf16(a16[i]);
    for (size_t i = 0; i < p.b.size(); ++i) p.b[i] = FromBf16(b16[i]);
    std::vector<Bf16> b_stored = b16;
    if (layout == BLayout::kKN) {  // the same B stored [k, n]
      for (int j = 0; j < p.n; ++j) {
        for (int l = 0; l < p.k; ++l)
          b_stored[static_cast<size_t>(l) * p.n + j] = b16[static_cast<size_t>(j) * p.k + l];
      }
    }
    std::vector<float> c(static_cast<size_t>(p.m) * p.n, 0.5f);
    GemmBf16(p.m, p.n, p.k, p.a.data(), b_stored.data(), layout, 1.0f, c.data());
    EXPECT_LT(WorstRelativeError(p, c), 1e-6) << (layout == BLayout::kNK ? "kNK" : "kKN");
    // beta 0 overwrites C; an f32 A is rounded on the fly to exactly the bf16 values used above.
    const Problem raw = MakeProblem(37, 70, 300);
    std::vector<float> c0(c.size(), 1e6f);
    GemmBf16(raw.m, raw.n, raw.k, raw.a.data(), b_stored.data(), layout, 0.0f, c0.data());
    for (float& x : c0) x += 0.5f;
    EXPECT_LT(WorstRelativeError(p, c0), 1e-6);
  }
}

TEST(GemmTest, Bf16x3HoldsAbout16BitsWhereBf16HoldsAbout8) {
  if (!Bf16Support().available) {
    GTEST_SKIP() << "no AVX512_BF16/AMX on this CPU (oneDNN: " << Bf16Support().isa << ")";
  }
  // Arbitrary f32 operands (not bf16 values): plain bf16 rounds each to 8 significant bits, the
  // two-term split to ~16, and the dropped lo·lo product is ~2^-18 of |a·b|.
  const Problem p = MakeProblem(37, 70, 300);
  std::vector<Bf16> b16(p.b.size());
  ToBf16(p.b.data(), p.b.size(), b16.data());
  std::vector<float> plain(static_cast<size_t>(p.m) * p.n, 0.5f);
  GemmBf16(p.m, p.n, p.k, p.a.data(), b16.data(), BLayout::kNK, 1.0f, plain.data());
  const double plain_error = WorstRelativeError(p, plain);
  EXPECT_GT(plain_error, 1e-4);
  for (BLayout layout : {BLayout::kNK, BLayout::kKN}) {
    std::vector<float> b_stored = p.b;
    if (layout == BLayout::kKN) {  // the same B stored [k, n]
      for (int j = 0; j < p.n; ++j) {
        for (int l = 0; l < p.k; ++l)
          b_stored[static_cast<size_t>(l) * p.n + j] = p.b[static_cast<size_t>(j) * p.k + l];
      }
    }
    const std::vector<Bf16> b3 = ToBf16x3Weights(b_stored.data(), p.k, p.n, layout);
    ASSERT_EQ(b3.size(), 3 * p.b.size());
    std::vector<float> c(static_cast<size_t>(p.m) * p.n, 0.5f);
    GemmBf16x3(p.m, p.n, p.k, p.a.data(), b3.data(), layout, 1.0f, c.data());
    const double error = WorstRelativeError(p, c);
    EXPECT_LT(error, 3e-5) << (layout == BLayout::kNK ? "kNK" : "kKN");
    EXPECT_LT(error * 100, plain_error) << "bf16x3 " << error << " vs bf16 " << plain_error;
    std::vector<float> c0(c.size(), 1e6f);  // beta 0 overwrites C
    GemmBf16x3(p.m, p.n, p.k, p.a.data(), b3.data(), layout, 0.0f, c0.data());
    for (float& x : c0) x += 0.5f;
    EXPECT_LT(WorstRelativeError(p, c0), 3e-5);
  }
}

}  // namespace
}  // namespace visalign::clip
