#include "clip/eva.h"

#include <string>

namespace visalign::clip {
namespace {

// [q_bias | 0 | v_bias]: timm's EVA attention has no key bias.
Result<Tensor> QkvBias(WeightLoader& l, const std::string& q, const std::string& v, int64_t width) {
  VISALIGN_ASSIGN_OR_RETURN(Tensor q_bias, l.Get(q, {width}));
  VISALIGN_ASSIGN_OR_RETURN(Tensor v_bias, l.Get(v, {width}));
  Tensor out;
  out.shape = {3 * width};
  out.owned.assign(q_bias.data, q_bias.data + width);
  out.owned.resize(static_cast<size_t>(2 * width), 0.0f);
  out.owned.insert(out.owned.end(), v_bias.data, v_bias.data + width);
  out.data = out.owned.data();
  return out;
}

Result<BlockWeights> GetBlock(WeightLoader& l, const VisionConfig& v, const std::string& p) {
  const int64_t width = v.width;
  BlockWeights b;
  VISALIGN_RETURN_IF_ERROR(l.Norm(p + "norm1", width, b.ln1_gain, b.ln1_bias));
  VISALIGN_RETURN_IF_ERROR(l.Norm(p + "norm2", width, b.ln2_gain, b.ln2_bias));
  const std::string a = p + "attn.";
  switch (v.eva.qkv) {
    case TimmQkv::kFused: {
      VISALIGN_ASSIGN_OR_RETURN(b.qkv, l.Linear(a + "qkv", 3 * width, width));
      break;
    }
    case TimmQkv::kFusedQvBias: {
      VISALIGN_ASSIGN_OR_RETURN(b.qkv.weight, l.Get(a + "qkv.weight", {3 * width, width}));
      VISALIGN_ASSIGN_OR_RETURN(b.qkv.bias, QkvBias(l, a + "q_bias", a + "v_bias", width));
      break;
    }
    case TimmQkv::kSeparate: {
      VISALIGN_ASSIGN_OR_RETURN(
          b.qkv.weight, l.Stack({a + "q_proj.weight", a + "k_proj.weight", a + "v_proj.weight"}, {width, width}));
      VISALIGN_ASSIGN_OR_RETURN(b.qkv.bias, QkvBias(l, a + "q_proj.bias", a + "v_proj.bias", width));
      break;
    }
  }
  b.qkv.layout = BLayout::kNK;
  if (v.eva.sub_ln) VISALIGN_RETURN_IF_ERROR(l.Norm(a + "norm", width, b.attn_norm_gain, b.attn_norm_bias));
  VISALIGN_ASSIGN_OR_RETURN(b.out_proj, l.Linear(a + "proj", width, width));
  const std::string m = p + "mlp.";
  if (v.eva.swiglu) {
    b.mlp = MlpKind::kSwiGlu;
    VISALIGN_ASSIGN_OR_RETURN(b.fc_gate, l.Linear(m + "fc1_g", v.mlp_width, width));
    VISALIGN_ASSIGN_OR_RETURN(b.fc, l.Linear(m + "fc1_x", v.mlp_width, width));
    VISALIGN_RETURN_IF_ERROR(l.Norm(m + "norm", v.mlp_width, b.mlp_norm_gain, b.mlp_norm_bias));
  } else {
    VISALIGN_ASSIGN_OR_RETURN(b.fc, l.Linear(m + "fc1", v.mlp_width, width));
  }
  VISALIGN_ASSIGN_OR_RETURN(b.proj, l.Linear(m + "fc2", width, v.mlp_width));
  return b;
}

}  // namespace

Status LoadTimmAttentionPool(WeightLoader& l, const std::string& prefix, int64_t width, int64_t mlp_width,
                             AttentionPoolWeights& a) {
  VISALIGN_ASSIGN_OR_RETURN(a.latent, l.Get(prefix + "latent", {1, 1, width}));
  VISALIGN_ASSIGN_OR_RETURN(a.q, l.Linear(prefix + "q", width, width));
  VISALIGN_ASSIGN_OR_RETURN(a.kv, l.Linear(prefix + "kv", 2 * width, width));
  VISALIGN_ASSIGN_OR_RETURN(a.proj, l.Linear(prefix + "proj", width, width));
  VISALIGN_RETURN_IF_ERROR(l.Norm(prefix + "norm", width, a.norm_gain, a.norm_bias));
  VISALIGN_ASSIGN_OR_RETURN(a.fc, l.Linear(prefix + "mlp.fc1", mlp_width, width));
  VISALIGN_ASSIGN_OR_RETURN(a.fc_proj, l.Linear(prefix + "mlp.fc2", width, mlp_width));
  return Status::Ok();
}

Status LoadEvaVision(WeightLoader& l, const ClipConfig& config, ClipWeights& w) {
  const VisionConfig& v = config.vision;
  const std::string p = "visual.trunk.";
  const int64_t width = v.width;
  for (int i = 0; i < v.layers; ++i) {
    VISALIGN_ASSIGN_OR_RETURN(BlockWeights b, GetBlock(l, v, p + "blocks." + std::to_string(i) + "."));
    w.vision.blocks.push_back(std::move(b));
  }
  w.vision.post_norm = v.eva.post_norm;
  VISALIGN_ASSIGN_OR_RETURN(w.patch_embedding,
                            l.Get(p + "patch_embed.proj.weight", {width, 3, v.patch_size, v.patch_size}));
  w.patch_embedding.shape = {width, 3LL * v.patch_size * v.patch_size};
  if (v.eva.patch_bias) {
    VISALIGN_ASSIGN_OR_RETURN(w.patch_bias, l.Get(p + "patch_embed.proj.bias", {width}));
  }
  VISALIGN_ASSIGN_OR_RETURN(w.class_embedding, l.Get(p + "cls_token", {1, 1, width}));
  const int64_t tokens = static_cast<int64_t>(v.grid()) * v.grid() + 1;
  VISALIGN_ASSIGN_OR_RETURN(w.vision.positional, l.Get(p + "pos_embed", {1, tokens, width}));
  if (v.ln_pre) VISALIGN_RETURN_IF_ERROR(l.Norm(p + "norm_pre", width, w.ln_pre_gain, w.ln_pre_bias));
  VISALIGN_RETURN_IF_ERROR(l.Norm(p + "norm", width, w.vision.ln_final_gain, w.vision.ln_final_bias));
  if (v.pooling == Pooling::kAttentionPool) {
    VISALIGN_RETURN_IF_ERROR(LoadTimmAttentionPool(l, p + "attn_pool.", width, v.pool_mlp_width, w.attention_pool));
  }
  VISALIGN_ASSIGN_OR_RETURN(w.vision.projection, l.Linear(p + "head", config.embed_dim, width));
  if (v.eva.rope) {
    w.rope =
        MakeRopeTable(v.grid(), v.width / v.heads, RopeGrid{v.eva.rope_ref_grid, v.eva.rope_offset, v.eva.rope_xy});
  }
  return Status::Ok();
}

}  // namespace visalign::clip
