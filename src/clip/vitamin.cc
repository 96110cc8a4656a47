#include "clip/vitamin.h"

#include <algorithm>
#include <string>
#include <utility>

#include "clip/conv_blocks.h"
#include "clip/gemm.h"
#include "clip/kernels.h"

namespace visalign::clip {
namespace {

constexpr int kConvKernel = 3;
constexpr int kStride = 2;
constexpr int kPad = 1;
constexpr double kMbConvExpansion = 4.0;
constexpr float kConvNormEps = 1e-6f;  // every LayerNorm2d of the stem, the MbConv blocks and the pool
// The stem runs this many images at a time: the first MbConv's expansion is (S/2)² x 4·width floats
// per image (51 MB for ViTamin-S at 224 px), so a whole chunk of 64 would need gigabytes.
constexpr int kStemImagesPerPass = 8;

const std::string kTrunk = "visual.trunk.";
const std::string kBackbone = kTrunk + "patch_embed.backbone.";

// A 1×1 convolution [out, in, 1, 1] + bias as the [out, in] Linear it is.
Result<LinearWeights> GetPointwise(WeightLoader& l, const std::string& name, int64_t out, int64_t in) {
  LinearWeights lin;
  VISALIGN_ASSIGN_OR_RETURN(lin.weight, l.Get(name + ".weight", {out, in, 1, 1}));
  lin.weight.shape = {out, in};
  VISALIGN_ASSIGN_OR_RETURN(lin.bias, l.Get(name + ".bias", {out}));
  lin.layout = BLayout::kNK;
  return lin;
}

Result<ConvWeights> GetConv(WeightLoader& l, const std::string& name, int out, int in, int stride) {
  VISALIGN_ASSIGN_OR_RETURN(Tensor weight, l.Get(name + ".weight", {out, in, kConvKernel, kConvKernel}));
  VISALIGN_ASSIGN_OR_RETURN(Tensor bias, l.Get(name + ".bias", {out}));
  return MakeConv(weight.data, bias.data, out, in, kConvKernel, stride, kPad);
}

Result<MbConvBlockWeights> GetMbConv(WeightLoader& l, const std::string& p, int in, int out, int stride) {
  MbConvBlockWeights b;
  b.stride = stride;
  b.in = in;
  b.out = out;
  b.mid = MakeDivisible(out * kMbConvExpansion);
  VISALIGN_RETURN_IF_ERROR(l.Norm(p + "pre_norm", in, b.pre_norm_gain, b.pre_norm_bias));
  if (stride == kStride && in != out) {
    VISALIGN_ASSIGN_OR_RETURN(b.expand, GetPointwise(l, p + "shortcut.expand", out, in));
  } else if (in != out) {  // stride 1: the shortcut is the 1×1 conv itself
    VISALIGN_ASSIGN_OR_RETURN(b.expand, GetPointwise(l, p + "shortcut", out, in));
  }
  VISALIGN_ASSIGN_OR_RETURN(b.conv1, GetPointwise(l, p + "conv1_1x1", b.mid, in));
  VISALIGN_ASSIGN_OR_RETURN(Tensor dw, l.Get(p + "conv2_kxk.weight", {b.mid, 1, kConvKernel, kConvKernel}));
  VISALIGN_ASSIGN_OR_RETURN(Tensor dw_bias, l.Get(p + "conv2_kxk.bias", {b.mid}));
  b.conv2 = MakeDepthwise(dw.data, dw_bias.data, b.mid, kConvKernel, stride);
  VISALIGN_ASSIGN_OR_RETURN(b.conv3, GetPointwise(l, p + "conv3_1x1", out, b.mid));
  return b;
}

Result<VitaminStemWeights> GetStem(WeightLoader& l, const VisionConfig& v) {
  const VitaminConfig& cfg = v.vitamin;
  VitaminStemWeights w;
  VISALIGN_ASSIGN_OR_RETURN(w.stem_conv1, GetConv(l, kBackbone + "stem.conv1", cfg.stem_width, 3, kStride));
  VISALIGN_RETURN_IF_ERROR(l.Norm(kBackbone + "stem.norm1", cfg.stem_width, w.stem_norm_gain, w.stem_norm_bias));
  VISALIGN_ASSIGN_OR_RETURN(w.stem_conv2, GetConv(l, kBackbone + "stem.conv2", cfg.stem_width, cfg.stem_width, 1));
  int in = cfg.stem_width;
  for (size_t s = 0; s < w.stages.size(); ++s) {
    for (int j = 0; j < cfg.stage_depths[s]; ++j) {
      const std::string p = kBackbone + "stages." + std::to_string(s) + "." + std::to_string(j) + ".";
      VISALIGN_ASSIGN_OR_RETURN(MbConvBlockWeights b, GetMbConv(l, p, in, cfg.stage_widths[s], j == 0 ? kStride : 1));
      w.stages[s].push_back(std::move(b));
      in = cfg.stage_widths[s];
    }
  }
  VISALIGN_RETURN_IF_ERROR(l.Norm(kBackbone + "pool.norm", in, w.pool_norm_gain, w.pool_norm_bias));
  VISALIGN_ASSIGN_OR_RETURN(w.pool_proj, GetConv(l, kBackbone + "pool.proj", v.width, in, kStride));
  return w;
}

// y[pixels, lin.out] = x · Wᵀ + bias (+ y when accumulate), then GELU when asked.
void Pointwise(const LinearWeights& lin, const FeatureMap& x, FeatureMap& y, bool accumulate, bool gelu) {
  const int rows = x.pixels();
  const int out = y.c;
  Linear(lin, rows, x.c, out, x.data.data(), accumulate ? 1.0f : 0.0f, y.data.data());
  if (gelu) {
    AddBiasActivate(y.data.data(), rows, out, lin.bias.data, Activation::kGelu);
  } else {
    AddBias(y.data.data(), rows, out, lin.bias.data);
  }
}

FeatureMap RunMbConv(const MbConvBlockWeights& b, FeatureMap x) {
  FeatureMap h(x.n, x.h, x.w, x.c);
  LayerNorm(x.data.data(), h.data.data(), x.pixels(), x.c, b.pre_norm_gain.data, b.pre_norm_bias.data, kConvNormEps);
  FeatureMap out;
  const FeatureMap* shortcut_in = &x;
  FeatureMap pooled;
  if (b.stride == kStride) {
    pooled = AvgPool2dExcludePad(x, kConvKernel, kStride, kPad);
    shortcut_in = &pooled;
  }
  if (b.expand.weight.data != nullptr) {
    out = FeatureMap(shortcut_in->n, shortcut_in->h, shortcut_in->w, b.out);
    Pointwise(b.expand, *shortcut_in, out, /*accumulate=*/false, /*gelu=*/false);
  } else {
    out = b.stride == kStride ? std::move(pooled) : std::move(x);
  }
  FeatureMap expanded(h.n, h.h, h.w, b.mid);
  Pointwise(b.conv1, h, expanded, /*accumulate=*/false, /*gelu=*/true);
  const FeatureMap spatial = DepthwiseConv2d(b.conv2, expanded, DepthwiseEpilogue::kBiasGelu);
  Pointwise(b.conv3, spatial, out, /*accumulate=*/true, /*gelu=*/false);  // + shortcut
  return out;
}

// The stem, both stages and the pool on one slice of images.
FeatureMap RunStem(const VitaminStemWeights& w, FeatureMap x, const ForwardOptions& o) {
  x = Conv2d(w.stem_conv1, x, ConvActivation::kNone);
  LayerNorm(x.data.data(), x.data.data(), x.pixels(), x.c, w.stem_norm_gain.data, w.stem_norm_bias.data, kConvNormEps);
  AddBiasActivate(x.data.data(), x.pixels(), x.c, std::vector<float>(static_cast<size_t>(x.c), 0.0f).data(),
                  Activation::kGelu);
  x = Conv2d(w.stem_conv2, x, ConvActivation::kNone);
  TraceMap(o, kBackbone + "stem_out", x);
  for (size_t s = 0; s < w.stages.size(); ++s) {
    for (size_t j = 0; j < w.stages[s].size(); ++j) {
      x = RunMbConv(w.stages[s][j], std::move(x));
      TraceMap(o, kBackbone + "stages." + std::to_string(s) + "." + std::to_string(j) + "_out", x);
    }
  }
  LayerNorm(x.data.data(), x.data.data(), x.pixels(), x.c, w.pool_norm_gain.data, w.pool_norm_bias.data, kConvNormEps);
  x = Conv2d(w.pool_proj, x, ConvActivation::kNone);
  TraceMap(o, kBackbone + "pool_out", x);
  return x;
}

}  // namespace

int MakeDivisible(double v) {
  constexpr int kDivisor = 8;
  constexpr double kRoundLimit = 0.9;
  int rounded = std::max(kDivisor, static_cast<int>(v + kDivisor / 2.0) / kDivisor * kDivisor);
  if (rounded < kRoundLimit * v) rounded += kDivisor;
  return rounded;
}

Status LoadVitaminVision(WeightLoader& l, const ClipConfig& config, ClipWeights& w) {
  const VisionConfig& v = config.vision;
  const int64_t width = v.width;
  VISALIGN_ASSIGN_OR_RETURN(VitaminStemWeights stem, GetStem(l, v));
  w.vitamin_stem = std::make_shared<const VitaminStemWeights>(std::move(stem));
  for (int i = 0; i < v.layers; ++i) {
    const std::string p = kTrunk + "blocks." + std::to_string(i) + ".";
    BlockWeights b;
    VISALIGN_RETURN_IF_ERROR(l.Norm(p + "norm1", width, b.ln1_gain, b.ln1_bias));
    VISALIGN_ASSIGN_OR_RETURN(b.qkv, l.Linear(p + "attn.qkv", 3 * width, width));
    VISALIGN_ASSIGN_OR_RETURN(b.out_proj, l.Linear(p + "attn.proj", width, width));
    VISALIGN_RETURN_IF_ERROR(l.Norm(p + "norm2", width, b.ln2_gain, b.ln2_bias));
    b.mlp = MlpKind::kGeGlu;
    VISALIGN_RETURN_IF_ERROR(l.Norm(p + "mlp.norm", width, b.mlp_in_norm_gain, b.mlp_in_norm_bias));
    VISALIGN_ASSIGN_OR_RETURN(b.fc_gate, l.Linear(p + "mlp.w0", v.mlp_width, width));
    VISALIGN_ASSIGN_OR_RETURN(b.fc, l.Linear(p + "mlp.w1", v.mlp_width, width));
    VISALIGN_ASSIGN_OR_RETURN(b.proj, l.Linear(p + "mlp.w2", width, v.mlp_width));
    w.vision.blocks.push_back(std::move(b));
  }
  if (v.vitamin.pos_embed) {
    const int64_t tokens = static_cast<int64_t>(v.grid()) * v.grid();
    VISALIGN_ASSIGN_OR_RETURN(w.vision.positional, l.Get(kTrunk + "pos_embed", {1, tokens, width}));
  }
  VISALIGN_RETURN_IF_ERROR(l.Norm(kTrunk + "fc_norm", width, w.vision.ln_final_gain, w.vision.ln_final_bias));
  VISALIGN_ASSIGN_OR_RETURN(w.vision.projection, l.Linear("visual.head.proj", config.embed_dim, width, /*bias=*/false));
  return Status::Ok();
}

std::vector<float> EncodeVitaminStem(const VisionConfig& v, const VitaminStemWeights& w, const Matrix& pixels,
                                     const ForwardOptions& o) {
  const int n = pixels.rows;
  const int s = v.image_size;
  const size_t image_values = static_cast<size_t>(3) * s * s;
  const size_t image_tokens = static_cast<size_t>(v.grid()) * v.grid() * v.width;
  std::vector<float> tokens(static_cast<size_t>(n) * image_tokens);
  // Traced activations must hold the whole batch: one pass then.
  const int per_pass = o.trace != nullptr ? std::max(n, 1) : kStemImagesPerPass;
  for (int first = 0; first < n; first += per_pass) {
    const int count = std::min(per_pass, n - first);
    Matrix slice(count, static_cast<int>(image_values));
    std::copy(pixels.row(first), pixels.row(first) + count * image_values, slice.data.begin());
    const FeatureMap x = RunStem(w, FeatureMapFromChw(slice, s), o);
    std::copy(x.data.begin(), x.data.end(), tokens.begin() + static_cast<size_t>(first) * image_tokens);
  }
  return tokens;
}

}  // namespace visalign::clip
