// timm's ConvNeXt trunk as OpenCLIP's TimmModel wraps it (convnext_base, convnext_base_w,
// convnext_large_d, ...): patchify stem + LayerNorm2d, stages of (LayerNorm2d + 2×2 stride-2 conv)
// downsampling and blocks (7×7 depthwise conv, LayerNorm, MLP with exact GELU, layer scale,
// residual), global average pool + LayerNorm head, then OpenCLIP's linear or MLP projection.
// Layer scale is folded into the MLP's second layer at load. Internal to the clip module.
#pragma once

#include <array>
#include <vector>

#include "clip/conv.h"
#include "clip/towers.h"
#include "clip/weight_loader.h"

namespace visalign::clip {

struct ConvNextBlockWeights {
  DepthwiseWeights conv_dw;
  Tensor norm_gain, norm_bias;
  LinearWeights fc1;  // [4C, C] + bias
  LinearWeights fc2;  // [C, 4C] + bias, both scaled by gamma (owned)
};

struct ConvNextStageWeights {
  Tensor down_norm_gain, down_norm_bias;  // empty for stage 0
  ConvWeights down;                       // 2×2 stride 2 (stage 1..3)
  std::vector<ConvNextBlockWeights> blocks;
};

struct ConvNextWeights {
  ConvWeights stem;  // 4×4 stride 4
  Tensor stem_norm_gain, stem_norm_bias;
  std::array<ConvNextStageWeights, 4> stages;
  Tensor head_norm_gain, head_norm_bias;
  LinearWeights proj;     // linear: [embed, C] (+ bias); mlp: fc2 [embed, 2·embed] (+ bias)
  LinearWeights mlp_fc1;  // mlp only: [2·embed, C] + bias
};

// The `visual.trunk.*` and `visual.head.*` tensors of config.vision.convnext (OpenCLIP names).
Result<ConvNextWeights> LoadConvNextWeights(WeightLoader& l, const ClipConfig& config);

// pixels: rows = images, 3·S·S CHW floats each. Returns [images x embed_dim].
Matrix EncodeConvNext(const ClipConfig& config, const ConvNextWeights& w, const Matrix& pixels,
                      const ForwardOptions& o);

}  // namespace visalign::clip
