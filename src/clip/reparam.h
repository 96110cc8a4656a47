// Structural re-parameterisation at load time (RepVGG / MobileOne / FastViT): the training-time
// branches of a block — convolutions each followed by an eval-mode BatchNorm2d, a BatchNorm-only
// identity branch, a 1×1 "scale" branch — folded into one convolution with bias, in torch's weight
// layout [out, in/groups, k, k]. Every fold is exact algebra on the stored tensors:
//   BN after a conv:   k' = k·γ/σ, b' = β − μ·γ/σ, σ = √(var + eps)
//   identity BN:       a k×k kernel with γ/σ at the centre tap of input channel o mod (in/groups)
//   smaller kernel:    zero-padded to k×k around the centre
//   branches:          kernels and biases summed.
// Shared by the towers whose checkpoints store unfused branches (FastViT MCi); no torch types.
// Internal to the clip module.
#pragma once

#include <string>
#include <vector>

#include "clip/conv.h"
#include "clip/weight_loader.h"

namespace visalign::clip {

inline constexpr float kBatchNormEps = 1e-5f;  // torch.nn.BatchNorm2d's default

// An eval-mode BatchNorm2d's parameters ([channels] each).
struct BatchNormParams {
  std::vector<float> gamma, beta, mean, var;
  float eps = kBatchNormEps;
  float Scale(int c) const;  // γ/σ
  float Shift(int c) const;  // β − μ·γ/σ
};

// `name`.{weight,bias,running_mean,running_var} of `channels` (num_batches_tracked accepted unread).
Result<BatchNormParams> LoadBatchNorm(WeightLoader& l, const std::string& name, int channels);

// A bias-free dense convolution `conv`.weight [out, in, k, k] followed by the BatchNorm2d `bn`,
// folded into one (ModifiedResNet, MobileCLIP-B's ConvStem).
Result<ConvWeights> LoadConvBatchNorm(WeightLoader& l, const std::string& conv, const std::string& bn, int out, int in,
                                      int kernel, int stride, int pad);

// A grouped convolution in torch's layout: weight [out, in/groups, kernel, kernel], bias [out],
// zero padding kernel / 2, the given stride.
struct TorchConv {
  int out = 0, in = 0, groups = 1, kernel = 1, stride = 1;
  std::vector<float> weight;
  std::vector<float> bias;

  TorchConv() = default;
  // All zeros.
  TorchConv(int out_, int in_, int groups_, int kernel_, int stride_);
  int in_per_group() const { return in / groups; }
  float& at(int o, int i, int ky, int kx) {
    return weight[((static_cast<size_t>(o) * in_per_group() + i) * kernel + ky) * kernel + kx];
  }
};

// Adds BN(conv(x)) for a branch conv of the same out/in/groups whose kernel is `branch_kernel`
// (<= conv.kernel, odd: centred) and weight [out, in/groups, bk, bk]; `bn` null: no BatchNorm,
// `branch_bias` (or zero) added as is.
void AddConvBranch(TorchConv& conv, const float* branch_weight, int branch_kernel, const BatchNormParams* bn,
                   const float* branch_bias = nullptr);
// Adds BN(x) (the identity branch; requires out == in), or with bn null x itself, times `scale`.
void AddIdentityBranch(TorchConv& conv, const BatchNormParams* bn, float scale = 1.0f);
// conv ← conv · s[o] per output channel (weight and bias), e.g. a layer scale γ.
void ScaleOutputs(TorchConv& conv, const float* s);
// conv ← conv − other (same shape).
void Subtract(TorchConv& conv, const TorchConv& other);

}  // namespace visalign::clip
