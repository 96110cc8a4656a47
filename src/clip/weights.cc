// Loading CLIP weights: name mapping for the OpenCLIP and Hugging Face layouts (documented in
// docs/clip.md), shape checks against the config, zero-copy views for aligned F32 tensors.
#include <fmt/format.h>

#include <set>

#include "clip/coca.h"
#include "clip/convnext.h"
#include "clip/eva.h"
#include "clip/fastvit.h"
#include "clip/mobileclip_vit.h"
#include "clip/resnet.h"
#include "clip/torch_checkpoint.h"
#include "clip/towers.h"
#include "clip/vitamin.h"
#include "clip/weight_loader.h"
#include "visalign/core/parallel.h"

namespace visalign::clip {
namespace {

// Parameter names of one residual block in each layout.
struct BlockNames {
  std::string ln1, ln2, out_proj, fc, proj;
  std::vector<std::string> qkv_weight, qkv_bias;  // one fused name (OpenCLIP) or q, k, v (HF)
};

BlockNames OpenClipBlock(const std::string& tower_prefix, int i) {
  const std::string p = tower_prefix + "transformer.resblocks." + std::to_string(i) + ".";
  return {p + "ln_1",
          p + "ln_2",
          p + "attn.out_proj",
          p + "mlp.c_fc",
          p + "mlp.c_proj",
          {p + "attn.in_proj_weight"},
          {p + "attn.in_proj_bias"}};
}

BlockNames HfBlock(const std::string& tower_prefix, int i) {
  const std::string p = tower_prefix + "encoder.layers." + std::to_string(i) + ".";
  const std::string a = p + "self_attn.";
  return {p + "layer_norm1",
          p + "layer_norm2",
          a + "out_proj",
          p + "mlp.fc1",
          p + "mlp.fc2",
          {a + "q_proj.weight", a + "k_proj.weight", a + "v_proj.weight"},
          {a + "q_proj.bias", a + "k_proj.bias", a + "v_proj.bias"}};
}

Result<std::vector<BlockWeights>> GetBlocks(WeightLoader& l, const TowerConfig& cfg, CheckpointLayout layout,
                                            const std::string& tower_prefix) {
  std::vector<BlockWeights> blocks;
  const int64_t w = cfg.width;
  for (int i = 0; i < cfg.layers; ++i) {
    const BlockNames n =
        layout == CheckpointLayout::kOpenClip ? OpenClipBlock(tower_prefix, i) : HfBlock(tower_prefix, i);
    BlockWeights b;
    VISALIGN_ASSIGN_OR_RETURN(b.ln1_gain, l.Get(n.ln1 + ".weight", {w}));
    VISALIGN_ASSIGN_OR_RETURN(b.ln1_bias, l.Get(n.ln1 + ".bias", {w}));
    VISALIGN_ASSIGN_OR_RETURN(b.ln2_gain, l.Get(n.ln2 + ".weight", {w}));
    VISALIGN_ASSIGN_OR_RETURN(b.ln2_bias, l.Get(n.ln2 + ".bias", {w}));
    if (n.qkv_weight.size() == 1) {
      VISALIGN_ASSIGN_OR_RETURN(b.qkv.weight, l.Get(n.qkv_weight[0], {3 * w, w}));
      VISALIGN_ASSIGN_OR_RETURN(b.qkv.bias, l.Get(n.qkv_bias[0], {3 * w}));
    } else {
      VISALIGN_ASSIGN_OR_RETURN(b.qkv.weight, l.Stack(n.qkv_weight, {w, w}));
      VISALIGN_ASSIGN_OR_RETURN(b.qkv.bias, l.Stack(n.qkv_bias, {w}));
    }
    b.qkv.layout = BLayout::kNK;
    VISALIGN_ASSIGN_OR_RETURN(b.out_proj, l.Linear(n.out_proj, w, w));
    VISALIGN_ASSIGN_OR_RETURN(b.fc, l.Linear(n.fc, cfg.mlp_width, w));
    VISALIGN_ASSIGN_OR_RETURN(b.proj, l.Linear(n.proj, w, cfg.mlp_width));
    blocks.push_back(std::move(b));
  }
  return blocks;
}

// visual.proj / text_projection are [in, out] parameters in OpenCLIP; HF stores Linear weights [out, in].
Result<LinearWeights> GetProjection(WeightLoader& l, CheckpointLayout layout, const std::string& name, int64_t width,
                                    int64_t embed_dim) {
  LinearWeights p;
  if (layout == CheckpointLayout::kOpenClip) {
    VISALIGN_ASSIGN_OR_RETURN(p.weight, l.Get(name, {width, embed_dim}));
    p.layout = BLayout::kKN;
  } else {
    VISALIGN_ASSIGN_OR_RETURN(p.weight, l.Get(name, {embed_dim, width}));
    p.layout = BLayout::kNK;
  }
  return p;
}

// Every linear layer of both towers (the GEMM operands of the forward pass) that the model has.
std::vector<LinearWeights*> LinearLayers(ClipWeights& w) {
  AttentionPoolWeights& a = w.attention_pool;
  AttentionalPoolerWeights& c = w.attentional_pooler;
  std::vector<LinearWeights*> all = {
      &w.vision.projection, &w.text.projection, &a.q, &a.kv, &a.proj, &a.fc, &a.fc_proj, &c.q, &c.kv, &c.out};
  for (TowerWeights* tower : {&w.vision, &w.text}) {
    for (BlockWeights& b : tower->blocks) {
      for (LinearWeights* lin : {&b.qkv, &b.out_proj, &b.fc, &b.proj, &b.fc_gate}) all.push_back(lin);
    }
  }
  std::vector<LinearWeights*> present;
  for (LinearWeights* lin : all) {
    if (lin->weight.data != nullptr) present.push_back(lin);
  }
  return present;
}

void ConvertLinearWeights(ClipWeights& w, Precision precision) {
  const std::vector<LinearWeights*> layers = LinearLayers(w);
  ParallelFor(layers.size(), [&](size_t i) {
    LinearWeights& lin = *layers[i];
    const size_t count = WeightLoader::Count(lin.weight.shape);
    if (precision == Precision::kBf16x3) {
      const bool nk = lin.layout == BLayout::kNK;
      const int k = static_cast<int>(lin.weight.shape[nk ? 1 : 0]);
      const int n = static_cast<int>(lin.weight.shape[nk ? 0 : 1]);
      lin.weight_bf16 = ToBf16x3Weights(lin.weight.data, k, n, lin.layout);
      lin.bf16x3 = true;
    } else {
      lin.weight_bf16.resize(count);
      ToBf16(lin.weight.data, count, lin.weight_bf16.data());
    }
    if (lin.weight.owned.empty()) {
      w.file.ReleasePages(lin.weight.data, count * sizeof(float));
    } else {
      std::vector<float>().swap(lin.weight.owned);
    }
    lin.weight.data = nullptr;
  });
}

// timm VisionTransformer blocks `prefix`blocks.<i>.{norm1, attn.qkv, attn.proj, norm2, mlp.fc1, mlp.fc2}.
Result<std::vector<BlockWeights>> GetTimmBlocks(WeightLoader& l, const VisionConfig& v, const std::string& prefix) {
  const int64_t width = v.width;
  std::vector<BlockWeights> blocks;
  for (int i = 0; i < v.layers; ++i) {
    const std::string b = prefix + "blocks." + std::to_string(i) + ".";
    BlockWeights bw;
    VISALIGN_ASSIGN_OR_RETURN(bw.ln1_gain, l.Get(b + "norm1.weight", {width}));
    VISALIGN_ASSIGN_OR_RETURN(bw.ln1_bias, l.Get(b + "norm1.bias", {width}));
    VISALIGN_ASSIGN_OR_RETURN(bw.ln2_gain, l.Get(b + "norm2.weight", {width}));
    VISALIGN_ASSIGN_OR_RETURN(bw.ln2_bias, l.Get(b + "norm2.bias", {width}));
    VISALIGN_ASSIGN_OR_RETURN(bw.qkv, l.Linear(b + "attn.qkv", 3 * width, width));
    VISALIGN_ASSIGN_OR_RETURN(bw.out_proj, l.Linear(b + "attn.proj", width, width));
    VISALIGN_ASSIGN_OR_RETURN(bw.fc, l.Linear(b + "mlp.fc1", v.mlp_width, width));
    VISALIGN_ASSIGN_OR_RETURN(bw.proj, l.Linear(b + "mlp.fc2", width, v.mlp_width));
    blocks.push_back(std::move(bw));
  }
  return blocks;
}

// MobileCLIP-B's timm vit_base_mci_224 (under visual.trunk.): ConvStem, cls_token, pos_embed of the
// patch tokens only, timm blocks, final norm, head (with bias) as the projection.
Status LoadMciVitVision(WeightLoader& l, const ClipConfig& config, ClipWeights& w) {
  const VisionConfig& v = config.vision;
  const std::string p = "visual.trunk.";
  const int64_t width = v.width;
  const int64_t patches = static_cast<int64_t>(v.grid()) * v.grid();
  VISALIGN_ASSIGN_OR_RETURN(MciConvStemWeights stem, LoadMciConvStem(l, v));
  w.mci_stem = std::make_shared<const MciConvStemWeights>(std::move(stem));
  VISALIGN_ASSIGN_OR_RETURN(w.vision.blocks, GetTimmBlocks(l, v, p));
  VISALIGN_ASSIGN_OR_RETURN(w.class_embedding, l.Get(p + "cls_token", {1, 1, width}));
  VISALIGN_ASSIGN_OR_RETURN(w.vision.positional, l.Get(p + "pos_embed", {1, patches, width}));
  VISALIGN_ASSIGN_OR_RETURN(w.vision.ln_final_gain, l.Get(p + "norm.weight", {width}));
  VISALIGN_ASSIGN_OR_RETURN(w.vision.ln_final_bias, l.Get(p + "norm.bias", {width}));
  VISALIGN_ASSIGN_OR_RETURN(w.vision.projection, l.Linear(p + "head", config.embed_dim, width));
  return Status::Ok();
}

// The SigLIP vision tower: timm VisionTransformer parameter names (OpenCLIP TimmModel, under
// visual.trunk.) or transformers' SiglipVisionTransformer (under vision_model.; q/k/v separate, the
// pooling head an nn.MultiheadAttention whose fused in_proj is split into timm's q and kv rows).
// Patch conv with bias, no class token, no pre-norm, final norm, MAP head, no projection.
Status LoadSiglipVision(WeightLoader& l, const ClipConfig& config, ClipWeights& w) {
  const VisionConfig& v = config.vision;
  const bool oc = config.layout == CheckpointLayout::kOpenClip;
  const std::string p = oc ? "visual.trunk." : "vision_model.";
  const int64_t width = v.width;
  const int64_t tokens = static_cast<int64_t>(v.grid()) * v.grid();
  if (oc) {
    VISALIGN_ASSIGN_OR_RETURN(w.vision.blocks, GetTimmBlocks(l, v, p));
  } else {
    VISALIGN_ASSIGN_OR_RETURN(w.vision.blocks, GetBlocks(l, v, config.layout, p));
  }
  const std::string patch = oc ? p + "patch_embed.proj" : p + "embeddings.patch_embedding";
  VISALIGN_ASSIGN_OR_RETURN(w.patch_embedding, l.Get(patch + ".weight", {width, 3, v.patch_size, v.patch_size}));
  w.patch_embedding.shape = {width, 3LL * v.patch_size * v.patch_size};
  VISALIGN_ASSIGN_OR_RETURN(w.patch_bias, l.Get(patch + ".bias", {width}));
  VISALIGN_ASSIGN_OR_RETURN(w.vision.positional,
                            oc ? l.Get(p + "pos_embed", {1, tokens, width})
                               : l.Get(p + "embeddings.position_embedding.weight", {tokens, width}));
  const std::string norm = oc ? p + "norm" : p + "post_layernorm";
  VISALIGN_ASSIGN_OR_RETURN(w.vision.ln_final_gain, l.Get(norm + ".weight", {width}));
  VISALIGN_ASSIGN_OR_RETURN(w.vision.ln_final_bias, l.Get(norm + ".bias", {width}));
  AttentionPoolWeights& a = w.attention_pool;
  if (oc) return LoadTimmAttentionPool(l, p + "attn_pool.", width, v.mlp_width, a);
  const std::string ap = p + "head.";
  VISALIGN_ASSIGN_OR_RETURN(a.latent, l.Get(ap + "probe", {1, 1, width}));
  {
    const std::string in = ap + "attention.in_proj_";  // rows: q, k, v
    VISALIGN_ASSIGN_OR_RETURN(a.q.weight, l.Rows(in + "weight", {3 * width, width}, 0, width));
    VISALIGN_ASSIGN_OR_RETURN(a.q.bias, l.Rows(in + "bias", {3 * width}, 0, width));
    VISALIGN_ASSIGN_OR_RETURN(a.kv.weight, l.Rows(in + "weight", {3 * width, width}, width, 2 * width));
    VISALIGN_ASSIGN_OR_RETURN(a.kv.bias, l.Rows(in + "bias", {3 * width}, width, 2 * width));
    a.q.layout = a.kv.layout = BLayout::kNK;
  }
  VISALIGN_ASSIGN_OR_RETURN(a.proj, l.Linear(ap + "attention.out_proj", width, width));
  VISALIGN_RETURN_IF_ERROR(l.Norm(ap + "layernorm", width, a.norm_gain, a.norm_bias));
  VISALIGN_ASSIGN_OR_RETURN(a.fc, l.Linear(ap + "mlp.fc1", v.mlp_width, width));
  VISALIGN_ASSIGN_OR_RETURN(a.fc_proj, l.Linear(ap + "mlp.fc2", width, v.mlp_width));
  return Status::Ok();
}

// The OpenCLIP / transformers CLIP VisionTransformer.
Status LoadClipVision(WeightLoader& l, const ClipConfig& config, ClipWeights& w) {
  const bool oc = config.layout == CheckpointLayout::kOpenClip;
  const VisionConfig& v = config.vision;
  const int64_t tokens = static_cast<int64_t>(v.grid()) * v.grid() + 1;
  const int64_t patch_values = 3LL * v.patch_size * v.patch_size;
  VISALIGN_ASSIGN_OR_RETURN(w.vision.blocks, GetBlocks(l, v, config.layout, oc ? "visual." : "vision_model."));
  VISALIGN_ASSIGN_OR_RETURN(
      w.class_embedding, l.Get(oc ? "visual.class_embedding" : "vision_model.embeddings.class_embedding", {v.width}));
  VISALIGN_ASSIGN_OR_RETURN(w.vision.positional, l.Get(oc ? "visual.positional_embedding"
                                                          : "vision_model.embeddings.position_embedding.weight",
                                                       {tokens, v.width}));
  VISALIGN_ASSIGN_OR_RETURN(w.patch_embedding,
                            l.Get(oc ? "visual.conv1.weight" : "vision_model.embeddings.patch_embedding.weight",
                                  {v.width, 3, v.patch_size, v.patch_size}));
  w.patch_embedding.shape = {v.width, patch_values};
  if (v.ln_pre) {
    const std::string n = oc ? "visual.ln_pre" : "vision_model.pre_layrnorm";
    VISALIGN_ASSIGN_OR_RETURN(w.ln_pre_gain, l.Get(n + ".weight", {v.width}));
    VISALIGN_ASSIGN_OR_RETURN(w.ln_pre_bias, l.Get(n + ".bias", {v.width}));
  }
  // CoCa's attentional pooler leaves embed_dim-wide outputs: ln_post and proj act on those.
  const int64_t pooled_width = v.attentional_pool ? config.embed_dim : v.width;
  if (v.attentional_pool) VISALIGN_RETURN_IF_ERROR(LoadAttentionalPooler(l, config, w.attentional_pooler));
  VISALIGN_RETURN_IF_ERROR(l.Norm(oc ? "visual.ln_post" : "vision_model.post_layernorm", pooled_width,
                                  w.vision.ln_final_gain, w.vision.ln_final_bias));
  VISALIGN_ASSIGN_OR_RETURN(
      w.vision.projection,
      GetProjection(l, config.layout, oc ? "visual.proj" : "visual_projection.weight", pooled_width, config.embed_dim));
  return Status::Ok();
}

}  // namespace

Result<ClipWeights> LoadClipWeights(const ClipConfig& config, Precision precision) {
  ClipWeights w;
  VISALIGN_ASSIGN_OR_RETURN(w.file, OpenWeightsFile(config.weights_file));
  WeightLoader l(w.file);
  const bool oc = config.layout == CheckpointLayout::kOpenClip;
  const TextConfig& t = config.text;
  switch (config.vision.tower) {
    case VisionTower::kViT:
      if (config.vision.eva.enabled) {
        VISALIGN_RETURN_IF_ERROR(LoadEvaVision(l, config, w));
      } else if (config.vision.vitamin.enabled) {
        VISALIGN_RETURN_IF_ERROR(LoadVitaminVision(l, config, w));
      } else if (config.vision.mci_conv_stem) {
        VISALIGN_RETURN_IF_ERROR(LoadMciVitVision(l, config, w));
      } else if (config.vision.pooling == Pooling::kAttentionPool) {
        VISALIGN_RETURN_IF_ERROR(LoadSiglipVision(l, config, w));
      } else {
        VISALIGN_RETURN_IF_ERROR(LoadClipVision(l, config, w));
      }
      break;
    case VisionTower::kModifiedResNet: {
      VISALIGN_ASSIGN_OR_RETURN(ResNetWeights resnet, LoadResNetWeights(l, config));
      w.resnet = std::make_shared<const ResNetWeights>(std::move(resnet));
      break;
    }
    case VisionTower::kConvNext: {
      VISALIGN_ASSIGN_OR_RETURN(ConvNextWeights convnext, LoadConvNextWeights(l, config));
      w.convnext = std::make_shared<const ConvNextWeights>(std::move(convnext));
      break;
    }
    case VisionTower::kFastVit: {
      VISALIGN_ASSIGN_OR_RETURN(FastVitWeights fastvit, LoadFastVitWeights(l, config));
      w.fastvit = std::make_shared<const FastVitWeights>(std::move(fastvit));
      break;
    }
  }

  // CustomTextCLIP keeps the whole text tower under "text.".
  const std::string tp = oc ? (config.custom_text ? "text." : "") : "text_model.";
  VISALIGN_ASSIGN_OR_RETURN(w.text.blocks, GetBlocks(l, t, config.layout, tp));
  VISALIGN_ASSIGN_OR_RETURN(w.token_embedding,
                            l.Get(oc ? tp + "token_embedding.weight" : "text_model.embeddings.token_embedding.weight",
                                  {t.vocab_size, t.width}));
  // CoCa appends its cls embedding after the context: one more position.
  const int64_t positions = t.context_length + (t.embed_cls ? 1 : 0);
  VISALIGN_ASSIGN_OR_RETURN(w.text.positional,
                            l.Get(oc ? tp + "positional_embedding" : "text_model.embeddings.position_embedding.weight",
                                  {positions, t.width}));
  if (t.embed_cls) {
    VISALIGN_ASSIGN_OR_RETURN(w.text_cls, l.Get(tp + "cls_emb", {t.width}));
    // CoCa's captioning decoder takes no part in the embeddings (docs/clip.md, CoCa).
    l.SkipPrefix("text_decoder.");
  }
  {
    const std::string n = oc ? tp + "ln_final" : "text_model.final_layer_norm";
    VISALIGN_ASSIGN_OR_RETURN(w.text.ln_final_gain, l.Get(n + ".weight", {t.width}));
    VISALIGN_ASSIGN_OR_RETURN(w.text.ln_final_bias, l.Get(n + ".bias", {t.width}));
  }
  if (!t.projection) {
    // proj_type none: the pooled row is the embedding.
  } else if (t.projection_bias) {  // SigLIP: an nn.Linear (OpenCLIP text.text_projection, HF text_model.head)
    VISALIGN_ASSIGN_OR_RETURN(w.text.projection,
                              l.Linear(tp + (oc ? "text_projection" : "head"), config.embed_dim, t.width));
  } else {
    VISALIGN_ASSIGN_OR_RETURN(w.text.projection,
                              GetProjection(l, config.layout, oc ? tp + "text_projection" : "text_projection.weight",
                                            t.width, config.embed_dim));
  }
  // Scalars, except transformers' SiglipModel, whose logit_scale and logit_bias have shape [1].
  const std::vector<int64_t> scalar = config.sigmoid_logits && !oc ? std::vector<int64_t>{1} : std::vector<int64_t>{};
  VISALIGN_ASSIGN_OR_RETURN(Tensor scale, l.Get("logit_scale", scalar));
  w.logit_scale_log = scale.data[0];
  if (config.sigmoid_logits) {
    VISALIGN_ASSIGN_OR_RETURN(Tensor bias, l.Get("logit_bias", scalar));
    w.logit_bias = bias.data[0];
  }
  VISALIGN_RETURN_IF_ERROR(l.CheckAllUsed());
  if (precision == Precision::kBf16 || precision == Precision::kBf16x3) ConvertLinearWeights(w, precision);
  return w;
}

}  // namespace visalign::clip
