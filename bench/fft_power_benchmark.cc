// The hf FFT kernel alone (docs/performance.md, "VIOLIN hf FFT"): HighPowerRadix2 on a noisy
// square gray plane with the hf mask, without the gray-range pass BM_HighFrequencyNoisy1024 in
// violin_eval_benchmark also times. Argument: side length. The FFT's cost does not depend on the
// pixel values.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "imaging/fft_power.h"

namespace visalign::imaging {
namespace {

constexpr double kHfCutoff = 0.25;

GrayImage NoisyPlane(int side) {
  std::mt19937 rng(11);
  GrayImage g{side, side, std::vector<uint8_t>(static_cast<size_t>(side) * side)};
  for (uint8_t& v : g.pixels) v = static_cast<uint8_t>(rng());
  return g;
}

// numpy's r > 0.25 as a first counted column per row (as purity.cc builds it).
std::vector<int> HfMask(int side) {
  std::vector<int> first_column(side / 2 + 1);
  const double inv = 1.0 / side;
  for (int ky = 0; ky <= side / 2; ++ky) {
    int kx = 0;
    while (kx <= side / 2 && std::sqrt(kx * inv * (kx * inv) + ky * inv * (ky * inv)) <= kHfCutoff) ++kx;
    first_column[ky] = kx;
  }
  return first_column;
}

void RunHighPower(benchmark::State& state, const FftKernels& kernels) {
  const int side = static_cast<int>(state.range(0));
  const GrayImage gray = NoisyPlane(side);
  const std::vector<int> mask = HfMask(side);
  for (auto _ : state) benchmark::DoNotOptimize(HighPowerRadix2(gray, mask, kernels));
  state.SetLabel(kernels.name);
}

void BM_HighPowerRadix2(benchmark::State& state) { RunHighPower(state, BestFftKernels()); }
void BM_HighPowerRadix2Baseline(benchmark::State& state) { RunHighPower(state, BaselineFftKernels()); }
BENCHMARK(BM_HighPowerRadix2)->Arg(256)->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HighPowerRadix2Baseline)->Arg(1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace visalign::imaging

BENCHMARK_MAIN();
