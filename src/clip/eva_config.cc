// OpenCLIP's EVA-CLIP vision towers: timm's Eva trunks (timm/models/eva.py registrations) read from
// vision_cfg.timm_model_name, sized by the name and overridable through timm_model_kwargs.
#include <fmt/format.h>

#include <string>

#include "clip/config_fields.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip::config_internal {
namespace {

struct TimmEva {
  const char* name;
  int image, patch, width, depth, heads;
  double mlp_ratio;
  bool eva02;      // q/k/v separate, RoPE (ref grid 16), sub-LN, SwiGLU with its norm
  bool post_norm;  // EVA02-E's residual post-norm blocks (not implemented)
};
constexpr double kEva02MlpRatio = 4.0 * 2.0 / 3.0;
constexpr double kEvaGiantMlpRatio = 6144.0 / 1408.0;
constexpr int kEva02RopeRefGrid = 16;  // ref_feat_shape (16, 16): 224 / 14
constexpr float kEvaLayerNormEps = 1e-6f;
constexpr TimmEva kTimmEvas[] = {
    {"eva_giant_patch14_224", 224, 14, 1408, 40, 16, kEvaGiantMlpRatio, false, false},
    {"eva_giant_patch14_clip_224", 224, 14, 1408, 40, 16, kEvaGiantMlpRatio, false, false},
    {"eva_giant_patch14_336", 336, 14, 1408, 40, 16, kEvaGiantMlpRatio, false, false},
    {"eva02_base_patch16_clip_224", 224, 16, 768, 12, 12, kEva02MlpRatio, true, false},
    {"eva02_large_patch14_clip_224", 224, 14, 1024, 24, 16, kEva02MlpRatio, true, false},
    {"eva02_large_patch14_clip_336", 336, 14, 1024, 24, 16, kEva02MlpRatio, true, false},
    {"eva02_enormous_patch14_clip_224", 224, 14, 1792, 64, 16, 15360.0 / 1792.0, false, true},
};

}  // namespace

Result<VisionConfig> ParseTimmEva(const Json& v, const std::string& where) {
  Fields f(v, where);
  VISALIGN_ASSIGN_OR_RETURN(std::string name, f.String("timm_model_name", ""));
  const TimmEva* eva = nullptr;
  for (const TimmEva& e : kTimmEvas) {
    if (name == e.name) eva = &e;
  }
  if (eva == nullptr || eva->post_norm) {
    std::string names;
    for (const TimmEva& e : kTimmEvas) {
      if (!e.post_norm) names += (names.empty() ? "" : ", ") + std::string(e.name);
    }
    return Status::Unsupported("unsupported EVA timm vision tower (timm_model_name = " + QuoteText(name) + ")" +
                                   (eva != nullptr ? ": residual post-norm blocks (use_post_norm, EVA02-E)" : ""),
                               where, "one of the timm EVA models " + names);
  }
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
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_pool", {"token"}, "timm pooling (EVA: token)"));
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_proj", {}, "timm projection (EVA: none, the trunk's head)"));
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_proj_bias", {false}, "timm projection bias"));
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  VISALIGN_ASSIGN_OR_RETURN(c.mlp_width, MlpWidth(c.width, mlp_ratio, where));
  c.layer_norm_eps = kEvaLayerNormEps;
  c.ln_pre = false;
  c.class_token = true;
  c.pooling = Pooling::kClassToken;
  c.eva.enabled = true;
  c.eva.fused_qkv = !eva->eva02;
  c.eva.rope = eva->eva02;
  c.eva.rope_ref_grid = eva->eva02 ? kEva02RopeRefGrid : 0;
  c.eva.sub_ln = eva->eva02;
  c.eva.swiglu = eva->eva02;
  VISALIGN_RETURN_IF_ERROR(CheckHeads(c, where));
  VISALIGN_RETURN_IF_ERROR(CheckPatchGrid(c, where));
  if (c.eva.rope && (c.width / c.heads) % 4 != 0) {
    return Status::InvalidArgument(fmt::format("head width {} with RoPE", c.width / c.heads), where,
                                   "a head width divisible by 4 (two axes of sin/cos pairs)");
  }
  return c;
}

}  // namespace visalign::clip::config_internal
