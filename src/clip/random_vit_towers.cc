// The transformer vision towers' tensors (random_tensors.h): OpenCLIP's ViT, timm's Eva-class trunks,
// CoCa's attentional pooler and MobileCLIP-B's vit_base_mci_224.
#include <algorithm>
#include <string>
#include <vector>

#include "clip/random_tensors.h"

namespace visalign::clip {

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
    AddNorm(specs, "visual.ln_pre", vw);
  }
  AddNorm(specs, "visual.ln_post", vw);
  specs.push_back({{"visual.proj", {vw, c.embed_dim}}, Uniform(vw)});
}

// timm's Eva-class trunks (EVA01/EVA02/EVA02-E, PE-Core) and CLIP-layout ViTs under visual.trunk.,
// with the names eva.cc reads; Linear weights std fan_in^-½.
void AddTimmEvaVision(std::vector<RandomTensorSpec>& specs, const ClipConfig& c) {
  const VisionConfig& v = c.vision;
  const int64_t w = v.width;
  const int64_t mlp = v.mlp_width;
  const std::string p = "visual.trunk.";
  for (int i = 0; i < v.layers; ++i) {
    const std::string b = p + "blocks." + std::to_string(i) + ".";
    AddNorm(specs, b + "norm1", w);
    AddNorm(specs, b + "norm2", w);
    switch (v.eva.qkv) {
      case TimmQkv::kFused:
        AddLinear(specs, b + "attn.qkv", 3 * w, w, true);
        break;
      case TimmQkv::kFusedQvBias:
        AddLinear(specs, b + "attn.qkv", 3 * w, w, false);
        specs.push_back({{b + "attn.q_bias", {w}}, Bias()});
        specs.push_back({{b + "attn.v_bias", {w}}, Bias()});
        break;
      case TimmQkv::kSeparate:
        AddLinear(specs, b + "attn.q_proj", w, w, true);
        AddLinear(specs, b + "attn.k_proj", w, w, false);
        AddLinear(specs, b + "attn.v_proj", w, w, true);
        break;
    }
    if (v.eva.sub_ln) AddNorm(specs, b + "attn.norm", w);
    AddLinear(specs, b + "attn.proj", w, w, true);
    if (v.eva.swiglu) {
      AddLinear(specs, b + "mlp.fc1_g", mlp, w, true);
      AddLinear(specs, b + "mlp.fc1_x", mlp, w, true);
      AddNorm(specs, b + "mlp.norm", mlp);
    } else {
      AddLinear(specs, b + "mlp.fc1", mlp, w, true);
    }
    AddLinear(specs, b + "mlp.fc2", w, mlp, true);
  }
  const int64_t tokens = static_cast<int64_t>(v.grid()) * v.grid() + 1;
  specs.push_back({{p + "patch_embed.proj.weight", {w, 3, v.patch_size, v.patch_size}},
                   Uniform(3 * 3 * static_cast<int64_t>(v.patch_size) * v.patch_size)});
  if (v.eva.patch_bias) specs.push_back({{p + "patch_embed.proj.bias", {w}}, Bias()});
  specs.push_back({{p + "cls_token", {1, 1, w}}, Uniform(w)});
  specs.push_back({{p + "pos_embed", {1, tokens, w}}, Uniform(w)});
  if (v.ln_pre) AddNorm(specs, p + "norm_pre", w);
  AddNorm(specs, p + "norm", w);
  if (v.pooling == Pooling::kAttentionPool) {
    const std::string a = p + "attn_pool.";
    specs.push_back({{a + "latent", {1, 1, w}}, Uniform(w)});
    AddLinear(specs, a + "q", w, w, true);
    AddLinear(specs, a + "kv", 2 * w, w, true);
    AddLinear(specs, a + "proj", w, w, true);
    AddNorm(specs, a + "norm", w);
    AddLinear(specs, a + "mlp.fc1", v.pool_mlp_width, w, true);
    AddLinear(specs, a + "mlp.fc2", w, v.pool_mlp_width, true);
  }
  AddLinear(specs, p + "head", c.embed_dim, w, true);
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
  AddNorm(specs, a + "ln_q", e);
  AddNorm(specs, a + "ln_k", w);
  specs.push_back({{a + "attn.q_proj_weight", {e, e}}, Uniform(e)});
  specs.push_back({{a + "attn.k_proj_weight", {e, w}}, Uniform(w)});
  specs.push_back({{a + "attn.v_proj_weight", {e, w}}, Uniform(w)});
  specs.push_back({{a + "attn.in_proj_bias", {3 * e}}, Bias()});
  specs.push_back({{a + "attn.out_proj.weight", {e, e}}, Uniform(e)});
  specs.push_back({{a + "attn.out_proj.bias", {e}}, Bias()});
  AddNorm(specs, "visual.ln_post", e);
  specs.push_back({{"visual.proj", {e, e}}, Uniform(e)});
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
  AddBiasedConv(specs, t + "patch_embed.backbone.2.conv", w, kStem, 2);
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

}  // namespace visalign::clip
