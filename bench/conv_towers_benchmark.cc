// Native image-tower throughput at batch 32 on random-weight models of real catalog shapes:
// * the convolutional towers with OpenCLIP's RN50, convnext_base, ViTamin-S, MobileCLIP2-S0 (FastViT MCi)
//   and MobileCLIP-B (MCi ViT) shapes, and ViT-B-32 as the ViT path's reference (WriteRandomClipModel; the figure
//   docs/performance.md compares with plain PyTorch, bench/conv_towers_torch.py);
// * the ViT-family towers of issue 31 (PE-Core, CoCa, EVA02, CLIPA, MetaCLIP 2, MobileCLIP2-L-14's timm
//   ViT) and the plain OpenCLIP ViT of the same size, from open_clip's own model configs
//   (data/clip/open_clip_model_configs.json) with random weights from clip::RandomTensorSpecs (the specs
//   random_model_test.cc checks against the fixtures): GFLOP per CPU-second (analytic FLOPs of the image
//   tower), the figure docs/performance.md compares with the ViT path's.
// Run: VISALIGN_DATA=data build/bench/conv_towers_benchmark (threads: VISALIGN_BENCH_THREADS, default 2;
// VISALIGN_BENCH_MODELS=DIR keeps the models in DIR/<arch>; --benchmark_filter=Named to time the ViT family only).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>

#include <ctime>
#include <fstream>

#include <nlohmann/json.hpp>

#include "clip/config.h"
#include "clip/random_model.h"
#include "clip/safetensors.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"
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
  const fs::path root = keep != nullptr
                            ? fs::path(keep)
                            : fs::temp_directory_path() / ("visalign_conv_bench_" + std::to_string(::getpid()));
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
  const double block =
      tokens * w * 3 * w + tokens * w * w + 2 * tokens * tokens * w + tokens * w * v.mlp_width * (gated ? 3 : 2);
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
        embed +=
            before * in * mid + after * mid * kTaps + after * mid * out + (j == 0 && in != out ? after * in * out : 0);
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
  state.counters["images/s"] =
      benchmark::Counter(static_cast<double>(kBatch) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["threads"] = BenchThreads();
  if (const double macs = ImageMultiplyAdds(model.config()); macs > 0) {
    state.counters["GFLOP/image"] = 2 * macs / 1e9;
    state.counters["GFLOP/s"] = benchmark::Counter(2 * macs / 1e9 * kBatch * static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate);
  }
}

// The folder of a random-weight model with open_clip's config `name` (written on first use).
fs::path NamedModelDir(const std::string& name) {
  const char* keep = std::getenv("VISALIGN_BENCH_MODELS");
  const fs::path root = keep != nullptr
                            ? fs::path(keep)
                            : fs::temp_directory_path() / ("visalign_vit_bench_" + std::to_string(::getpid()));
  const fs::path dir = root / name;
  if (keep == nullptr) {
    static const fs::path temp = root;
    static const bool registered = [] { return std::atexit([] { fs::remove_all(temp); }) == 0; }();
    (void)registered;
  }
  if (fs::exists(dir / "open_clip_model.safetensors")) return dir;
  const Result<fs::path> configs_file = DataFile("clip/open_clip_model_configs.json");
  if (!configs_file.ok()) std::abort();
  const nlohmann::json configs = nlohmann::json::parse(ReadFile(*configs_file).value())["configs"];
  nlohmann::json config = {{"model_cfg", configs.at(name)}};
  const int size = config["model_cfg"]["vision_cfg"].value("image_size", 224);
  config["preprocess_cfg"] = {{"size", size}};
  const ClipConfig parsed = ParseOpenClipConfig(config, name).value();
  std::vector<TensorShape> shapes;
  std::map<std::string, RandomTensorSpec> specs;
  for (const RandomTensorSpec& spec : RandomTensorSpecs(parsed)) {
    shapes.push_back(spec.tensor);
    specs.emplace(spec.tensor.name, spec);
  }
  fs::create_directories(dir);
  if (!WriteFileAtomic(dir / "open_clip_config.json", config.dump()).ok()) std::abort();
  const Status written =
      WriteSafetensors(dir / "open_clip_model.safetensors", shapes,
                       [&](const TensorShape& t, float* values) { FillRandomTensor(specs.at(t.name), 0, values); });
  if (!written.ok()) std::abort();
  return dir;
}

// Multiply-add FLOPs (x2) of one image through a ViT-family tower: patch embedding, per block the qkv,
// output, MLP (SwiGLU: two input GEMMs) GEMMs and the two attention products, the pooling head (MAP:
// kv over all tokens; CoCa's pooler: ln_k'd tokens into k|v), the projection.
double VitImageFlops(const ClipConfig& c) {
  const VisionConfig& v = c.vision;
  const double w = v.width, mlp = v.mlp_width;
  const double patches = static_cast<double>(v.grid()) * v.grid();
  const double t = patches + (v.class_token ? 1 : 0);
  const double mlp_inputs = v.eva.swiglu ? 2.0 : 1.0;
  const double block = 2.0 * t * (3 * w * w + w * w + mlp_inputs * w * mlp + mlp * w) + 2.0 * 2.0 * t * t * w;
  double flops = v.layers * block + 2.0 * patches * 3.0 * v.patch_size * v.patch_size * w;
  if (v.pooling == Pooling::kAttentionPool) {
    const double pool_mlp = v.pool_mlp_width > 0 ? v.pool_mlp_width : mlp;
    flops += 2.0 * t * 2 * w * w + 2.0 * (2 * w * w + 2 * w * pool_mlp) + 2.0 * 2.0 * t * w;
  }
  if (v.attentional_pool) flops += 2.0 * t * 2 * c.embed_dim * w + 2.0 * 2.0 * t * c.embed_dim;
  return flops + 2.0 * w * c.embed_dim;
}

double ProcessCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// open_clip model `name`'s image tower at batch 32: images/s and GFLOP per CPU-second of the process.
void BM_EncodeNamedTower(benchmark::State& state, const char* name) {
  SetThreadCount(BenchThreads());
  static std::map<std::string, ClipModel> models;
  if (!models.count(name)) {
    Result<ClipModel> m = LoadClipModel(NamedModelDir(name));
    if (!m.ok()) {
      state.SkipWithError(m.status().ToString().c_str());
      return;
    }
    models.emplace(name, std::move(m).value());
  }
  const ClipModel& model = models.at(name);
  const int s = model.image_size();
  Matrix pixels(kBatch, 3 * s * s);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : pixels.data) v = normal(rng);
  const double cpu_start = ProcessCpuSeconds();
  for (auto _ : state) {
    Result<Matrix> out = model.EncodePixels(pixels);
    if (!out.ok()) std::abort();
    benchmark::DoNotOptimize(out->data.data());
  }
  const double cpu_seconds = ProcessCpuSeconds() - cpu_start;
  const double gflop = VitImageFlops(model.config()) * kBatch * static_cast<double>(state.iterations()) * 1e-9;
  state.counters["images/s"] =
      benchmark::Counter(static_cast<double>(kBatch) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["GFLOP/image"] = VitImageFlops(model.config()) * 1e-9;
  state.counters["GFLOPS/CPU-s"] = gflop / cpu_seconds;
  state.counters["threads"] = BenchThreads();
}

// Each family beside the plain OpenCLIP ViT of its size (same width, depth, patch and image size).
#define VISALIGN_NAMED_TOWER(name, iterations)        \
  BENCHMARK_CAPTURE(BM_EncodeNamedTower, name, #name) \
      ->Unit(benchmark::kMillisecond)                 \
      ->UseRealTime()                                 \
      ->MeasureProcessCPUTime()                       \
      ->Iterations(iterations)
VISALIGN_NAMED_TOWER(ViT - B - 16, 3);
VISALIGN_NAMED_TOWER(PE - Core - B - 16, 3);
VISALIGN_NAMED_TOWER(EVA02 - B - 16, 3);
VISALIGN_NAMED_TOWER(ViT - B - 32, 10);
VISALIGN_NAMED_TOWER(coca_ViT - B - 32, 10);
VISALIGN_NAMED_TOWER(ViT - L - 14, 1);
VISALIGN_NAMED_TOWER(ViT - L - 14 - CLIPA, 1);
VISALIGN_NAMED_TOWER(MobileCLIP2 - L - 14, 1);
VISALIGN_NAMED_TOWER(ViT - H - 14 - worldwide, 1);

BENCHMARK_CAPTURE(BM_EncodeConvTower, RN50, RandomClipArch::kRN50)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->MinTime(10.0);
BENCHMARK_CAPTURE(BM_EncodeConvTower, convnext_base, RandomClipArch::kConvNextBase)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->MinTime(10.0);
// ViTamin-S (conv stem + GeGLU ViT) beside the plain ViT path (ViT-B-32) it is measured against.
BENCHMARK_CAPTURE(BM_EncodeConvTower, ViTamin_S, RandomClipArch::kViTaminS)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->MinTime(10.0);
BENCHMARK_CAPTURE(BM_EncodeConvTower, MobileCLIP2_S0, RandomClipArch::kMobileClip2S0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->MinTime(10.0);
BENCHMARK_CAPTURE(BM_EncodeConvTower, MobileCLIP_B, RandomClipArch::kMobileClipB)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->MinTime(10.0);
BENCHMARK_CAPTURE(BM_EncodeConvTower, ViT_B_32, RandomClipArch::kViTB32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->MinTime(10.0);

}  // namespace
}  // namespace visalign::clip

BENCHMARK_MAIN();
