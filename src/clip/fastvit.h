// timm's FastViT MCi trunk as OpenCLIP's TimmModel wraps it (fastvit_mci0..4: MobileCLIP-S1/S2,
// MobileCLIP2-S0/S2/S3/S4; config in FastVitConfig). Checkpoints store the training-time branches
// (MobileOne conv_kxk / conv_scale / identity BatchNorms, RepMixer norm / mixer / layer_scale,
// ReparamLargeKernelConv large_conv / small_conv, RepCPE pos_enc): every one is folded at load into a
// single convolution with bias (reparam.h, timm's reparameterize()), BatchNorms before a Linear into
// the Linear, layer scales into the layer before them. What runs is then: dense k×k convolutions
// (oneDNN), 1×1 convolutions and per-pixel Linears (GEMM on NHWC rows), depthwise / grouped
// convolutions (conv.h), squeeze-excite gates, exact GELU, multi-head attention over the H·W tokens
// of the attention stages. Internal to the clip module.
#pragma once

#include <vector>

#include "clip/conv.h"
#include "clip/towers.h"
#include "clip/weight_loader.h"

namespace visalign::clip {

// A folded convolution: dense (groups 1) or depthwise / grouped with groups = input channels.
struct FastVitConv {
  bool depthwise = false;
  ConvWeights dense;
  DepthwiseWeights dw;
};

// SqueezeExcite: x · sigmoid(fc2(relu(fc1(mean_HW(x))))) per channel.
struct SqueezeExciteWeights {
  int reduced = 0;
  LinearWeights fc1, fc2;  // 1×1 convs with bias as [reduced, C] and [C, reduced]
};

// A MobileOneBlock or ReparamLargeKernelConv after folding: conv, optional SE, optional GELU.
struct MobileOneWeights {
  FastVitConv conv;
  bool se = false;
  SqueezeExciteWeights se_weights;
  bool gelu = true;
};

struct FastVitBlockWeights {
  bool attention = false;
  DepthwiseWeights repmixer;  // RepMixer: x ← id + γ·(mixer − norm) folded (replaces x)
  // Attention: norm then qkv (a BatchNorm is folded into qkv, which then has a bias; a LayerNorm2d
  // runs), proj scaled by layer_scale_1.
  Tensor norm_gain, norm_bias;  // LayerNorm2d only
  LinearWeights qkv, proj;
  // ConvMlp: BN(dw7×7) folded, fc1 + GELU, fc2 scaled by the block's (last) layer scale.
  DepthwiseWeights mlp_conv;
  LinearWeights fc1, fc2;
  int hidden = 0;
};

struct FastVitStageWeights {
  bool downsample = false;
  MobileOneWeights down_large, down_pointwise;  // PatchEmbed: proj.0 (7×7 s2 grouped), proj.1 (1×1)
  bool pos_emb = false;
  DepthwiseWeights pos;  // RepCPE: x + dw7×7(x) folded
  std::vector<FastVitBlockWeights> blocks;
};

struct FastVitWeights {
  std::vector<MobileOneWeights> stem;  // 3×3 s2, 3×3 s2 depthwise, 1×1
  std::vector<FastVitStageWeights> stages;
  MobileOneWeights final_conv;
  LinearWeights head;  // head.fc [embed_dim, final_features] + bias
};

// The `visual.trunk.*` tensors of config.vision.fastvit (timm names, un-fused training-time form).
Result<FastVitWeights> LoadFastVitWeights(WeightLoader& l, const ClipConfig& config);

// pixels: rows = images, 3·S·S CHW floats each. Returns [images x embed_dim].
Matrix EncodeFastVit(const ClipConfig& config, const FastVitWeights& w, const Matrix& pixels, const ForwardOptions& o);

}  // namespace visalign::clip
