// Conv2d (oneDNN's convolution primitive for k×k / strided, Gemm for pointwise) and DepthwiseConv2d
// against direct convolutions written out in loops with double accumulation, and the convolutional fixtures'
// parity suite again with oneDNN limited to AVX2 (in a child process: the ISA is fixed at the first
// oneDNN call).
#include "clip/conv.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "clip/gemm.h"
#include "testing/cli_runner.h"

namespace visalign::clip {
namespace {

struct Shape {
  int n, h, w, in, out, kernel, stride, pad;
};

struct Layer {
  std::vector<float> torch_weight;  // [out, in, kernel, kernel]
  std::vector<float> bias;
  ConvWeights conv;
};

Layer MakeLayer(const Shape& s, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Layer l;
  l.torch_weight.resize(static_cast<size_t>(s.out) * s.in * s.kernel * s.kernel);
  for (float& v : l.torch_weight) v = normal(rng);
  l.bias.resize(static_cast<size_t>(s.out));
  for (float& v : l.bias) v = normal(rng);
  l.conv = MakeConv(l.torch_weight.data(), l.bias.data(), s.out, s.in, s.kernel, s.stride, s.pad);
  return l;
}

FeatureMap RandomMap(int n, int h, int w, int c, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  FeatureMap x(n, h, w, c);
  for (float& v : x.data) v = normal(rng);
  return x;
}

// torch.nn.Conv2d's definition on NHWC maps, summed in double.
std::vector<double> DirectConv(const Shape& s, const Layer& l, const FeatureMap& x, bool relu,
                               const FeatureMap* residual) {
  const int oh = (s.h + 2 * s.pad - s.kernel) / s.stride + 1;
  const int ow = (s.w + 2 * s.pad - s.kernel) / s.stride + 1;
  std::vector<double> y(static_cast<size_t>(s.n) * oh * ow * s.out);
  for (int i = 0; i < s.n; ++i) {
    for (int oy = 0; oy < oh; ++oy) {
      for (int ox = 0; ox < ow; ++ox) {
        for (int o = 0; o < s.out; ++o) {
          double sum = l.bias[o];
          for (int c = 0; c < s.in; ++c) {
            for (int ky = 0; ky < s.kernel; ++ky) {
              const int iy = oy * s.stride - s.pad + ky;
              if (iy < 0 || iy >= s.h) continue;
              for (int kx = 0; kx < s.kernel; ++kx) {
                const int ix = ox * s.stride - s.pad + kx;
                if (ix < 0 || ix >= s.w) continue;
                sum += static_cast<double>(
                           l.torch_weight[((static_cast<size_t>(o) * s.in + c) * s.kernel + ky) * s.kernel + kx]) *
                       x.data[((static_cast<size_t>(i) * s.h + iy) * s.w + ix) * s.in + c];
              }
            }
          }
          const size_t at = ((static_cast<size_t>(i) * oh + oy) * ow + ox) * s.out + o;
          if (residual != nullptr) sum += residual->data[at];
          y[at] = relu ? std::max(sum, 0.0) : sum;
        }
      }
    }
  }
  return y;
}

// fp32 sums of up to kernel²·in = 7·7·8 products of standard normals: their rounding error is a few
// ulps of the terms' magnitude, well below 1e-5 of the largest output (itself ~ √(kernel²·in));
// measured at most 7e-7 of it, on AVX-512 and AVX2 kernels alike.
constexpr double kRelativeTolerance = 1e-5;

void ExpectNear(const std::vector<double>& expected, const FeatureMap& y, const std::string& what) {
  ASSERT_EQ(expected.size(), y.data.size()) << what;
  double largest = 0.0, diff = 0.0;
  for (size_t i = 0; i < expected.size(); ++i) {
    largest = std::max(largest, std::abs(expected[i]));
    diff = std::max(diff, std::abs(expected[i] - y.data[i]));
  }
  EXPECT_LE(diff, kRelativeTolerance * largest) << what << ": max |diff| " << diff << ", max |y| " << largest;
}

std::string Describe(const Shape& s, bool relu, bool residual) {
  return "n=" + std::to_string(s.n) + " " + std::to_string(s.h) + "x" + std::to_string(s.w) + "x" +
         std::to_string(s.in) + " -> " + std::to_string(s.out) + " k=" + std::to_string(s.kernel) +
         " s=" + std::to_string(s.stride) + " p=" + std::to_string(s.pad) + (relu ? " relu" : "") +
         (residual ? " residual" : "");
}

// Strides 1/2/4, padding 0..3, kernels 1 (Gemm) and 2/3/4/7, odd sizes and channel counts (floored by
// strided kernels), batch 1 and 3.
const Shape kShapes[] = {
    {1, 9, 9, 3, 5, 3, 1, 1},
    {3, 13, 11, 5, 7, 3, 2, 1},
    {1, 15, 15, 3, 16, 4, 4, 0},
    {3, 12, 12, 6, 9, 2, 2, 0},
    {1, 17, 19, 8, 5, 7, 1, 3},
    {3, 23, 21, 3, 4, 7, 2, 3},
    {3, 10, 10, 4, 6, 4, 1, 2},
    {1, 7, 7, 32, 33, 3, 1, 1},
    {3, 9, 7, 5, 3, 1, 1, 0},
    {1, 5, 5, 17, 19, 1, 1, 0},
    {3, 11, 11, 4, 5, 3, 4, 1},
    {1, 6, 6, 3, 4, 1, 2, 0},
    // ConvNeXt at sizes that are not multiples of 32: the stem and downsamples floor odd maps.
    {3, 9, 7, 6, 5, 2, 2, 0},
    {1, 67, 67, 3, 8, 4, 4, 0},
};

TEST(Conv2dTest, MatchesDirectConvolution) {
  std::mt19937 rng(3);
  for (const Shape& s : kShapes) {
    const Layer l = MakeLayer(s, rng);
    const FeatureMap x = RandomMap(s.n, s.h, s.w, s.in, rng);
    for (bool relu : {false, true}) {
      for (bool with_residual : {false, true}) {
        const ConvActivation act = relu ? ConvActivation::kRelu : ConvActivation::kNone;
        FeatureMap residual;
        if (with_residual) {
          residual = RandomMap(s.n, (s.h + 2 * s.pad - s.kernel) / s.stride + 1,
                               (s.w + 2 * s.pad - s.kernel) / s.stride + 1, s.out, rng);
        }
        const std::vector<double> expected = DirectConv(s, l, x, relu, with_residual ? &residual : nullptr);
        const FeatureMap y = Conv2d(l.conv, x, act, with_residual ? &residual : nullptr);
        ExpectNear(expected, y, Describe(s, relu, with_residual));
      }
    }
  }
}

TEST(Conv2dTest, FoldedBatchNormIsUsedAfterAnEarlierCall) {
  std::mt19937 rng(5);
  const Shape s{1, 8, 8, 4, 6, 3, 1, 1};
  Layer l = MakeLayer(s, rng);
  const FeatureMap x = RandomMap(s.n, s.h, s.w, s.in, rng);
  Conv2d(l.conv, x, ConvActivation::kNone);  // caches the unfolded weights
  // scale gamma / sqrt(var + eps) = 4 / sqrt(3 + 1) = 2 for every channel
  const std::vector<float> gamma(s.out, 4.0f), beta(s.out, 0.5f), mean(s.out, 0.25f), var(s.out, 3.0f);
  FoldBatchNorm(l.conv, gamma.data(), beta.data(), mean.data(), var.data(), 1.0f);
  for (float& v : l.torch_weight) v *= 2.0f;
  for (float& b : l.bias) b = (b - 0.25f) * 2.0f + 0.5f;
  ExpectNear(DirectConv(s, l, x, false, nullptr), Conv2d(l.conv, x, ConvActivation::kNone), "after FoldBatchNorm");
}

// The towers call one layer from several threads at once (model.cc: one chunk per thread, one
// OpenMP thread each) with different batch sizes.
TEST(Conv2dTest, ConcurrentCallsOfOneLayerAgree) {
  std::mt19937 rng(9);
  const Shape s{3, 14, 14, 16, 24, 3, 1, 1};
  const Layer l = MakeLayer(s, rng);
  std::vector<FeatureMap> inputs;
  std::vector<std::vector<double>> expected;
  for (int n : {1, 2, 3, 1}) {
    Shape batch = s;
    batch.n = n;
    inputs.push_back(RandomMap(n, s.h, s.w, s.in, rng));
    expected.push_back(DirectConv(batch, l, inputs.back(), true, nullptr));
  }
  std::vector<FeatureMap> outputs(inputs.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < inputs.size(); ++t) {
    threads.emplace_back([&, t] {
      omp_set_num_threads(1);
      for (int repeat = 0; repeat < 3; ++repeat) outputs[t] = Conv2d(l.conv, inputs[t], ConvActivation::kRelu);
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t t = 0; t < inputs.size(); ++t) ExpectNear(expected[t], outputs[t], "thread " + std::to_string(t));
}

// torch.nn.Conv2d(c, c·multiplier, kernel, stride, padding=kernel / 2, groups=c)'s definition on NHWC
// maps, summed in double, then the epilogue (exact-erf GELU).
std::vector<double> DirectDepthwise(const std::vector<float>& torch_weight, const std::vector<float>& bias,
                                    const DepthwiseWeights& dw, const FeatureMap& x, DepthwiseEpilogue epilogue) {
  const int k = dw.kernel, pad = k / 2, out = dw.out();
  const int oh = (x.h + 2 * pad - k) / dw.stride + 1, ow = (x.w + 2 * pad - k) / dw.stride + 1;
  std::vector<double> y(static_cast<size_t>(x.n) * oh * ow * out);
  for (int i = 0; i < x.n; ++i) {
    for (int oy = 0; oy < oh; ++oy) {
      for (int ox = 0; ox < ow; ++ox) {
        for (int o = 0; o < out; ++o) {
          double sum = bias[o];
          for (int ky = 0; ky < k; ++ky) {
            for (int kx = 0; kx < k; ++kx) {
              const int iy = oy * dw.stride - pad + ky, ix = ox * dw.stride - pad + kx;
              if (iy < 0 || iy >= x.h || ix < 0 || ix >= x.w) continue;
              sum += static_cast<double>(torch_weight[(static_cast<size_t>(o) * k + ky) * k + kx]) *
                     x.data[((static_cast<size_t>(i) * x.h + iy) * x.w + ix) * x.c + o / dw.multiplier];
            }
          }
          if (epilogue == DepthwiseEpilogue::kBiasGelu) sum = 0.5 * sum * (1.0 + std::erf(sum / std::sqrt(2.0)));
          y[((static_cast<size_t>(i) * oh + oy) * ow + ox) * out + o] = sum;
        }
      }
    }
  }
  return y;
}

// Kernels 3 (ViTamin, FastViT) and 7 (ConvNeXt, FastViT's RepMixer), strides 1 and 2, channel
// multipliers 1 and 2 (FastViT's stride-2 downsampling), both epilogues; 37 channels (vector bodies
// and scalar tails), odd and even map sizes.
TEST(DepthwiseConv2dTest, MatchesTheDefinitionForEveryStrideMultiplierAndEpilogue) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  constexpr int kC = 37;
  for (const int kernel : {3, 7}) {
    for (const int stride : {1, 2}) {
      for (const int multiplier : {1, 2}) {
        std::vector<float> torch_weight(static_cast<size_t>(kC) * multiplier * kernel * kernel);
        std::vector<float> bias(static_cast<size_t>(kC) * multiplier);
        for (float& v : torch_weight) v = normal(rng);
        for (float& v : bias) v = normal(rng);
        const DepthwiseWeights dw = MakeDepthwise(torch_weight.data(), bias.data(), kC, kernel, stride, multiplier);
        for (const auto epilogue : {DepthwiseEpilogue::kBias, DepthwiseEpilogue::kBiasGelu}) {
          const FeatureMap x = RandomMap(2, 9, 8, kC, rng);
          const FeatureMap y = DepthwiseConv2d(dw, x, epilogue);
          const std::string what = "k=" + std::to_string(kernel) + " s=" + std::to_string(stride) +
                                   " m=" + std::to_string(multiplier) +
                                   (epilogue == DepthwiseEpilogue::kBiasGelu ? " gelu" : "");
          ASSERT_EQ(y.h, (9 - 1) / stride + 1) << what;
          ASSERT_EQ(y.w, (8 - 1) / stride + 1) << what;
          ASSERT_EQ(y.c, kC * multiplier) << what;
          ExpectNear(DirectDepthwise(torch_weight, bias, dw, x, epilogue), y, what);
        }
      }
    }
  }
}

// In the child started below: oneDNN really is limited to AVX2 (or less, on older CPUs).
TEST(Conv2dIsaLimitTest, ChildRunsBelowAvx512) {
  const char* limit = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (limit == nullptr || std::string(limit) != "AVX2") GTEST_SKIP() << "runs in MatchesFixturesOnAvx2's child";
  EXPECT_EQ(Bf16Support().isa.find("AVX-512"), std::string::npos) << Bf16Support().isa;
}

// oneDNN chooses its convolution kernels by ISA at run time; on an AVX-512 machine the default run
// covers only the AVX-512 kernels, so the direct-convolution check and the convolutional fixtures'
// parity tests run again with the limit at AVX2 (the level of AVX2-only hosts), and with them the
// transformer fixtures' added since ViT (SigLIP2, EVA01/EVA02, CLIPA, MetaCLIP 2, PE-Core, CoCa and the
// derived EVA02-E / timm ViT towers: their GEMMs, oneDNN's sgemm, dispatch by ISA too) ViTamin's
// (conv stem and GeGLU ViT) and MobileCLIP's (FastViT MCi, MCi ViT).
TEST(Conv2dIsaLimitTest, MatchesFixturesOnAvx2) {
  if (std::getenv("ONEDNN_MAX_CPU_ISA") != nullptr) GTEST_SKIP() << "already under an ISA limit";
  const testing::RunResult r = testing::RunProgram(
      {"/proc/self/exe",
       "--gtest_filter=Conv2dTest.*:Conv2dIsaLimitTest.ChildRunsBelowAvx512:Fixtures/FixtureParityTest.*/clip_rn_tiny:"
       "Fixtures/FixtureParityTest.*/clip_convnext_tiny:Fixtures/FixtureParityTest.*/siglip2_tiny:"
       "Fixtures/FixtureParityTest.*/eva02_tiny:Fixtures/FixtureParityTest.*/eva01_tiny:"
       "Fixtures/FixtureParityTest.*/clipa_tiny:Fixtures/FixtureParityTest.*/metaclip2_tiny:"
       "Fixtures/FixtureParityTest.*/pe_core_tiny:Fixtures/FixtureParityTest.*/coca_tiny:DerivedTimmTrunk.*:"
       "Fixtures/FixtureParityTest.*/vitamin_tiny:Fixtures/FixtureParityTest.*/mobileclip_s_tiny:"
       "Fixtures/FixtureParityTest.*/mobileclip_b_tiny"},
      {{"ONEDNN_MAX_CPU_ISA", "AVX2"}});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("[  SKIPPED ]"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace visalign::clip
