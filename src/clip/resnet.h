// OpenCLIP's ModifiedResNet vision tower (OpenAI RN50/RN101/RN50x4/x16/x64 and their OpenCLIP
// retrains): the 3-conv stem, Bottlenecks with average-pool (anti-aliased) downsampling and
// AttentionPool2d. BatchNorm (eval: running statistics) is folded into the preceding convolution at
// load. Internal to the clip module.
#pragma once

#include <vector>

#include "clip/conv.h"
#include "clip/towers.h"
#include "clip/weight_loader.h"

namespace visalign::clip {

struct BottleneckWeights {
  int stride = 1;                   // AvgPool2d(stride) after conv2 and before the downsample conv
  ConvWeights conv1, conv2, conv3;  // 1×1, 3×3, 1×1 (BatchNorm folded)
  bool has_downsample = false;
  ConvWeights downsample;  // 1×1 (BatchNorm folded)
};

struct ResNetWeights {
  ConvWeights stem1, stem2, stem3;                     // 3×3 (stride 2, 1, 1), BatchNorm folded
  std::vector<std::vector<BottleneckWeights>> stages;  // layer1..layer4
  Tensor positional;                                   // attnpool [grid² + 1, width·32]
  LinearWeights qkv;                                   // q_proj | k_proj | v_proj stacked: [3·C, C] + bias
  LinearWeights c_proj;                                // [embed_dim, C] + bias
};

// The `visual.*` tensors of config.vision.resnet (OpenCLIP names).
Result<ResNetWeights> LoadResNetWeights(WeightLoader& l, const ClipConfig& config);

// pixels: rows = images, 3·S·S CHW floats each. Returns [images x embed_dim] (attnpool row 0).
Matrix EncodeResNet(const ClipConfig& config, const ResNetWeights& w, const Matrix& pixels, const ForwardOptions& o);

}  // namespace visalign::clip
