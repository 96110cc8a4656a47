// Native image-tower throughput of the convolutional CLIP towers on random-weight models with
// OpenCLIP's RN50, convnext_base and ViTamin-S shapes, and ViT-B-32 as the ViT path's reference
// (GFLOP/s for the ViT-path towers; written by WriteRandomClipModel into a temporary
// directory): images/s at batch 32 (the figure docs/performance.md compares with plain PyTorch,
// bench/conv_towers_torch.py). Run: VISALIGN_DATA=data build/bench/conv_towers_benchmark
// (threads: VISALIGN_BENCH_THREADS, default 2; VISALIGN_BENCH_MODELS=DIR keeps the models in DIR/<arch>).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cmath>
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

// Multiply-adds of one image through a ViT-path tower (the ViT's patch embedding or ViTamin's conv
// stem, the blocks, the projection), for GFLOP per CPU-second; 0 for the other towers.
double ImageMultiplyAdds(const ClipConfig& c) {
  const VisionConfig& v = c.vision;
  if (v.tower != VisionTower::kViT) return 0.0;
  const double w = v.width;
  const double grid = v.grid();
  const double tokens = grid * grid + (v.class_token ? 1 : 0);
  const bool gated = v.vitamin.enabled;  // GeGLU: two input matrices
  const double block = tokens * w * 3 * w + tokens * w * w + 2 * tokens * tokens * w +
                       tokens * w * v.mlp_width * (gated ? 3 : 2);
  double embed = grid * grid * 3.0 * v.patch_size * v.patch_size * w;
  if (v.vitamin.enabled) {  // stem, MbConv stages (1×1, depthwise 3×3, 1×1, shortcut expand), strided conv
    constexpr double kTaps = 9;
    const auto half = [](double n) { return std::floor((n - 1) / 2) + 1; };
    double size = half(v.image_size);
    const double stem = v.vitamin.stem_width;
    embed = size * size * stem * 3 * kTaps + size * size * stem * stem * kTaps;
    double in = stem;
    for (size_t s = 0; s < 2; ++s) {
      const double out = v.vitamin.stage_widths[s];
      const double mid = 4 * out;
      for (int j = 0; j < v.vitamin.stage_depths[s]; ++j) {
        const double before = size * size;
        if (j == 0) size = half(size);
        const double after = size * size;
        embed += before * in * mid + after * mid * kTaps + after * mid * out + (j == 0 && in != out ? after * in * out : 0);
        in = out;
      }
    }
    size = half(size);
    embed += size * size * in * w * kTaps;
  }
  return embed + v.layers * block + w * c.embed_dim;
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
  if (const double macs = ImageMultiplyAdds(model.config()); macs > 0) {
    state.counters["GFLOP/image"] = 2 * macs / 1e9;
    state.counters["GFLOP/s"] =
        benchmark::Counter(2 * macs / 1e9 * kBatch * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  }
}

BENCHMARK_CAPTURE(BM_EncodeConvTower, RN50, RandomClipArch::kRN50)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->MinTime(10.0);
BENCHMARK_CAPTURE(BM_EncodeConvTower, convnext_base, RandomClipArch::kConvNextBase)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->MinTime(10.0);
// ViTamin-S (conv stem + GeGLU ViT) beside the plain ViT path (ViT-B-32) it is measured against.
BENCHMARK_CAPTURE(BM_EncodeConvTower, ViTamin_S, RandomClipArch::kViTaminS)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->MinTime(10.0);
BENCHMARK_CAPTURE(BM_EncodeConvTower, ViT_B_32, RandomClipArch::kViTB32)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->MinTime(10.0);

}  // namespace
}  // namespace visalign::clip

BENCHMARK_MAIN();
