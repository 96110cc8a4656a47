// FastViT MCi options the mobileclip-s-tiny fixture (fastvit_mci1-shaped) does not exercise, checked
// against an independent reference: a double-precision forward pass written from timm's module
// definitions (fastvit.py), running every training-time branch as stored — MobileOne identity /
// conv_scale / conv_kxk BatchNorms, RepMixer mixer − norm, RepCPE, the large/small kernel pair —
// with direct grouped convolutions, so it shares nothing with the folded C++ tower. Models are
// random-weight (RandomTensorSpecs: the same tensors as timm's state dict, pinned against the
// fixtures in random_model_test.cc) tiny versions of fastvit_mci0 (BatchNorm attention norm folded
// into qkv, SE downsamples, stem scale branches) and fastvit_mci3 (five stages, two attention
// stages with RepCPE, LayerNorm2d attention norm, stem without scale branches, channel multiplier 1
// in a downsample).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "clip/fixture_testing.h"
#include "clip/random_model.h"
#include "clip/safetensors.h"
#include "testing/dirs.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"

namespace visalign::clip {
namespace {

// NCHW double map of one image.
struct Map {
  int c = 0, h = 0, w = 0;
  std::vector<double> v;
  Map() = default;
  Map(int c_, int h_, int w_) : c(c_), h(h_), w(w_), v(static_cast<size_t>(c_) * h_ * w_, 0.0) {}
  double& at(int ch, int y, int x) { return v[(static_cast<size_t>(ch) * h + y) * w + x]; }
  double at(int ch, int y, int x) const { return v[(static_cast<size_t>(ch) * h + y) * w + x]; }
};

Map operator+(Map a, const Map& b) {
  for (size_t i = 0; i < a.v.size(); ++i) a.v[i] += b.v[i];
  return a;
}

class Reference {
 public:
  Reference(const SafetensorsFile& file, const FastVitConfig& fv) : fv_(fv) {
    for (const TensorInfo& t : file.tensors()) {
      if (t.dtype != DType::kF32) continue;
      const std::vector<float> f = SafetensorsFile::ToFloat(t, "reference").value();
      w_[t.name].assign(f.begin(), f.end());
    }
  }

  const std::vector<double>& W(const std::string& name) const {
    auto it = w_.find(name);
    EXPECT_NE(it, w_.end()) << name;
    return it->second;
  }
  bool Has(const std::string& name) const { return w_.count(name) > 0; }

  // torch.nn.Conv2d, zero padding k / 2.
  Map Conv(const Map& x, const std::string& name, int out, int k, int stride, int groups, bool bias) const {
    const std::vector<double>& wt = W(name + ".weight");
    const int ipg = x.c / groups, opg = out / groups, pad = k / 2;
    Map y(out, (x.h + 2 * pad - k) / stride + 1, (x.w + 2 * pad - k) / stride + 1);
    for (int o = 0; o < out; ++o) {
      const int g = o / opg;
      for (int oy = 0; oy < y.h; ++oy) {
        for (int ox = 0; ox < y.w; ++ox) {
          double s = bias ? W(name + ".bias")[o] : 0.0;
          for (int i = 0; i < ipg; ++i) {
            for (int ky = 0; ky < k; ++ky) {
              for (int kx = 0; kx < k; ++kx) {
                const int iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
                if (iy < 0 || iy >= x.h || ix < 0 || ix >= x.w) continue;
                s += wt[((static_cast<size_t>(o) * ipg + i) * k + ky) * k + kx] * x.at(g * ipg + i, iy, ix);
              }
            }
          }
          y.at(o, oy, ox) = s;
        }
      }
    }
    return y;
  }

  Map BatchNorm(Map x, const std::string& name) const {
    for (int ch = 0; ch < x.c; ++ch) {
      const double s = W(name + ".weight")[ch] / std::sqrt(W(name + ".running_var")[ch] + 1e-5);
      for (int p = 0; p < x.h * x.w; ++p) {
        double& v = x.v[static_cast<size_t>(ch) * x.h * x.w + p];
        v = (v - W(name + ".running_mean")[ch]) * s + W(name + ".bias")[ch];
      }
    }
    return x;
  }

  static Map Gelu(Map x) {
    for (double& v : x.v) v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    return x;
  }

  Map SqueezeExcite(Map x, const std::string& p) const {
    const int rd = static_cast<int>(W(p + ".fc1.bias").size());
    std::vector<double> mean(x.c, 0.0), hidden(rd), gate(x.c);
    for (int ch = 0; ch < x.c; ++ch) {
      for (int p2 = 0; p2 < x.h * x.w; ++p2) mean[ch] += x.v[static_cast<size_t>(ch) * x.h * x.w + p2] / (x.h * x.w);
    }
    for (int r = 0; r < rd; ++r) {
      double s = W(p + ".fc1.bias")[r];
      for (int ch = 0; ch < x.c; ++ch) s += W(p + ".fc1.weight")[static_cast<size_t>(r) * x.c + ch] * mean[ch];
      hidden[r] = std::max(s, 0.0);
    }
    for (int ch = 0; ch < x.c; ++ch) {
      double s = W(p + ".fc2.bias")[ch];
      for (int r = 0; r < rd; ++r) s += W(p + ".fc2.weight")[static_cast<size_t>(ch) * rd + r] * hidden[r];
      gate[ch] = 1.0 / (1.0 + std::exp(-s));
    }
    for (int ch = 0; ch < x.c; ++ch) {
      for (int p2 = 0; p2 < x.h * x.w; ++p2) x.v[static_cast<size_t>(ch) * x.h * x.w + p2] *= gate[ch];
    }
    return x;
  }

  // timm MobileOneBlock.forward (training-time branches): act(se(identity + scale + Σ kxk)).
  Map MobileOne(const Map& x, const std::string& p, int out, int k, int stride, int groups, bool act) const {
    Map y(out, (x.h - 1) / stride + 1, (x.w - 1) / stride + 1);
    if (Has(p + ".identity.weight")) y = y + BatchNorm(x, p + ".identity");
    if (Has(p + ".conv_scale.conv.weight"))
      y = y + BatchNorm(Conv(x, p + ".conv_scale.conv", out, 1, stride, groups, false), p + ".conv_scale.bn");
    for (int i = 0; Has(p + ".conv_kxk." + std::to_string(i) + ".conv.weight"); ++i) {
      const std::string b = p + ".conv_kxk." + std::to_string(i);
      y = y + BatchNorm(Conv(x, b + ".conv", out, k, stride, groups, false), b + ".bn");
    }
    if (Has(p + ".se.fc1.weight")) y = SqueezeExcite(y, p + ".se");
    return act ? Gelu(y) : y;
  }

  Map ConvMlp(const Map& x, const std::string& p) const {
    const int hidden = static_cast<int>(W(p + ".fc1.bias").size());
    Map h = BatchNorm(Conv(x, p + ".conv.conv", x.c, 7, 1, x.c, false), p + ".conv.bn");
    h = Gelu(Conv(h, p + ".fc1", hidden, 1, 1, 1, true));
    return Conv(h, p + ".fc2", x.c, 1, 1, 1, true);
  }

  Map LayerScale(Map x, const std::string& name) const {
    for (int ch = 0; ch < x.c; ++ch) {
      for (int p = 0; p < x.h * x.w; ++p) x.v[static_cast<size_t>(ch) * x.h * x.w + p] *= W(name)[ch];
    }
    return x;
  }

  Map LayerNorm2d(Map x, const std::string& name) const {
    for (int p = 0; p < x.h * x.w; ++p) {
      double mean = 0, var = 0;
      for (int ch = 0; ch < x.c; ++ch) mean += x.v[static_cast<size_t>(ch) * x.h * x.w + p] / x.c;
      for (int ch = 0; ch < x.c; ++ch) var += std::pow(x.v[static_cast<size_t>(ch) * x.h * x.w + p] - mean, 2) / x.c;
      for (int ch = 0; ch < x.c; ++ch) {
        double& v = x.v[static_cast<size_t>(ch) * x.h * x.w + p];
        v = (v - mean) / std::sqrt(var + 1e-5) * W(name + ".weight")[ch] + W(name + ".bias")[ch];
      }
    }
    return x;
  }

  // timm Attention on the flattened H·W tokens: qkv without bias, heads of 32, proj with bias.
  Map Attention(const Map& x, const std::string& p) const {
    const int c = x.c, n = x.h * x.w, hd = FastVitConfig::kHeadDim, heads = c / hd;
    std::vector<double> qkv(static_cast<size_t>(n) * 3 * c, 0.0), out(static_cast<size_t>(n) * c, 0.0);
    for (int t = 0; t < n; ++t) {
      for (int o = 0; o < 3 * c; ++o) {
        for (int i = 0; i < c; ++i)
          qkv[static_cast<size_t>(t) * 3 * c + o] +=
              W(p + ".qkv.weight")[static_cast<size_t>(o) * c + i] * x.v[static_cast<size_t>(i) * n + t];
      }
    }
    for (int h = 0; h < heads; ++h) {
      for (int t = 0; t < n; ++t) {
        std::vector<double> score(n);
        double mx = -1e300, sum = 0;
        for (int u = 0; u < n; ++u) {
          double s = 0;
          for (int d = 0; d < hd; ++d)
            s +=
                qkv[static_cast<size_t>(t) * 3 * c + h * hd + d] * qkv[static_cast<size_t>(u) * 3 * c + c + h * hd + d];
          score[u] = s / std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, score[u]);
        }
        for (double& s : score) sum += (s = std::exp(s - mx));
        for (int d = 0; d < hd; ++d) {
          double acc = 0;
          for (int u = 0; u < n; ++u) acc += score[u] / sum * qkv[static_cast<size_t>(u) * 3 * c + 2 * c + h * hd + d];
          out[static_cast<size_t>(t) * c + h * hd + d] = acc;
        }
      }
    }
    Map y(c, x.h, x.w);
    for (int t = 0; t < n; ++t) {
      for (int o = 0; o < c; ++o) {
        double s = W(p + ".proj.bias")[o];
        for (int i = 0; i < c; ++i)
          s += W(p + ".proj.weight")[static_cast<size_t>(o) * c + i] * out[static_cast<size_t>(t) * c + i];
        y.v[static_cast<size_t>(o) * n + t] = s;
      }
    }
    return y;
  }

  std::vector<double> Forward(Map x, int embed_dim) const {
    const std::string t = "visual.trunk.";
    const int c0 = fv_.stages[0].dim;
    x = MobileOne(x, t + "stem.0", c0, 3, 2, 1, true);
    x = MobileOne(x, t + "stem.1", c0, 3, 2, c0, true);
    x = MobileOne(x, t + "stem.2", c0, 1, 1, 1, true);
    int prev = c0;
    for (size_t s = 0; s < fv_.stages.size(); ++s) {
      const FastVitStageConfig& st = fv_.stages[s];
      const std::string p = t + "stages." + std::to_string(s);
      if (s > 0) {  // PatchEmbed: ReparamLargeKernelConv (BN(7×7) + BN(3×3), SE, GELU), MobileOne 1×1
        const std::string lk = p + ".downsample.proj.0";
        Map y = BatchNorm(Conv(x, lk + ".large_conv.conv", st.dim, 7, 2, prev, false), lk + ".large_conv.bn") +
                BatchNorm(Conv(x, lk + ".small_conv.conv", st.dim, 3, 2, prev, false), lk + ".small_conv.bn");
        if (Has(lk + ".se.fc1.weight")) y = SqueezeExcite(y, lk + ".se");
        x = MobileOne(Gelu(y), p + ".downsample.proj.1", st.dim, 1, 1, 1, true);
      }
      if (st.pos_emb) x = x + Conv(x, p + ".pos_emb.pos_enc", st.dim, 7, 1, st.dim, true);
      for (int j = 0; j < st.depth; ++j) {
        const std::string b = p + ".blocks." + std::to_string(j);
        if (st.attention) {
          const Map n = Has(b + ".norm.running_var") ? BatchNorm(x, b + ".norm") : LayerNorm2d(x, b + ".norm");
          x = x + LayerScale(Attention(n, b + ".token_mixer"), b + ".layer_scale_1.gamma");
          x = x + LayerScale(ConvMlp(x, b + ".mlp"), b + ".layer_scale_2.gamma");
        } else {  // RepMixer: x + γ·(mixer(x) − norm(x))
          Map diff = MobileOne(x, b + ".token_mixer.mixer", st.dim, 3, 1, st.dim, false);
          const Map norm = MobileOne(x, b + ".token_mixer.norm", st.dim, 3, 1, st.dim, false);
          for (size_t i = 0; i < diff.v.size(); ++i) diff.v[i] -= norm.v[i];
          x = x + LayerScale(diff, b + ".token_mixer.layer_scale.gamma");
          x = x + LayerScale(ConvMlp(x, b + ".mlp"), b + ".layer_scale.gamma");
        }
      }
      prev = st.dim;
    }
    x = MobileOne(x, t + "final_conv", fv_.final_features, 3, 1, prev, true);
    std::vector<double> out(embed_dim);
    for (int e = 0; e < embed_dim; ++e) {
      double s = W(t + "head.fc.bias")[e];
      for (int ch = 0; ch < x.c; ++ch) {
        double mean = 0;
        for (int p = 0; p < x.h * x.w; ++p) mean += x.v[static_cast<size_t>(ch) * x.h * x.w + p] / (x.h * x.w);
        s += W(t + "head.fc.weight")[static_cast<size_t>(e) * x.c + ch] * mean;
      }
      out[e] = s;
    }
    return out;
  }

 private:
  const FastVitConfig& fv_;
  std::map<std::string, std::vector<double>> w_;
};

struct VariantCase {
  const char* timm_model_name;
  std::vector<int> layers, dims;
};

class FastVitVariantTest : public ::testing::TestWithParam<VariantCase> {};

TEST_P(FastVitVariantTest, MatchesTheUnfusedReference) {
  setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0);
  constexpr int kImage = 96;
  constexpr int kEmbed = 16;
  const VariantCase& v = GetParam();
  const nlohmann::json config = {
      {"model_cfg",
       {{"embed_dim", kEmbed},
        {"custom_text", true},
        {"vision_cfg",
         {{"timm_model_name", v.timm_model_name},
          {"timm_pool", "avg"},
          {"timm_proj", nullptr},
          {"image_size", kImage},
          {"timm_model_kwargs", {{"layers", v.layers}, {"embed_dims", v.dims}}}}},
        {"text_cfg", {{"context_length", 77}, {"vocab_size", 49408}, {"width", 16}, {"heads", 2}, {"layers", 1}}}}},
      {"preprocess_cfg", {{"size", kImage}, {"mean", {0, 0, 0}}, {"std", {1, 1, 1}}, {"interpolation", "bilinear"}}}};
  const ClipConfig parsed = ParseOpenClipConfigJson(config.dump(), "variant").value();
  visalign::testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "open_clip_config.json", config.dump()).ok());
  const std::vector<RandomTensorSpec> specs = RandomTensorSpecs(parsed);
  std::map<std::string, const RandomTensorSpec*> by_name;
  std::vector<TensorShape> shapes;
  for (const RandomTensorSpec& s : specs) {
    by_name[s.tensor.name] = &s;
    shapes.push_back(s.tensor);
  }
  ASSERT_TRUE(WriteSafetensors(dir / "open_clip_model.safetensors", shapes, [&](const TensorShape& t, float* values) {
                FillRandomTensor(*by_name.at(t.name), /*seed=*/7, values);
              }).ok());
  Result<ClipModel> model = LoadClipModel(dir.path());
  ASSERT_TRUE(model.ok()) << model.status().ToString();

  constexpr int kImages = 2;
  Matrix pixels(kImages, 3 * kImage * kImage);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (float& p : pixels.data) p = unit(rng);
  SetThreadCount(2);
  const Matrix got = model->EncodePixels(pixels).value();
  SetThreadCount(1);

  const SafetensorsFile file = SafetensorsFile::Open(dir / "open_clip_model.safetensors").value();
  const Reference reference(file, parsed.vision.fastvit);
  for (int i = 0; i < kImages; ++i) {
    Map x(3, kImage, kImage);
    for (size_t k = 0; k < x.v.size(); ++k) x.v[k] = pixels.row(i)[k];
    const std::vector<double> want = reference.Forward(x, kEmbed);
    double scale = 1.0;
    for (double e : want) scale = std::max(scale, std::abs(e));
    for (int e = 0; e < kEmbed; ++e) EXPECT_NEAR(got.at(i, e), want[e], 1e-5 * scale) << "image " << i << " dim " << e;
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, FastVitVariantTest,
                         ::testing::Values(VariantCase{"fastvit_mci0", {1, 1, 1, 1}, {8, 16, 32, 64}},
                                           VariantCase{"fastvit_mci3", {1, 1, 1, 1, 1}, {8, 16, 32, 32, 64}}),
                         [](const ::testing::TestParamInfo<VariantCase>& info) {
                           return std::string(info.param.timm_model_name);
                         });

TEST(FastVitWeights, AFusedCheckpointIsRefusedNamingTheForm) {
  setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0);
  visalign::testing::TempDir dir;
  const std::filesystem::path fixture = testing::FixtureDir("mobileclip-s-tiny");
  std::filesystem::copy_file(fixture / "config.json", dir / "open_clip_config.json");
  const SafetensorsFile file = SafetensorsFile::Open(fixture / "model.safetensors").value();
  std::vector<NamedTensor> tensors;
  for (const TensorInfo& t : file.tensors()) {
    if (t.dtype != DType::kF32) continue;
    std::string name = t.name;
    // timm's reparameterize() replaces the stem's branches by one reparam_conv.
    if (name == "visual.trunk.stem.0.conv_kxk.0.conv.weight") name = "visual.trunk.stem.0.reparam_conv.weight";
    tensors.push_back({name, t.shape, SafetensorsFile::ToFloat(t, "fixture").value()});
  }
  ASSERT_TRUE(WriteSafetensors(dir / "open_clip_model.safetensors", tensors).ok());
  const Result<ClipModel> model = LoadClipModel(dir.path());
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(model.status().ToString().find("re-parameterised"), std::string::npos) << model.status().ToString();
  EXPECT_NE(model.status().ToString().find("un-fused"), std::string::npos) << model.status().ToString();
}

}  // namespace
}  // namespace visalign::clip
