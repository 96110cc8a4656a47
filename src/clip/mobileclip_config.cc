// OpenCLIP's MobileCLIP image towers (TimmModel): timm's FastViT MCi trunks fastvit_mci0..4
// (MobileCLIP-S*, MobileCLIP2-S*; timm/models/fastvit.py registrations) and the MCi ViT
// vit_base_mci_224 (MobileCLIP-B, MobileCLIP2-B; timm/models/vision_transformer.py), sized by the name
// and overridable through the timm_model_kwargs OpenCLIP forwards.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "clip/config_fields.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip::config_internal {
namespace {

constexpr int kMaxStageValue = 1 << 16;
constexpr double kFastVitClsRatio = 2.0;  // final_conv: int(embed_dims[-1] · cls_ratio)
constexpr int kFastVitStemStride = 4;

// One fastvit_mci* registration: per stage depth, width, MLP ratio; attention (with RepCPE) in the
// last one or two stages, SE in the downsamples of stages 2 and 3 (mci0..2).
struct TimmFastVit {
  const char* name;
  std::vector<int> layers, dims;
  double mlp_ratio;
  int attention_stages;  // the last N stages: attention blocks after a RepCPE
  bool se_downsample;    // stages 2 and 3 (mci0..2)
  bool large;            // mci3/4: LayerNorm2d attention norm, stem without 1×1 scale branches
};
const std::vector<TimmFastVit>& TimmFastVits() {
  static const std::vector<TimmFastVit> kModels = {
      {"fastvit_mci0", {2, 6, 10, 2}, {64, 128, 256, 512}, 3.0, 1, true, false},
      {"fastvit_mci1", {4, 12, 20, 4}, {64, 128, 256, 512}, 3.0, 1, true, false},
      {"fastvit_mci2", {4, 12, 24, 4}, {80, 160, 320, 640}, 3.0, 1, true, false},
      {"fastvit_mci3", {2, 12, 24, 4, 2}, {96, 192, 384, 768, 1536}, 4.0, 2, false, true},
      {"fastvit_mci4", {2, 12, 24, 4, 4}, {128, 256, 512, 1024, 2048}, 4.0, 2, false, true},
  };
  return kModels;
}

// A list of positive integers (or numbers, for mlp_ratios) with one entry per stage.
Result<std::vector<double>> StageList(const Json& v, const std::string& key, size_t stages, bool integers,
                                      const std::string& where) {
  std::vector<double> out;
  if (v.is_array() && v.size() == stages) {
    for (const Json& x : v) {
      const bool ok = integers ? x.is_number_integer() && x.get<int64_t>() > 0 && x.get<int64_t>() <= kMaxStageValue
                               : x.is_number() && x.get<double>() > 0 && x.get<double>() <= kMaxStageValue;
      if (!ok) break;
      out.push_back(x.get<double>());
    }
  }
  if (out.size() == stages) return out;
  return Status::InvalidArgument(
      "field " + QuoteText(key) + " is " + QuoteJson(v), where,
      fmt::format("{} positive {} (one per stage)", stages, integers ? "integers" : "numbers"));
}

}  // namespace

Result<VisionConfig> ParseTimmFastVit(const Json& v, const std::string& where) {
  Fields f(v, where);
  VISALIGN_ASSIGN_OR_RETURN(std::string name, f.String("timm_model_name", ""));
  const TimmFastVit* known = nullptr;
  std::string names;
  for (const TimmFastVit& m : TimmFastVits()) {
    if (name == m.name) known = &m;
    names += (names.empty() ? "" : ", ") + std::string(m.name);
  }
  if (known == nullptr) {
    return Status::Unsupported(
        "unsupported MobileCLIP (FastViT) timm vision tower (timm_model_name = " + QuoteText(name) + ")", where,
        "one of the timm FastViT MCi models " + names);
  }
  VisionConfig c;
  c.tower = VisionTower::kFastVit;
  FastVitConfig& fv = c.fastvit;
  fv.timm_model_name = name;
  std::vector<double> layers(known->layers.begin(), known->layers.end());
  std::vector<double> dims(known->dims.begin(), known->dims.end());
  std::vector<double> ratios(layers.size(), known->mlp_ratio);
  if (f.Has("timm_model_kwargs")) {
    const std::string kw_where = where + " timm_model_kwargs";
    const Json& kw = v["timm_model_kwargs"];
    if (!kw.is_object()) return Status::InvalidArgument("field is " + QuoteJson(kw), kw_where, "a JSON object");
    Fields k(kw, kw_where);
    // The stage count is the registration's (its token mixers, RepCPEs and SEs are per stage).
    if (k.Has("layers")) {
      VISALIGN_ASSIGN_OR_RETURN(layers, StageList(kw["layers"], "layers", layers.size(), true, kw_where));
    }
    if (k.Has("embed_dims")) {
      VISALIGN_ASSIGN_OR_RETURN(dims, StageList(kw["embed_dims"], "embed_dims", dims.size(), true, kw_where));
    }
    if (k.Has("mlp_ratios")) {
      VISALIGN_ASSIGN_OR_RETURN(ratios, StageList(kw["mlp_ratios"], "mlp_ratios", ratios.size(), false, kw_where));
    }
    k.Ignore({"layers", "embed_dims", "mlp_ratios", "drop_path_rate", "drop_rate", "proj_drop_rate"});
    VISALIGN_RETURN_IF_ERROR(k.CheckAllUsed());
  }
  const size_t stages = layers.size();
  for (size_t s = 0; s < stages; ++s) {
    FastVitStageConfig st;
    st.depth = static_cast<int>(layers[s]);
    st.dim = static_cast<int>(dims[s]);
    st.mlp_ratio = ratios[s];
    st.attention = s + known->attention_stages >= stages;
    st.pos_emb = st.attention;
    st.se_downsample = known->se_downsample && s >= 2;
    if (st.attention && st.dim % FastVitConfig::kHeadDim != 0) {
      return Status::InvalidArgument(fmt::format("embed_dims[{}] = {} in an attention stage", s, st.dim), where,
                                     fmt::format("a multiple of the head width {}", FastVitConfig::kHeadDim));
    }
    if (static_cast<int>(st.dim * st.mlp_ratio) < 1) {
      return Status::InvalidArgument(fmt::format("mlp_ratios[{}] = {}", s, st.mlp_ratio), where,
                                     "at least one hidden channel");
    }
    fv.stages.push_back(st);
  }
  fv.stem_scale_branch = !known->large;
  fv.attention_layer_norm = known->large;
  fv.final_features = static_cast<int>(dims.back() * kFastVitClsRatio);
  c.width = fv.final_features;
  f.Ignore({"timm_model_kwargs", "timm_model_pretrained", "timm_drop", "timm_drop_path", "patch_dropout", "layers",
            "width", "head_width", "patch_size", "mlp_ratio", "output_tokens", "output_dim"});
  VISALIGN_ASSIGN_OR_RETURN(c.image_size, f.SquareSize("image_size", 256));
  const int total_stride = kFastVitStemStride << (stages - 1);
  if (c.image_size < total_stride) {
    return Status::InvalidArgument(fmt::format("image_size {}", c.image_size), where,
                                   fmt::format("at least {} (FastViT's total stride)", total_stride));
  }
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_pool", {"avg"}, "timm pooling (MobileCLIP FastViT: avg)"));
  VISALIGN_RETURN_IF_ERROR(
      f.Require("timm_proj", {}, "timm projection (MobileCLIP FastViT: none, the trunk's head.fc)"));
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_proj_bias", {false}, "timm projection bias"));
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  c.pooling = Pooling::kAverage;
  return c;
}

// timm vit_base_mci_224: ViT-B/16 (768 wide, 12 blocks of 12 heads, MLP 4×, LayerNorm eps 1e-6,
// qkv bias) whose patch embedding is MobileCLIP's ConvStem; class token without position embedding.
Result<VisionConfig> ParseTimmMciVit(const Json& v, const std::string& where) {
  constexpr int kWidth = 768;
  constexpr int kStemStride = 16;
  Fields f(v, where);
  VisionConfig c;
  c.image_size = 224;
  c.patch_size = kStemStride;
  c.width = kWidth;
  c.layers = 12;
  c.heads = 12;
  double mlp_ratio = 4.0;
  if (f.Has("timm_model_kwargs")) {
    VISALIGN_RETURN_IF_ERROR(ApplyTimmVitKwargs(v["timm_model_kwargs"], where + " timm_model_kwargs",
                                                {"drop_path_rate", "drop_rate"}, c, mlp_ratio));
  }
  if (c.width != kWidth || c.patch_size != kStemStride) {
    return Status::Unsupported(fmt::format("MobileCLIP ViT with embed_dim {} and patch_size {}", c.width, c.patch_size),
                               where, "embed_dim 768 and patch_size 16 (vit_base_mci_224's ConvStem is fixed)");
  }
  f.Ignore({"timm_model_name", "timm_model_kwargs", "timm_model_pretrained", "timm_drop", "timm_drop_path",
            "patch_dropout", "image_size", "output_tokens", "output_dim", "layers", "width", "head_width", "patch_size",
            "mlp_ratio"});
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_pool", {"token"}, "timm pooling (MobileCLIP ViT: token)"));
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_proj", {}, "timm projection (MobileCLIP ViT: none, the trunk's head)"));
  VISALIGN_RETURN_IF_ERROR(f.Require("timm_proj_bias", {false}, "timm projection bias"));
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  VISALIGN_ASSIGN_OR_RETURN(c.mlp_width, MlpWidth(c.width, mlp_ratio, where));
  c.layer_norm_eps = 1e-6f;
  c.ln_pre = false;
  c.class_token = true;
  c.pooling = Pooling::kClassToken;
  c.mci_conv_stem = true;
  VISALIGN_RETURN_IF_ERROR(CheckHeads(c, where));
  VISALIGN_RETURN_IF_ERROR(CheckPatchGrid(c, where));
  return c;
}

}  // namespace visalign::clip::config_internal
