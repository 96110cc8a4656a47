// VIOLIN evaluator throughput (docs/performance.md, "VIOLIN evaluator"):
//   EvaluateSolid256    - 1,000 solid 256x256 PNGs, decode + score, end to end through Evaluate();
//   EvaluateNoisy1024   - 1024x1024 uniform-noise PNGs (the worst case for Canny and the FFT);
//   thread counts 1 and 2 for the scaling figure; the remaining benchmarks split one 1024x1024
//   noisy image's time into decode, gray/sums, Canny, FFT and the color metrics.
// Images are written once to a temporary folder (page cache) before timing.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>

#include "imaging/pixel_kernels.h"
#include "visalign/benchmarks/violin/evaluate.h"
#include "visalign/core/io.h"
#include "visalign/imaging/purity.h"

namespace visalign::violin {
namespace {

namespace fs = std::filesystem;

constexpr int kSolidCount = 1000;
constexpr int kSolidSize = 256;
// Each Evaluate() call starts its workers afresh, and each first touches ~8 MB of per-thread scratch
// (read buffer, FFT staging): 72 images per call keep that start-up small, as it is in real runs of
// thousands of images (with 24 it cost ~0.5 ms per image and ~0.05 of the 2-thread scaling).
constexpr int kNoisyCount = 72;
constexpr int kNoisySize = 1024;

struct Corpus {
  std::vector<ManifestItem> items;
  ModelImages images;
};

imaging::Image NoisyImage(int size, std::mt19937& rng) {
  imaging::Image img(size, size);
  for (uint8_t& v : img.rgb) v = static_cast<uint8_t>(rng());
  return img;
}

Corpus MakeCorpus(const std::string& name, int count, int size, bool noisy) {
  const fs::path dir = fs::temp_directory_path() / ("visalign_bench_" + name);
  fs::create_directories(dir);
  std::mt19937 rng(11);
  Corpus c;
  c.images.model = name;
  for (int i = 0; i < count; ++i) {
    ManifestItem item;
    item.id = name + std::to_string(i);
    const color::Srgb8 target{static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng())};
    item.targets = {target};
    const fs::path path = dir / (item.id + ".png");
    if (!fs::exists(path)) {
      imaging::Image img = noisy ? NoisyImage(size, rng) : imaging::Image(size, size);
      if (!noisy)
        for (size_t p = 0; p < img.rgb.size(); p += 3)
          img.rgb[p] = target.r, img.rgb[p + 1] = target.g, img.rgb[p + 2] = target.b;
      if (!imaging::WritePng(path, img).ok()) std::abort();
    }
    c.images.sources.push_back({item.id, 0, path});
    c.items.push_back(std::move(item));
  }
  return c;
}

const Corpus& Solid() {
  static const Corpus c = MakeCorpus("solid256", kSolidCount, kSolidSize, false);
  return c;
}
const Corpus& Noisy() {
  static const Corpus c = MakeCorpus("noisy1024", kNoisyCount, kNoisySize, true);
  return c;
}

void RunEvaluate(benchmark::State& state, const Corpus& corpus) {
  EvaluateOptions options;
  options.threads = static_cast<int>(state.range(0));
  options.show_progress = false;
  for (auto _ : state) {
    auto summary = Evaluate(corpus.items, {corpus.images}, options);
    if (!summary.ok() || summary->n_scored() != corpus.items.size()) state.SkipWithError("evaluation failed");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * corpus.items.size()));
}

void BM_EvaluateSolid256(benchmark::State& state) { RunEvaluate(state, Solid()); }
void BM_EvaluateNoisy1024(benchmark::State& state) { RunEvaluate(state, Noisy()); }
BENCHMARK(BM_EvaluateSolid256)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_EvaluateNoisy1024)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// --- Where the time of one noisy 1024x1024 image goes ---------------------------------------
const std::string& NoisyPngBytes() {
  static const std::string bytes = *ReadFile(Noisy().images.sources[0].path);
  return bytes;
}
const imaging::Image& NoisyDecoded() {
  static const imaging::Image img = *imaging::DecodeImage(NoisyPngBytes(), "bench");
  return img;
}

void BM_DecodeNoisy1024(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(imaging::DecodeImage(NoisyPngBytes(), "bench"));
}
void BM_ReadFileNoisy1024(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ReadFile(Noisy().images.sources[0].path));
}
void BM_GrayNoisy1024(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(imaging::ToGray(NoisyDecoded(), {0, 0, kNoisySize, kNoisySize}));
}
void BM_CannyNoisy1024(benchmark::State& state) {
  const imaging::GrayImage gray = imaging::ToGray(NoisyDecoded(), {0, 0, kNoisySize, kNoisySize});
  for (auto _ : state) benchmark::DoNotOptimize(imaging::CannyEdgeDensity(gray));
}
void BM_HighFrequencyNoisy1024(benchmark::State& state) {
  const imaging::GrayImage gray = imaging::ToGray(NoisyDecoded(), {0, 0, kNoisySize, kNoisySize});
  for (auto _ : state) benchmark::DoNotOptimize(imaging::HighFrequencyRatio(gray));
}
// AnalyzeRegion's first pass alone: gray plane, channel sums and squares, gray range.
void BM_RegionPassNoisy1024(benchmark::State& state) {
  const imaging::Image& img = NoisyDecoded();
  const imaging::PixelKernels& kernels = imaging::BestPixelKernels();
  std::vector<uint8_t> gray(static_cast<size_t>(kNoisySize) * kNoisySize);
  for (auto _ : state) {
    imaging::RgbTotals totals;
    for (int y = 0; y < kNoisySize; ++y)
      kernels.rgb_row(img.pixel(0, y), kNoisySize, &gray[static_cast<size_t>(y) * kNoisySize], &totals);
    benchmark::DoNotOptimize(totals);
  }
}
void BM_AnalyzeRegionNoisy1024(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(imaging::AnalyzeRegion(NoisyDecoded(), {0, 0, kNoisySize, kNoisySize}));
}
void BM_PrecisionMetrics(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(PrecisionRaw({120.5, 33.25, 200.0}, {128, 30, 190}));
}
void BM_DecodeSolid256(benchmark::State& state) {
  static const std::string bytes = *ReadFile(Solid().images.sources[0].path);
  for (auto _ : state) benchmark::DoNotOptimize(imaging::DecodeImage(bytes, "bench"));
}
BENCHMARK(BM_ReadFileNoisy1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeNoisy1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GrayNoisy1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CannyNoisy1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HighFrequencyNoisy1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RegionPassNoisy1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AnalyzeRegionNoisy1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PrecisionMetrics);
BENCHMARK(BM_DecodeSolid256)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace visalign::violin

BENCHMARK_MAIN();
