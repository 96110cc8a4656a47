// open_clip's eval image transform, replicating Pillow's 8-bit resampler bit for bit:
// separable convolution with antialiased (support scaled by the downscale factor) bicubic
// (a = -0.5) or bilinear kernels, coefficients normalised then rounded to 22-bit fixed point,
// horizontal pass then vertical pass, each rounded and clamped to uint8.
#pragma once

#include "visalign/clip.h"
#include "visalign/imaging/image.h"

namespace visalign::clip {

// Pillow's Image.resize(size, BICUBIC / BILINEAR) for an RGB image (no reducing_gap).
imaging::Image PilResize(const imaging::Image& in, int width, int height, Interpolation interpolation);

// Resize (shortest side or squash), center crop (torchvision offsets: round half to even), then
// CHW floats (v / 255 - mean) / std, all in float32 as torchvision computes them.
Result<Matrix> PreprocessOne(const imaging::Image& image, const PreprocessConfig& config);

}  // namespace visalign::clip
