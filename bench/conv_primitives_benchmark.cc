// k×k convolutions of the RN50 and convnext_base towers through clip/conv.h Conv2d as the towers
// call it: oneDNN's convolution primitive on NHWC maps, created and its weights reordered on the
// first call (before the timing), bias and ReLU fused. (Until 2026-12-01 this compared im2col + GEMM
// with a primitive set up here; the figures are in docs/performance.md.) Counter "GFLOP/s" is per
// second of wall time; with MeasureProcessCPUTime, "CPU" time gives the per-CPU-second rate.
// Run: VISALIGN_DATA=data build/bench/conv_primitives_benchmark (threads: VISALIGN_BENCH_THREADS, default 2).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "clip/conv.h"
#include "visalign/core/parallel.h"

namespace visalign::clip {
namespace {

constexpr int kBatch = 8;

struct Layer {
  int in, out, kernel, stride, pad, size;  // input size (square)
  bool relu;
};

// RN50: stem conv1 (3 -> 32, 3x3 s2 at 224), conv2 (32 -> 32 at 112), a stage-1 and a stage-4
// Bottleneck 3x3; convnext_base: the 4x4 s4 stem and the first 2x2 s2 downsample.
constexpr Layer kRn50Stem1{3, 32, 3, 2, 1, 224, true};
constexpr Layer kRn50Stem2{32, 32, 3, 1, 1, 112, true};
constexpr Layer kRn50Stage1{64, 64, 3, 1, 1, 56, true};
constexpr Layer kRn50Stage4{512, 512, 3, 1, 1, 7, true};
constexpr Layer kConvNextStem{3, 128, 4, 4, 0, 224, false};
constexpr Layer kConvNextDown{128, 256, 2, 2, 0, 56, false};

int BenchThreads() {
  const char* env = std::getenv("VISALIGN_BENCH_THREADS");
  return env != nullptr ? std::atoi(env) : 2;
}

int OutSize(const Layer& l) { return (l.size + 2 * l.pad - l.kernel) / l.stride + 1; }

double Flops(const Layer& l) {
  const double o = OutSize(l);
  return 2.0 * kBatch * o * o * l.out * l.in * l.kernel * l.kernel;
}

struct Data {
  std::vector<float> torch_weight, bias;
  FeatureMap x;
};

Data MakeData(const Layer& l) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Data d;
  d.torch_weight.resize(static_cast<size_t>(l.out) * l.in * l.kernel * l.kernel);
  const float scale = 1.0f / std::sqrt(static_cast<float>(l.in * l.kernel * l.kernel));
  for (float& v : d.torch_weight) v = normal(rng) * scale;
  d.bias.resize(static_cast<size_t>(l.out));
  for (float& v : d.bias) v = 0.1f * normal(rng);
  d.x = FeatureMap(kBatch, l.size, l.size, l.in);
  for (float& v : d.x.data) v = normal(rng);
  return d;
}

void BM_Conv2d(benchmark::State& state, Layer l) {
  SetThreadCount(BenchThreads());
  const Data d = MakeData(l);
  const ConvWeights w = MakeConv(d.torch_weight.data(), d.bias.data(), l.out, l.in, l.kernel, l.stride, l.pad);
  const ConvActivation act = l.relu ? ConvActivation::kRelu : ConvActivation::kNone;
  Conv2d(w, d.x, act);  // creates the primitive
  for (auto _ : state) {
    FeatureMap y = Conv2d(w, d.x, act);
    benchmark::DoNotOptimize(y.data.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(Flops(l) * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

#define VISALIGN_CONV(name, layer)          \
  BENCHMARK_CAPTURE(BM_Conv2d, name, layer) \
      ->Unit(benchmark::kMillisecond)       \
      ->UseRealTime()                       \
      ->MeasureProcessCPUTime()             \
      ->MinTime(3.0)

VISALIGN_CONV(rn50_stem1, kRn50Stem1);
VISALIGN_CONV(rn50_stem2, kRn50Stem2);
VISALIGN_CONV(rn50_stage1_3x3, kRn50Stage1);
VISALIGN_CONV(rn50_stage4_3x3, kRn50Stage4);
VISALIGN_CONV(convnext_stem, kConvNextStem);
VISALIGN_CONV(convnext_downsample1, kConvNextDown);

}  // namespace
}  // namespace visalign::clip

BENCHMARK_MAIN();
