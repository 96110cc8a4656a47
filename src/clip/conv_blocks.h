// Convolution building blocks beyond conv.h's, on the same NHWC feature maps (ViTamin's MbConv
// shortcut; kept apart from conv.h so towers that need them share one copy):
//   - torch.nn.AvgPool2d(kernel, stride, padding, count_include_pad=False): each output is the mean
//     of the input pixels its window covers inside the map (the padding is not counted).
// Parallel over output rows (OpenMP, Parallel()). Internal to the clip module.
#pragma once

#include "clip/conv.h"

namespace visalign::clip {

// AvgPool2d(kernel, stride, pad, count_include_pad=False); out = ⌊(n + 2·pad − kernel) / stride⌋ + 1.
// Requires pad < kernel (every window then covers at least one input pixel).
FeatureMap AvgPool2dExcludePad(const FeatureMap& x, int kernel, int stride, int pad);

}  // namespace visalign::clip
