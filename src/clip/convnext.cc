#include "clip/convnext.h"

#include <string>
#include <utility>

#include "clip/gemm.h"
#include "clip/kernels.h"

namespace visalign::clip {
namespace {

constexpr int kStemPatch = 4;
constexpr int kDownsampleKernel = 2;
constexpr int kDepthwiseKernel = 7;
constexpr int kMlpRatio = 4;
constexpr int kProjectionMlpRatio = 2;  // OpenCLIP's timm_proj "mlp": hidden 2 · embed_dim

// A copy of `t` with row r scaled by scale[r] ([rows, cols] or, with cols 1, a vector).
Tensor ScaledRows(const Tensor& t, const float* scale, int64_t rows, int64_t cols) {
  Tensor out;
  out.shape = t.shape;
  out.owned.assign(t.data, t.data + rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out.owned[r * cols + c] *= scale[r];
  }
  out.data = out.owned.data();
  return out;
}

Result<ConvWeights> GetConv(WeightLoader& l, const std::string& name, int out, int in, int kernel) {
  VISALIGN_ASSIGN_OR_RETURN(Tensor weight, l.Get(name + ".weight", {out, in, kernel, kernel}));
  VISALIGN_ASSIGN_OR_RETURN(Tensor bias, l.Get(name + ".bias", {out}));
  return MakeConv(weight.data, bias.data, out, in, kernel, /*stride=*/kernel, /*pad=*/0);
}

Result<ConvNextBlockWeights> GetBlock(WeightLoader& l, const std::string& p, int c) {
  ConvNextBlockWeights b;
  VISALIGN_ASSIGN_OR_RETURN(Tensor dw, l.Get(p + "conv_dw.weight", {c, 1, kDepthwiseKernel, kDepthwiseKernel}));
  VISALIGN_ASSIGN_OR_RETURN(Tensor dw_bias, l.Get(p + "conv_dw.bias", {c}));
  b.conv_dw = MakeDepthwise(dw.data, dw_bias.data, c, kDepthwiseKernel);
  VISALIGN_RETURN_IF_ERROR(l.Norm(p + "norm", c, b.norm_gain, b.norm_bias));
  VISALIGN_ASSIGN_OR_RETURN(b.fc1, l.Linear(p + "mlp.fc1", kMlpRatio * c, c, true));
  VISALIGN_ASSIGN_OR_RETURN(LinearWeights fc2, l.Linear(p + "mlp.fc2", c, kMlpRatio * c, true));
  VISALIGN_ASSIGN_OR_RETURN(Tensor gamma, l.Get(p + "gamma", {c}));
  // x + gamma · (W h + b) = x + (gamma ⊙ W) h + gamma ⊙ b.
  b.fc2.weight = ScaledRows(fc2.weight, gamma.data, c, kMlpRatio * c);
  b.fc2.bias = ScaledRows(fc2.bias, gamma.data, c, 1);
  b.fc2.layout = BLayout::kNK;
  return b;
}

// x ← x + gamma · fc2(GELU(fc1(LN(dwconv(x))))), per pixel.
void RunBlock(const ConvNextBlockWeights& b, float eps, FeatureMap& x) {
  FeatureMap h = DepthwiseConv2d(b.conv_dw, x);
  const int rows = x.pixels();
  const int c = x.c;
  const int hidden_width = kMlpRatio * c;
  LayerNorm(h.data.data(), h.data.data(), rows, c, b.norm_gain.data, b.norm_bias.data, eps);
  std::vector<float> hidden(static_cast<size_t>(rows) * hidden_width);
  Gemm(rows, hidden_width, c, h.data.data(), c, b.fc1.weight.data, BLayout::kNK, 0.0f, hidden.data(), hidden_width);
  AddBiasActivate(hidden.data(), rows, hidden_width, b.fc1.bias.data, Activation::kGelu);
  Gemm(rows, c, hidden_width, hidden.data(), hidden_width, b.fc2.weight.data, BLayout::kNK, 1.0f, x.data.data(), c);
  AddBias(x.data.data(), rows, c, b.fc2.bias.data);
}

}  // namespace

Result<ConvNextWeights> LoadConvNextWeights(WeightLoader& l, const ClipConfig& config) {
  const ConvNextConfig& cn = config.vision.convnext;
  ConvNextWeights w;
  VISALIGN_ASSIGN_OR_RETURN(w.stem, GetConv(l, "visual.trunk.stem.0", cn.dims[0], 3, kStemPatch));
  VISALIGN_RETURN_IF_ERROR(l.Norm("visual.trunk.stem.1", cn.dims[0], w.stem_norm_gain, w.stem_norm_bias));
  for (size_t s = 0; s < cn.depths.size(); ++s) {
    const std::string p = "visual.trunk.stages." + std::to_string(s) + ".";
    ConvNextStageWeights& stage = w.stages[s];
    if (s > 0) {
      VISALIGN_RETURN_IF_ERROR(l.Norm(p + "downsample.0", cn.dims[s - 1], stage.down_norm_gain, stage.down_norm_bias));
      VISALIGN_ASSIGN_OR_RETURN(stage.down,
                                GetConv(l, p + "downsample.1", cn.dims[s], cn.dims[s - 1], kDownsampleKernel));
    }
    for (int j = 0; j < cn.depths[s]; ++j) {
      VISALIGN_ASSIGN_OR_RETURN(ConvNextBlockWeights b,
                                GetBlock(l, p + "blocks." + std::to_string(j) + ".", cn.dims[s]));
      stage.blocks.push_back(std::move(b));
    }
  }
  const int c = cn.dims.back();
  VISALIGN_RETURN_IF_ERROR(l.Norm("visual.trunk.head.norm", c, w.head_norm_gain, w.head_norm_bias));
  const int e = config.embed_dim;
  if (cn.projection == ConvNextProjection::kLinear) {
    VISALIGN_ASSIGN_OR_RETURN(w.proj, l.Linear("visual.head.proj", e, c, cn.projection_bias));
  } else {
    VISALIGN_ASSIGN_OR_RETURN(w.mlp_fc1, l.Linear("visual.head.mlp.fc1", kProjectionMlpRatio * e, c, true));
    VISALIGN_ASSIGN_OR_RETURN(w.proj, l.Linear("visual.head.mlp.fc2", e, kProjectionMlpRatio * e, cn.projection_bias));
  }
  return w;
}

Matrix EncodeConvNext(const ClipConfig& config, const ConvNextWeights& w, const Matrix& pixels,
                      const ForwardOptions& o) {
  const float eps = config.vision.convnext.norm_eps;
  FeatureMap x = Conv2d(w.stem, FeatureMapFromChw(pixels, config.vision.image_size), ConvActivation::kNone);
  LayerNorm(x.data.data(), x.data.data(), x.pixels(), x.c, w.stem_norm_gain.data, w.stem_norm_bias.data, eps);
  TraceMap(o, "visual.trunk.stem_out", x);
  for (size_t s = 0; s < w.stages.size(); ++s) {
    const ConvNextStageWeights& stage = w.stages[s];
    const std::string p = "visual.trunk.stages." + std::to_string(s);
    if (s > 0) {
      LayerNorm(x.data.data(), x.data.data(), x.pixels(), x.c, stage.down_norm_gain.data, stage.down_norm_bias.data,
                eps);
      x = Conv2d(stage.down, x, ConvActivation::kNone);
      TraceMap(o, p + ".downsample_out", x);
    }
    for (size_t j = 0; j < stage.blocks.size(); ++j) {
      RunBlock(stage.blocks[j], eps, x);
      TraceMap(o, p + ".blocks." + std::to_string(j) + "_out", x);
    }
  }

  // Head: global average pool, LayerNorm, projection.
  const int n = x.n;
  const int c = x.c;
  std::vector<float> pooled = GlobalAveragePool(x);
  Trace(o, "visual.trunk.head.global_pool_out", pooled.data(), pooled.size());
  LayerNorm(pooled.data(), pooled.data(), n, c, w.head_norm_gain.data, w.head_norm_bias.data, eps);
  Trace(o, "visual.trunk.head.norm_out", pooled.data(), pooled.size());
  Trace(o, "visual.trunk_out", pooled.data(), pooled.size());
  const int e = config.embed_dim;
  Matrix out(n, e);
  if (config.vision.convnext.projection == ConvNextProjection::kLinear) {
    Gemm(n, e, c, pooled.data(), c, w.proj.weight.data, BLayout::kNK, 0.0f, out.data.data(), e);
  } else {
    const int hidden_width = kProjectionMlpRatio * e;
    std::vector<float> hidden(static_cast<size_t>(n) * hidden_width);
    Gemm(n, hidden_width, c, pooled.data(), c, w.mlp_fc1.weight.data, BLayout::kNK, 0.0f, hidden.data(), hidden_width);
    AddBiasActivate(hidden.data(), n, hidden_width, w.mlp_fc1.bias.data, Activation::kGelu);
    Gemm(n, e, hidden_width, hidden.data(), hidden_width, w.proj.weight.data, BLayout::kNK, 0.0f, out.data.data(), e);
  }
  if (w.proj.bias.data != nullptr) AddBias(out.data.data(), n, e, w.proj.bias.data);
  return out;
}

}  // namespace visalign::clip
