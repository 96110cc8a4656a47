// ViTamin's conv stem (timm MbConvStages, `visual.trunk.patch_embed.backbone.*`; docs/clip.md) and the
// loading of the whole ViTamin vision tower onto the ViT's weights (towers.h), which runs its blocks
// with GeGLU MLPs, mean pooling over all tokens and fc_norm. On NHWC feature maps (conv.h):
//   stem:   conv1 3×3 s2 → LayerNorm2d + GELU → conv2 3×3
//   MbConv: x' = shortcut(x) + conv3_1x1(GELU(dw3×3_s(GELU(conv1_1x1(LayerNorm2d(x))))))
//           shortcut: stride 2 → AvgPool2d(3, 2, 1, count_include_pad=False) [+ 1×1 expand when the
//           width changes]; stride 1 → identity. Block 0 of each stage has stride 2.
//   pool:   LayerNorm2d → 3×3 s2 conv to the ViT width; the map row-major is the token sequence.
// LayerNorm2d (eps 1e-6) is LayerNorm over each pixel's channels: one row of the NHWC matrix. The 1×1
// convolutions are GEMMs on the mapped [out, in, 1, 1] weights (zero copy). Internal to the clip module.
#pragma once

#include <array>
#include <vector>

#include "clip/conv.h"
#include "clip/towers.h"
#include "clip/weight_loader.h"

namespace visalign::clip {

struct MbConvBlockWeights {
  int stride = 1;
  int in = 0, mid = 0, out = 0;
  Tensor pre_norm_gain, pre_norm_bias;
  LinearWeights expand;    // shortcut.expand: stride-2 blocks that change the width; empty otherwise
  LinearWeights conv1;     // conv1_1x1 [mid, in]
  DepthwiseWeights conv2;  // conv2_kxk 3×3, the block's stride
  LinearWeights conv3;     // conv3_1x1 [out, mid]
};

struct VitaminStemWeights {
  ConvWeights stem_conv1, stem_conv2;
  Tensor stem_norm_gain, stem_norm_bias;
  std::array<std::vector<MbConvBlockWeights>, 2> stages;
  Tensor pool_norm_gain, pool_norm_bias;
  ConvWeights pool_proj;
};

// timm's make_divisible(v, 8): v rounded to the nearest multiple of 8 (at least 8), bumped up by 8
// when that loses more than 10 % (the MbConv expansion width, 4·out).
int MakeDivisible(double v);

// Every visual.* tensor of config.vision.vitamin: the stem into w.vitamin_stem, the ViT blocks
// (norm1, attn.qkv, attn.proj, norm2, mlp.norm / w0 / w1 / w2 as MlpKind::kGeGlu), pos_embed (unless
// pos_embed 'none'), fc_norm as ln_final and visual.head.proj into w.vision.
Status LoadVitaminVision(WeightLoader& l, const ClipConfig& config, ClipWeights& w);

// pixels: rows = images, 3·S·S CHW floats each. Returns the tokens [images · grid², width], traced as
// timm names them (visual.trunk.patch_embed.backbone.stages.<s>.<j>_out, ...pool_out, NCHW).
std::vector<float> EncodeVitaminStem(const VisionConfig& v, const VitaminStemWeights& w, const Matrix& pixels,
                                     const ForwardOptions& o);

}  // namespace visalign::clip
