#include "clip/config.h"

#include <cmath>
#include <regex>
#include <set>
#include <string>

#include <fmt/format.h>

#include "clip/sentencepiece_tokenizer.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::array<float, 3> kOpenAiMean{0.48145466f, 0.4578275f, 0.40821073f};
constexpr std::array<float, 3> kOpenAiStd{0.26862954f, 0.26130258f, 0.27577711f};
constexpr int kOpenClipDefaultHeadWidth = 64;
constexpr double kDefaultMlpRatio = 4.0;
constexpr int kOpenClipDefaultTextHeads = 8;
constexpr int kOpenClipDefaultTextWidth = 512;
constexpr int kOpenClipDefaultTextLayers = 12;
constexpr int kDefaultVocabSize = 49408;
constexpr int kOpenClipDefaultResNetWidth = 64;
constexpr int kResNetTotalStride = 32;    // stem 4, stages 2..4 x2 each
constexpr int kConvNextTotalStride = 32;  // stem 4, stages 1..3 x2 each
// OpenCLIP models use 4 (ViT-bigG 4.9231); a ratio above this is a broken or hostile config.
constexpr double kMaxMlpRatio = 64.0;
constexpr int64_t kMaxElements = (int64_t{1} << 31) - 1;

// Reads typed fields from one JSON object, remembering which keys were consumed so the rest can be
// checked: a key we do not understand must not be silently ignored.
class Fields {
 public:
  Fields(const json& obj, std::string where) : obj_(obj), where_(std::move(where)) {}

  bool Has(const std::string& key) const { return obj_.contains(key) && !obj_[key].is_null(); }

  Result<int> Int(const std::string& key, std::optional<int> fallback) {
    used_.insert(key);
    if (!Has(key)) {
      if (fallback) return *fallback;
      return Status::InvalidArgument("missing field \"" + key + "\"", where_, "a positive integer");
    }
    const json& v = obj_[key];
    if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > (1 << 24)) {
      return Status::InvalidArgument("field " + QuoteText(key) + " is " + QuoteJson(v), where_, "a positive integer");
    }
    return static_cast<int>(v.get<int64_t>());
  }

  Result<double> Number(const std::string& key, double fallback) {
    used_.insert(key);
    if (!Has(key)) return fallback;
    const json& v = obj_[key];
    if (!v.is_number()) return Status::InvalidArgument("field " + QuoteText(key) + " is " + QuoteJson(v), where_, "a number");
    return v.get<double>();
  }

  Result<std::string> String(const std::string& key, const std::string& fallback) {
    used_.insert(key);
    if (!Has(key)) return fallback;
    const json& v = obj_[key];
    if (!v.is_string()) return Status::InvalidArgument("field " + QuoteText(key) + " is " + QuoteJson(v), where_, "a string");
    return v.get<std::string>();
  }

  Result<bool> Bool(const std::string& key, bool fallback) {
    used_.insert(key);
    if (!Has(key)) return fallback;
    const json& v = obj_[key];
    if (!v.is_boolean()) return Status::InvalidArgument("field " + QuoteText(key) + " is " + QuoteJson(v), where_, "true or false");
    return v.get<bool>();
  }

  // A square size given as N or [N, N].
  Result<int> SquareSize(const std::string& key, std::optional<int> fallback) {
    if (Has(key) && obj_[key].is_array()) {
      used_.insert(key);
      const json& v = obj_[key];
      if (v.size() != 2 || !v[0].is_number_integer() || v[0] != v[1] || v[0].get<int64_t>() <= 0) {
        return Status::Unsupported("non-square or invalid " + key + " " + QuoteJson(v), where_, "a square size N or [N, N]");
      }
      return static_cast<int>(v[0].get<int64_t>());
    }
    return Int(key, fallback);
  }

  // Accepts `key` only when absent/null or equal to one of `allowed`; otherwise the feature is unsupported.
  Status Require(const std::string& key, const std::vector<json>& allowed, const std::string& feature) {
    used_.insert(key);
    if (!Has(key)) return Status::Ok();
    for (const json& a : allowed) {
      if (obj_[key] == a) return Status::Ok();
    }
    return Status::Unsupported("unsupported " + feature + " (" + key + " = " + QuoteJson(obj_[key]) + ")", where_,
                               "a standard ViT CLIP (this option is not implemented)");
  }

  // Keys that do not change inference (training-only or output-format options).
  void Ignore(std::initializer_list<const char*> keys) {
    for (const char* k : keys) used_.insert(k);
  }

  Status CheckAllUsed() const {
    for (const auto& [key, value] : obj_.items()) {
      if (!used_.count(key)) {
        return Status::Unsupported("unknown config field " + QuoteText(key) + " = " + QuoteJson(value), where_,
                                   "only fields of a standard ViT CLIP config (refusing rather than ignoring it)");
      }
    }
    return Status::Ok();
  }

  const std::string& where() const { return where_; }

 private:
  const json& obj_;
  std::string where_;
  std::set<std::string> used_;
};

Result<const json*> Object(const json& parent, const std::string& key, const std::string& where) {
  if (!parent.contains(key) || !parent[key].is_object()) {
    return Status::InvalidArgument("missing object \"" + key + "\"", where, "a JSON object");
  }
  return &parent[key];
}

Status CheckHeads(const TowerConfig& t, const std::string& where) {
  if (t.width % t.heads != 0) {
    return Status::InvalidArgument(fmt::format("width {} is not divisible by {} heads", t.width, t.heads), where,
                                   "width = heads * head_width");
  }
  return Status::Ok();
}

// OpenCLIP's int(width * mlp_ratio), for a ratio in (0, kMaxMlpRatio] giving at least one unit.
Result<int> MlpWidth(int width, double mlp_ratio, const std::string& where) {
  const std::string expected = fmt::format("a number above 0 and at most {}", kMaxMlpRatio);
  if (!(mlp_ratio > 0.0 && mlp_ratio <= kMaxMlpRatio)) {
    return Status::InvalidArgument(fmt::format("field \"mlp_ratio\" is {}", mlp_ratio), where, expected);
  }
  const double mlp_width = std::floor(width * mlp_ratio);
  if (mlp_width < 1.0) {
    return Status::InvalidArgument(fmt::format("mlp_ratio {} gives an MLP of width 0 for width {}", mlp_ratio, width),
                                   where, "a ratio giving at least one hidden unit");
  }
  return static_cast<int>(mlp_width);
}

// The model's largest tensors and activations must have fewer than 2^31 elements: the kernels
// index them with int. Each field is bounded on its own (Fields::Int); this bounds their products.
Status CheckSizesFit(const ClipConfig& c, const std::string& where) {
  // Convolutional towers (ResNet, ConvNeXt) have no patches: their vision rows below are zero.
  const int64_t grid = c.vision.patch_size > 0 ? c.vision.image_size / c.vision.patch_size : 0;
  const int64_t tokens = grid > 0 ? grid * grid + 1 : 0;
  const int64_t patch_in = int64_t{3} * c.vision.patch_size * c.vision.patch_size;
  struct Product {
    const char* what;
    int64_t a, b;
  };
  const Product products[] = {
      {"vision tokens x width", tokens, std::max(c.vision.width, c.vision.mlp_width)},
      {"vision attention scores (tokens x tokens x heads)", tokens * tokens, c.vision.heads},
      {"patch embedding (3 x patch_size^2 x width)", patch_in, c.vision.width},
      {"vision MLP weights (width x mlp_width)", c.vision.width, c.vision.mlp_width},
      {"vision projection (width x embed_dim)", c.vision.width, c.embed_dim},
      {"token embedding (vocab_size x width)", c.text.vocab_size, c.text.width},
      {"text tokens x width", c.text.context_length, std::max(c.text.width, c.text.mlp_width)},
      {"text attention scores (context x context x heads)", int64_t{c.text.context_length} * c.text.context_length,
       c.text.heads},
      {"text MLP weights (width x mlp_width)", c.text.width, c.text.mlp_width},
      {"text projection (width x embed_dim)", c.text.width, c.embed_dim},
  };
  for (const Product& p : products) {
    // Factors are below 2^31 (fields up to 2^24, tokens up to 2^48 / 1 only when patch_size is 1).
    if (p.a > kMaxElements || p.b > kMaxElements || p.a * p.b > kMaxElements) {
      return Status::Unsupported(fmt::format("{} is {} x {} elements", p.what, p.a, p.b), where,
                                 "a model whose tensors have fewer than 2^31 elements");
    }
  }
  return Status::Ok();
}

Result<std::array<float, 3>> Triple(const json& obj, const std::string& key, const std::array<float, 3>& fallback,
                                    const std::string& where) {
  if (!obj.contains(key) || obj[key].is_null()) return fallback;
  const json& v = obj[key];
  std::array<float, 3> out{};
  if (v.is_array() && v.size() == 3) {
    for (size_t i = 0; i < 3; ++i) {
      if (!v[i].is_number()) break;
      out[i] = v[i].get<float>();
      if (i == 2) return out;
    }
  }
  if (v.is_number()) return std::array<float, 3>{v.get<float>(), v.get<float>(), v.get<float>()};
  return Status::InvalidArgument("field " + QuoteText(key) + " is " + QuoteJson(v), where, "three numbers (one per RGB channel)");
}

Status CheckPreprocess(const PreprocessConfig& p, const std::string& where) {
  for (float s : p.std) {
    if (!(s > 0.0f)) return Status::InvalidArgument("std must be positive", where, "three positive numbers");
  }
  return Status::Ok();
}

Result<PreprocessConfig> ParseOpenClipPreprocess(const json* cfg, int image_size, const std::string& where) {
  PreprocessConfig p;
  p.image_size = image_size;
  p.mean = kOpenAiMean;
  p.std = kOpenAiStd;
  if (cfg == nullptr) return p;
  Fields f(*cfg, where);
  VISALIGN_ASSIGN_OR_RETURN(p.image_size, f.SquareSize("size", image_size));
  VISALIGN_ASSIGN_OR_RETURN(p.mean, Triple(*cfg, "mean", kOpenAiMean, where));
  VISALIGN_ASSIGN_OR_RETURN(p.std, Triple(*cfg, "std", kOpenAiStd, where));
  f.Ignore({"mean", "std", "fill_color"});
  VISALIGN_RETURN_IF_ERROR(f.Require("mode", {"RGB"}, "image mode"));
  VISALIGN_ASSIGN_OR_RETURN(std::string interpolation, f.String("interpolation", "bicubic"));
  if (interpolation == "bicubic") {
    p.interpolation = Interpolation::kBicubic;
  } else if (interpolation == "bilinear") {
    p.interpolation = Interpolation::kBilinear;
  } else {
    return Status::Unsupported("unsupported interpolation \"" + interpolation + "\"", where, "bicubic or bilinear");
  }
  VISALIGN_ASSIGN_OR_RETURN(std::string resize_mode, f.String("resize_mode", "shortest"));
  if (resize_mode == "shortest") {
    p.resize_mode = ResizeMode::kShortest;
  } else if (resize_mode == "squash") {
    p.resize_mode = ResizeMode::kSquash;
  } else {
    return Status::Unsupported("unsupported resize_mode \"" + resize_mode + "\"", where, "shortest or squash");
  }
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  VISALIGN_RETURN_IF_ERROR(CheckPreprocess(p, where));
  if (p.image_size != image_size) {
    return Status::InvalidArgument(fmt::format("preprocess size {} differs from the model image size {}", p.image_size,
                                               image_size),
                                   where, "the vision tower's image_size");
  }
  return p;
}

// timm's SigLIP ViTs (vision_transformer.py `vit_<size>_patch<P>_siglip_<S>`): no class token, MAP
// head, exact GELU, LayerNorm eps 1e-6. The tanh-GELU variants (SigLIP2's towers) are refused.
struct TimmSiglipSize {
  const char* name;
  int width, depth, heads;
  double mlp_ratio;
};
constexpr TimmSiglipSize kTimmSiglipSizes[] = {
    {"base", 768, 12, 12, 4.0}, {"large", 1024, 24, 16, 4.0}, {"so400m", 1152, 27, 16, 3.7362},
    {"giantopt", 1536, 40, 16, 4.0}};
constexpr float kTimmLayerNormEps = 1e-6f;
const std::set<std::string>& TimmTanhGeluModels() {
  static const std::set<std::string> kNames = {"vit_base_patch32_siglip_256", "vit_large_patch16_siglip_512",
                                               "vit_so400m_patch16_siglip_256", "vit_so400m_patch16_siglip_384",
                                               "vit_so400m_patch16_siglip_512", "vit_giantopt_patch16_siglip_256",
                                               "vit_giantopt_patch16_siglip_384"};
  return kNames;
}

Result<VisionConfig> ParseTimmSiglipVision(const json& v, const std::string& where) {
  Fields f(v, where);
  VISALIGN_ASSIGN_OR_RETURN(std::string name, f.String("timm_model_name", ""));
  static const std::regex kName("vit_([a-z0-9]+)_patch([0-9]+)_siglip_([0-9]+)");
  std::smatch m;
  const TimmSiglipSize* size = nullptr;
  if (std::regex_match(name, m, kName)) {
    for (const TimmSiglipSize& s : kTimmSiglipSizes) {
      if (m[1] == s.name) size = &s;
    }
  }
  if (size == nullptr) {
    return Status::Unsupported("unsupported timm vision tower (timm_model_name = \"" + name + "\")", where,
                               "a standard ViT CLIP or a timm SigLIP ViT vit_{base,large,so400m}_patch*_siglip_*");
  }
  if (TimmTanhGeluModels().count(name)) {
    return Status::Unsupported("unsupported tanh-approximated GELU (SigLIP2 timm tower " + name + ")", where,
                               "a SigLIP ViT with exact GELU");
  }
  VisionConfig c;
  c.patch_size = std::stoi(m[2]);
  c.image_size = std::stoi(m[3]);
  c.width = size->width;
  c.layers = size->depth;
  c.heads = size->heads;
  double mlp_ratio = size->mlp_ratio;
  if (f.Has("timm_model_kwargs")) {
    Fields k(v["timm_model_kwargs"], where + " timm_model_kwargs");
    VISALIGN_ASSIGN_OR_RETURN(c.image_size, k.SquareSize("img_size", c.image_size));
    VISALIGN_ASSIGN_OR_RETURN(c.width, k.Int("embed_dim", c.width));
    VISALIGN_ASSIGN_OR_RETURN(c.layers, k.Int("depth", c.layers));
    VISALIGN_ASSIGN_OR_RETURN(c.heads, k.Int("num_heads", c.heads));
    VISALIGN_ASSIGN_OR_RETURN(c.patch_size, k.SquareSize("patch_size", c.patch_size));
    VISALIGN_ASSIGN_OR_RETURN(mlp_ratio, k.Number("mlp_ratio", mlp_ratio));
    VISALIGN_RETURN_IF_ERROR(k.CheckAllUsed());
  }
  f.Ignore({"timm_model_kwargs", "timm_model_pretrained", "timm_drop", "timm_drop_path", "patch_dropout"});
  VISALIGN_ASSIGN_OR_RETURN(int image_size, f.SquareSize("image_size", c.image_size));
  if (image_size != c.image_size) {
    return Status::InvalidArgument(fmt::format("image_size {} differs from the timm model's {}", image_size, c.image_size),
                                   where, "the timm model's img_size");
  }
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_pool", {"map"}, "timm pooling"));
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_proj", {"none"}, "timm projection (SigLIP uses none)"));
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_proj_bias", {false}, "timm projection bias"));
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  VISALIGN_ASSIGN_OR_RETURN(c.mlp_width, MlpWidth(c.width, mlp_ratio, where));
  c.layer_norm_eps = kTimmLayerNormEps;
  c.ln_pre = false;
  c.class_token = false;
  c.projection = false;
  c.pooling = Pooling::kAttentionPool;
  VISALIGN_RETURN_IF_ERROR(CheckHeads(c, where));
  if (c.image_size % c.patch_size != 0) {
    return Status::InvalidArgument(fmt::format("image_size {} is not a multiple of patch_size {}", c.image_size,
                                               c.patch_size),
                                   where, "an image size divisible by the patch size");
  }
  return c;
}

// Four positive integers (ResNet layers, ConvNeXt depths/dims).
Result<std::array<int, 4>> FourInts(const json& v, const std::string& key, const std::string& where) {
  std::array<int, 4> out{};
  if (v.is_array() && v.size() == out.size()) {
    for (size_t i = 0; i < out.size(); ++i) {
      if (!v[i].is_number_integer() || v[i].get<int64_t>() <= 0 || v[i].get<int64_t>() > (1 << 16)) break;
      out[i] = static_cast<int>(v[i].get<int64_t>());
      if (i + 1 == out.size()) return out;
    }
  }
  return Status::InvalidArgument("field \"" + key + "\" is " + v.dump(), where, "four positive integers (one per stage)");
}

// OpenCLIP's ModifiedResNet: vision_cfg.layers is a list of four Bottleneck counts.
Result<VisionConfig> ParseOpenClipResNet(const json& v, const std::string& where) {
  Fields f(v, where);
  VisionConfig c;
  c.tower = VisionTower::kModifiedResNet;
  f.Ignore({"layers"});
  VISALIGN_ASSIGN_OR_RETURN(c.resnet.layers, FourInts(v["layers"], "layers", where));
  VISALIGN_ASSIGN_OR_RETURN(c.image_size, f.SquareSize("image_size", 224));
  VISALIGN_ASSIGN_OR_RETURN(c.resnet.width, f.Int("width", kOpenClipDefaultResNetWidth));
  VISALIGN_ASSIGN_OR_RETURN(int head_width, f.Int("head_width", kOpenClipDefaultHeadWidth));
  if (c.resnet.feature_width() % head_width != 0 || c.resnet.width % 2 != 0) {
    return Status::InvalidArgument(fmt::format("width {} with head_width {}", c.resnet.width, head_width), where,
                                   "an even width with width * 32 divisible by head_width");
  }
  c.resnet.heads = c.resnet.feature_width() / head_width;
  if (c.image_size % kResNetTotalStride != 0) {
    return Status::InvalidArgument(fmt::format("image_size {}", c.image_size), where,
                                   fmt::format("a multiple of {} (the ResNet's total stride)", kResNetTotalStride));
  }
  // patch_size is null in OpenCLIP's RN configs and unused by the tower.
  f.Ignore({"patch_size", "patch_dropout", "output_tokens", "output_dim"});
  VISALIGN_RETURN_IF_ERROR(f.Require("act_kwargs", {}, "activation options"));
  VISALIGN_RETURN_IF_ERROR(f.Require("norm_kwargs", {}, "normalization options"));
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  return c;
}

// timm's ConvNeXt models without conv_mlp / GRN (timm/models/convnext.py registrations).
struct TimmConvNext {
  const char* name;
  std::array<int, 4> depths;
  std::array<int, 4> dims;
  float norm_eps;
};
constexpr float kConvNextNormEps = 1e-6f;
constexpr std::array<TimmConvNext, 6> kTimmConvNexts = {{
    {"convnext_tiny", {3, 3, 9, 3}, {96, 192, 384, 768}, kConvNextNormEps},
    {"convnext_small", {3, 3, 27, 3}, {96, 192, 384, 768}, kConvNextNormEps},
    {"convnext_base", {3, 3, 27, 3}, {128, 256, 512, 1024}, kConvNextNormEps},
    {"convnext_large", {3, 3, 27, 3}, {192, 384, 768, 1536}, kConvNextNormEps},
    {"convnext_xlarge", {3, 3, 27, 3}, {256, 512, 1024, 2048}, kConvNextNormEps},
    {"convnext_xxlarge", {3, 4, 30, 3}, {384, 768, 1536, 3072}, 1e-5f},
}};

// The model family of a timm model name, for refusals ("EVA", "ViTamin", ...).
std::string TimmFamily(const std::string& name) {
  static const std::array<std::pair<const char*, const char*>, 7> kFamilies = {{
      {"eva", "EVA"},
      {"vitamin", "ViTamin"},
      {"fastvit", "MobileCLIP (FastViT)"},
      {"mobileclip", "MobileCLIP"},
      {"convnextv2", "ConvNeXt-V2"},
      {"convnext", "ConvNeXt variant"},
      {"vit_", "ViT"},
  }};
  for (const auto& [prefix, family] : kFamilies) {
    if (name.rfind(prefix, 0) == 0) return family;
  }
  return "non-ConvNeXt";
}

// OpenCLIP's TimmModel adapter (vision_cfg.timm_model_name); of timm's trunks only ConvNeXt.
Result<VisionConfig> ParseOpenClipTimm(const json& v, const std::string& where) {
  Fields f(v, where);
  VisionConfig c;
  c.tower = VisionTower::kConvNext;
  ConvNextConfig& cn = c.convnext;
  VISALIGN_ASSIGN_OR_RETURN(cn.timm_model_name, f.String("timm_model_name", ""));
  const TimmConvNext* known = nullptr;
  for (const TimmConvNext& m : kTimmConvNexts) {
    if (cn.timm_model_name == m.name) known = &m;
  }
  if (known == nullptr) {
    std::string names;
    for (const TimmConvNext& m : kTimmConvNexts) names += (names.empty() ? "" : ", ") + std::string(m.name);
    return Status::Unsupported("unsupported " + TimmFamily(cn.timm_model_name) + " timm vision tower (timm_model_name = \"" +
                                   cn.timm_model_name + "\")",
                               where, "a timm SigLIP ViT or one of the timm ConvNeXt models " + names);
  }
  cn.depths = known->depths;
  cn.dims = known->dims;
  cn.norm_eps = known->norm_eps;
  if (f.Has("timm_model_kwargs")) {
    const std::string kw_where = where + " timm_model_kwargs";
    const json& kw = v["timm_model_kwargs"];
    if (!kw.is_object()) return Status::InvalidArgument("field is " + kw.dump(), kw_where, "a JSON object");
    Fields k(kw, kw_where);
    if (k.Has("depths")) {
      VISALIGN_ASSIGN_OR_RETURN(cn.depths, FourInts(kw["depths"], "depths", kw_where));
    }
    if (k.Has("dims")) {
      VISALIGN_ASSIGN_OR_RETURN(cn.dims, FourInts(kw["dims"], "dims", kw_where));
    }
    VISALIGN_ASSIGN_OR_RETURN(double eps, k.Number("norm_eps", cn.norm_eps));
    cn.norm_eps = static_cast<float>(eps);
    k.Ignore({"depths", "dims", "drop_path_rate", "drop_rate"});
    VISALIGN_RETURN_IF_ERROR(k.CheckAllUsed());
  }
  f.Ignore({"timm_model_kwargs"});
  VISALIGN_ASSIGN_OR_RETURN(c.image_size, f.SquareSize("image_size", 224));
  if (c.image_size % kConvNextTotalStride != 0) {
    return Status::InvalidArgument(fmt::format("image_size {}", c.image_size), where,
                                   fmt::format("a multiple of {} (ConvNeXt's total stride)", kConvNextTotalStride));
  }
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_pool", {"", "avg"}, "timm pooling other than average"));
  VISALIGN_ASSIGN_OR_RETURN(std::string proj, f.String("timm_proj", "linear"));
  if (proj == "linear") {
    cn.projection = ConvNextProjection::kLinear;
  } else if (proj == "mlp") {
    cn.projection = ConvNextProjection::kMlp;
  } else {
    return Status::Unsupported("unsupported timm_proj \"" + proj + "\"", where, "linear or mlp");
  }
  VISALIGN_ASSIGN_OR_RETURN(cn.projection_bias, f.Bool("timm_proj_bias", false));
  // Pretrained-weight download and training-time dropout do not change inference; OpenCLIP lets the
  // timm model override the ViT fields.
  f.Ignore({"layers", "width", "head_width", "patch_size", "mlp_ratio", "timm_model_pretrained", "timm_drop", "timm_drop_path", "patch_dropout", "output_tokens", "output_dim"});
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  return c;
}

Result<VisionConfig> ParseOpenClipVision(const json& v, const std::string& where) {
  Fields f(v, where);
  if (f.Has("timm_model_name")) {
    // timm's SigLIP ViTs here, every other timm trunk (ConvNeXt, or a refusal naming its family) below.
    const std::string name = v["timm_model_name"].is_string() ? v["timm_model_name"].get<std::string>() : "";
    if (name.rfind("vit_", 0) == 0 && name.find("_siglip") != std::string::npos) return ParseTimmSiglipVision(v, where);
    return ParseOpenClipTimm(v, where);
  }
  if (f.Has("layers") && v["layers"].is_array()) return ParseOpenClipResNet(v, where);
  VisionConfig c;
  VISALIGN_ASSIGN_OR_RETURN(c.image_size, f.SquareSize("image_size", 224));
  VISALIGN_ASSIGN_OR_RETURN(c.layers, f.Int("layers", 12));
  VISALIGN_ASSIGN_OR_RETURN(c.width, f.Int("width", 768));
  VISALIGN_ASSIGN_OR_RETURN(int head_width, f.Int("head_width", kOpenClipDefaultHeadWidth));
  VISALIGN_ASSIGN_OR_RETURN(c.patch_size, f.SquareSize("patch_size", 16));
  VISALIGN_ASSIGN_OR_RETURN(double mlp_ratio, f.Number("mlp_ratio", kDefaultMlpRatio));
  VISALIGN_ASSIGN_OR_RETURN(bool no_ln_pre, f.Bool("no_ln_pre", false));
  c.ln_pre = !no_ln_pre;
  if (c.width % head_width != 0) {
    return Status::InvalidArgument(fmt::format("width {} is not divisible by head_width {}", c.width, head_width),
                                   where, "width = heads * head_width");
  }
  c.heads = c.width / head_width;
  VISALIGN_ASSIGN_OR_RETURN(c.mlp_width, MlpWidth(c.width, mlp_ratio, where));
  c.pooling = Pooling::kClassToken;
  if (c.image_size % c.patch_size != 0) {
    return Status::InvalidArgument(fmt::format("image_size {} is not a multiple of patch_size {}", c.image_size,
                                               c.patch_size),
                                   where, "an image size divisible by the patch size");
  }
  VISALIGN_RETURN_IF_ERROR(f.Require("ls_init_value", {}, "LayerScale"));
  VISALIGN_RETURN_IF_ERROR(f.Require("attentional_pool", {false}, "attentional pooler (CoCa)"));
  VISALIGN_RETURN_IF_ERROR(f.Require("pool_type", {"tok"}, "vision pool_type"));
  VISALIGN_RETURN_IF_ERROR(f.Require("global_average_pool", {false}, "global average pooling"));
  VISALIGN_RETURN_IF_ERROR(f.Require("final_ln_after_pool", {false}, "final_ln_after_pool"));
  VISALIGN_RETURN_IF_ERROR(f.Require("pos_embed_type", {"learnable"}, "positional embedding type"));
  VISALIGN_RETURN_IF_ERROR(f.Require("proj_type", {"linear"}, "vision projection type"));
  VISALIGN_RETURN_IF_ERROR(f.Require("proj_bias", {false}, "vision projection bias"));
  VISALIGN_RETURN_IF_ERROR(f.Require("input_patchnorm", {false}, "input patch norm"));
  VISALIGN_RETURN_IF_ERROR(f.Require("act_kwargs", {}, "activation options"));
  VISALIGN_RETURN_IF_ERROR(f.Require("norm_kwargs", {}, "normalization options"));
  f.Ignore({"patch_dropout", "output_tokens", "attn_pooler_queries", "attn_pooler_heads", "n_queries",
            "embed_cls", "output_dim"});
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  return c;
}

// norm_kwargs: absent (eps 1e-5) or {"eps": x}.
Result<float> LayerNormEps(const json& cfg, const std::string& where) {
  if (!cfg.contains("norm_kwargs") || cfg["norm_kwargs"].is_null()) return 1e-5f;
  const json& n = cfg["norm_kwargs"];
  if (!n.is_object() || n.size() != 1 || !n.contains("eps") || !n["eps"].is_number() || !(n["eps"].get<double>() > 0)) {
    return Status::Unsupported("unsupported normalization options (norm_kwargs = " + QuoteJson(n) + ")", where,
                               "{\"eps\": positive number}");
  }
  return n["eps"].get<float>();
}

// `hf_tokenizer_name` receives the text_cfg's Hugging Face tokenizer name ("" = CLIP's BPE).
Result<TextConfig> ParseOpenClipText(const json& t, const std::string& where, std::string* hf_tokenizer_name) {
  Fields f(t, where);
  if (f.Has("hf_model_name")) {
    return Status::Unsupported("unsupported Hugging Face text tower (hf_model_name = " + QuoteJson(t["hf_model_name"]) + ")",
                               where, "a standard CLIP text transformer");
  }
  TextConfig c;
  VISALIGN_ASSIGN_OR_RETURN(c.context_length, f.Int("context_length", kDefaultContextLength));
  VISALIGN_ASSIGN_OR_RETURN(c.vocab_size, f.Int("vocab_size", kDefaultVocabSize));
  VISALIGN_ASSIGN_OR_RETURN(c.width, f.Int("width", kOpenClipDefaultTextWidth));
  VISALIGN_ASSIGN_OR_RETURN(c.heads, f.Int("heads", kOpenClipDefaultTextHeads));
  VISALIGN_ASSIGN_OR_RETURN(c.layers, f.Int("layers", kOpenClipDefaultTextLayers));
  VISALIGN_ASSIGN_OR_RETURN(double mlp_ratio, f.Number("mlp_ratio", kDefaultMlpRatio));
  VISALIGN_ASSIGN_OR_RETURN(c.mlp_width, MlpWidth(c.width, mlp_ratio, where));
  VISALIGN_RETURN_IF_ERROR(CheckHeads(c, where));
  VISALIGN_RETURN_IF_ERROR(f.Require("ls_init_value", {}, "LayerScale"));
  VISALIGN_ASSIGN_OR_RETURN(std::string pool_type, f.String("pool_type", "argmax"));
  if (pool_type != "argmax" && pool_type != "last") {
    return Status::Unsupported("unsupported text pool_type \"" + pool_type + "\"", where, "argmax or last");
  }
  c.pooling = pool_type == "last" ? Pooling::kLast : Pooling::kArgmax;
  VISALIGN_ASSIGN_OR_RETURN(bool no_causal_mask, f.Bool("no_causal_mask", false));
  c.causal = !no_causal_mask;
  VISALIGN_ASSIGN_OR_RETURN(c.projection_bias, f.Bool("proj_bias", false));
  VISALIGN_RETURN_IF_ERROR(f.Require("embed_cls", {false}, "text class-token embedding (CoCa)"));
  VISALIGN_RETURN_IF_ERROR(f.Require("final_ln_after_pool", {false}, "final_ln_after_pool"));
  VISALIGN_RETURN_IF_ERROR(f.Require("proj_type", {"linear"}, "text projection type"));
  VISALIGN_RETURN_IF_ERROR(f.Require("pad_id", {0}, "pad_id other than 0"));
  VISALIGN_ASSIGN_OR_RETURN(*hf_tokenizer_name, f.String("hf_tokenizer_name", ""));
  if (!hf_tokenizer_name->empty()) {
    const json kCanonicalize = {{"clean", "canonicalize"}};
    VISALIGN_RETURN_IF_ERROR(f.Require("tokenizer_kwargs", {kCanonicalize}, "tokenizer options"));
    if (!f.Has("tokenizer_kwargs")) {
      return Status::Unsupported("Hugging Face tokenizer without clean=canonicalize", where,
                                 "a SigLIP text_cfg with tokenizer_kwargs {\"clean\": \"canonicalize\"}");
    }
  } else {
    VISALIGN_RETURN_IF_ERROR(f.Require("tokenizer_kwargs", {}, "tokenizer options"));
  }
  VISALIGN_RETURN_IF_ERROR(f.Require("act_kwargs", {}, "activation options (tanh-approximated GELU: SigLIP2)"));
  VISALIGN_ASSIGN_OR_RETURN(c.layer_norm_eps, LayerNormEps(t, where));
  f.Ignore({"output_tokens", "output_dim", "norm_kwargs"});
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  return c;
}

// The record WriteRandomClipModel leaves in the config: {"arch": name, "seed": N, "note": text}.
Status ParseRandomModelRecord(const json& record, const std::string& where, ClipConfig& c) {
  if (!record.is_object()) {
    return Status::InvalidArgument("field is " + QuoteJson(record), where, "an object {\"arch\", \"seed\"}");
  }
  Fields f(record, where);
  VISALIGN_ASSIGN_OR_RETURN(c.random_arch, f.String("arch", ""));
  if (c.random_arch.empty()) return Status::InvalidArgument("missing field \"arch\"", where, "the architecture name");
  if (!record.contains("seed") || !record["seed"].is_number_unsigned()) {
    return Status::InvalidArgument("field \"seed\" is " + QuoteJson(record.value("seed", json())), where,
                                   "a non-negative integer");
  }
  c.random_seed = record["seed"].get<uint64_t>();
  c.random = true;
  f.Ignore({"seed", "note"});
  return f.CheckAllUsed();
}

Result<std::filesystem::path> FirstExisting(const fs::path& dir, std::initializer_list<const char*> names,
                                            const std::string& what) {
  for (const char* n : names) {
    if (fs::is_regular_file(dir / n)) return dir / n;
  }
  std::string list;
  for (const char* n : names) list += (list.empty() ? "" : " or ") + std::string(n);
  return Status::NotFound("no " + what + " in model directory", dir.string(), list);
}

Result<json> ReadJson(const fs::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  auto j = ParseJson(text);
  if (!j.ok()) return Status::InvalidArgument(j.status().what(), path.string(), "a valid JSON config file");
  if (!j->is_object()) return Status::InvalidArgument("not a JSON object", path.string(), "a valid JSON config file");
  return std::move(*j);
}

Result<Activation> HfActivation(Fields& f) {
  VISALIGN_ASSIGN_OR_RETURN(std::string act, f.String("hidden_act", "quick_gelu"));
  if (act == "quick_gelu") return Activation::kQuickGelu;
  if (act == "gelu") return Activation::kGelu;
  return Status::Unsupported("unsupported activation \"" + act + "\"", f.where(), "gelu or quick_gelu");
}

// Keys of transformers' PretrainedConfig that do not affect a CLIP forward pass.
void IgnoreHfCommon(Fields& f) {
  f.Ignore({"_name_or_path", "model_type", "architectures", "torch_dtype", "transformers_version", "initializer_range",
            "initializer_factor", "attention_dropout", "dropout", "projection_dim", "bos_token_id", "eos_token_id",
            "pad_token_id", "return_dict", "output_hidden_states", "output_attentions", "torchscript",
            "use_bfloat16", "tie_word_embeddings", "is_encoder_decoder", "is_decoder", "add_cross_attention",
            "tie_encoder_decoder", "chunk_size_feed_forward", "pruned_heads", "id2label", "label2id",
            "problem_type", "tokenizer_class", "prefix", "sep_token_id", "decoder_start_token_id", "task_specific_params",
            "finetuning_task", "cross_attention_hidden_size", "max_length", "min_length", "do_sample", "early_stopping",
            "num_beams", "num_beam_groups", "diversity_penalty", "temperature", "top_k", "top_p", "typical_p",
            "repetition_penalty", "length_penalty", "no_repeat_ngram_size", "encoder_no_repeat_ngram_size",
            "bad_words_ids", "num_return_sequences", "output_scores", "return_dict_in_generate",
            "forced_bos_token_id", "forced_eos_token_id", "remove_invalid_values", "exponential_decay_length_penalty",
            "suppress_tokens", "begin_suppress_tokens", "gradient_checkpointing"});
}

Result<TowerConfig> ParseHfTower(Fields& f, Activation* activation) {
  TowerConfig t;
  VISALIGN_ASSIGN_OR_RETURN(t.width, f.Int("hidden_size", std::nullopt));
  VISALIGN_ASSIGN_OR_RETURN(t.mlp_width, f.Int("intermediate_size", std::nullopt));
  VISALIGN_ASSIGN_OR_RETURN(t.heads, f.Int("num_attention_heads", std::nullopt));
  VISALIGN_ASSIGN_OR_RETURN(t.layers, f.Int("num_hidden_layers", std::nullopt));
  VISALIGN_ASSIGN_OR_RETURN(double eps, f.Number("layer_norm_eps", 1e-5));
  t.layer_norm_eps = static_cast<float>(eps);
  VISALIGN_ASSIGN_OR_RETURN(*activation, HfActivation(f));
  VISALIGN_RETURN_IF_ERROR(CheckHeads(t, f.where()));
  IgnoreHfCommon(f);
  return t;
}

}  // namespace

Result<ClipConfig> ParseOpenClipConfig(const json& j, const std::string& source) {
  const bool wrapped = j.contains("model_cfg");
  const json& model = wrapped ? j["model_cfg"] : j;
  const std::string where = source + (wrapped ? " model_cfg" : "");
  if (!model.is_object()) return Status::InvalidArgument("model_cfg is not an object", source, "a JSON object");
  Fields f(model, where);
  if (f.Has("multimodal_cfg")) {
    return Status::Unsupported("unsupported CoCa model (multimodal_cfg present)", where, "a standard ViT CLIP");
  }
  ClipConfig c;
  c.sigmoid_logits = f.Has("init_logit_bias");
  c.layout = CheckpointLayout::kOpenClip;
  VISALIGN_ASSIGN_OR_RETURN(c.embed_dim, f.Int("embed_dim", std::nullopt));
  VISALIGN_ASSIGN_OR_RETURN(bool quick_gelu, f.Bool("quick_gelu", false));
  c.activation = quick_gelu ? Activation::kQuickGelu : Activation::kGelu;
  VISALIGN_ASSIGN_OR_RETURN(const json* vision, Object(model, "vision_cfg", where));
  VISALIGN_ASSIGN_OR_RETURN(const json* text, Object(model, "text_cfg", where));
  f.Ignore({"vision_cfg", "text_cfg", "cast_dtype", "init_logit_scale", "nonscalar_logit_scale", "init_logit_bias"});
  VISALIGN_ASSIGN_OR_RETURN(c.custom_text, f.Bool("custom_text", false));
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  VISALIGN_ASSIGN_OR_RETURN(c.vision, ParseOpenClipVision(*vision, where + " vision_cfg"));
  VISALIGN_ASSIGN_OR_RETURN(c.text, ParseOpenClipText(*text, where + " text_cfg", &c.tokenizer.hf_name));
  if (!c.vision.projection && c.vision.width != c.embed_dim) {
    return Status::InvalidArgument(fmt::format("vision width {} without a projection differs from embed_dim {}",
                                               c.vision.width, c.embed_dim),
                                   where, "embed_dim equal to the timm tower's width (timm_proj none)");
  }
  const json* pre = wrapped && j.contains("preprocess_cfg") && j["preprocess_cfg"].is_object() ? &j["preprocess_cfg"] : nullptr;
  VISALIGN_ASSIGN_OR_RETURN(c.preprocess, ParseOpenClipPreprocess(pre, c.vision.image_size, source + " preprocess_cfg"));
  if (wrapped && j.contains(kRandomModelConfigKey)) {
    VISALIGN_RETURN_IF_ERROR(ParseRandomModelRecord(j[kRandomModelConfigKey], source + " " + kRandomModelConfigKey, c));
  }
  VISALIGN_RETURN_IF_ERROR(CheckSizesFit(c, where));
  return c;
}

Result<ClipConfig> ParseHuggingFaceConfig(const json& j, const json& preprocessor, const std::string& source) {
  Fields top(j, source);
  VISALIGN_ASSIGN_OR_RETURN(std::string model_type, top.String("model_type", "clip"));
  if (model_type == "siglip" || model_type == "siglip2") {
    return Status::Unsupported("unsupported Hugging Face " + model_type + " checkpoint (transformers SiglipModel layout)",
                               source,
                               "the OpenCLIP export of the same model (open_clip_config.json + "
                               "open_clip_model.safetensors, e.g. timm/ViT-B-16-SigLIP), or hues run --embeddings");
  }
  if (model_type != "clip") {
    return Status::Unsupported("unsupported model_type \"" + model_type + "\"", source, "a transformers CLIPModel (clip)");
  }
  ClipConfig c;
  c.layout = CheckpointLayout::kHuggingFace;
  VISALIGN_ASSIGN_OR_RETURN(c.embed_dim, top.Int("projection_dim", 512));
  VISALIGN_ASSIGN_OR_RETURN(const json* vision, Object(j, "vision_config", source));
  VISALIGN_ASSIGN_OR_RETURN(const json* text, Object(j, "text_config", source));
  Activation vision_act{}, text_act{};
  {
    Fields f(*vision, source + " vision_config");
    VISALIGN_ASSIGN_OR_RETURN(TowerConfig t, ParseHfTower(f, &vision_act));
    static_cast<TowerConfig&>(c.vision) = t;
    VISALIGN_ASSIGN_OR_RETURN(c.vision.image_size, f.Int("image_size", std::nullopt));
    VISALIGN_ASSIGN_OR_RETURN(c.vision.patch_size, f.Int("patch_size", std::nullopt));
    VISALIGN_RETURN_IF_ERROR(f.Require("num_channels", {3}, "non-RGB input"));
    c.vision.pooling = Pooling::kClassToken;
    if (c.vision.image_size % c.vision.patch_size != 0) {
      return Status::InvalidArgument("image_size is not a multiple of patch_size", f.where(), "divisible sizes");
    }
    VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  }
  {
    Fields f(*text, source + " text_config");
    VISALIGN_ASSIGN_OR_RETURN(TowerConfig t, ParseHfTower(f, &text_act));
    static_cast<TowerConfig&>(c.text) = t;
    VISALIGN_ASSIGN_OR_RETURN(c.text.context_length, f.Int("max_position_embeddings", kDefaultContextLength));
    VISALIGN_ASSIGN_OR_RETURN(c.text.vocab_size, f.Int("vocab_size", kDefaultVocabSize));
    c.text.pooling = Pooling::kArgmax;
    VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  }
  if (vision_act != text_act) {
    return Status::Unsupported("different activations in the vision and text towers", source,
                               "the same hidden_act in vision_config and text_config");
  }
  c.activation = vision_act;
  c.preprocess.image_size = c.vision.image_size;
  c.preprocess.mean = kOpenAiMean;
  c.preprocess.std = kOpenAiStd;
  if (preprocessor.is_object()) {
    const std::string where = "preprocessor_config.json";
    VISALIGN_ASSIGN_OR_RETURN(c.preprocess.mean, Triple(preprocessor, "image_mean", kOpenAiMean, where));
    VISALIGN_ASSIGN_OR_RETURN(c.preprocess.std, Triple(preprocessor, "image_std", kOpenAiStd, where));
    if (preprocessor.contains("resample") && preprocessor["resample"] != 3) {
      return Status::Unsupported("unsupported resample " + QuoteJson(preprocessor["resample"]), where, "3 (PIL bicubic)");
    }
    VISALIGN_RETURN_IF_ERROR(CheckPreprocess(c.preprocess, where));
  }
  VISALIGN_RETURN_IF_ERROR(CheckSizesFit(c, source));
  return c;
}

Result<ClipConfig> ReadClipConfig(const fs::path& dir) {
  if (!fs::is_directory(dir)) {
    return Status::NotFound("model directory does not exist", dir.string(),
                            "a directory with open_clip_config.json or config.json and *.safetensors weights");
  }
  VISALIGN_ASSIGN_OR_RETURN(fs::path config_file, FirstExisting(dir, {"open_clip_config.json", "config.json"}, "config"));
  VISALIGN_ASSIGN_OR_RETURN(fs::path weights_file,
                            FirstExisting(dir, {"open_clip_model.safetensors", "model.safetensors"}, "weights"));
  VISALIGN_ASSIGN_OR_RETURN(json j, ReadJson(config_file));
  Result<ClipConfig> config = Status::Internal("unparsed");
  if (j.contains("vision_config") || j.contains("text_config")) {
    json preprocessor;
    if (fs::is_regular_file(dir / "preprocessor_config.json")) {
      VISALIGN_ASSIGN_OR_RETURN(preprocessor, ReadJson(dir / "preprocessor_config.json"));
    }
    config = ParseHuggingFaceConfig(j, preprocessor, config_file.string());
  } else {
    config = ParseOpenClipConfig(j, config_file.string());
  }
  if (!config.ok()) return config.status();
  if (!config->tokenizer.hf_name.empty()) {
    VISALIGN_RETURN_IF_ERROR(ResolveSentencePieceTokenizer(dir, *config));
  }
  config->config_file = config_file;
  config->weights_file = weights_file;
  return config;
}

std::string_view VisionTowerName(VisionTower tower) {
  switch (tower) {
    case VisionTower::kViT:
      return "ViT";
    case VisionTower::kModifiedResNet:
      return "ModifiedResNet";
    case VisionTower::kConvNext:
      return "ConvNeXt (timm)";
  }
  return "unknown";
}

std::string RandomWeightsLabel(const ClipConfig& config) {
  if (!config.random) return "";
  return fmt::format("RANDOM (visalign clip random-model, arch {}, seed {}): its numbers mean nothing", config.random_arch,
                     config.random_seed);
}

std::string PreprocessFingerprintText(const PreprocessConfig& p) {
  return fmt::format("size={};resize={};interpolation={};mean={:.9g},{:.9g},{:.9g};std={:.9g},{:.9g},{:.9g}",
                     p.image_size, p.resize_mode == ResizeMode::kShortest ? "shortest" : "squash",
                     p.interpolation == Interpolation::kBicubic ? "bicubic" : "bilinear", p.mean[0], p.mean[1],
                     p.mean[2], p.std[0], p.std[1], p.std[2]);
}

}  // namespace visalign::clip
