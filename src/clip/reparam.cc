#include "clip/reparam.h"

#include <cmath>
#include <utility>

namespace visalign::clip {

Result<BatchNormParams> LoadBatchNorm(WeightLoader& l, const std::string& name, int channels) {
  BatchNormParams bn;
  for (auto [field, dst] : {std::pair{".weight", &bn.gamma}, std::pair{".bias", &bn.beta},
                            std::pair{".running_mean", &bn.mean}, std::pair{".running_var", &bn.var}}) {
    VISALIGN_ASSIGN_OR_RETURN(Tensor t, l.Get(name + field, {channels}));
    dst->assign(t.data, t.data + channels);
  }
  l.Skip(name + ".num_batches_tracked");
  return bn;
}

Result<ConvWeights> LoadConvBatchNorm(WeightLoader& l, const std::string& conv, const std::string& bn, int out, int in,
                                      int kernel, int stride, int pad) {
  VISALIGN_ASSIGN_OR_RETURN(Tensor weight, l.Get(conv + ".weight", {out, in, kernel, kernel}));
  VISALIGN_ASSIGN_OR_RETURN(BatchNormParams norm, LoadBatchNorm(l, bn, out));
  ConvWeights folded = MakeConv(weight.data, nullptr, out, in, kernel, stride, pad);
  FoldBatchNorm(folded, norm.gamma.data(), norm.beta.data(), norm.mean.data(), norm.var.data(), norm.eps);
  return folded;
}

float BatchNormParams::Scale(int c) const { return gamma[c] / std::sqrt(var[c] + eps); }
float BatchNormParams::Shift(int c) const { return beta[c] - mean[c] * Scale(c); }

TorchConv::TorchConv(int out_, int in_, int groups_, int kernel_, int stride_)
    : out(out_),
      in(in_),
      groups(groups_),
      kernel(kernel_),
      stride(stride_),
      weight(static_cast<size_t>(out_) * (in_ / groups_) * kernel_ * kernel_, 0.0f),
      bias(static_cast<size_t>(out_), 0.0f) {}

void AddConvBranch(TorchConv& conv, const float* branch_weight, int branch_kernel, const BatchNormParams* bn,
                   const float* branch_bias) {
  const int offset = (conv.kernel - branch_kernel) / 2;
  const int ipg = conv.in_per_group();
  for (int o = 0; o < conv.out; ++o) {
    const float s = bn != nullptr ? bn->Scale(o) : 1.0f;
    for (int i = 0; i < ipg; ++i) {
      for (int ky = 0; ky < branch_kernel; ++ky) {
        for (int kx = 0; kx < branch_kernel; ++kx) {
          const float w = branch_weight[((static_cast<size_t>(o) * ipg + i) * branch_kernel + ky) * branch_kernel + kx];
          conv.at(o, i, ky + offset, kx + offset) += w * s;
        }
      }
    }
    const float b = branch_bias != nullptr ? branch_bias[o] : 0.0f;
    conv.bias[o] += bn != nullptr ? b * s + bn->Shift(o) : b;
  }
}

void AddIdentityBranch(TorchConv& conv, const BatchNormParams* bn, float scale) {
  const int centre = conv.kernel / 2;
  const int ipg = conv.in_per_group();
  for (int o = 0; o < conv.out; ++o) {
    conv.at(o, o % ipg, centre, centre) += scale * (bn != nullptr ? bn->Scale(o) : 1.0f);
    if (bn != nullptr) conv.bias[o] += scale * bn->Shift(o);
  }
}

void ScaleOutputs(TorchConv& conv, const float* s) {
  const size_t row = conv.weight.size() / static_cast<size_t>(conv.out);
  for (int o = 0; o < conv.out; ++o) {
    for (size_t i = 0; i < row; ++i) conv.weight[o * row + i] *= s[o];
    conv.bias[o] *= s[o];
  }
}

void Subtract(TorchConv& conv, const TorchConv& other) {
  for (size_t i = 0; i < conv.weight.size(); ++i) conv.weight[i] -= other.weight[i];
  for (size_t i = 0; i < conv.bias.size(); ++i) conv.bias[i] -= other.bias[i];
}

}  // namespace visalign::clip
