// Native CLIP throughput on a random-weight ViT-B-32-shaped model (generated here: OpenCLIP
// layout, fp32, 151 M parameters of which 88 M in the vision tower) and the GEMM backend candidates.
// Run: VISALIGN_DATA=data build/bench/clip_benchmark --benchmark_counters_tabular=true (threads:
// VISALIGN_BENCH_THREADS, default 2). Items/s and GFLOPS (analytic FLOPs of the forward pass) are reported as counters.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <unistd.h>

#include <omp.h>

#include <cstdlib>
#include <ctime>
#include <eigen3/Eigen/Core>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>

#include "clip/gemm.h"
#include "clip/safetensors.h"
#include "visalign/clip.h"
#include "visalign/core/parallel.h"

namespace visalign::clip {
namespace {

namespace fs = std::filesystem;

constexpr int kEmbedDim = 512;
constexpr int kImageSize = 224;
constexpr int kPatch = 32;
constexpr int kVisionWidth = 768;
constexpr int kTextWidth = 512;
constexpr int kLayers = 12;
constexpr int kContext = 77;
constexpr int kVocab = 49408;
constexpr int kMlpRatio = 4;

int BenchThreads() {
  const char* env = std::getenv("VISALIGN_BENCH_THREADS");
  return env != nullptr ? std::atoi(env) : 2;
}

// Deterministic pseudo-random values with the scale of trained CLIP weights.
std::vector<float> RandomValues(size_t n, float scale, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

void AddTower(std::vector<NamedTensor>& t, const std::string& prefix, int width, uint64_t* seed) {
  const int64_t w = width;
  const int64_t mlp = kMlpRatio * w;
  const float scale = 1.0f / std::sqrt(static_cast<float>(w));
  for (int i = 0; i < kLayers; ++i) {
    const std::string p = prefix + "transformer.resblocks." + std::to_string(i) + ".";
    auto add = [&](const std::string& name, std::vector<int64_t> shape, float s, float offset = 0.0f) {
      size_t n = 1;
      for (int64_t d : shape) n *= static_cast<size_t>(d);
      std::vector<float> v = RandomValues(n, s, (*seed)++);
      for (float& x : v) x += offset;
      t.push_back({name, std::move(shape), std::move(v)});
    };
    add(p + "ln_1.weight", {w}, 0.1f, 1.0f);
    add(p + "ln_1.bias", {w}, 0.05f);
    add(p + "ln_2.weight", {w}, 0.1f, 1.0f);
    add(p + "ln_2.bias", {w}, 0.05f);
    add(p + "attn.in_proj_weight", {3 * w, w}, scale);
    add(p + "attn.in_proj_bias", {3 * w}, 0.05f);
    add(p + "attn.out_proj.weight", {w, w}, scale);
    add(p + "attn.out_proj.bias", {w}, 0.05f);
    add(p + "mlp.c_fc.weight", {mlp, w}, scale);
    add(p + "mlp.c_fc.bias", {mlp}, 0.05f);
    add(p + "mlp.c_proj.weight", {w, mlp}, scale / 2);
    add(p + "mlp.c_proj.bias", {w}, 0.05f);
  }
}

// Writes the random ViT-B-32 model once per process into a temporary directory.
const fs::path& ModelDir() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("visalign_clip_bench_" + std::to_string(::getpid()));
    fs::create_directories(d);
    uint64_t seed = 1;
    std::vector<NamedTensor> t;
    AddTower(t, "visual.", kVisionWidth, &seed);
    AddTower(t, "", kTextWidth, &seed);
    const int64_t grid = kImageSize / kPatch;
    auto add = [&](const std::string& name, std::vector<int64_t> shape, float s, float offset = 0.0f) {
      size_t n = 1;
      for (int64_t x : shape) n *= static_cast<size_t>(x);
      std::vector<float> v = RandomValues(n, s, seed++);
      for (float& x : v) x += offset;
      t.push_back({name, std::move(shape), std::move(v)});
    };
    add("visual.class_embedding", {kVisionWidth}, 0.03f);
    add("visual.positional_embedding", {grid * grid + 1, kVisionWidth}, 0.03f);
    add("visual.conv1.weight", {kVisionWidth, 3, kPatch, kPatch}, 0.02f);
    add("visual.ln_pre.weight", {kVisionWidth}, 0.1f, 1.0f);
    add("visual.ln_pre.bias", {kVisionWidth}, 0.05f);
    add("visual.ln_post.weight", {kVisionWidth}, 0.1f, 1.0f);
    add("visual.ln_post.bias", {kVisionWidth}, 0.05f);
    add("visual.proj", {kVisionWidth, kEmbedDim}, 0.03f);
    add("token_embedding.weight", {kVocab, kTextWidth}, 0.02f);
    add("positional_embedding", {kContext, kTextWidth}, 0.01f);
    add("ln_final.weight", {kTextWidth}, 0.1f, 1.0f);
    add("ln_final.bias", {kTextWidth}, 0.05f);
    add("text_projection", {kTextWidth, kEmbedDim}, 0.04f);
    add("logit_scale", {}, 0.0f, 4.6052f);
    if (!WriteSafetensors(d / "open_clip_model.safetensors", std::move(t)).ok()) std::abort();
    std::ofstream(d / "open_clip_config.json") << R"({"model_cfg": {"embed_dim": 512, "quick_gelu": false,
      "vision_cfg": {"image_size": 224, "layers": 12, "width": 768, "patch_size": 32},
      "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 512, "heads": 8, "layers": 12}},
      "preprocess_cfg": {"size": 224, "mean": [0.48145466, 0.4578275, 0.40821073],
      "std": [0.26862954, 0.26130258, 0.27577711], "interpolation": "bicubic", "resize_mode": "shortest"}})";
    std::atexit(
        [] { fs::remove_all(fs::temp_directory_path() / ("visalign_clip_bench_" + std::to_string(::getpid()))); });
    return d;
  }();
  return dir;
}

ClipLoadOptions BenchOptions(Precision precision) {
  ClipLoadOptions options;
  options.max_batch = 64;
  options.precision = precision;
  return options;
}

// The model in `precision` (loaded once per process); nullptr when the CPU cannot run it.
const ClipModel* Model(Precision precision = Precision::kFp32) {
  static std::map<Precision, std::optional<ClipModel>> models;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = models.find(precision);
  if (it == models.end()) {
    Result<ClipModel> m = LoadClipModel(ModelDir(), BenchOptions(precision));
    it = models.emplace(precision, m.ok() ? std::optional<ClipModel>(std::move(m).value()) : std::nullopt).first;
  }
  return it->second ? &*it->second : nullptr;
}

const char* kBf16Unavailable = "bf16/bf16x3: not available on this CPU (no AVX512_BF16 or AMX)";

// Loading the model (mmap, validation, and for bf16 the conversion of the weights), cold in the
// sense that every iteration maps and converts again (the file itself is in the page cache).
void BM_LoadModel(benchmark::State& state) {
  SetThreadCount(BenchThreads());
  const auto precision = static_cast<Precision>(state.range(0));
  if (Model(precision) == nullptr) {  // also writes the model file and warms the page cache
    state.SkipWithError(kBf16Unavailable);
    return;
  }
  for (auto _ : state) {
    Result<ClipModel> m = LoadClipModel(ModelDir(), BenchOptions(precision));
    benchmark::DoNotOptimize(m.ok());
  }
}
BENCHMARK(BM_LoadModel)
    ->Arg(static_cast<int>(Precision::kFp32))
    ->Arg(static_cast<int>(Precision::kBf16))
    ->Arg(static_cast<int>(Precision::kBf16x3))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);

// Multiply-add FLOPs of one tower pass over `seq` tokens (linear layers + attention).
double TowerFlops(int width, int seq) {
  const double linear = 2.0 * seq * (4.0 * width * width + 2.0 * kMlpRatio * width * width);
  const double attention = 2.0 * 2.0 * seq * seq * width;
  return kLayers * (linear + attention);
}

double ImageFlops() {
  const int tokens = (kImageSize / kPatch) * (kImageSize / kPatch);
  return TowerFlops(kVisionWidth, tokens + 1) + 2.0 * tokens * kVisionWidth * 3 * kPatch * kPatch +
         2.0 * kVisionWidth * kEmbedDim;
}

double ProcessCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Runs `encode` once per iteration and reports items/s, GFLOPS (wall) and GFLOPS per CPU-second of
// the whole process (all threads): the efficiency figure that survives a busy machine, where
// descheduled threads inflate wall time.
template <typename Encode>
void RunEncode(benchmark::State& state, int items, double flops_per_item, Encode encode) {
  const double cpu_start = ProcessCpuSeconds();
  for (auto _ : state) encode();
  const double cpu_seconds = ProcessCpuSeconds() - cpu_start;
  const double flops = static_cast<double>(state.iterations()) * items * flops_per_item;
  state.SetItemsProcessed(state.iterations() * items);
  state.counters["items/s"] =
      benchmark::Counter(static_cast<double>(items), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOPS"] =
      benchmark::Counter(items * flops_per_item * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOPS/CPU-s"] = flops * 1e-9 / cpu_seconds;
}

// Args: batch, precision (0 fp32, 1 bf16, 2 bf16x3).
void BM_EncodeImages(benchmark::State& state) {
  SetThreadCount(BenchThreads());
  const int batch = static_cast<int>(state.range(0));
  const ClipModel* model = Model(static_cast<Precision>(state.range(1)));
  if (model == nullptr) {
    state.SkipWithError(kBf16Unavailable);
    return;
  }
  Matrix pixels(batch, 3 * kImageSize * kImageSize);
  pixels.data = RandomValues(pixels.data.size(), 1.8f, 99);
  RunEncode(state, batch, ImageFlops(),
            [&] { benchmark::DoNotOptimize(model->EncodePixels(pixels).value().data.data()); });
}
BENCHMARK(BM_EncodeImages)
    ->ArgsProduct({{1, 32}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->MinTime(5.0);
BENCHMARK(BM_EncodeImages)
    ->Args({480, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Iterations(1);

// Texts padded to the full context (every position computed, as open_clip does): `long` texts of
// 77 tokens. Short captions are far cheaper here because computation stops at the last eot.
void BM_EncodeTexts(benchmark::State& state) {
  SetThreadCount(BenchThreads());
  const int batch = static_cast<int>(state.range(0));
  const bool full_context = state.range(1) != 0;
  std::vector<std::string> texts;
  for (int i = 0; i < batch; ++i) {
    std::string t = "a photo of a " + std::to_string(i) + " colorful banana";
    if (full_context) {
      for (int k = 0; k < 80; ++k) t += " word";
    }
    texts.push_back(t);
  }
  const ClipModel& model = *Model();
  const Result<std::vector<int32_t>> ids = model.Tokenize(texts.back());
  if (!ids.ok()) {
    state.SkipWithError(
        ("tokenizer unavailable (set VISALIGN_DATA to the data/ folder): " + ids.status().ToString()).c_str());
    return;
  }
  const int seq = static_cast<int>(ids->size());
  RunEncode(state, batch, TowerFlops(kTextWidth, seq) + 2.0 * kTextWidth * kEmbedDim,
            [&] { benchmark::DoNotOptimize(model.EncodeTexts(texts).value().data.data()); });
  state.counters["tokens"] = seq;
}
BENCHMARK(BM_EncodeTexts)
    ->Args({100, 1})
    ->Args({100, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->MinTime(5.0);

// Tokenizing one word of N random lowercase letters (the fuzzer's slow input): BPE's cost in the
// length of a word, which was quadratic (120,000 letters took 6.8 s).
void BM_TokenizeLongWord(benchmark::State& state) {
  std::mt19937 rng(19);
  std::string word(static_cast<size_t>(state.range(0)), 'a');
  for (char& c : word) c = static_cast<char>('a' + rng() % 26);
  for (auto _ : state) {
    auto ids = Tokenize(word);
    if (!ids.ok()) {
      state.SkipWithError(
          ("tokenizer unavailable (set VISALIGN_DATA to the data/ folder): " + ids.status().ToString()).c_str());
      return;
    }
    benchmark::DoNotOptimize(ids->data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_TokenizeLongWord)->Arg(1000)->Arg(60000)->Arg(120000)->Unit(benchmark::kMillisecond);

// GEMM candidates on the MLP up-projection of a batch of 32 images: [1600 x 768] x [768 x 3072]ᵀ.
constexpr int kM = 32 * 50;
constexpr int kN = 3072;
constexpr int kK = 768;

void GemmCounters(benchmark::State& state) {
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * kM * kN * kK * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Gemm_OneDnn(benchmark::State& state) {
  const std::vector<float> a = RandomValues(static_cast<size_t>(kM) * kK, 1, 1);
  const std::vector<float> b = RandomValues(static_cast<size_t>(kN) * kK, 1, 2);
  std::vector<float> c(static_cast<size_t>(kM) * kN);
  omp_set_num_threads(BenchThreads());  // as the towers do before each call
  for (auto _ : state) {
    Gemm(kM, kN, kK, a.data(), kK, b.data(), BLayout::kNK, 0.0f, c.data(), kN);
    benchmark::DoNotOptimize(c.data());
  }
  GemmCounters(state);
}
BENCHMARK(BM_Gemm_OneDnn)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Gemm_Eigen(benchmark::State& state) {
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  RowMatrix a = RowMatrix::Random(kM, kK);
  RowMatrix b = RowMatrix::Random(kN, kK);
  RowMatrix c(kM, kN);
  for (auto _ : state) {
    c.noalias() = a * b.transpose();
    benchmark::DoNotOptimize(c.data());
  }
  GemmCounters(state);
}
BENCHMARK(BM_Gemm_Eigen)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

// The system BLAS (Debian's libblas.so.3 alternative: reference BLAS here, OpenBLAS where installed),
// loaded at run time so the library does not depend on it.
void BM_Gemm_SystemBlas(benchmark::State& state) {
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
  void* lib = dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
  auto* sgemm = lib != nullptr ? reinterpret_cast<Sgemm>(dlsym(lib, "cblas_sgemm")) : nullptr;
  if (sgemm == nullptr) {
    state.SkipWithError("libblas.so.3 with cblas_sgemm not found");
    return;
  }
  constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
  const std::vector<float> a = RandomValues(static_cast<size_t>(kM) * kK, 1, 1);
  const std::vector<float> b = RandomValues(static_cast<size_t>(kN) * kK, 1, 2);
  std::vector<float> c(static_cast<size_t>(kM) * kN);
  for (auto _ : state) {
    sgemm(kRowMajor, kNoTrans, kTrans, kM, kN, kK, 1.0f, a.data(), kK, b.data(), kK, 0.0f, c.data(), kN);
    benchmark::DoNotOptimize(c.data());
  }
  GemmCounters(state);
}
BENCHMARK(BM_Gemm_SystemBlas)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
}  // namespace visalign::clip
BENCHMARK_MAIN();
