// Color throughput: batch sRGB8 -> CIELAB (the VIOLIN evaluator's per-pixel step), the scalar
// path for comparison, and CIEDE2000 over 1 M pairs. One thread.
// Run: build/bench/color_benchmark   (results recorded in docs/performance.md)
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "visalign/color.h"

namespace {

using namespace visalign::color;

constexpr size_t kPixels = 1 << 20;  // a 1024×1024 image
constexpr size_t kPairs = 1'000'000;

std::vector<uint8_t> RandomPixels(size_t n) {
  std::mt19937 rng(42);
  std::vector<uint8_t> px(3 * n);
  for (uint8_t& v : px) v = uint8_t(rng());
  return px;
}

void BM_Srgb8ToLabBatch(benchmark::State& state) {
  const std::vector<uint8_t> px = RandomPixels(kPixels);
  std::vector<double> lab(3 * kPixels);
  for (auto _ : state) {
    Srgb8ToLabBatch(px.data(), kPixels, lab.data());
    benchmark::DoNotOptimize(lab.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(kPixels));
  state.counters["Mconv/s"] = benchmark::Counter(double(kPixels) / 1e6, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Srgb8ToLabBatch)->Unit(benchmark::kMillisecond);

void BM_Srgb8ToLabScalar(benchmark::State& state) {
  const std::vector<uint8_t> px = RandomPixels(kPixels);
  std::vector<double> lab(3 * kPixels);
  for (auto _ : state) {
    for (size_t i = 0; i < kPixels; ++i) {
      const Lab c = Srgb8ToLab({px[3 * i], px[3 * i + 1], px[3 * i + 2]});
      lab[3 * i] = c.L;
      lab[3 * i + 1] = c.a;
      lab[3 * i + 2] = c.b;
    }
    benchmark::DoNotOptimize(lab.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(kPixels));
  state.counters["Mconv/s"] = benchmark::Counter(double(kPixels) / 1e6, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Srgb8ToLabScalar)->Unit(benchmark::kMillisecond);

void BM_DeltaE2000(benchmark::State& state) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> lightness(0, 100), ab(-100, 100);
  std::vector<Lab> p(kPairs), q(kPairs);
  for (size_t i = 0; i < kPairs; ++i) {
    p[i] = {lightness(rng), ab(rng), ab(rng)};
    q[i] = {lightness(rng), ab(rng), ab(rng)};
  }
  for (auto _ : state) {
    double sum = 0;
    for (size_t i = 0; i < kPairs; ++i) sum += DeltaE2000(p[i], q[i]);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(kPairs));
  state.counters["Mpairs/s"] = benchmark::Counter(double(kPairs) / 1e6, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DeltaE2000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
