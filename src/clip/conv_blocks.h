// Convolution building blocks beyond conv.h's, on the same NHWC feature maps (ViTamin's MbConv
// stages; kept apart from conv.h so towers that need them share one copy):
//   - a depthwise k×k convolution (groups = channels) with any stride, zero padding k/2 (timm's
//     create_conv2d default for odd k: out = ⌊(n + 2·(k/2) − k) / stride⌋ + 1), its bias and
//     optionally exact GELU fused into the write of each output pixel;
//   - torch.nn.AvgPool2d(kernel, stride, padding, count_include_pad=False): each output is the mean
//     of the input pixels its window covers inside the map (the padding is not counted).
// Parallel over output rows (OpenMP, Parallel()); per-pixel work through BestRowKernels().
// Internal to the clip module.
#pragma once

#include "clip/conv.h"

namespace visalign::clip {

enum class DepthwiseEpilogue { kBias, kBiasGelu };

// y = epilogue(depthwise(x) + bias) with dw's kernel (odd), stride `stride`.
FeatureMap DepthwiseConv2dStrided(const DepthwiseWeights& dw, const FeatureMap& x, int stride,
                                  DepthwiseEpilogue epilogue);

// AvgPool2d(kernel, stride, pad, count_include_pad=False); out = ⌊(n + 2·pad − kernel) / stride⌋ + 1.
// Requires pad < kernel (every window then covers at least one input pixel).
FeatureMap AvgPool2dExcludePad(const FeatureMap& x, int kernel, int stride, int pad);

}  // namespace visalign::clip
