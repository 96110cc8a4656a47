// EVA-CLIP vision towers (timm Eva trunks under visual.trunk.; docs/clip.md): their weights mapped
// onto the ViT's (towers.h), which runs them with the EVA block options of VisionConfig::eva.
// Internal to the clip module.
#pragma once

#include "clip/towers.h"
#include "clip/weight_loader.h"

namespace visalign::clip {

// EVA01 (fused qkv with q_bias / v_bias; k has none, a zero block here) and EVA02 (q_proj, k_proj
// without bias, v_proj stacked into one qkv; attn.norm; SwiGLU fc1_g / fc1_x, mlp.norm, fc2), class
// token, pos_embed, final norm, trunk.head as the projection (with bias); the RoPE table for EVA02.
Status LoadEvaVision(WeightLoader& l, const ClipConfig& config, ClipWeights& w);

}  // namespace visalign::clip
