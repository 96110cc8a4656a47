// Native image-tower throughput of the convolutional CLIP towers on random-weight models with
// OpenCLIP's RN50, convnext_base, MobileCLIP2-S0 (FastViT MCi) and MobileCLIP-B (MCi ViT) shapes
// (written by WriteRandomClipModel into a temporary directory), and of ViT-B-32 for the ViT path's
// GFLOP per CPU-second in the same run: images/s at batch 32 (the figure docs/performance.md compares
// with plain PyTorch, bench/conv_towers_torch.py). Run: VISALIGN_DATA=data build/bench/conv_towers_benchmark
// (threads: VISALIGN_BENCH_THREADS, default 2; VISALIGN_BENCH_MODELS=DIR keeps the models in DIR/<arch>).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>

#include "visalign/clip.h"
#include "visalign/core/parallel.h"

namespace visalign::clip {
namespace {

namespace fs = std::filesystem;

constexpr int kBatch = 32;

int BenchThreads() {
  const char* env = std::getenv("VISALIGN_BENCH_THREADS");
  return env != nullptr ? std::atoi(env) : 2;
}

// The model of `arch`, written on first use (reused from VISALIGN_BENCH_MODELS when it is there).
const ClipModel& Model(RandomClipArch arch) {
  static std::map<RandomClipArch, ClipModel> models;
  auto it = models.find(arch);
  if (it != models.end()) return it->second;
  const char* keep = std::getenv("VISALIGN_BENCH_MODELS");
  const fs::path root = keep != nullptr ? fs::path(keep) : fs::temp_directory_path() / ("visalign_conv_bench_" + std::to_string(::getpid()));
  const fs::path dir = root / std::string(RandomClipArchName(arch));
  if (!fs::exists(dir / "open_clip_model.safetensors")) {
    RandomClipModelOptions options;
    options.arch = arch;
    options.overwrite = true;
    if (!WriteRandomClipModel(dir, options).ok()) std::abort();
  }
  if (keep == nullptr) {
    static const fs::path temp = root;
    std::atexit([] { fs::remove_all(temp); });
  }
  Result<ClipModel> m = LoadClipModel(dir);
  if (!m.ok()) std::abort();
  return models.emplace(arch, std::move(m).value()).first->second;
}

void BM_EncodeConvTower(benchmark::State& state, RandomClipArch arch) {
  SetThreadCount(BenchThreads());
  const ClipModel& model = Model(arch);
  const int s = model.image_size();
  Matrix pixels(kBatch, 3 * s * s);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);  // preprocessed pixels are roughly standard normal
  for (float& v : pixels.data) v = normal(rng);
  for (auto _ : state) {
    Result<Matrix> out = model.EncodePixels(pixels);
    if (!out.ok()) std::abort();
    benchmark::DoNotOptimize(out->data.data());
  }
  state.counters["images/s"] = benchmark::Counter(static_cast<double>(kBatch) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["threads"] = BenchThreads();
}

BENCHMARK_CAPTURE(BM_EncodeConvTower, RN50, RandomClipArch::kRN50)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->MinTime(10.0);
BENCHMARK_CAPTURE(BM_EncodeConvTower, convnext_base, RandomClipArch::kConvNextBase)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->MinTime(10.0);
BENCHMARK_CAPTURE(BM_EncodeConvTower, MobileCLIP2_S0, RandomClipArch::kMobileClip2S0)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->MinTime(10.0);
BENCHMARK_CAPTURE(BM_EncodeConvTower, MobileCLIP_B, RandomClipArch::kMobileClipB)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->MinTime(10.0);
BENCHMARK_CAPTURE(BM_EncodeConvTower, ViT_B_32, RandomClipArch::kViTB32)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->MinTime(10.0);

}  // namespace
}  // namespace visalign::clip

BENCHMARK_MAIN();
