// Native SigLIP image throughput on a random-weight ViT-B-16-SigLIP-shaped model (OpenCLIP
// CustomTextCLIP layout: timm ViT-B/16 with MAP head at 224 px, 93 M vision parameters; text tower
// 12 x 768 with vocabulary 32000), batch 32. The model (and check.safetensors: the batch's pixels and
// the native embeddings) is written once to $VISALIGN_BENCH_SIGLIP_DIR (default
// /tmp/visalign-siglip-b16-bench) so bench/siglip_torch_benchmark.py can load the same weights into
// plain torch.nn, check its outputs against these and time PyTorch on the same machine.
// Run: VISALIGN_DATA=data build/bench/siglip_benchmark (threads: VISALIGN_BENCH_THREADS, default 2;
// the tokenizer is copied from $VISALIGN_SHARED_DIR/fixtures/siglip-tiny, default ../shared: the
// text tower is not timed, but a SigLIP model directory needs one).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "clip/random_model.h"
#include "clip/safetensors.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/core/parallel.h"

namespace visalign::clip {
namespace {

namespace fs = std::filesystem;

constexpr int kBatch = 32;
constexpr int kImageSize = 224;
constexpr int kPatch = 16;
constexpr int64_t kWidth = 768;
constexpr int64_t kMlp = 3072;
constexpr int kLayers = 12;
constexpr int64_t kContext = 64;
constexpr int64_t kVocab = 32000;
constexpr int64_t kBiasVariance = 400;  // biases: std 0.05, as random_model.cc
constexpr uint64_t kSeed = 0;

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

RandomInit Fan(int64_t fan_in) { return {RandomInit::Kind::kUniform, fan_in, false, 0.0f}; }
RandomInit Gain() { return {RandomInit::Kind::kUniform, 100, true, 0.0f}; }
RandomInit Bias() { return Fan(kBiasVariance); }

void AddLinear(std::vector<RandomTensorSpec>& s, const std::string& name, int64_t out, int64_t in) {
  s.push_back({{name + ".weight", {out, in}}, Fan(in)});
  s.push_back({{name + ".bias", {out}}, Bias()});
}
void AddNorm(std::vector<RandomTensorSpec>& s, const std::string& name) {
  s.push_back({{name + ".weight", {kWidth}}, Gain()});
  s.push_back({{name + ".bias", {kWidth}}, Bias()});
}

// Every parameter of OpenCLIP's ViT-B-16-SigLIP (timm names under visual.trunk., text under text.).
std::vector<RandomTensorSpec> SiglipSpecs() {
  std::vector<RandomTensorSpec> s;
  const std::string v = "visual.trunk.";
  const int64_t tokens = (kImageSize / kPatch) * (kImageSize / kPatch);
  s.push_back({{v + "patch_embed.proj.weight", {kWidth, 3, kPatch, kPatch}}, Fan(3 * kPatch * kPatch)});
  s.push_back({{v + "patch_embed.proj.bias", {kWidth}}, Bias()});
  s.push_back({{v + "pos_embed", {1, tokens, kWidth}}, Fan(kWidth)});
  for (int i = 0; i < kLayers; ++i) {
    const std::string b = v + "blocks." + std::to_string(i) + ".";
    AddNorm(s, b + "norm1");
    AddLinear(s, b + "attn.qkv", 3 * kWidth, kWidth);
    AddLinear(s, b + "attn.proj", kWidth, kWidth);
    AddNorm(s, b + "norm2");
    AddLinear(s, b + "mlp.fc1", kMlp, kWidth);
    AddLinear(s, b + "mlp.fc2", kWidth, kMlp);
  }
  AddNorm(s, v + "norm");
  s.push_back({{v + "attn_pool.latent", {1, 1, kWidth}}, Fan(kWidth)});
  AddLinear(s, v + "attn_pool.q", kWidth, kWidth);
  AddLinear(s, v + "attn_pool.kv", 2 * kWidth, kWidth);
  AddLinear(s, v + "attn_pool.proj", kWidth, kWidth);
  AddNorm(s, v + "attn_pool.norm");
  AddLinear(s, v + "attn_pool.mlp.fc1", kMlp, kWidth);
  AddLinear(s, v + "attn_pool.mlp.fc2", kWidth, kMlp);
  for (int i = 0; i < kLayers; ++i) {
    const std::string b = "text.transformer.resblocks." + std::to_string(i) + ".";
    AddNorm(s, b + "ln_1");
    s.push_back({{b + "attn.in_proj_weight", {3 * kWidth, kWidth}}, Fan(kWidth)});
    s.push_back({{b + "attn.in_proj_bias", {3 * kWidth}}, Bias()});
    AddLinear(s, b + "attn.out_proj", kWidth, kWidth);
    AddNorm(s, b + "ln_2");
    AddLinear(s, b + "mlp.c_fc", kMlp, kWidth);
    AddLinear(s, b + "mlp.c_proj", kWidth, kMlp);
  }
  s.push_back({{"text.token_embedding.weight", {kVocab, kWidth}}, Fan(2500)});
  s.push_back({{"text.positional_embedding", {kContext, kWidth}}, Fan(10000)});
  AddNorm(s, "text.ln_final");
  AddLinear(s, "text.text_projection", kWidth, kWidth);
  s.push_back({{"logit_scale", {}}, {RandomInit::Kind::kConstant, 1, false, 2.302585f}});
  s.push_back({{"logit_bias", {}}, {RandomInit::Kind::kConstant, 1, false, -10.0f}});
  return s;
}

Json SiglipConfig() {
  return {{"model_cfg",
           {{"embed_dim", kWidth},
            {"init_logit_bias", -10},
            {"custom_text", true},
            {"vision_cfg",
             {{"image_size", kImageSize},
              {"timm_model_name", "vit_base_patch16_siglip_224"},
              {"timm_model_pretrained", false},
              {"timm_pool", "map"},
              {"timm_proj", "none"}}},
            {"text_cfg",
             {{"context_length", kContext},
              {"vocab_size", kVocab},
              {"hf_tokenizer_name", "tokenizer"},
              {"tokenizer_kwargs", {{"clean", "canonicalize"}}},
              {"width", kWidth},
              {"heads", 12},
              {"layers", kLayers},
              {"no_causal_mask", true},
              {"proj_bias", true},
              {"pool_type", "last"},
              {"norm_kwargs", {{"eps", 1e-6}}}}}}},
          {"preprocess_cfg",
           {{"size", kImageSize},
            {"mode", "RGB"},
            {"mean", {0.5, 0.5, 0.5}},
            {"std", {0.5, 0.5, 0.5}},
            {"interpolation", "bicubic"},
            {"resize_mode", "squash"}}}};
}

fs::path ModelDir() {
  const fs::path dir = Env("VISALIGN_BENCH_SIGLIP_DIR", "/tmp/visalign-siglip-b16-bench");
  if (fs::exists(dir / "open_clip_model.safetensors")) return dir;
  fs::create_directories(dir / "tokenizer");
  const fs::path tokenizer =
      fs::path(Env("VISALIGN_SHARED_DIR", "../shared")) / "fixtures" / "siglip-tiny" / "tokenizer";
  for (const char* f : {"spiece.model", "tokenizer_config.json", "special_tokens_map.json"}) {
    fs::copy_file(tokenizer / f, dir / "tokenizer" / f, fs::copy_options::overwrite_existing);
  }
  std::vector<RandomTensorSpec> specs = SiglipSpecs();
  std::vector<TensorShape> shapes;
  for (const RandomTensorSpec& spec : specs) shapes.push_back(spec.tensor);
  const Status written =
      WriteSafetensors(dir / "open_clip_model.safetensors", shapes, [&](const TensorShape& t, float* out) {
        for (const RandomTensorSpec& spec : specs) {
          if (spec.tensor.name == t.name) FillRandomTensor(spec, kSeed, out);
        }
      });
  if (!written.ok()) std::abort();
  if (!WriteFileAtomic(dir / "open_clip_config.json", SiglipConfig().dump(2) + "\n").ok()) std::abort();
  return dir;
}

// The batch: values uniform on [-1, 1] (variance 1/3), the range of mean/std 0.5 preprocessing.
Matrix Pixels() {
  const RandomTensorSpec spec{{"pixels", {kBatch, 3LL * kImageSize * kImageSize}}, Fan(3)};
  Matrix m(kBatch, 3 * kImageSize * kImageSize);
  FillRandomTensor(spec, kSeed, m.data.data());
  return m;
}

void BM_SiglipB16Images(benchmark::State& state) {
  SetThreadCount(std::atoi(Env("VISALIGN_BENCH_THREADS", "2").c_str()));
  const fs::path dir = ModelDir();
  Result<ClipModel> model = LoadClipModel(dir);
  if (!model.ok()) {
    state.SkipWithError(model.status().ToString().c_str());
    return;
  }
  const Matrix pixels = Pixels();
  Matrix embeddings = model->EncodePixels(pixels).value();  // warm-up, and the outputs to check against
  if (!fs::exists(dir / "check.safetensors")) {
    MatrixFile check;
    check.matrices = {{"pixels", pixels}, {"embeddings", embeddings}};
    if (!WriteMatrixFile(dir / "check.safetensors", check).ok()) std::abort();
  }
  for (auto _ : state) {
    embeddings = model->EncodePixels(pixels).value();
    benchmark::DoNotOptimize(embeddings.data.data());
  }
  state.counters["images/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kBatch, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SiglipB16Images)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(10.0);

}  // namespace
}  // namespace visalign::clip

BENCHMARK_MAIN();
