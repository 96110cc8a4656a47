// OpenCLIP's TimmModel vision towers (vision_cfg.timm_model_name) that run natively: timm's SigLIP
// ViTs (MAP head) and ConvNeXts; every other timm trunk is refused naming its family.
#include <fmt/format.h>

#include <regex>
#include <set>
#include <string>

#include "clip/config_fields.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip::config_internal {
namespace {

constexpr int kConvNextTotalStride = 32;  // stem 4, stages 1..3 x2 each (the smallest image size)

// timm's SigLIP ViTs (vision_transformer.py `vit_<size>_patch<P>_siglip_<S>`): no class token, MAP
// head, exact GELU (act_layer 'gelu_tanh' for the names below, SigLIP2's towers), LayerNorm eps 1e-6.
struct TimmSiglipSize {
  const char* name;
  int width, depth, heads;
  double mlp_ratio;
};
constexpr TimmSiglipSize kTimmSiglipSizes[] = {{"base", 768, 12, 12, 4.0},
                                               {"large", 1024, 24, 16, 4.0},
                                               {"so400m", 1152, 27, 16, 3.7362},
                                               {"giantopt", 1536, 40, 16, 4.0}};
constexpr float kTimmLayerNormEps = 1e-6f;
const std::set<std::string>& TimmTanhGeluModels() {
  static const std::set<std::string> kNames = {"vit_base_patch32_siglip_256",    "vit_large_patch16_siglip_512",
                                               "vit_so400m_patch16_siglip_256",  "vit_so400m_patch16_siglip_384",
                                               "vit_so400m_patch16_siglip_512",  "vit_giantopt_patch16_siglip_256",
                                               "vit_giantopt_patch16_siglip_384"};
  return kNames;
}

}  // namespace

Status ApplyTimmVitKwargs(const Json& kwargs, const std::string& where, std::initializer_list<const char*> ignored,
                          VisionConfig& c, double& mlp_ratio) {
  Fields k(kwargs, where);
  VISALIGN_ASSIGN_OR_RETURN(c.image_size, k.SquareSize("img_size", c.image_size));
  VISALIGN_ASSIGN_OR_RETURN(c.width, k.Int("embed_dim", c.width));
  VISALIGN_ASSIGN_OR_RETURN(c.layers, k.Int("depth", c.layers));
  VISALIGN_ASSIGN_OR_RETURN(c.heads, k.Int("num_heads", c.heads));
  VISALIGN_ASSIGN_OR_RETURN(c.patch_size, k.SquareSize("patch_size", c.patch_size));
  VISALIGN_ASSIGN_OR_RETURN(mlp_ratio, k.Number("mlp_ratio", mlp_ratio));
  k.Ignore(ignored);
  return k.CheckAllUsed();
}

Result<VisionConfig> ParseTimmSiglipVision(const Json& v, const std::string& where) {
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
    return Status::Unsupported("unsupported timm vision tower (timm_model_name = " + QuoteText(name) + ")", where,
                               "a timm SigLIP ViT vit_{base,large,so400m,giantopt}_patch*_siglip_* (or a ConvNeXt)");
  }
  VisionConfig c;
  if (TimmTanhGeluModels().count(name)) c.activation = Activation::kGeluTanh;  // blocks and MAP head
  const Result<int64_t> patch = ParseInt(m.str(2), where), image = ParseInt(m.str(3), where);
  const std::optional<int> named_patch = patch.ok() ? SizeValue(*patch) : std::nullopt;
  const std::optional<int> named_image = image.ok() ? SizeValue(*image) : std::nullopt;
  if (!named_patch || !named_image) {
    return Status::InvalidArgument("timm_model_name " + QuoteText(name) + " has patch or image size 0 or above 2^24",
                                   where, "vit_<size>_patch<P>_siglip_<N> with P and N in 1..16777216");
  }
  c.patch_size = *named_patch;
  c.image_size = *named_image;
  c.width = size->width;
  c.layers = size->depth;
  c.heads = size->heads;
  double mlp_ratio = size->mlp_ratio;
  if (f.Has("timm_model_kwargs")) {
    VISALIGN_RETURN_IF_ERROR(
        ApplyTimmVitKwargs(v["timm_model_kwargs"], where + " timm_model_kwargs", {}, c, mlp_ratio));
  }
  f.Ignore({"timm_model_kwargs", "timm_model_pretrained", "timm_drop", "timm_drop_path", "patch_dropout"});
  VISALIGN_ASSIGN_OR_RETURN(int image_size, f.SquareSize("image_size", c.image_size));
  if (image_size != c.image_size) {
    return Status::InvalidArgument(
        fmt::format("image_size {} differs from the timm model's {}", image_size, c.image_size), where,
        "the timm model's img_size");
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
  VISALIGN_RETURN_IF_ERROR(CheckPatchGrid(c, where));
  return c;
}

namespace {

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

}  // namespace

// OpenCLIP's TimmModel adapter (vision_cfg.timm_model_name); of timm's trunks only ConvNeXt.
Result<VisionConfig> ParseOpenClipTimm(const Json& v, const std::string& where) {
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
    return Status::Unsupported("unsupported " + TimmFamily(cn.timm_model_name) +
                                   " timm vision tower (timm_model_name = \"" + cn.timm_model_name + "\")",
                               where, "a timm SigLIP ViT or one of the timm ConvNeXt models " + names);
  }
  cn.depths = known->depths;
  cn.dims = known->dims;
  cn.norm_eps = known->norm_eps;
  if (f.Has("timm_model_kwargs")) {
    const std::string kw_where = where + " timm_model_kwargs";
    const Json& kw = v["timm_model_kwargs"];
    if (!kw.is_object()) return Status::InvalidArgument("field is " + QuoteJson(kw), kw_where, "a JSON object");
    Fields k(kw, kw_where);
    if (k.Has("depths")) {
      VISALIGN_ASSIGN_OR_RETURN(cn.depths, FourInts(kw["depths"], "depths", kw_where));
    }
    if (k.Has("dims")) {
      VISALIGN_ASSIGN_OR_RETURN(cn.dims, FourInts(kw["dims"], "dims", kw_where));
    }
    VISALIGN_ASSIGN_OR_RETURN(cn.norm_eps, k.Epsilon("norm_eps", cn.norm_eps));
    k.Ignore({"depths", "dims", "drop_path_rate", "drop_rate"});
    VISALIGN_RETURN_IF_ERROR(k.CheckAllUsed());
  }
  f.Ignore({"timm_model_kwargs"});
  VISALIGN_ASSIGN_OR_RETURN(c.image_size, f.SquareSize("image_size", 224));
  // Other sizes are floored by each strided convolution, as in timm (e.g. 200 px: 50, 25, 12, 6).
  if (c.image_size < kConvNextTotalStride) {
    return Status::InvalidArgument(fmt::format("image_size {}", c.image_size), where,
                                   fmt::format("at least {} (ConvNeXt's total stride; a smaller image leaves the last "
                                               "stage no pixels)",
                                               kConvNextTotalStride));
  }
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_pool", {"", "avg"}, "timm pooling other than average"));
  VISALIGN_ASSIGN_OR_RETURN(std::string proj, f.String("timm_proj", "linear"));
  if (proj == "linear") {
    cn.projection = ConvNextProjection::kLinear;
  } else if (proj == "mlp") {
    cn.projection = ConvNextProjection::kMlp;
  } else {
    return Status::Unsupported("unsupported timm_proj " + QuoteText(proj), where, "linear or mlp");
  }
  VISALIGN_ASSIGN_OR_RETURN(cn.projection_bias, f.Bool("timm_proj_bias", false));
  // Pretrained-weight download and training-time dropout do not change inference; OpenCLIP lets the
  // timm model override the ViT fields.
  f.Ignore({"layers", "width", "head_width", "patch_size", "mlp_ratio", "timm_model_pretrained", "timm_drop",
            "timm_drop_path", "patch_dropout", "output_tokens", "output_dim"});
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  return c;
}

}  // namespace visalign::clip::config_internal
