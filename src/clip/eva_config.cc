// OpenCLIP's timm Eva-class vision towers (timm/models/eva.py: EVA01, EVA02, EVA02-E, PE-Core) and timm's
// CLIP-layout VisionTransformers (vision_transformer.py `vit_*_clip_224`, MobileCLIP2-L-14), read from
// vision_cfg.timm_model_name, sized by the name and overridable through timm_model_kwargs.
#include <fmt/format.h>

#include <string>

#include "clip/config_fields.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip::config_internal {
namespace {

// The block and trunk options of one timm registration (timm/models/eva.py, vision_transformer.py).
enum class TimmTrunk {
  kEva01,   // fused qkv with q/v biases, GELU MLP
  kEva02,   // q/k/v separate, RoPE 'ij' (ref grid 16), sub-LN, SwiGLU with its norm
  kEva02E,  // EVA01's blocks with residual post-norm (use_post_norm)
  kPeCore,  // fused qkv with bias, no patch bias, norm_pre, RoPE 'xy' offset 1, MAP head of 8 heads, eps 1e-5
  kClipVit  // timm VisionTransformer pre_norm=True (CLIP layout): PE-Core's without RoPE, class-token pool
};
struct TimmEva {
  const char* name;
  int image, patch, width, depth, heads;
  double mlp_ratio;
  TimmTrunk trunk;
  int rope_ref_grid;  // ref_feat_shape (RoPE trunks)
};
constexpr double kEva02MlpRatio = 4.0 * 2.0 / 3.0;
constexpr double kEvaGiantMlpRatio = 6144.0 / 1408.0;
constexpr float kEvaLayerNormEps = 1e-6f;      // timm's LayerNorm default (Eva's norm_layer)
constexpr float kPreNormLayerNormEps = 1e-5f;  // norm_layer=partial(LayerNorm, eps=1e-5): PE-Core, CLIP ViTs
constexpr int kPeCorePoolHeads = 8;            // attn_pool_num_heads
constexpr double kPeCorePoolMlpRatio = 4.0;    // attn_pool_mlp_ratio
constexpr float kPeCoreRopeOffset = 1.0f;      // rope_grid_offset
constexpr TimmEva kTimmEvas[] = {
    {"eva_giant_patch14_224", 224, 14, 1408, 40, 16, kEvaGiantMlpRatio, TimmTrunk::kEva01, 0},
    {"eva_giant_patch14_clip_224", 224, 14, 1408, 40, 16, kEvaGiantMlpRatio, TimmTrunk::kEva01, 0},
    {"eva_giant_patch14_336", 336, 14, 1408, 40, 16, kEvaGiantMlpRatio, TimmTrunk::kEva01, 0},
    {"eva02_base_patch16_clip_224", 224, 16, 768, 12, 12, kEva02MlpRatio, TimmTrunk::kEva02, 16},
    {"eva02_large_patch14_clip_224", 224, 14, 1024, 24, 16, kEva02MlpRatio, TimmTrunk::kEva02, 16},
    {"eva02_large_patch14_clip_336", 336, 14, 1024, 24, 16, kEva02MlpRatio, TimmTrunk::kEva02, 16},
    {"eva02_enormous_patch14_clip_224", 224, 14, 1792, 64, 16, 15360.0 / 1792.0, TimmTrunk::kEva02E, 0},
    // PE-Core: the image size is the pretrained config's input_size (fixed_input_size).
    {"vit_pe_core_tiny_patch16_384", 384, 16, 192, 12, 3, 4.0, TimmTrunk::kPeCore, 24},
    {"vit_pe_core_small_patch16_384", 384, 16, 384, 12, 6, 4.0, TimmTrunk::kPeCore, 24},
    {"vit_pe_core_base_patch16_224", 224, 16, 768, 12, 12, 4.0, TimmTrunk::kPeCore, 14},
    {"vit_pe_core_large_patch14_336", 336, 14, 1024, 24, 16, 4.0, TimmTrunk::kPeCore, 24},
    {"vit_base_patch32_clip_224", 224, 32, 768, 12, 12, 4.0, TimmTrunk::kClipVit, 0},
    {"vit_base_patch16_clip_224", 224, 16, 768, 12, 12, 4.0, TimmTrunk::kClipVit, 0},
    {"vit_large_patch14_clip_224", 224, 14, 1024, 24, 16, 4.0, TimmTrunk::kClipVit, 0},
    {"vit_huge_patch14_clip_224", 224, 14, 1280, 32, 16, 4.0, TimmTrunk::kClipVit, 0},
};

}  // namespace

bool IsTimmEvaName(const std::string& name) {
  for (const TimmEva& e : kTimmEvas) {
    if (name == e.name) return true;
  }
  return false;
}

Result<VisionConfig> ParseTimmEva(const Json& v, const std::string& where) {
  Fields f(v, where);
  VISALIGN_ASSIGN_OR_RETURN(std::string name, f.String("timm_model_name", ""));
  const TimmEva* eva = nullptr;
  for (const TimmEva& e : kTimmEvas) {
    if (name == e.name) eva = &e;
  }
  if (eva == nullptr) {
    std::string names;
    for (const TimmEva& e : kTimmEvas) names += (names.empty() ? "" : ", ") + std::string(e.name);
    return Status::Unsupported(
        "unsupported EVA / PE-Core / timm ViT vision tower (timm_model_name = " + QuoteText(name) + ")", where,
        "one of the timm models " + names);
  }
  const TimmTrunk trunk = eva->trunk;
  VisionConfig c;
  c.image_size = eva->image;
  c.patch_size = eva->patch;
  c.width = eva->width;
  c.layers = eva->depth;
  c.heads = eva->heads;
  double mlp_ratio = eva->mlp_ratio;
  if (f.Has("timm_model_kwargs")) {
    VISALIGN_RETURN_IF_ERROR(ApplyTimmVitKwargs(v["timm_model_kwargs"], where + " timm_model_kwargs",
                                                {"drop_path_rate", "drop_rate"}, c, mlp_ratio));
  }
  // OpenCLIP does not pass image_size (or the ViT fields) to timm: the trunk's img_size is the model's.
  f.Ignore({"timm_model_kwargs", "timm_model_pretrained", "timm_drop", "timm_drop_path", "patch_dropout", "image_size",
            "output_tokens", "output_dim", "layers", "width", "head_width", "patch_size", "mlp_ratio"});
  const bool map = trunk == TimmTrunk::kPeCore;
  VISALIGN_RETURN_IF_ERROR(map ? f.Require("timm_pool", {"map"}, "timm pooling (PE-Core: map)")
                               : f.Require("timm_pool", {"token"}, "timm pooling (EVA, timm CLIP ViT: token)"));
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_proj", {}, "timm projection (none: the trunk's head)"));
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_proj_bias", {false}, "timm projection bias"));
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  VISALIGN_ASSIGN_OR_RETURN(c.mlp_width, MlpWidth(c.width, mlp_ratio, where));
  const bool pre_norm = trunk == TimmTrunk::kPeCore || trunk == TimmTrunk::kClipVit;
  c.layer_norm_eps = pre_norm ? kPreNormLayerNormEps : kEvaLayerNormEps;
  c.ln_pre = pre_norm;  // timm's norm_pre
  c.class_token = true;
  c.pooling = map ? Pooling::kAttentionPool : Pooling::kClassToken;
  if (map) {
    c.pool_heads = kPeCorePoolHeads;
    VISALIGN_ASSIGN_OR_RETURN(c.pool_mlp_width, MlpWidth(c.width, kPeCorePoolMlpRatio, where));
  }
  EvaConfig& e = c.eva;
  e.enabled = true;
  e.qkv = trunk == TimmTrunk::kEva02 ? TimmQkv::kSeparate : pre_norm ? TimmQkv::kFused : TimmQkv::kFusedQvBias;
  e.patch_bias = !pre_norm;
  e.rope = eva->rope_ref_grid > 0;
  e.rope_ref_grid = eva->rope_ref_grid;
  e.rope_offset = trunk == TimmTrunk::kPeCore ? kPeCoreRopeOffset : 0.0f;
  e.rope_xy = trunk == TimmTrunk::kPeCore;
  e.sub_ln = e.swiglu = trunk == TimmTrunk::kEva02;
  e.post_norm = trunk == TimmTrunk::kEva02E;
  VISALIGN_RETURN_IF_ERROR(CheckHeads(c, where));
  VISALIGN_RETURN_IF_ERROR(CheckPatchGrid(c, where));
  if (e.rope && (c.width / c.heads) % 4 != 0) {
    return Status::InvalidArgument(fmt::format("head width {} with RoPE", c.width / c.heads), where,
                                   "a head width divisible by 4 (two axes of sin/cos pairs)");
  }
  if (map && c.width % c.pool_heads != 0) {
    return Status::InvalidArgument(
        fmt::format("width {} is not divisible by the MAP head's {} heads", c.width, c.pool_heads), where,
        "a width divisible by attn_pool_num_heads");
  }
  return c;
}

}  // namespace visalign::clip::config_internal
