// Channels-last feature maps and the operations of the convolutional vision towers (ModifiedResNet,
// ConvNeXt). An NHWC map is a row-major [pixels, channels] matrix, so a 1×1 stride-1 convolution is
// one call of the towers' shared Gemm (gemm.h); every other dense convolution (k×k, strided) runs on
// oneDNN's convolution primitive with bias, residual sum and ReLU fused: its brgconv kernels with
// AVX-512 (5.7-9.4× the GFLOP per CPU-second of the former im2col + GEMM, docs/performance.md), its
// GEMM-based convolution below AVX-512 (for accuracy, see conv.cc). Parallelised like kernels.h
// (OpenMP, Parallel(); oneDNN takes the calling thread's OpenMP setting). Internal to the clip module.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "clip/towers.h"
#include "visalign/clip.h"

namespace visalign::clip {

// A batch of NHWC feature maps: element (image, y, x, channel) at ((image·h + y)·w + x)·c + channel.
struct FeatureMap {
  int n = 0, h = 0, w = 0, c = 0;
  std::vector<float> data;

  FeatureMap() = default;
  FeatureMap(int n_, int h_, int w_, int c_)
      : n(n_), h(h_), w(w_), c(c_), data(static_cast<size_t>(n_) * h_ * w_ * c_, 0.0f) {}
  int pixels() const { return n * h * w; }
};

// pixels: one CHW image of 3·size·size floats per row (EncodePixels' input) -> NHWC.
FeatureMap FeatureMapFromChw(const Matrix& pixels, int size);
// The map in torch's NCHW order (for tracing against the fixtures).
std::vector<float> ToNchw(const FeatureMap& x);
// Passes ToNchw(x) to options.trace when tracing.
void TraceMap(const ForwardOptions& o, const std::string& name, const FeatureMap& x);

// Conv2d's oneDNN primitives of one ConvWeights, one per call shape, with the weights reordered to
// the primitive's layout (defined in conv.cc).
class ConvPrimitiveCache;

// A square convolution, zero padding, cross-correlation (torch.nn.Conv2d, groups 1). `weight` is
// [out, kernel·kernel·in] in (ky, kx, c) order, i.e. torch's [out, in, ky, kx] transposed per row.
struct ConvWeights {
  int in = 0, out = 0, kernel = 1, stride = 1, pad = 0;
  std::vector<float> weight;
  std::vector<float> bias;  // [out]
  // Conv2d's primitives unless pointwise (kernel 1, stride 1, pad 0: those run on Gemm), created on
  // first use per (batch, input size, thread count, epilogue); thread-safe, shared by copies. It
  // holds a reordered copy of `weight` (bias is read per call), so `weight` must not change once
  // Conv2d has run: MakeConv and FoldBatchNorm give the weights a new, empty cache.
  std::shared_ptr<ConvPrimitiveCache> primitives;
};

// From a torch weight [out, in, kernel, kernel] and bias [out] (nullptr: zero).
ConvWeights MakeConv(const float* torch_weight, const float* bias, int out, int in, int kernel, int stride, int pad);

// Folds an eval-mode BatchNorm2d that follows the convolution into it: with s = gamma / √(var + eps),
// weight·s and (bias − mean)·s + beta per output channel.
void FoldBatchNorm(ConvWeights& conv, const float* gamma, const float* beta, const float* mean, const float* var,
                   float eps);

enum class ConvActivation { kNone, kRelu };

// y = act(conv(x) + bias). With `residual` (the output's shape), y = act(conv(x) + bias + residual),
// accumulated in place in *residual, which is returned moved. Safe to call concurrently.
FeatureMap Conv2d(const ConvWeights& conv, const FeatureMap& x, ConvActivation act, FeatureMap* residual = nullptr);

// x ← GELU(x), exact erf (timm's nn.GELU after a convolution).
void GeluInPlace(FeatureMap& x);

// Mean over H×W per image and channel ([n, c], sums in double): global average pooling.
std::vector<float> GlobalAveragePool(const FeatureMap& x);

// torch.nn.AvgPool2d(k): kernel k, stride k, no padding (h and w divisible by k).
FeatureMap AvgPool2d(const FeatureMap& x, int k);

// A depthwise convolution (groups = input channels c), zero padding kernel / 2, stride `stride`
// (timm's create_conv2d default for odd kernels: output size ⌊(n − 1) / stride⌋ + 1), `multiplier`
// output channels per input channel (output channel o reads input channel o / multiplier; torch
// groups = c, out = c·multiplier). weight [kernel·kernel, c·multiplier] (tap-major), bias [c·multiplier].
struct DepthwiseWeights {
  int c = 0, kernel = 0, stride = 1, multiplier = 1;
  std::vector<float> weight;
  std::vector<float> bias;
  int out() const { return c * multiplier; }
};

// From a torch weight [c·multiplier, 1, kernel, kernel] and bias [c·multiplier].
DepthwiseWeights MakeDepthwise(const float* torch_weight, const float* bias, int c, int kernel, int stride = 1,
                               int multiplier = 1);

// What DepthwiseConv2d applies to each output pixel's sum of taps: its bias (FastViT, MobileCLIP,
// ConvNeXt), or its bias and then exact-erf GELU (ViTamin's MbConv).
enum class DepthwiseEpilogue { kBias, kBiasGelu };

// y = epilogue(depthwise(x) + bias). Each output pixel sums its taps from zero in (ky, kx) order and
// adds the bias last, in the epilogue (RowKernels' add_bias / bias_gelu). Parallel over output rows.
FeatureMap DepthwiseConv2d(const DepthwiseWeights& dw, const FeatureMap& x,
                           DepthwiseEpilogue epilogue = DepthwiseEpilogue::kBias);

}  // namespace visalign::clip
