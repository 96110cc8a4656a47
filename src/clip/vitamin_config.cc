// OpenCLIP's ViTamin vision towers: timm's vitamin_* trunks (timm/models/vitamin.py registrations)
// read from vision_cfg.timm_model_name. The conv stem's shape (embed_cfg, a dataclass) is fixed by the
// name; the ViT's img_size, depth, num_heads, mlp_ratio and pos_embed can be overridden through
// timm_model_kwargs, as OpenCLIP passes them to timm.create_model.
#include <fmt/format.h>

#include <string>

#include "clip/config_fields.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip::config_internal {
namespace {

struct TimmVitamin {
  const char* name;
  int image, stem_width;
  std::array<int, 2> stage_widths;
  int width, depth, heads;
  bool pos_embed;  // vitamin_xlarge_*: pos_embed='none'
};
// Every variant: MbConv stages of depth 2 and 4, GeGLU MLPs with mlp_ratio 2, LayerNorm eps 1e-6.
constexpr std::array<int, 2> kVitaminStageDepths = {2, 4};
constexpr double kVitaminMlpRatio = 2.0;
constexpr float kVitaminLayerNormEps = 1e-6f;
constexpr int kVitaminTotalStride = 16;  // 2^VitaminConfig::kDownsamplings
constexpr TimmVitamin kTimmVitamins[] = {
    {"vitamin_small_224", 224, 64, {64, 128}, 384, 14, 6, true},
    {"vitamin_base_224", 224, 128, {128, 256}, 768, 14, 12, true},
    {"vitamin_large_224", 224, 160, {160, 320}, 1024, 31, 16, true},
    {"vitamin_large_256", 256, 160, {160, 320}, 1024, 31, 16, true},
    {"vitamin_large_336", 336, 160, {160, 320}, 1024, 31, 16, true},
    {"vitamin_large_384", 384, 160, {160, 320}, 1024, 31, 16, true},
    {"vitamin_large2_224", 224, 160, {160, 320}, 1024, 31, 16, true},
    {"vitamin_large2_256", 256, 160, {160, 320}, 1024, 31, 16, true},
    {"vitamin_large2_336", 336, 160, {160, 320}, 1024, 31, 16, true},
    {"vitamin_large2_384", 384, 160, {160, 320}, 1024, 31, 16, true},
    {"vitamin_xlarge_256", 256, 192, {192, 384}, 1152, 32, 16, false},
    {"vitamin_xlarge_336", 336, 192, {192, 384}, 1152, 32, 16, false},
    {"vitamin_xlarge_384", 384, 192, {192, 384}, 1152, 32, 16, false},
};
// The widest conv activation per image, (S/2)² pixels x 4·stage 0 width (the first MbConv's
// expansion), must stay below 2^31 elements like every other tensor (CheckSizesFit).
constexpr int kMbConvExpansion = 4;

}  // namespace

Result<VisionConfig> ParseTimmVitamin(const Json& v, const std::string& where) {
  Fields f(v, where);
  VISALIGN_ASSIGN_OR_RETURN(std::string name, f.String("timm_model_name", ""));
  const TimmVitamin* known = nullptr;
  for (const TimmVitamin& m : kTimmVitamins) {
    if (name == m.name) known = &m;
  }
  if (known == nullptr) {
    std::string names;
    for (const TimmVitamin& m : kTimmVitamins) names += (names.empty() ? "" : ", ") + std::string(m.name);
    return Status::Unsupported("unsupported ViTamin timm vision tower (timm_model_name = " + QuoteText(name) + ")",
                               where, "one of the timm ViTamin models " + names);
  }
  VisionConfig c;
  c.image_size = known->image;
  c.width = known->width;
  c.layers = known->depth;
  c.heads = known->heads;
  c.vitamin.enabled = true;
  c.vitamin.stem_width = known->stem_width;
  c.vitamin.stage_widths = known->stage_widths;
  c.vitamin.stage_depths = kVitaminStageDepths;
  c.vitamin.pos_embed = known->pos_embed;
  double mlp_ratio = kVitaminMlpRatio;
  if (f.Has("timm_model_kwargs")) {
    const std::string kw_where = where + " timm_model_kwargs";
    const Json& kw = v["timm_model_kwargs"];
    if (!kw.is_object()) return Status::InvalidArgument("field is " + QuoteJson(kw), kw_where, "a JSON object");
    Fields k(kw, kw_where);
    VISALIGN_ASSIGN_OR_RETURN(c.image_size, k.SquareSize("img_size", c.image_size));
    VISALIGN_ASSIGN_OR_RETURN(c.layers, k.Int("depth", c.layers));
    VISALIGN_ASSIGN_OR_RETURN(c.heads, k.Int("num_heads", c.heads));
    VISALIGN_ASSIGN_OR_RETURN(mlp_ratio, k.Number("mlp_ratio", mlp_ratio));
    // HybridEmbed(proj=False) ties the ViT's width to the conv stem's output, and its patch size 1 to
    // the feature map: neither can change without a projection the trunk does not have.
    VISALIGN_RETURN_IF_ERROR(k.Require("embed_dim", {c.width}, "ViTamin embed_dim other than the conv stem's width"));
    VISALIGN_RETURN_IF_ERROR(k.Require("patch_size", {1, Json::array({1, 1})}, "ViTamin patch_size (HybridEmbed)"));
    VISALIGN_ASSIGN_OR_RETURN(std::string pos_embed, k.String("pos_embed", c.vitamin.pos_embed ? "learn" : "none"));
    if (pos_embed != "learn" && pos_embed != "none") {
      return Status::Unsupported("unsupported ViTamin pos_embed " + QuoteText(pos_embed), kw_where, "learn or none");
    }
    c.vitamin.pos_embed = pos_embed == "learn";
    k.Ignore({"drop_path_rate", "drop_rate"});
    VISALIGN_RETURN_IF_ERROR(k.CheckAllUsed());
  }
  f.Ignore({"timm_model_kwargs", "timm_model_pretrained", "timm_drop", "timm_drop_path", "patch_dropout",
            "output_tokens", "output_dim", "layers", "width", "head_width", "patch_size", "mlp_ratio"});
  // OpenCLIP does not pass image_size to timm: a differing one would preprocess to a size the trunk refuses.
  VISALIGN_ASSIGN_OR_RETURN(int image_size, f.SquareSize("image_size", c.image_size));
  if (image_size != c.image_size) {
    return Status::InvalidArgument(
        fmt::format("image_size {} differs from the timm model's {}", image_size, c.image_size), where,
        "the timm model's img_size (timm_model_kwargs img_size)");
  }
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_pool", {"", "avg"}, "timm pooling (ViTamin: the trunk's average)"));
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_proj", {"linear"}, "timm projection (ViTamin: linear)"));
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_proj_bias", {false}, "timm projection bias"));
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  const int64_t half = (c.image_size - 1) / 2 + 1;
  if (half * half * kMbConvExpansion * c.vitamin.stage_widths[0] > kMaxElements) {
    return Status::Unsupported(fmt::format("image_size {} for {}", c.image_size, name), where,
                               "an image whose ViTamin conv activations have fewer than 2^31 elements");
  }
  VISALIGN_ASSIGN_OR_RETURN(c.mlp_width, MlpWidth(c.width, mlp_ratio, where));
  c.patch_size = kVitaminTotalStride;
  c.layer_norm_eps = kVitaminLayerNormEps;
  c.ln_pre = false;
  c.class_token = false;
  c.pooling = Pooling::kAverage;
  c.final_ln_after_pool = true;  // fc_norm on the mean of the tokens; the trunk's norm is the identity
  VISALIGN_RETURN_IF_ERROR(CheckHeads(c, where));
  return c;
}

}  // namespace visalign::clip::config_internal
