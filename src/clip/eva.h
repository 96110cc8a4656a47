// timm Eva-class vision towers under visual.trunk. (EVA-CLIP, PE-Core, timm's CLIP-layout ViTs;
// docs/clip.md): their weights mapped onto the ViT's (towers.h), which runs them with the block options
// of VisionConfig::eva. Internal to the clip module.
#pragma once

#include "clip/towers.h"
#include "clip/weight_loader.h"

namespace visalign::clip {

// timm AttentionPoolLatent (MAP head) under `prefix` (latent, q, kv, proj, norm, mlp.fc1/fc2): SigLIP's
// and PE-Core's.
Status LoadTimmAttentionPool(WeightLoader& l, const std::string& prefix, int64_t width, int64_t mlp_width,
                             AttentionPoolWeights& a);

// EVA01 (fused qkv with q_bias / v_bias; k has none, a zero block here) and EVA02 (q_proj, k_proj
// without bias, v_proj stacked into one qkv; attn.norm; SwiGLU fc1_g / fc1_x, mlp.norm, fc2), class
// token, pos_embed, final norm, trunk.head as the projection (with bias); the RoPE table for EVA02;
// EVA02-E's post-norm blocks (EVA01's weights); PE-Core and timm ViTs (fused qkv with bias, no patch
// bias, norm_pre; PE-Core's RoPE and MAP head).
Status LoadEvaVision(WeightLoader& l, const ClipConfig& config, ClipWeights& w);

}  // namespace visalign::clip
