#include "clip/fastvit.h"

#include <cmath>
#include <string>
#include <utility>

#include "clip/gemm.h"
#include "clip/kernels.h"
#include "clip/reparam.h"
#include "clip/row_kernels.h"

namespace visalign::clip {
namespace {

constexpr int kStemKernel = 3;
constexpr int kDownKernel = 7;  // PatchEmbed's ReparamLargeKernelConv (small_kernel 3)
constexpr int kDownSmallKernel = 3;
constexpr int kRepMixerKernel = 3;
constexpr int kMlpKernel = 7;  // ConvMlp's depthwise conv
constexpr int kPosKernel = 7;  // RepConditionalPosEnc spatial_shape
constexpr float kLayerNorm2dEps = 1e-5f;
constexpr double kMobileOneSeRatio = 1.0 / 16;  // SqueezeExcite(out, rd_divisor=1)
constexpr double kLargeKernelSeRatio = 0.25;    // SqueezeExcite(out, rd_ratio=0.25), rd_divisor 8

// timm's make_divisible(v, divisor, round_limit=0).
int MakeDivisible(double v, int divisor) {
  return std::max(divisor, static_cast<int>(v + divisor / 2.0) / divisor * divisor);
}

// The shape of one MobileOneBlock / ReparamLargeKernelConv.
struct ConvShape {
  int in, out, kernel, stride, groups;
};

FastVitConv Lower(const TorchConv& c) {
  FastVitConv out;
  if (c.groups == 1) {
    out.dense = MakeConv(c.weight.data(), c.bias.data(), c.out, c.in, c.kernel, c.stride, c.kernel / 2);
  } else {  // groups == in (validated by the caller's shapes)
    out.depthwise = true;
    out.dw = MakeDepthwise(c.weight.data(), c.bias.data(), c.in, c.kernel, c.stride, c.out / c.in);
  }
  return out;
}

DepthwiseWeights LowerDepthwise(const TorchConv& c) {
  return MakeDepthwise(c.weight.data(), c.bias.data(), c.in, c.kernel, c.stride, c.out / c.in);
}

// `name` (a ConvNormAct: name.conv.weight + name.bn) added to `conv` as a branch of kernel k.
Status AddConvBnBranch(WeightLoader& l, const std::string& name, int k, TorchConv& conv) {
  VISALIGN_ASSIGN_OR_RETURN(Tensor w, l.Get(name + ".conv.weight", {conv.out, conv.in_per_group(), k, k}));
  VISALIGN_ASSIGN_OR_RETURN(BatchNormParams bn, LoadBatchNorm(l, name + ".bn", conv.out));
  AddConvBranch(conv, w.data, k, &bn);
  return Status::Ok();
}

Status AddIdentityBnBranch(WeightLoader& l, const std::string& name, TorchConv& conv) {
  VISALIGN_ASSIGN_OR_RETURN(BatchNormParams bn, LoadBatchNorm(l, name, conv.in));
  AddIdentityBranch(conv, &bn);
  return Status::Ok();
}

// A MobileOneBlock's branches (timm MobileOneBlock._get_kernel_bias): identity BN when in == out
// and stride 1, BN(1×1 conv_scale) when kernel > 1 and `scale_branch`, `conv_branches` BN(k×k conv_kxk.i).
Result<TorchConv> FoldMobileOne(WeightLoader& l, const std::string& p, const ConvShape& s, bool scale_branch,
                                int conv_branches = 1) {
  TorchConv conv(s.out, s.in, s.groups, s.kernel, s.stride);
  if (s.in == s.out && s.stride == 1) VISALIGN_RETURN_IF_ERROR(AddIdentityBnBranch(l, p + ".identity", conv));
  if (s.kernel > 1 && scale_branch) VISALIGN_RETURN_IF_ERROR(AddConvBnBranch(l, p + ".conv_scale", 1, conv));
  for (int i = 0; i < conv_branches; ++i) {
    VISALIGN_RETURN_IF_ERROR(AddConvBnBranch(l, p + ".conv_kxk." + std::to_string(i), s.kernel, conv));
  }
  return conv;
}

// A 1×1 convolution with bias `name` [out, in, 1, 1] as a Linear on NHWC rows; rows scaled by
// `scale` (a layer scale folded in) when given.
Result<LinearWeights> PointwiseLinear(WeightLoader& l, const std::string& name, int out, int in,
                                      const float* scale = nullptr) {
  LinearWeights lin;
  VISALIGN_ASSIGN_OR_RETURN(lin.weight, l.Get(name + ".weight", {out, in, 1, 1}));
  VISALIGN_ASSIGN_OR_RETURN(lin.bias, l.Get(name + ".bias", {out}));
  lin.weight.shape = {out, in};
  lin.layout = BLayout::kNK;
  if (scale != nullptr) {
    lin.weight.owned.assign(lin.weight.data, lin.weight.data + static_cast<size_t>(out) * in);
    lin.bias.owned.assign(lin.bias.data, lin.bias.data + out);
    for (int o = 0; o < out; ++o) {
      for (int i = 0; i < in; ++i) lin.weight.owned[static_cast<size_t>(o) * in + i] *= scale[o];
      lin.bias.owned[o] *= scale[o];
    }
    lin.weight.data = lin.weight.owned.data();
    lin.bias.data = lin.bias.owned.data();
  }
  return lin;
}

Result<SqueezeExciteWeights> LoadSqueezeExcite(WeightLoader& l, const std::string& p, int c, double ratio,
                                               int divisor) {
  SqueezeExciteWeights se;
  se.reduced = MakeDivisible(c * ratio, divisor);
  VISALIGN_ASSIGN_OR_RETURN(se.fc1, PointwiseLinear(l, p + ".fc1", se.reduced, c));
  VISALIGN_ASSIGN_OR_RETURN(se.fc2, PointwiseLinear(l, p + ".fc2", c, se.reduced));
  return se;
}

Result<MobileOneWeights> LoadMobileOne(WeightLoader& l, const std::string& p, const ConvShape& s, bool scale_branch,
                                       bool se) {
  MobileOneWeights m;
  VISALIGN_ASSIGN_OR_RETURN(TorchConv conv, FoldMobileOne(l, p, s, scale_branch));
  m.conv = Lower(conv);
  if (se) {
    m.se = true;
    VISALIGN_ASSIGN_OR_RETURN(m.se_weights, LoadSqueezeExcite(l, p + ".se", s.out, kMobileOneSeRatio, 1));
  }
  return m;
}

// ConvMlp: BN(dw7×7) folded, fc1, fc2 with the block's layer scale `gamma` folded in.
Status LoadConvMlp(WeightLoader& l, const std::string& p, int c, int hidden, const float* gamma,
                   FastVitBlockWeights& b) {
  TorchConv conv(c, c, c, kMlpKernel, 1);
  VISALIGN_RETURN_IF_ERROR(AddConvBnBranch(l, p + ".conv", kMlpKernel, conv));
  b.mlp_conv = LowerDepthwise(conv);
  b.hidden = hidden;
  VISALIGN_ASSIGN_OR_RETURN(b.fc1, PointwiseLinear(l, p + ".fc1", hidden, c));
  VISALIGN_ASSIGN_OR_RETURN(b.fc2, PointwiseLinear(l, p + ".fc2", c, hidden, gamma));
  return Status::Ok();
}

// RepMixer (timm RepMixer.reparameterize): id + γ·(K_mixer − K_norm), bias γ·(b_mixer − b_norm).
Result<DepthwiseWeights> LoadRepMixer(WeightLoader& l, const std::string& p, int c) {
  const ConvShape shape{c, c, kRepMixerKernel, 1, c};
  VISALIGN_ASSIGN_OR_RETURN(TorchConv mixer, FoldMobileOne(l, p + ".mixer", shape, /*scale_branch=*/true));
  VISALIGN_ASSIGN_OR_RETURN(TorchConv norm, FoldMobileOne(l, p + ".norm", shape, /*scale_branch=*/false, 0));
  VISALIGN_ASSIGN_OR_RETURN(Tensor gamma, l.Get(p + ".layer_scale.gamma", {c, 1, 1}));
  Subtract(mixer, norm);
  ScaleOutputs(mixer, gamma.data);
  AddIdentityBranch(mixer, nullptr);
  return LowerDepthwise(mixer);
}

// An attention block's BatchNorm (y = a·x + b per channel) folded into the bias-free qkv Linear:
// W' = W·diag(a), bias W·b.
void FoldNormIntoQkv(const BatchNormParams& bn, int c, LinearWeights& qkv) {
  const int rows = 3 * c;
  qkv.weight.owned.assign(qkv.weight.data, qkv.weight.data + static_cast<size_t>(rows) * c);
  qkv.bias.owned.assign(static_cast<size_t>(rows), 0.0f);
  for (int o = 0; o < rows; ++o) {
    double bias = 0.0;
    for (int i = 0; i < c; ++i) {
      float& w = qkv.weight.owned[static_cast<size_t>(o) * c + i];
      bias += static_cast<double>(w) * bn.Shift(i);
      w *= bn.Scale(i);
    }
    qkv.bias.owned[o] = static_cast<float>(bias);
  }
  qkv.weight.data = qkv.weight.owned.data();
  qkv.bias.data = qkv.bias.owned.data();
  qkv.bias.shape = {rows};
}

Result<FastVitBlockWeights> LoadBlock(WeightLoader& l, const FastVitConfig& fv, const FastVitStageConfig& st,
                                      const std::string& p) {
  const int c = st.dim;
  const int hidden = static_cast<int>(c * st.mlp_ratio);
  FastVitBlockWeights b;
  b.attention = st.attention;
  if (!st.attention) {
    VISALIGN_ASSIGN_OR_RETURN(b.repmixer, LoadRepMixer(l, p + ".token_mixer", c));
    VISALIGN_ASSIGN_OR_RETURN(Tensor gamma, l.Get(p + ".layer_scale.gamma", {c, 1, 1}));
    VISALIGN_RETURN_IF_ERROR(LoadConvMlp(l, p + ".mlp", c, hidden, gamma.data, b));
    return b;
  }
  VISALIGN_ASSIGN_OR_RETURN(b.qkv, l.Linear(p + ".token_mixer.qkv", 3 * c, c, /*bias=*/false));
  if (fv.attention_layer_norm) {
    VISALIGN_ASSIGN_OR_RETURN(b.norm_gain, l.Get(p + ".norm.weight", {c}));
    VISALIGN_ASSIGN_OR_RETURN(b.norm_bias, l.Get(p + ".norm.bias", {c}));
  } else {
    VISALIGN_ASSIGN_OR_RETURN(BatchNormParams bn, LoadBatchNorm(l, p + ".norm", c));
    FoldNormIntoQkv(bn, c, b.qkv);
  }
  VISALIGN_ASSIGN_OR_RETURN(Tensor gamma1, l.Get(p + ".layer_scale_1.gamma", {c, 1, 1}));
  VISALIGN_ASSIGN_OR_RETURN(LinearWeights proj, l.Linear(p + ".token_mixer.proj", c, c, /*bias=*/true));
  b.proj.layout = BLayout::kNK;
  b.proj.weight.shape = proj.weight.shape;
  b.proj.weight.owned.assign(proj.weight.data, proj.weight.data + static_cast<size_t>(c) * c);
  b.proj.bias.owned.assign(proj.bias.data, proj.bias.data + c);
  for (int o = 0; o < c; ++o) {
    for (int i = 0; i < c; ++i) b.proj.weight.owned[static_cast<size_t>(o) * c + i] *= gamma1.data[o];
    b.proj.bias.owned[o] *= gamma1.data[o];
  }
  b.proj.weight.data = b.proj.weight.owned.data();
  b.proj.bias.data = b.proj.bias.owned.data();
  VISALIGN_ASSIGN_OR_RETURN(Tensor gamma2, l.Get(p + ".layer_scale_2.gamma", {c, 1, 1}));
  VISALIGN_RETURN_IF_ERROR(LoadConvMlp(l, p + ".mlp", c, hidden, gamma2.data, b));
  return b;
}

// x ← x · sigmoid(fc2(relu(fc1(mean_HW(x))))).
void SqueezeExcite(const SqueezeExciteWeights& se, FeatureMap& x) {
  const std::vector<float> pooled = GlobalAveragePool(x);
  const int n = x.n;
  const int c = x.c;
  std::vector<float> hidden(static_cast<size_t>(n) * se.reduced);
  Linear(se.fc1, n, c, se.reduced, pooled.data(), 0.0f, hidden.data());
  const RowKernels& rk = BestRowKernels();
  for (int i = 0; i < n; ++i)
    rk.bias_relu(hidden.data() + static_cast<size_t>(i) * se.reduced, se.reduced, se.fc1.bias.data);
  std::vector<float> gate(static_cast<size_t>(n) * c);
  Linear(se.fc2, n, se.reduced, c, hidden.data(), 0.0f, gate.data());
  AddBias(gate.data(), n, c, se.fc2.bias.data);
  for (float& g : gate) g = 1.0f / (1.0f + std::exp(-g));
  const int per_image = x.h * x.w;
#pragma omp parallel for schedule(static) if (Parallel(x.data.size()))
  for (int p = 0; p < x.pixels(); ++p) {
    const float* s = gate.data() + static_cast<size_t>(p / per_image) * c;
    float* row = x.data.data() + static_cast<size_t>(p) * c;
    for (int ch = 0; ch < c; ++ch) row[ch] *= s[ch];
  }
}

FeatureMap RunMobileOne(const MobileOneWeights& m, const FeatureMap& x) {
  FeatureMap y = m.conv.depthwise ? DepthwiseConv2d(m.conv.dw, x) : Conv2d(m.conv.dense, x, ConvActivation::kNone);
  if (m.se) SqueezeExcite(m.se_weights, y);
  if (m.gelu) GeluInPlace(y);
  return y;
}

// x ← x + fc2(GELU(fc1(dwconv(x)))) (layer scale folded into fc2).
void RunConvMlp(const FastVitBlockWeights& b, FeatureMap& x) {
  const FeatureMap h = DepthwiseConv2d(b.mlp_conv, x);
  const int rows = x.pixels();
  std::vector<float> hidden(static_cast<size_t>(rows) * b.hidden);
  Linear(b.fc1, rows, x.c, b.hidden, h.data.data(), 0.0f, hidden.data());
  AddBiasActivate(hidden.data(), rows, b.hidden, b.fc1.bias.data, Activation::kGelu);
  Linear(b.fc2, rows, b.hidden, x.c, hidden.data(), 1.0f, x.data.data());
  AddBias(x.data.data(), rows, x.c, b.fc2.bias.data);
}

// x ← x + proj(Attention(norm(x))) over the H·W tokens of each image (layer scale folded into proj).
void RunAttention(const FastVitBlockWeights& b, FeatureMap& x) {
  const int rows = x.pixels();
  const int c = x.c;
  const float* input = x.data.data();
  std::vector<float> normed;
  if (b.norm_gain.data != nullptr) {
    normed.resize(x.data.size());
    LayerNorm(x.data.data(), normed.data(), rows, c, b.norm_gain.data, b.norm_bias.data, kLayerNorm2dEps);
    input = normed.data();
  }
  std::vector<float> qkv(static_cast<size_t>(rows) * 3 * c);
  Linear(b.qkv, rows, c, 3 * c, input, 0.0f, qkv.data());
  if (b.qkv.bias.data != nullptr) AddBias(qkv.data(), rows, 3 * c, b.qkv.bias.data);
  std::vector<float> attended(static_cast<size_t>(rows) * c);
  Attention(qkv.data(), attended.data(), x.n, x.h * x.w, c, c / FastVitConfig::kHeadDim, /*causal=*/false);
  Linear(b.proj, rows, c, c, attended.data(), 1.0f, x.data.data());
  AddBias(x.data.data(), rows, c, b.proj.bias.data);
}

}  // namespace

Result<FastVitWeights> LoadFastVitWeights(WeightLoader& l, const ClipConfig& config) {
  const FastVitConfig& fv = config.vision.fastvit;
  const std::string t = "visual.trunk.";
  FastVitWeights w;
  if (l.Has(t + "stem.0.reparam_conv.weight")) {
    return Status::Unsupported(
        "re-parameterised FastViT checkpoint (reparam_conv tensors: timm's reparameterize_model output)",
        config.weights_file.string(),
        "the un-fused training-time form OpenCLIP loads and MobileCLIP releases (conv_kxk, "
        "conv_scale and identity branches; visalign folds them at load)");
  }
  const int c0 = fv.stages.front().dim;
  const ConvShape stem[] = {{3, c0, kStemKernel, 2, 1}, {c0, c0, kStemKernel, 2, c0}, {c0, c0, 1, 1, 1}};
  for (int i = 0; i < 3; ++i) {
    VISALIGN_ASSIGN_OR_RETURN(MobileOneWeights m, LoadMobileOne(l, t + "stem." + std::to_string(i), stem[i],
                                                                fv.stem_scale_branch, /*se=*/false));
    w.stem.push_back(std::move(m));
  }
  int prev = c0;
  for (size_t s = 0; s < fv.stages.size(); ++s) {
    const FastVitStageConfig& st = fv.stages[s];
    const std::string p = t + "stages." + std::to_string(s);
    FastVitStageWeights stage;
    stage.downsample = s > 0 || prev != st.dim;
    if (stage.downsample) {
      if (st.dim % prev != 0) {
        return Status::InvalidArgument(fmt::format("stage {} widens {} to {} channels", s, prev, st.dim),
                                       config.config_file.string(),
                                       "a multiple of the previous stage's width (grouped downsample)");
      }
      // ReparamLargeKernelConv: BN(7×7) + BN(3×3), groups = in, then SE?, GELU (lkc_use_act).
      const std::string lk = p + ".downsample.proj.0";
      TorchConv large(st.dim, prev, prev, kDownKernel, 2);
      VISALIGN_RETURN_IF_ERROR(AddConvBnBranch(l, lk + ".large_conv", kDownKernel, large));
      VISALIGN_RETURN_IF_ERROR(AddConvBnBranch(l, lk + ".small_conv", kDownSmallKernel, large));
      stage.down_large.conv = Lower(large);
      if (st.se_downsample) {
        stage.down_large.se = true;
        VISALIGN_ASSIGN_OR_RETURN(stage.down_large.se_weights,
                                  LoadSqueezeExcite(l, lk + ".se", st.dim, kLargeKernelSeRatio, 8));
      }
      VISALIGN_ASSIGN_OR_RETURN(stage.down_pointwise,
                                LoadMobileOne(l, p + ".downsample.proj.1", {st.dim, st.dim, 1, 1, 1},
                                              /*scale_branch=*/true, /*se=*/false));
    }
    if (st.pos_emb) {  // RepCPE: x + dw7×7(x) + bias
      stage.pos_emb = true;
      TorchConv pos(st.dim, st.dim, st.dim, kPosKernel, 1);
      VISALIGN_ASSIGN_OR_RETURN(Tensor pw, l.Get(p + ".pos_emb.pos_enc.weight", {st.dim, 1, kPosKernel, kPosKernel}));
      VISALIGN_ASSIGN_OR_RETURN(Tensor pb, l.Get(p + ".pos_emb.pos_enc.bias", {st.dim}));
      AddConvBranch(pos, pw.data, kPosKernel, nullptr, pb.data);
      AddIdentityBranch(pos, nullptr);
      stage.pos = LowerDepthwise(pos);
    }
    for (int j = 0; j < st.depth; ++j) {
      VISALIGN_ASSIGN_OR_RETURN(FastVitBlockWeights b, LoadBlock(l, fv, st, p + ".blocks." + std::to_string(j)));
      stage.blocks.push_back(std::move(b));
    }
    w.stages.push_back(std::move(stage));
    prev = st.dim;
  }
  if (fv.final_features % prev != 0) {
    return Status::InvalidArgument(fmt::format("final_conv {} from {} channels", fv.final_features, prev),
                                   config.config_file.string(), "a multiple of the last stage's width");
  }
  VISALIGN_ASSIGN_OR_RETURN(w.final_conv, LoadMobileOne(l, t + "final_conv", {prev, fv.final_features, 3, 1, prev},
                                                        /*scale_branch=*/true, /*se=*/true));
  VISALIGN_ASSIGN_OR_RETURN(w.head, l.Linear(t + "head.fc", config.embed_dim, fv.final_features, /*bias=*/true));
  return w;
}

Matrix EncodeFastVit(const ClipConfig& config, const FastVitWeights& w, const Matrix& pixels, const ForwardOptions& o) {
  const std::string t = "visual.trunk.";
  FeatureMap x = FeatureMapFromChw(pixels, config.vision.image_size);
  for (size_t i = 0; i < w.stem.size(); ++i) {
    x = RunMobileOne(w.stem[i], x);
    TraceMap(o, t + "stem." + std::to_string(i) + "_out", x);
  }
  for (size_t s = 0; s < w.stages.size(); ++s) {
    const FastVitStageWeights& stage = w.stages[s];
    const std::string p = t + "stages." + std::to_string(s);
    if (stage.downsample) {
      x = RunMobileOne(stage.down_large, x);
      TraceMap(o, p + ".downsample.proj.0_out", x);
      x = RunMobileOne(stage.down_pointwise, x);
      TraceMap(o, p + ".downsample_out", x);
    }
    if (stage.pos_emb) {
      x = DepthwiseConv2d(stage.pos, x);
      TraceMap(o, p + ".pos_emb_out", x);
    }
    for (size_t j = 0; j < stage.blocks.size(); ++j) {
      const FastVitBlockWeights& b = stage.blocks[j];
      const std::string bp = p + ".blocks." + std::to_string(j);
      if (b.attention) {
        RunAttention(b, x);
      } else {
        x = DepthwiseConv2d(b.repmixer, x);
        TraceMap(o, bp + ".token_mixer_out", x);
      }
      RunConvMlp(b, x);
      TraceMap(o, bp + "_out", x);
    }
  }
  x = RunMobileOne(w.final_conv, x);
  TraceMap(o, t + "final_conv_out", x);
  const std::vector<float> pooled = GlobalAveragePool(x);
  Trace(o, t + "head.global_pool_out", pooled.data(), pooled.size());
  const int e = config.embed_dim;
  Matrix out(x.n, e);
  Linear(w.head, x.n, x.c, e, pooled.data(), 0.0f, out.data.data());
  AddBias(out.data.data(), x.n, e, w.head.bias.data);
  return out;
}

}  // namespace visalign::clip
