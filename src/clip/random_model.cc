// Random-weight CLIP models: an OpenCLIP config per architecture, OpenCLIP's initialisation scales
// with uniform draws on an exact grid, and a SplitMix64 stream per tensor, so the files are
// byte-identical everywhere (no std:: distributions, whose output is implementation-defined).
#include "clip/random_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "clip/config.h"
#include "visalign/core/io.h"

namespace visalign::clip {
namespace {

namespace fs = std::filesystem;

constexpr const char* kConfigFileName = "open_clip_config.json";
constexpr const char* kWeightsFileName = "open_clip_model.safetensors";
constexpr const char* kProducer = "visalign clip random-model";

// Values are (offset + k) · 2^-kRandomGridBits with |offset + k| below this bound (exact floats).
constexpr int64_t kGridLimit = int64_t{1} << 24;
constexpr int64_t kGridOne = int64_t{1} << kRandomGridBits;
constexpr float kGridStep = 1.0f / static_cast<float>(kGridOne);

// OpenCLIP's scales as variances 1/n: LayerNorm gains 1 + 0.1·N and biases 0.05·N (the perturbation
// the clip-tiny fixture applies so that every parameter matters), token embedding std 0.02,
// text positional embedding std 0.01.
constexpr int64_t kGainVarianceDenominator = 100;
constexpr int64_t kBiasVarianceDenominator = 400;
constexpr int64_t kTokenEmbeddingVarianceDenominator = 2500;
constexpr int64_t kTextPositionalVarianceDenominator = 10000;
// OpenCLIP's initial logit scale, log(1 / 0.07).
constexpr float kInitialLogitScale = 2.65926004f;

// The configs OpenCLIP ships (ViT-B-32.json, RN50.json, convnext_base.json) and the clip-tiny fixture's shape.
struct ArchShape {
  int embed_dim;
  int image_size, patch_size, vision_width, vision_layers, vision_head_width;
  int text_width, text_heads, text_layers;
};
constexpr ArchShape kTinyShape{64, 64, 16, 64, 2, 16, 64, 4, 2};
constexpr ArchShape kViTB32Shape{512, 224, 32, 768, 12, 64, 512, 8, 12};
constexpr ArchShape kRN50Shape{1024, 224, 0, 64, 0, 0, 512, 8, 12};         // vision_width: the stem width
constexpr ArchShape kConvNextBaseShape{512, 224, 0, 0, 0, 0, 512, 8, 12};   // trunk shape from timm_model_name
constexpr ArchShape kViTaminSShape{384, 224, 0, 0, 0, 0, 384, 6, 12};       // ViTamin-S.json (CustomTextCLIP)
constexpr ArchShape kMobileClip2S0Shape{512, 256, 0, 0, 0, 0, 512, 8, 12};  // MobileCLIP2-S0.json, fastvit_mci0
constexpr ArchShape kMobileClipBShape{512, 224, 0, 0, 0, 0, 512, 8, 12};    // MobileCLIP-B.json, vit_base_mci_224
constexpr std::array<int, 4> kRN50Layers = {3, 4, 6, 3};
constexpr int kVocabSize = 49408;

constexpr std::array<double, 3> kOpenAiMean{0.48145466, 0.4578275, 0.40821073};
constexpr std::array<double, 3> kOpenAiStd{0.26862954, 0.26130258, 0.27577711};

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t Fnv1a64(const std::string& text) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001B3ULL;
  return h;
}

// floor(sqrt(x)), digit by digit.
constexpr uint64_t IntegerSqrt(uint64_t x) {
  uint64_t root = 0;
  for (uint64_t bit = uint64_t{1} << 62; bit != 0; bit >>= 2) {
    if (x >= root + bit) {
      x -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
  }
  return root;
}

// Half-width R (in grid steps) of a uniform on [-R, R] with variance 1/n: R² / 3 = 2^(2·bits) / n.
int64_t HalfWidth(int64_t variance_denominator) {
  return static_cast<int64_t>(
      IntegerSqrt(3 * (uint64_t{1} << (2 * kRandomGridBits)) / static_cast<uint64_t>(variance_denominator)));
}

RandomInit Uniform(int64_t variance_denominator) {
  return {RandomInit::Kind::kUniform, variance_denominator, false, 0.0f};
}
RandomInit Gain() { return {RandomInit::Kind::kUniform, kGainVarianceDenominator, true, 0.0f}; }
RandomInit Bias() { return Uniform(kBiasVarianceDenominator); }

void AddTower(std::vector<RandomTensorSpec>& specs, const std::string& prefix, const TowerConfig& t) {
  const int64_t w = t.width;
  const int64_t mlp = t.mlp_width;
  // OpenCLIP's text-tower init (also used here for the vision tower): attention std w^-½, MLP
  // input std (2w)^-½, output projections std w^-½ (2·layers)^-½.
  const int64_t attn = w;
  const int64_t fc = 2 * w;
  const int64_t out = 2 * static_cast<int64_t>(t.layers) * w;
  for (int i = 0; i < t.layers; ++i) {
    const std::string p = prefix + "transformer.resblocks." + std::to_string(i) + ".";
    specs.push_back({{p + "ln_1.weight", {w}}, Gain()});
    specs.push_back({{p + "ln_1.bias", {w}}, Bias()});
    specs.push_back({{p + "ln_2.weight", {w}}, Gain()});
    specs.push_back({{p + "ln_2.bias", {w}}, Bias()});
    specs.push_back({{p + "attn.in_proj_weight", {3 * w, w}}, Uniform(attn)});
    specs.push_back({{p + "attn.in_proj_bias", {3 * w}}, Bias()});
    specs.push_back({{p + "attn.out_proj.weight", {w, w}}, Uniform(out)});
    specs.push_back({{p + "attn.out_proj.bias", {w}}, Bias()});
    specs.push_back({{p + "mlp.c_fc.weight", {mlp, w}}, Uniform(fc)});
    specs.push_back({{p + "mlp.c_fc.bias", {mlp}}, Bias()});
    specs.push_back({{p + "mlp.c_proj.weight", {w, mlp}}, Uniform(out)});
    specs.push_back({{p + "mlp.c_proj.bias", {w}}, Bias()});
  }
}

Status CheckOutputDirectory(const fs::path& dir, bool overwrite) {
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (!fs::exists(status)) return EnsureDirectory(dir);
  if (!fs::is_directory(status)) {
    return Status::InvalidArgument("exists and is not a directory", dir.string(),
                                   "a new or empty directory for the model");
  }
  if (!overwrite && !fs::is_empty(dir, ec)) {
    return Status::InvalidArgument(
        "directory is not empty", dir.string(),
        "a new or empty directory (or overwrite, e.g. --force, to replace the model files in it)");
  }
  return Status::Ok();
}

}  // namespace

constexpr std::array<RandomClipArch, 7> kRandomArchs = {RandomClipArch::kTiny,       RandomClipArch::kViTB32,
                                                        RandomClipArch::kRN50,       RandomClipArch::kConvNextBase,
                                                        RandomClipArch::kViTaminS,   RandomClipArch::kMobileClip2S0,
                                                        RandomClipArch::kMobileClipB};

Result<RandomClipArch> ParseRandomClipArch(std::string_view name) {
  std::string names;
  for (RandomClipArch arch : kRandomArchs) {
    if (name == RandomClipArchName(arch)) return arch;
    names += (names.empty() ? "" : arch == kRandomArchs.back() ? " or " : ", ") + std::string(RandomClipArchName(arch));
  }
  return Status::InvalidArgument("unknown architecture \"" + std::string(name) + "\"", "", names);
}

std::string_view RandomClipArchName(RandomClipArch arch) {
  switch (arch) {
    case RandomClipArch::kTiny:
      return "tiny";
    case RandomClipArch::kViTB32:
      return "ViT-B-32";
    case RandomClipArch::kRN50:
      return "RN50";
    case RandomClipArch::kConvNextBase:
      return "convnext_base";
    case RandomClipArch::kViTaminS:
      return "ViTamin-S";
    case RandomClipArch::kMobileClip2S0:
      return "MobileCLIP2-S0";
    case RandomClipArch::kMobileClipB:
      return "MobileCLIP-B";
  }
  return "";
}

namespace {

const ArchShape& Shape(RandomClipArch arch) {
  switch (arch) {
    case RandomClipArch::kTiny:
      return kTinyShape;
    case RandomClipArch::kViTB32:
      return kViTB32Shape;
    case RandomClipArch::kRN50:
      return kRN50Shape;
    case RandomClipArch::kConvNextBase:
      return kConvNextBaseShape;
    case RandomClipArch::kViTaminS:
      return kViTaminSShape;
    case RandomClipArch::kMobileClip2S0:
      return kMobileClip2S0Shape;
    case RandomClipArch::kMobileClipB:
      return kMobileClipBShape;
  }
  return kTinyShape;
}

// vision_cfg of each architecture (OpenCLIP's RN50.json and convnext_base.json for the conv towers).
Json RandomVisionConfig(RandomClipArch arch, const ArchShape& s) {
  switch (arch) {
    case RandomClipArch::kRN50:
      return {
          {"image_size", s.image_size}, {"layers", kRN50Layers}, {"width", s.vision_width}, {"patch_size", nullptr}};
    case RandomClipArch::kConvNextBase:
      return {{"timm_model_name", "convnext_base"},
              {"timm_model_pretrained", false},
              {"timm_pool", ""},
              {"timm_proj", "linear"},
              {"timm_drop", 0.0},
              {"timm_drop_path", 0.1},
              {"image_size", s.image_size}};
    case RandomClipArch::kViTaminS:
      return {{"timm_model_name", "vitamin_small_224"},
              {"timm_model_pretrained", false},
              {"timm_pool", ""},
              {"timm_proj", "linear"},
              {"timm_drop", 0.0},
              {"timm_drop_path", 0.1},
              {"image_size", s.image_size}};
    case RandomClipArch::kMobileClip2S0:
    case RandomClipArch::kMobileClipB:
      return {{"timm_model_name", arch == RandomClipArch::kMobileClipB ? "vit_base_mci_224" : "fastvit_mci0"},
              {"timm_model_pretrained", false},
              {"timm_pool", arch == RandomClipArch::kMobileClipB ? "token" : "avg"},
              {"timm_proj", nullptr},
              {"timm_drop", 0.0},
              {"timm_drop_path", 0.0},
              {"image_size", s.image_size}};
    case RandomClipArch::kTiny:
    case RandomClipArch::kViTB32:
      break;
  }
  return {{"image_size", s.image_size},
          {"layers", s.vision_layers},
          {"width", s.vision_width},
          {"head_width", s.vision_head_width},
          {"patch_size", s.patch_size}};
}

// VisionTransformer: blocks, class and positional embeddings and the projection with std width^-½;
// conv1 keeps PyTorch's default (uniform with bound fan_in^-½, variance 1 / (3 fan_in)).
void AddVitVision(std::vector<RandomTensorSpec>& specs, const ClipConfig& c) {
  const VisionConfig& v = c.vision;
  const int64_t vw = v.width;
  const int64_t tokens = static_cast<int64_t>(v.grid()) * v.grid() + 1;
  AddTower(specs, "visual.", v);
  specs.push_back({{"visual.class_embedding", {vw}}, Uniform(vw)});
  specs.push_back({{"visual.positional_embedding", {tokens, vw}}, Uniform(vw)});
  specs.push_back({{"visual.conv1.weight", {vw, 3, v.patch_size, v.patch_size}},
                   Uniform(3 * 3 * static_cast<int64_t>(v.patch_size) * v.patch_size)});
  if (v.ln_pre) {
    specs.push_back({{"visual.ln_pre.weight", {vw}}, Gain()});
    specs.push_back({{"visual.ln_pre.bias", {vw}}, Bias()});
  }
  specs.push_back({{"visual.ln_post.weight", {vw}}, Gain()});
  specs.push_back({{"visual.ln_post.bias", {vw}}, Bias()});
  specs.push_back({{"visual.proj", {vw, c.embed_dim}}, Uniform(vw)});
}

// timm's Eva-class trunks (EVA01/EVA02/EVA02-E, PE-Core) and CLIP-layout ViTs under visual.trunk.,
// with the names eva.cc reads; Linear weights std fan_in^-½.
void AddTimmEvaVision(std::vector<RandomTensorSpec>& specs, const ClipConfig& c) {
  const VisionConfig& v = c.vision;
  const int64_t w = v.width;
  const int64_t mlp = v.mlp_width;
  const std::string p = "visual.trunk.";
  const auto linear = [&](const std::string& name, int64_t out, int64_t in) {
    specs.push_back({{name + ".weight", {out, in}}, Uniform(in)});
    specs.push_back({{name + ".bias", {out}}, Bias()});
  };
  const auto norm = [&](const std::string& name, int64_t width) {
    specs.push_back({{name + ".weight", {width}}, Gain()});
    specs.push_back({{name + ".bias", {width}}, Bias()});
  };
  for (int i = 0; i < v.layers; ++i) {
    const std::string b = p + "blocks." + std::to_string(i) + ".";
    norm(b + "norm1", w);
    norm(b + "norm2", w);
    switch (v.eva.qkv) {
      case TimmQkv::kFused:
        linear(b + "attn.qkv", 3 * w, w);
        break;
      case TimmQkv::kFusedQvBias:
        specs.push_back({{b + "attn.qkv.weight", {3 * w, w}}, Uniform(w)});
        specs.push_back({{b + "attn.q_bias", {w}}, Bias()});
        specs.push_back({{b + "attn.v_bias", {w}}, Bias()});
        break;
      case TimmQkv::kSeparate:
        linear(b + "attn.q_proj", w, w);
        specs.push_back({{b + "attn.k_proj.weight", {w, w}}, Uniform(w)});
        linear(b + "attn.v_proj", w, w);
        break;
    }
    if (v.eva.sub_ln) norm(b + "attn.norm", w);
    linear(b + "attn.proj", w, w);
    if (v.eva.swiglu) {
      linear(b + "mlp.fc1_g", mlp, w);
      linear(b + "mlp.fc1_x", mlp, w);
      norm(b + "mlp.norm", mlp);
    } else {
      linear(b + "mlp.fc1", mlp, w);
    }
    linear(b + "mlp.fc2", w, mlp);
  }
  const int64_t tokens = static_cast<int64_t>(v.grid()) * v.grid() + 1;
  specs.push_back({{p + "patch_embed.proj.weight", {w, 3, v.patch_size, v.patch_size}},
                   Uniform(3 * 3 * static_cast<int64_t>(v.patch_size) * v.patch_size)});
  if (v.eva.patch_bias) specs.push_back({{p + "patch_embed.proj.bias", {w}}, Bias()});
  specs.push_back({{p + "cls_token", {1, 1, w}}, Uniform(w)});
  specs.push_back({{p + "pos_embed", {1, tokens, w}}, Uniform(w)});
  if (v.ln_pre) norm(p + "norm_pre", w);
  norm(p + "norm", w);
  if (v.pooling == Pooling::kAttentionPool) {
    const std::string a = p + "attn_pool.";
    specs.push_back({{a + "latent", {1, 1, w}}, Uniform(w)});
    linear(a + "q", w, w);
    linear(a + "kv", 2 * w, w);
    linear(a + "proj", w, w);
    norm(a + "norm", w);
    linear(a + "mlp.fc1", v.pool_mlp_width, w);
    linear(a + "mlp.fc2", w, v.pool_mlp_width);
  }
  linear(p + "head", c.embed_dim, w);
}

// CoCa's attentional pooler (visual.attn_pool.*) and its embed_dim-wide ln_post / proj, replacing the
// ViT's width-wide ones.
void AddAttentionalPooler(std::vector<RandomTensorSpec>& specs, const ClipConfig& c) {
  const VisionConfig& v = c.vision;
  const int64_t e = c.embed_dim;
  const int64_t w = v.width;
  std::erase_if(specs, [](const RandomTensorSpec& s) {
    return s.tensor.name.rfind("visual.ln_post.", 0) == 0 || s.tensor.name == "visual.proj";
  });
  const std::string a = "visual.attn_pool.";
  specs.push_back({{a + "query", {v.pool_queries, e}}, Uniform(e)});
  specs.push_back({{a + "ln_q.weight", {e}}, Gain()});
  specs.push_back({{a + "ln_q.bias", {e}}, Bias()});
  specs.push_back({{a + "ln_k.weight", {w}}, Gain()});
  specs.push_back({{a + "ln_k.bias", {w}}, Bias()});
  specs.push_back({{a + "attn.q_proj_weight", {e, e}}, Uniform(e)});
  specs.push_back({{a + "attn.k_proj_weight", {e, w}}, Uniform(w)});
  specs.push_back({{a + "attn.v_proj_weight", {e, w}}, Uniform(w)});
  specs.push_back({{a + "attn.in_proj_bias", {3 * e}}, Bias()});
  specs.push_back({{a + "attn.out_proj.weight", {e, e}}, Uniform(e)});
  specs.push_back({{a + "attn.out_proj.bias", {e}}, Bias()});
  specs.push_back({{"visual.ln_post.weight", {e}}, Gain()});
  specs.push_back({{"visual.ln_post.bias", {e}}, Bias()});
  specs.push_back({{"visual.proj", {e, e}}, Uniform(e)});
}

// A convolution's weight with PyTorch's default init (uniform with bound fan_in^-½: variance 1 / (3 fan_in)).
void AddConv(std::vector<RandomTensorSpec>& specs, const std::string& name, int64_t out, int64_t in, int64_t kernel) {
  specs.push_back({{name, {out, in, kernel, kernel}}, Uniform(3 * in * kernel * kernel)});
}

// BatchNorm2d in eval: gain and running variance around 1, bias and running mean small.
void AddBatchNorm(std::vector<RandomTensorSpec>& specs, const std::string& name, int64_t c) {
  specs.push_back({{name + ".weight", {c}}, Gain()});
  specs.push_back({{name + ".bias", {c}}, Bias()});
  specs.push_back({{name + ".running_mean", {c}}, Bias()});
  specs.push_back({{name + ".running_var", {c}}, Gain()});
}

void AddLinear(std::vector<RandomTensorSpec>& specs, const std::string& name, int64_t out, int64_t in, bool bias) {
  specs.push_back({{name + ".weight", {out, in}}, Uniform(in)});
  if (bias) specs.push_back({{name + ".bias", {out}}, Bias()});
}

void AddNorm(std::vector<RandomTensorSpec>& specs, const std::string& name, int64_t c) {
  specs.push_back({{name + ".weight", {c}}, Gain()});
  specs.push_back({{name + ".bias", {c}}, Bias()});
}

// ModifiedResNet (modified_resnet.py); num_batches_tracked is not written (the forward pass does not use it).
void AddResNet(std::vector<RandomTensorSpec>& specs, const ClipConfig& c) {
  constexpr int64_t kExpansion = 4;
  const ResNetConfig& r = c.vision.resnet;
  const int64_t half = r.width / 2;
  AddConv(specs, "visual.conv1.weight", half, 3, 3);
  AddBatchNorm(specs, "visual.bn1", half);
  AddConv(specs, "visual.conv2.weight", half, half, 3);
  AddBatchNorm(specs, "visual.bn2", half);
  AddConv(specs, "visual.conv3.weight", r.width, half, 3);
  AddBatchNorm(specs, "visual.bn3", r.width);
  int64_t inplanes = r.width;
  for (size_t s = 0; s < r.layers.size(); ++s) {
    const int64_t planes = static_cast<int64_t>(r.width) << s;
    for (int i = 0; i < r.layers[s]; ++i) {
      const std::string p = "visual.layer" + std::to_string(s + 1) + "." + std::to_string(i) + ".";
      AddConv(specs, p + "conv1.weight", planes, inplanes, 1);
      AddBatchNorm(specs, p + "bn1", planes);
      AddConv(specs, p + "conv2.weight", planes, planes, 3);
      AddBatchNorm(specs, p + "bn2", planes);
      AddConv(specs, p + "conv3.weight", kExpansion * planes, planes, 1);
      AddBatchNorm(specs, p + "bn3", kExpansion * planes);
      if ((s > 0 && i == 0) || inplanes != kExpansion * planes) {
        AddConv(specs, p + "downsample.0.weight", kExpansion * planes, inplanes, 1);
        AddBatchNorm(specs, p + "downsample.1", kExpansion * planes);
      }
      inplanes = kExpansion * planes;
    }
  }
  const int64_t w = r.feature_width();
  const int64_t grid = c.vision.image_size / 32;
  specs.push_back({{"visual.attnpool.positional_embedding", {grid * grid + 1, w}}, Uniform(w)});
  for (const char* proj : {"q_proj", "k_proj", "v_proj"})
    AddLinear(specs, std::string("visual.attnpool.") + proj, w, w, true);
  AddLinear(specs, "visual.attnpool.c_proj", c.embed_dim, w, true);
}

// timm ConvNeXt (convnext.py) and OpenCLIP's linear head: weights with variance 1 / fan_in, layer
// scale around 1 (timm initialises it to 1e-6, which would make every block nearly the identity).
void AddConvNext(std::vector<RandomTensorSpec>& specs, const ClipConfig& c) {
  const ConvNextConfig& cn = c.vision.convnext;
  constexpr int64_t kStemPatch = 4;
  constexpr int64_t kDownsample = 2;
  constexpr int64_t kDepthwise = 7;
  constexpr int64_t kMlpRatio = 4;
  specs.push_back(
      {{"visual.trunk.stem.0.weight", {cn.dims[0], 3, kStemPatch, kStemPatch}}, Uniform(3 * kStemPatch * kStemPatch)});
  specs.push_back({{"visual.trunk.stem.0.bias", {cn.dims[0]}}, Bias()});
  AddNorm(specs, "visual.trunk.stem.1", cn.dims[0]);
  for (size_t s = 0; s < cn.depths.size(); ++s) {
    const std::string p = "visual.trunk.stages." + std::to_string(s) + ".";
    const int64_t d = cn.dims[s];
    if (s > 0) {
      const int64_t prev = cn.dims[s - 1];
      AddNorm(specs, p + "downsample.0", prev);
      specs.push_back({{p + "downsample.1.weight", {d, prev, kDownsample, kDownsample}},
                       Uniform(kDownsample * kDownsample * prev)});
      specs.push_back({{p + "downsample.1.bias", {d}}, Bias()});
    }
    for (int j = 0; j < cn.depths[s]; ++j) {
      const std::string b = p + "blocks." + std::to_string(j) + ".";
      specs.push_back({{b + "conv_dw.weight", {d, 1, kDepthwise, kDepthwise}}, Uniform(kDepthwise * kDepthwise)});
      specs.push_back({{b + "conv_dw.bias", {d}}, Bias()});
      AddNorm(specs, b + "norm", d);
      AddLinear(specs, b + "mlp.fc1", kMlpRatio * d, d, true);
      AddLinear(specs, b + "mlp.fc2", d, kMlpRatio * d, true);
      specs.push_back({{b + "gamma", {d}}, Gain()});
    }
  }
  AddNorm(specs, "visual.trunk.head.norm", cn.dims.back());
  AddLinear(specs, "visual.head.proj", c.embed_dim, cn.dims.back(), false);
}

// timm ViTamin (vitamin.py) and OpenCLIP's linear head, every weight with variance 1 / fan_in.
void AddVitamin(std::vector<RandomTensorSpec>& specs, const ClipConfig& c) {
  const VisionConfig& v = c.vision;
  const VitaminConfig& vt = v.vitamin;
  constexpr int64_t kKernel = 3;
  constexpr int64_t kMbConvExpansion = 4;
  const std::string bb = "visual.trunk.patch_embed.backbone.";
  const auto conv = [&](const std::string& name, int64_t out, int64_t in, int64_t kernel) {
    AddConv(specs, name + ".weight", out, in, kernel);
    specs.push_back({{name + ".bias", {out}}, Bias()});
  };
  conv(bb + "stem.conv1", vt.stem_width, 3, kKernel);
  AddNorm(specs, bb + "stem.norm1", vt.stem_width);
  conv(bb + "stem.conv2", vt.stem_width, vt.stem_width, kKernel);
  int64_t in = vt.stem_width;
  for (size_t s = 0; s < vt.stage_widths.size(); ++s) {
    const int64_t out = vt.stage_widths[s];
    const int64_t mid = kMbConvExpansion * out;  // make_divisible(4·out, 8): the widths are even
    for (int j = 0; j < vt.stage_depths[s]; ++j) {
      const std::string p = bb + "stages." + std::to_string(s) + "." + std::to_string(j) + ".";
      AddNorm(specs, p + "pre_norm", in);
      if (j == 0 && in != out) conv(p + "shortcut.expand", out, in, 1);
      conv(p + "conv1_1x1", mid, in, 1);
      conv(p + "conv2_kxk", mid, 1, kKernel);
      conv(p + "conv3_1x1", out, mid, 1);
      in = out;
    }
  }
  AddNorm(specs, bb + "pool.norm", in);
  conv(bb + "pool.proj", v.width, in, kKernel);
  const int64_t w = v.width;
  for (int i = 0; i < v.layers; ++i) {
    const std::string p = "visual.trunk.blocks." + std::to_string(i) + ".";
    AddNorm(specs, p + "norm1", w);
    AddLinear(specs, p + "attn.qkv", 3 * w, w, true);
    AddLinear(specs, p + "attn.proj", w, w, true);
    AddNorm(specs, p + "norm2", w);
    AddNorm(specs, p + "mlp.norm", w);
    AddLinear(specs, p + "mlp.w0", v.mlp_width, w, true);
    AddLinear(specs, p + "mlp.w1", v.mlp_width, w, true);
    AddLinear(specs, p + "mlp.w2", w, v.mlp_width, true);
  }
  if (vt.pos_embed) {
    const int64_t tokens = static_cast<int64_t>(v.grid()) * v.grid();
    specs.push_back({{"visual.trunk.pos_embed", {1, tokens, w}}, Uniform(w)});
  }
  AddNorm(specs, "visual.trunk.fc_norm", w);
  AddLinear(specs, "visual.head.proj", c.embed_dim, w, false);
}

// A MobileOneBlock's un-fused branches (timm fastvit.py): identity BatchNorm when in == out and
// stride 1, 1×1 conv_scale + BN when kernel > 1 and `scale_branch`, `conv_branches` k×k conv_kxk.i + BN.
void AddMobileOne(std::vector<RandomTensorSpec>& specs, const std::string& p, int64_t in, int64_t out, int64_t kernel,
                  int64_t stride, int64_t groups, bool scale_branch, int conv_branches = 1) {
  if (in == out && stride == 1) AddBatchNorm(specs, p + ".identity", in);
  if (kernel > 1 && scale_branch) {
    AddConv(specs, p + ".conv_scale.conv.weight", out, in / groups, 1);
    AddBatchNorm(specs, p + ".conv_scale.bn", out);
  }
  for (int i = 0; i < conv_branches; ++i) {
    const std::string b = p + ".conv_kxk." + std::to_string(i);
    AddConv(specs, b + ".conv.weight", out, in / groups, kernel);
    AddBatchNorm(specs, b + ".bn", out);
  }
}

// A 1×1 convolution with bias (SE and ConvMlp layers).
void AddPointwise(std::vector<RandomTensorSpec>& specs, const std::string& name, int64_t out, int64_t in) {
  AddConv(specs, name + ".weight", out, in, 1);
  specs.push_back({{name + ".bias", {out}}, Bias()});
}

void AddSqueezeExcite(std::vector<RandomTensorSpec>& specs, const std::string& p, int64_t c, int64_t reduced) {
  AddPointwise(specs, p + ".fc1", reduced, c);
  AddPointwise(specs, p + ".fc2", c, reduced);
}

// timm FastViT MCi (fastvit.py) in its training-time form, as MobileCLIP checkpoints store it; layer
// scales small (timm's 1e-5 would make every block nearly the identity).
void AddFastVit(std::vector<RandomTensorSpec>& specs, const ClipConfig& c) {
  const FastVitConfig& fv = c.vision.fastvit;
  const std::string t = "visual.trunk.";
  const RandomInit layer_scale = Uniform(kBiasVarianceDenominator);
  const int64_t c0 = fv.stages.front().dim;
  AddMobileOne(specs, t + "stem.0", 3, c0, 3, 2, 1, fv.stem_scale_branch);
  AddMobileOne(specs, t + "stem.1", c0, c0, 3, 2, c0, fv.stem_scale_branch);
  AddMobileOne(specs, t + "stem.2", c0, c0, 1, 1, 1, true);
  int64_t prev = c0;
  for (size_t s = 0; s < fv.stages.size(); ++s) {
    const FastVitStageConfig& st = fv.stages[s];
    const int64_t d = st.dim;
    const std::string p = t + "stages." + std::to_string(s);
    if (s > 0 || prev != d) {
      const std::string lk = p + ".downsample.proj.0";
      for (const auto& [branch, k] : {std::pair{".large_conv", 7}, std::pair{".small_conv", 3}}) {
        AddConv(specs, lk + branch + ".conv.weight", d, 1, k);
        AddBatchNorm(specs, lk + branch + ".bn", d);
      }
      if (st.se_downsample) AddSqueezeExcite(specs, lk + ".se", d, std::max<int64_t>(8, (d / 4 + 4) / 8 * 8));
      AddMobileOne(specs, p + ".downsample.proj.1", d, d, 1, 1, 1, true);
    }
    if (st.pos_emb) {
      AddConv(specs, p + ".pos_emb.pos_enc.weight", d, 1, 7);
      specs.push_back({{p + ".pos_emb.pos_enc.bias", {d}}, Bias()});
    }
    const auto hidden = static_cast<int64_t>(d * st.mlp_ratio);
    for (int j = 0; j < st.depth; ++j) {
      const std::string b = p + ".blocks." + std::to_string(j);
      if (st.attention) {
        if (fv.attention_layer_norm) {
          AddNorm(specs, b + ".norm", d);
        } else {
          AddBatchNorm(specs, b + ".norm", d);
        }
        AddLinear(specs, b + ".token_mixer.qkv", 3 * d, d, false);
        AddLinear(specs, b + ".token_mixer.proj", d, d, true);
        specs.push_back({{b + ".layer_scale_1.gamma", {d, 1, 1}}, layer_scale});
        specs.push_back({{b + ".layer_scale_2.gamma", {d, 1, 1}}, layer_scale});
      } else {
        AddMobileOne(specs, b + ".token_mixer.norm", d, d, 3, 1, d, false, 0);
        AddMobileOne(specs, b + ".token_mixer.mixer", d, d, 3, 1, d, true);
        specs.push_back({{b + ".token_mixer.layer_scale.gamma", {d, 1, 1}}, layer_scale});
        specs.push_back({{b + ".layer_scale.gamma", {d, 1, 1}}, layer_scale});
      }
      AddConv(specs, b + ".mlp.conv.conv.weight", d, 1, 7);
      AddBatchNorm(specs, b + ".mlp.conv.bn", d);
      AddPointwise(specs, b + ".mlp.fc1", hidden, d);
      AddPointwise(specs, b + ".mlp.fc2", d, hidden);
    }
    prev = d;
  }
  AddMobileOne(specs, t + "final_conv", prev, fv.final_features, 3, 1, prev, true);
  AddSqueezeExcite(specs, t + "final_conv.se", fv.final_features, (fv.final_features + 8) / 16);
  AddLinear(specs, t + "head.fc", c.embed_dim, fv.final_features, true);
}

// timm vit_base_mci_224: ConvStem (BatchNorms after the first two convs), timm ViT blocks, cls_token,
// pos_embed of the patch tokens, final norm, head with bias.
void AddMciVit(std::vector<RandomTensorSpec>& specs, const ClipConfig& c) {
  const VisionConfig& v = c.vision;
  const std::string t = "visual.trunk.";
  const int64_t w = v.width;
  constexpr int64_t kStem = 192;
  AddConv(specs, t + "patch_embed.backbone.0.conv.weight", kStem, 3, 4);
  AddBatchNorm(specs, t + "patch_embed.backbone.0.bn", kStem);
  AddConv(specs, t + "patch_embed.backbone.1.conv.weight", kStem, kStem, 2);
  AddBatchNorm(specs, t + "patch_embed.backbone.1.bn", kStem);
  AddConv(specs, t + "patch_embed.backbone.2.conv.weight", w, kStem, 2);
  specs.push_back({{t + "patch_embed.backbone.2.conv.bias", {w}}, Bias()});
  for (int i = 0; i < v.layers; ++i) {
    const std::string b = t + "blocks." + std::to_string(i) + ".";
    AddNorm(specs, b + "norm1", w);
    AddLinear(specs, b + "attn.qkv", 3 * w, w, true);
    AddLinear(specs, b + "attn.proj", w, w, true);
    AddNorm(specs, b + "norm2", w);
    AddLinear(specs, b + "mlp.fc1", v.mlp_width, w, true);
    AddLinear(specs, b + "mlp.fc2", w, v.mlp_width, true);
  }
  specs.push_back({{t + "cls_token", {1, 1, w}}, Uniform(w)});
  specs.push_back({{t + "pos_embed", {1, static_cast<int64_t>(v.grid()) * v.grid(), w}}, Uniform(w)});
  AddNorm(specs, t + "norm", w);
  AddLinear(specs, t + "head", c.embed_dim, w, true);
}

}  // namespace

Json RandomClipConfigJson(RandomClipArch arch, uint64_t seed) {
  const ArchShape& s = Shape(arch);
  Json model_cfg = {{"embed_dim", s.embed_dim},
                    {"quick_gelu", false},
                    {"vision_cfg", RandomVisionConfig(arch, s)},
                    {"text_cfg",
                     {{"context_length", kDefaultContextLength},
                      {"vocab_size", kVocabSize},
                      {"width", s.text_width},
                      {"heads", s.text_heads},
                      {"layers", s.text_layers}}}};
  if (arch == RandomClipArch::kViTaminS) model_cfg["custom_text"] = true;  // the text tower under "text."
  return {{"model_cfg", model_cfg},
          {"preprocess_cfg",
           {{"size", s.image_size},
            {"mode", "RGB"},
            {"mean", kOpenAiMean},
            {"std", kOpenAiStd},
            {"interpolation", "bicubic"},
            {"resize_mode", "shortest"},
            {"fill_color", 0}}},
          {kRandomModelConfigKey,
           {{"arch", std::string(RandomClipArchName(arch))},
            {"seed", seed},
            {"note", std::string("pseudo-random weights written by `") + kProducer + "`: its numbers mean nothing"}}}};
}

std::vector<RandomTensorSpec> RandomTensorSpecs(const ClipConfig& c) {
  const TextConfig& t = c.text;
  const int64_t tw = t.width;
  std::vector<RandomTensorSpec> specs;
  switch (c.vision.tower) {
    case VisionTower::kViT:
      if (c.vision.vitamin.enabled) {
        AddVitamin(specs, c);
      } else if (c.vision.eva.enabled) {
        AddTimmEvaVision(specs, c);
      } else if (c.vision.mci_conv_stem) {
        AddMciVit(specs, c);
      } else {
        AddVitVision(specs, c);
        if (c.vision.attentional_pool) AddAttentionalPooler(specs, c);
      }
      break;
    case VisionTower::kModifiedResNet:
      AddResNet(specs, c);
      break;
    case VisionTower::kConvNext:
      AddConvNext(specs, c);
      break;
    case VisionTower::kFastVit:
      AddFastVit(specs, c);
      break;
  }
  // CustomTextCLIP (custom_text, CoCa) keeps the text tower under "text."; CoCa appends a cls position.
  const std::string tp = c.custom_text ? "text." : "";
  AddTower(specs, tp, t);
  specs.push_back({{tp + "token_embedding.weight", {t.vocab_size, tw}}, Uniform(kTokenEmbeddingVarianceDenominator)});
  specs.push_back({{tp + "positional_embedding", {t.context_length + (t.embed_cls ? 1 : 0), tw}},
                   Uniform(kTextPositionalVarianceDenominator)});
  if (t.embed_cls) specs.push_back({{tp + "cls_emb", {tw}}, Uniform(kTextPositionalVarianceDenominator)});
  specs.push_back({{tp + "ln_final.weight", {tw}}, Gain()});
  specs.push_back({{tp + "ln_final.bias", {tw}}, Bias()});
  if (t.projection) specs.push_back({{tp + "text_projection", {tw, c.embed_dim}}, Uniform(tw)});
  specs.push_back({{"logit_scale", {}}, {RandomInit::Kind::kConstant, 1, false, kInitialLogitScale}});
  return specs;
}

bool RandomInitFitsGrid(const RandomInit& init) {
  if (init.kind == RandomInit::Kind::kConstant) return true;
  return init.variance_denominator > 0 &&
         HalfWidth(init.variance_denominator) + (init.around_one ? kGridOne : 0) < kGridLimit;
}

void FillRandomTensor(const RandomTensorSpec& spec, uint64_t seed, float* values) {
  const auto n = static_cast<size_t>(spec.tensor.NumElements());
  if (spec.init.kind == RandomInit::Kind::kConstant) {
    std::fill(values, values + n, spec.init.constant);
    return;
  }
  uint64_t mixer = seed;
  uint64_t state = SplitMix64(mixer) ^ Fnv1a64(spec.tensor.name);
  const int64_t half_width = HalfWidth(spec.init.variance_denominator);
  const auto span = static_cast<uint64_t>(2 * half_width + 1);  // < 2^25, so draw32 · span < 2^57
  const int64_t offset = spec.init.around_one ? kGridOne : 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t draw32 = SplitMix64(state) >> 32;
    const auto k = static_cast<int64_t>((draw32 * span) >> 32) - half_width;  // uniform on [-R, R]
    values[i] = static_cast<float>(static_cast<int32_t>(offset + k)) * kGridStep;
  }
}

Result<RandomClipModelFiles> WriteRandomClipModel(const fs::path& dir, const RandomClipModelOptions& options) {
  const Json config_json = RandomClipConfigJson(options.arch, options.seed);
  RandomClipModelFiles files{dir / kConfigFileName, dir / kWeightsFileName, 0};
  VISALIGN_ASSIGN_OR_RETURN(ClipConfig config, ParseOpenClipConfig(config_json, files.config_file.string()));
  std::vector<RandomTensorSpec> specs = RandomTensorSpecs(config);
  std::map<std::string, const RandomTensorSpec*> by_name;
  std::vector<TensorShape> shapes;
  for (const RandomTensorSpec& spec : specs) {
    if (!RandomInitFitsGrid(spec.init)) {
      return Status::Internal("initialisation of \"" + spec.tensor.name + "\" does not fit the exact value grid");
    }
    by_name[spec.tensor.name] = &spec;
    shapes.push_back(spec.tensor);
    files.parameters += spec.tensor.NumElements();
  }
  VISALIGN_RETURN_IF_ERROR(CheckOutputDirectory(dir, options.overwrite));
  const std::map<std::string, std::string> metadata = {{"format", "pt"},
                                                       {"producer", kProducer},
                                                       {"arch", std::string(RandomClipArchName(options.arch))},
                                                       {"seed", std::to_string(options.seed)}};
  VISALIGN_RETURN_IF_ERROR(WriteSafetensors(
      files.weights_file, std::move(shapes),
      [&](const TensorShape& t, float* values) { FillRandomTensor(*by_name.at(t.name), options.seed, values); },
      metadata));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(files.config_file, config_json.dump(2) + "\n"));
  return files;
}

}  // namespace visalign::clip
