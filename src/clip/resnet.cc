#include "clip/resnet.h"

#include <string>
#include <utility>

#include "clip/gemm.h"
#include "clip/kernels.h"
#include "clip/reparam.h"

namespace visalign::clip {
namespace {

constexpr int kExpansion = 4;  // Bottleneck output channels = 4 · planes
constexpr int kStemPool = 2;

// A bias-free convolution `name` followed by the BatchNorm2d `bn`, folded into one.
Result<ConvWeights> GetConvBn(WeightLoader& l, const std::string& name, const std::string& bn, int out, int in,
                              int kernel, int stride) {
  return LoadConvBatchNorm(l, name, bn, out, in, kernel, stride, kernel / 2);
}

FeatureMap RunBottleneck(const BottleneckWeights& b, FeatureMap x) {
  FeatureMap out = Conv2d(b.conv1, x, ConvActivation::kRelu);
  out = Conv2d(b.conv2, out, ConvActivation::kRelu);
  if (b.stride > 1) out = AvgPool2d(out, b.stride);
  FeatureMap identity;
  if (!b.has_downsample) {
    identity = std::move(x);
  } else if (b.stride > 1) {
    identity = Conv2d(b.downsample, AvgPool2d(x, b.stride), ConvActivation::kNone);
  } else {
    identity = Conv2d(b.downsample, x, ConvActivation::kNone);
  }
  return Conv2d(b.conv3, out, ConvActivation::kRelu, &identity);  // ReLU(bn3(conv3(out)) + identity)
}

}  // namespace

Result<ResNetWeights> LoadResNetWeights(WeightLoader& l, const ClipConfig& config) {
  const ResNetConfig& r = config.vision.resnet;
  ResNetWeights w;
  const int half = r.width / 2;
  VISALIGN_ASSIGN_OR_RETURN(w.stem1, GetConvBn(l, "visual.conv1", "visual.bn1", half, 3, 3, 2));
  VISALIGN_ASSIGN_OR_RETURN(w.stem2, GetConvBn(l, "visual.conv2", "visual.bn2", half, half, 3, 1));
  VISALIGN_ASSIGN_OR_RETURN(w.stem3, GetConvBn(l, "visual.conv3", "visual.bn3", r.width, half, 3, 1));
  int inplanes = r.width;
  for (size_t s = 0; s < r.layers.size(); ++s) {
    const int planes = r.width << s;
    std::vector<BottleneckWeights> blocks;
    for (int i = 0; i < r.layers[s]; ++i) {
      const std::string p = "visual.layer" + std::to_string(s + 1) + "." + std::to_string(i) + ".";
      BottleneckWeights b;
      b.stride = (s > 0 && i == 0) ? 2 : 1;
      VISALIGN_ASSIGN_OR_RETURN(b.conv1, GetConvBn(l, p + "conv1", p + "bn1", planes, inplanes, 1, 1));
      VISALIGN_ASSIGN_OR_RETURN(b.conv2, GetConvBn(l, p + "conv2", p + "bn2", planes, planes, 3, 1));
      VISALIGN_ASSIGN_OR_RETURN(b.conv3, GetConvBn(l, p + "conv3", p + "bn3", kExpansion * planes, planes, 1, 1));
      b.has_downsample = b.stride > 1 || inplanes != kExpansion * planes;
      if (b.has_downsample) {
        VISALIGN_ASSIGN_OR_RETURN(
            b.downsample, GetConvBn(l, p + "downsample.0", p + "downsample.1", kExpansion * planes, inplanes, 1, 1));
      }
      inplanes = kExpansion * planes;
      blocks.push_back(std::move(b));
    }
    w.stages.push_back(std::move(blocks));
  }
  const int64_t c = r.feature_width();
  const int64_t grid = config.vision.image_size / 32;
  VISALIGN_ASSIGN_OR_RETURN(w.positional, l.Get("visual.attnpool.positional_embedding", {grid * grid + 1, c}));
  VISALIGN_ASSIGN_OR_RETURN(w.qkv.weight, l.Stack({"visual.attnpool.q_proj.weight", "visual.attnpool.k_proj.weight",
                                                   "visual.attnpool.v_proj.weight"},
                                                  {c, c}));
  VISALIGN_ASSIGN_OR_RETURN(
      w.qkv.bias,
      l.Stack({"visual.attnpool.q_proj.bias", "visual.attnpool.k_proj.bias", "visual.attnpool.v_proj.bias"}, {c}));
  VISALIGN_ASSIGN_OR_RETURN(w.c_proj, l.Linear("visual.attnpool.c_proj", config.embed_dim, c, true));
  return w;
}

Matrix EncodeResNet(const ClipConfig& config, const ResNetWeights& w, const Matrix& pixels, const ForwardOptions& o) {
  FeatureMap x = FeatureMapFromChw(pixels, config.vision.image_size);
  x = Conv2d(w.stem1, x, ConvActivation::kRelu);
  TraceMap(o, "visual.stem.act1_out", x);
  x = Conv2d(w.stem2, x, ConvActivation::kRelu);
  TraceMap(o, "visual.stem.act2_out", x);
  x = Conv2d(w.stem3, x, ConvActivation::kRelu);
  TraceMap(o, "visual.stem.act3_out", x);
  x = AvgPool2d(x, kStemPool);
  TraceMap(o, "visual.stem_out", x);
  for (size_t s = 0; s < w.stages.size(); ++s) {
    for (size_t i = 0; i < w.stages[s].size(); ++i) {
      x = RunBottleneck(w.stages[s][i], std::move(x));
      TraceMap(o, "visual.layer" + std::to_string(s + 1) + "." + std::to_string(i) + "_out", x);
    }
  }

  // AttentionPool2d: the mean of the grid's tokens first, then the tokens row-major, plus positions.
  const int n = x.n;
  const int c = x.c;
  const int grid_tokens = x.h * x.w;
  const int seq = grid_tokens + 1;
  std::vector<float> tokens(static_cast<size_t>(n) * seq * c);
  for (int i = 0; i < n; ++i) {
    const float* src = x.data.data() + static_cast<size_t>(i) * grid_tokens * c;
    float* dst = tokens.data() + static_cast<size_t>(i) * seq * c;
    for (int ch = 0; ch < c; ++ch) {
      double sum = 0.0;
      for (int k = 0; k < grid_tokens; ++k) sum += src[static_cast<size_t>(k) * c + ch];
      dst[ch] = static_cast<float>(sum / grid_tokens) + w.positional.data[ch];
    }
    for (size_t k = c; k < static_cast<size_t>(seq) * c; ++k) dst[k] = src[k - c] + w.positional.data[k];
  }
  Trace(o, "visual.attnpool.tokens_with_pos", tokens.data(), tokens.size());
  std::vector<float> qkv(static_cast<size_t>(n) * seq * 3 * c);
  Gemm(n * seq, 3 * c, c, tokens.data(), c, w.qkv.weight.data, BLayout::kNK, 0.0f, qkv.data(), 3 * c);
  AddBias(qkv.data(), n * seq, 3 * c, w.qkv.bias.data);
  std::vector<float> attended(static_cast<size_t>(n) * seq * c);
  Attention(qkv.data(), attended.data(), n, seq, c, config.vision.resnet.heads, /*causal=*/false);
  const int e = config.embed_dim;
  Matrix out(n, e);
  if (o.trace != nullptr) {
    std::vector<float> all(static_cast<size_t>(n) * seq * e);
    Gemm(n * seq, e, c, attended.data(), c, w.c_proj.weight.data, BLayout::kNK, 0.0f, all.data(), e);
    AddBias(all.data(), n * seq, e, w.c_proj.bias.data);
    Trace(o, "visual.attnpool.c_proj_out_all_tokens", all.data(), all.size());
  }
  // Only token 0 is the embedding: c_proj on every seq-th row.
  Gemm(n, e, c, attended.data(), seq * c, w.c_proj.weight.data, BLayout::kNK, 0.0f, out.data.data(), e);
  AddBias(out.data.data(), n, e, w.c_proj.bias.data);
  Trace(o, "visual.attnpool_out", out.data.data(), out.data.size());
  return out;
}

}  // namespace visalign::clip
