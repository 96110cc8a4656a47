// The convolutional and hybrid vision towers' tensors (random_tensors.h): ModifiedResNet, timm
// ConvNeXt, ViTamin and FastViT MCi.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "clip/random_tensors.h"

namespace visalign::clip {
namespace {

// A MobileOneBlock's un-fused branches (timm fastvit.py): identity BatchNorm when in == out and
// stride 1, 1×1 conv_scale + BN when kernel > 1 and `scale_branch`, `conv_branches` k×k conv_kxk.i + BN.
void AddMobileOne(std::vector<RandomTensorSpec>& specs, const std::string& p, int64_t in, int64_t out, int64_t kernel,
                  int64_t stride, int64_t groups, bool scale_branch, int conv_branches = 1) {
  if (in == out && stride == 1) AddBatchNorm(specs, p + ".identity", in);
  if (kernel > 1 && scale_branch) {
    AddConv(specs, p + ".conv_scale.conv.weight", out, in / groups, 1);
    AddBatchNorm(specs, p + ".conv_scale.bn", out);
  }
  for (int i = 0; i < conv_branches; ++i) {
    const std::string b = p + ".conv_kxk." + std::to_string(i);
    AddConv(specs, b + ".conv.weight", out, in / groups, kernel);
    AddBatchNorm(specs, b + ".bn", out);
  }
}

void AddSqueezeExcite(std::vector<RandomTensorSpec>& specs, const std::string& p, int64_t c, int64_t reduced) {
  AddBiasedConv(specs, p + ".fc1", reduced, c, 1);
  AddBiasedConv(specs, p + ".fc2", c, reduced, 1);
}

}  // namespace

// ModifiedResNet (modified_resnet.py); num_batches_tracked is not written (the forward pass does not use it).
void AddResNet(std::vector<RandomTensorSpec>& specs, const ClipConfig& c) {
  constexpr int64_t kExpansion = 4;
  const ResNetConfig& r = c.vision.resnet;
  const int64_t half = r.width / 2;
  AddConv(specs, "visual.conv1.weight", half, 3, 3);
  AddBatchNorm(specs, "visual.bn1", half);
  AddConv(specs, "visual.conv2.weight", half, half, 3);
  AddBatchNorm(specs, "visual.bn2", half);
  AddConv(specs, "visual.conv3.weight", r.width, half, 3);
  AddBatchNorm(specs, "visual.bn3", r.width);
  int64_t inplanes = r.width;
  for (size_t s = 0; s < r.layers.size(); ++s) {
    const int64_t planes = static_cast<int64_t>(r.width) << s;
    for (int i = 0; i < r.layers[s]; ++i) {
      const std::string p = "visual.layer" + std::to_string(s + 1) + "." + std::to_string(i) + ".";
      AddConv(specs, p + "conv1.weight", planes, inplanes, 1);
      AddBatchNorm(specs, p + "bn1", planes);
      AddConv(specs, p + "conv2.weight", planes, planes, 3);
      AddBatchNorm(specs, p + "bn2", planes);
      AddConv(specs, p + "conv3.weight", kExpansion * planes, planes, 1);
      AddBatchNorm(specs, p + "bn3", kExpansion * planes);
      if ((s > 0 && i == 0) || inplanes != kExpansion * planes) {
        AddConv(specs, p + "downsample.0.weight", kExpansion * planes, inplanes, 1);
        AddBatchNorm(specs, p + "downsample.1", kExpansion * planes);
      }
      inplanes = kExpansion * planes;
    }
  }
  const int64_t w = r.feature_width();
  const int64_t grid = c.vision.image_size / 32;
  specs.push_back({{"visual.attnpool.positional_embedding", {grid * grid + 1, w}}, Uniform(w)});
  for (const char* proj : {"q_proj", "k_proj", "v_proj"})
    AddLinear(specs, std::string("visual.attnpool.") + proj, w, w, true);
  AddLinear(specs, "visual.attnpool.c_proj", c.embed_dim, w, true);
}

// timm ConvNeXt (convnext.py) and OpenCLIP's linear head: weights with variance 1 / fan_in, layer
// scale around 1 (timm initialises it to 1e-6, which would make every block nearly the identity).
void AddConvNext(std::vector<RandomTensorSpec>& specs, const ClipConfig& c) {
  const ConvNextConfig& cn = c.vision.convnext;
  constexpr int64_t kStemPatch = 4;
  constexpr int64_t kDownsample = 2;
  constexpr int64_t kDepthwise = 7;
  constexpr int64_t kMlpRatio = 4;
  specs.push_back(
      {{"visual.trunk.stem.0.weight", {cn.dims[0], 3, kStemPatch, kStemPatch}}, Uniform(3 * kStemPatch * kStemPatch)});
  specs.push_back({{"visual.trunk.stem.0.bias", {cn.dims[0]}}, Bias()});
  AddNorm(specs, "visual.trunk.stem.1", cn.dims[0]);
  for (size_t s = 0; s < cn.depths.size(); ++s) {
    const std::string p = "visual.trunk.stages." + std::to_string(s) + ".";
    const int64_t d = cn.dims[s];
    if (s > 0) {
      const int64_t prev = cn.dims[s - 1];
      AddNorm(specs, p + "downsample.0", prev);
      specs.push_back({{p + "downsample.1.weight", {d, prev, kDownsample, kDownsample}},
                       Uniform(kDownsample * kDownsample * prev)});
      specs.push_back({{p + "downsample.1.bias", {d}}, Bias()});
    }
    for (int j = 0; j < cn.depths[s]; ++j) {
      const std::string b = p + "blocks." + std::to_string(j) + ".";
      specs.push_back({{b + "conv_dw.weight", {d, 1, kDepthwise, kDepthwise}}, Uniform(kDepthwise * kDepthwise)});
      specs.push_back({{b + "conv_dw.bias", {d}}, Bias()});
      AddNorm(specs, b + "norm", d);
      AddLinear(specs, b + "mlp.fc1", kMlpRatio * d, d, true);
      AddLinear(specs, b + "mlp.fc2", d, kMlpRatio * d, true);
      specs.push_back({{b + "gamma", {d}}, Gain()});
    }
  }
  AddNorm(specs, "visual.trunk.head.norm", cn.dims.back());
  AddLinear(specs, "visual.head.proj", c.embed_dim, cn.dims.back(), false);
}

// timm ViTamin (vitamin.py) and OpenCLIP's linear head, every weight with variance 1 / fan_in.
void AddVitamin(std::vector<RandomTensorSpec>& specs, const ClipConfig& c) {
  const VisionConfig& v = c.vision;
  const VitaminConfig& vt = v.vitamin;
  constexpr int64_t kKernel = 3;
  constexpr int64_t kMbConvExpansion = 4;
  const std::string bb = "visual.trunk.patch_embed.backbone.";
  AddBiasedConv(specs, bb + "stem.conv1", vt.stem_width, 3, kKernel);
  AddNorm(specs, bb + "stem.norm1", vt.stem_width);
  AddBiasedConv(specs, bb + "stem.conv2", vt.stem_width, vt.stem_width, kKernel);
  int64_t in = vt.stem_width;
  for (size_t s = 0; s < vt.stage_widths.size(); ++s) {
    const int64_t out = vt.stage_widths[s];
    const int64_t mid = kMbConvExpansion * out;  // make_divisible(4·out, 8): the widths are even
    for (int j = 0; j < vt.stage_depths[s]; ++j) {
      const std::string p = bb + "stages." + std::to_string(s) + "." + std::to_string(j) + ".";
      AddNorm(specs, p + "pre_norm", in);
      if (j == 0 && in != out) AddBiasedConv(specs, p + "shortcut.expand", out, in, 1);
      AddBiasedConv(specs, p + "conv1_1x1", mid, in, 1);
      AddBiasedConv(specs, p + "conv2_kxk", mid, 1, kKernel);
      AddBiasedConv(specs, p + "conv3_1x1", out, mid, 1);
      in = out;
    }
  }
  AddNorm(specs, bb + "pool.norm", in);
  AddBiasedConv(specs, bb + "pool.proj", v.width, in, kKernel);
  const int64_t w = v.width;
  for (int i = 0; i < v.layers; ++i) {
    const std::string p = "visual.trunk.blocks." + std::to_string(i) + ".";
    AddNorm(specs, p + "norm1", w);
    AddLinear(specs, p + "attn.qkv", 3 * w, w, true);
    AddLinear(specs, p + "attn.proj", w, w, true);
    AddNorm(specs, p + "norm2", w);
    AddNorm(specs, p + "mlp.norm", w);
    AddLinear(specs, p + "mlp.w0", v.mlp_width, w, true);
    AddLinear(specs, p + "mlp.w1", v.mlp_width, w, true);
    AddLinear(specs, p + "mlp.w2", w, v.mlp_width, true);
  }
  if (vt.pos_embed) {
    const int64_t tokens = static_cast<int64_t>(v.grid()) * v.grid();
    specs.push_back({{"visual.trunk.pos_embed", {1, tokens, w}}, Uniform(w)});
  }
  AddNorm(specs, "visual.trunk.fc_norm", w);
  AddLinear(specs, "visual.head.proj", c.embed_dim, w, false);
}

// timm FastViT MCi (fastvit.py) in its training-time form, as MobileCLIP checkpoints store it; layer
// scales small (timm's 1e-5 would make every block nearly the identity).
void AddFastVit(std::vector<RandomTensorSpec>& specs, const ClipConfig& c) {
  const FastVitConfig& fv = c.vision.fastvit;
  const std::string t = "visual.trunk.";
  const RandomInit layer_scale = Bias();  // small: the biases' scale
  const int64_t c0 = fv.stages.front().dim;
  AddMobileOne(specs, t + "stem.0", 3, c0, 3, 2, 1, fv.stem_scale_branch);
  AddMobileOne(specs, t + "stem.1", c0, c0, 3, 2, c0, fv.stem_scale_branch);
  AddMobileOne(specs, t + "stem.2", c0, c0, 1, 1, 1, true);
  int64_t prev = c0;
  for (size_t s = 0; s < fv.stages.size(); ++s) {
    const FastVitStageConfig& st = fv.stages[s];
    const int64_t d = st.dim;
    const std::string p = t + "stages." + std::to_string(s);
    if (s > 0 || prev != d) {
      const std::string lk = p + ".downsample.proj.0";
      for (const auto& [branch, k] : {std::pair{".large_conv", 7}, std::pair{".small_conv", 3}}) {
        AddConv(specs, lk + branch + ".conv.weight", d, 1, k);
        AddBatchNorm(specs, lk + branch + ".bn", d);
      }
      if (st.se_downsample) AddSqueezeExcite(specs, lk + ".se", d, std::max<int64_t>(8, (d / 4 + 4) / 8 * 8));
      AddMobileOne(specs, p + ".downsample.proj.1", d, d, 1, 1, 1, true);
    }
    if (st.pos_emb) {
      AddBiasedConv(specs, p + ".pos_emb.pos_enc", d, 1, 7);
    }
    const auto hidden = static_cast<int64_t>(d * st.mlp_ratio);
    for (int j = 0; j < st.depth; ++j) {
      const std::string b = p + ".blocks." + std::to_string(j);
      if (st.attention) {
        if (fv.attention_layer_norm) {
          AddNorm(specs, b + ".norm", d);
        } else {
          AddBatchNorm(specs, b + ".norm", d);
        }
        AddLinear(specs, b + ".token_mixer.qkv", 3 * d, d, false);
        AddLinear(specs, b + ".token_mixer.proj", d, d, true);
        specs.push_back({{b + ".layer_scale_1.gamma", {d, 1, 1}}, layer_scale});
        specs.push_back({{b + ".layer_scale_2.gamma", {d, 1, 1}}, layer_scale});
      } else {
        AddMobileOne(specs, b + ".token_mixer.norm", d, d, 3, 1, d, false, 0);
        AddMobileOne(specs, b + ".token_mixer.mixer", d, d, 3, 1, d, true);
        specs.push_back({{b + ".token_mixer.layer_scale.gamma", {d, 1, 1}}, layer_scale});
        specs.push_back({{b + ".layer_scale.gamma", {d, 1, 1}}, layer_scale});
      }
      AddConv(specs, b + ".mlp.conv.conv.weight", d, 1, 7);
      AddBatchNorm(specs, b + ".mlp.conv.bn", d);
      AddBiasedConv(specs, b + ".mlp.fc1", hidden, d, 1);
      AddBiasedConv(specs, b + ".mlp.fc2", d, hidden, 1);
    }
    prev = d;
  }
  AddMobileOne(specs, t + "final_conv", prev, fv.final_features, 3, 1, prev, true);
  AddSqueezeExcite(specs, t + "final_conv.se", fv.final_features, (fv.final_features + 8) / 16);
  AddLinear(specs, t + "head.fc", c.embed_dim, fv.final_features, true);
}

}  // namespace visalign::clip
