// The timm trunks that have no fixture of their own, checked on fixtures derived in the test:
// * EVA02-E (`eva02_enormous_patch14_clip_224`, residual post-norm blocks x + norm1(attn(x)),
//   x + norm2(mlp(x)); otherwise EVA01's fused qkv with q/v biases and GELU MLP): eva01-tiny's
//   weights under an EVA02-E config (its sizes through timm_model_kwargs), against an independent
//   double-precision forward of that block written here from timm's EvaBlockPostNorm.
// * timm's CLIP-layout VisionTransformer (`vit_large_patch14_clip_224`, MobileCLIP2-L-14: patch conv
//   without bias, class token, norm_pre, pre-norm blocks with fused qkv, final norm, class token,
//   head with bias): clip-tiny's OpenCLIP VisionTransformer renamed to timm's names (ln_pre -> norm_pre,
//   ln_post -> norm, proj -> head with a zero bias) must give clip-tiny's own expected embeddings: the
//   same computation, so visalign runs it on the same path.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <map>
#include <regex>

#include "clip/fixture_testing.h"
#include "clip/safetensors.h"
#include "testing/dirs.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"

namespace visalign::clip {
namespace {

using testing::MaxAbsDiff;

constexpr float kUnnormalizedTolerance = 1e-4f;
constexpr float kNormalizedTolerance = 1e-5f;

// Tensors of a fixture's model file as doubles by name.
using Tensors = std::map<std::string, std::pair<std::vector<int64_t>, std::vector<double>>>;
Tensors ReadTensors(const SafetensorsFile& file) {
  Tensors out;
  for (const TensorInfo& t : file.tensors()) {
    const std::vector<float> v = SafetensorsFile::ToFloat(t, t.name).value();
    out[t.name] = {t.shape, std::vector<double>(v.begin(), v.end())};
  }
  return out;
}

using Rows = std::vector<std::vector<double>>;

// y = x Wᵀ + b for W [out, in].
Rows LinearRef(const Rows& x, const std::vector<double>& w, const std::vector<double>* b, size_t out) {
  Rows y(x.size(), std::vector<double>(out, 0.0));
  for (size_t r = 0; r < x.size(); ++r) {
    for (size_t o = 0; o < out; ++o) {
      double s = b != nullptr ? (*b)[o] : 0.0;
      for (size_t i = 0; i < x[r].size(); ++i) s += x[r][i] * w[o * x[r].size() + i];
      y[r][o] = s;
    }
  }
  return y;
}

Rows LayerNormRef(const Rows& x, const std::vector<double>& g, const std::vector<double>& b, double eps) {
  Rows y = x;
  for (auto& row : y) {
    double mean = 0.0, var = 0.0;
    for (double v : row) mean += v;
    mean /= static_cast<double>(row.size());
    for (double v : row) var += (v - mean) * (v - mean);
    var /= static_cast<double>(row.size());
    for (size_t c = 0; c < row.size(); ++c) row[c] = (row[c] - mean) / std::sqrt(var + eps) * g[c] + b[c];
  }
  return y;
}

// timm's EVA02-E tower on one image (CHW pixels of S x S), in double: EVA01's embedding, blocks
// x + norm1(attn(x)), x + norm2(fc2(gelu(fc1(x)))), final norm, class token, head.
std::vector<double> Eva02EReference(const Tensors& t, const float* pixels, int image, int patch, int width, int heads,
                                    int depth) {
  const auto& P = [&](const std::string& n) -> const std::vector<double>& { return t.at("visual.trunk." + n).second; };
  const double eps = 1e-6;
  const int grid = image / patch;
  Rows x(static_cast<size_t>(grid * grid + 1), std::vector<double>(width, 0.0));
  for (int c = 0; c < width; ++c) x[0][c] = P("cls_token")[c] + P("pos_embed")[c];
  for (int k = 0; k < grid * grid; ++k) {
    for (int o = 0; o < width; ++o) {
      double s = P("patch_embed.proj.bias")[o];
      for (int ch = 0; ch < 3; ++ch) {
        for (int ky = 0; ky < patch; ++ky) {
          for (int kx = 0; kx < patch; ++kx) {
            const int y = (k / grid) * patch + ky, xx = (k % grid) * patch + kx;
            s += P("patch_embed.proj.weight")[((static_cast<size_t>(o) * 3 + ch) * patch + ky) * patch + kx] *
                 pixels[(static_cast<size_t>(ch) * image + y) * image + xx];
          }
        }
      }
      x[k + 1][o] = s + P("pos_embed")[static_cast<size_t>(k + 1) * width + o];
    }
  }
  const int d = width / heads;
  for (int i = 0; i < depth; ++i) {
    const std::string b = "blocks." + std::to_string(i) + ".";
    std::vector<double> qkv_bias(3 * width, 0.0);  // q_bias | 0 | v_bias
    for (int c = 0; c < width; ++c) {
      qkv_bias[c] = P(b + "attn.q_bias")[c];
      qkv_bias[2 * width + c] = P(b + "attn.v_bias")[c];
    }
    const Rows qkv = LinearRef(x, P(b + "attn.qkv.weight"), &qkv_bias, 3 * width);
    Rows attn(x.size(), std::vector<double>(width, 0.0));
    for (int h = 0; h < heads; ++h) {
      for (size_t q = 0; q < x.size(); ++q) {
        std::vector<double> p(x.size());
        double max_score = -1e300, sum = 0.0;
        for (size_t k = 0; k < x.size(); ++k) {
          double s = 0.0;
          for (int e = 0; e < d; ++e) s += qkv[q][h * d + e] * qkv[k][width + h * d + e];
          p[k] = s / std::sqrt(static_cast<double>(d));
          max_score = std::max(max_score, p[k]);
        }
        for (double& v : p) sum += (v = std::exp(v - max_score));
        for (size_t k = 0; k < x.size(); ++k) {
          for (int e = 0; e < d; ++e) attn[q][h * d + e] += p[k] / sum * qkv[k][2 * width + h * d + e];
        }
      }
    }
    const Rows a = LayerNormRef(LinearRef(attn, P(b + "attn.proj.weight"), &P(b + "attn.proj.bias"), width),
                                P(b + "norm1.weight"), P(b + "norm1.bias"), eps);
    for (size_t r = 0; r < x.size(); ++r) {
      for (int c = 0; c < width; ++c) x[r][c] += a[r][c];
    }
    const size_t hidden = P(b + "mlp.fc1.bias").size();
    Rows h = LinearRef(x, P(b + "mlp.fc1.weight"), &P(b + "mlp.fc1.bias"), hidden);
    for (auto& row : h) {
      for (double& v : row) v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    }
    const Rows m = LayerNormRef(LinearRef(h, P(b + "mlp.fc2.weight"), &P(b + "mlp.fc2.bias"), width),
                                P(b + "norm2.weight"), P(b + "norm2.bias"), eps);
    for (size_t r = 0; r < x.size(); ++r) {
      for (int c = 0; c < width; ++c) x[r][c] += m[r][c];
    }
  }
  const Rows cls = LayerNormRef({x[0]}, P("norm.weight"), P("norm.bias"), eps);
  return LinearRef(cls, P("head.weight"), &P("head.bias"), P("head.bias").size())[0];
}

class DerivedTimmTrunk : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0); }
  // dir/open_clip_config.json = `config`, the weights linked from `fixture` or written by the caller.
  void WriteConfig(const nlohmann::json& config) {
    ASSERT_TRUE(WriteFileAtomic(dir_ / "open_clip_config.json", config.dump()).ok());
  }
  visalign::testing::TempDir dir_;
};

TEST_F(DerivedTimmTrunk, Eva02EPostNormBlocksMatchAnIndependentForward) {
  nlohmann::json config = testing::ReadFixtureJson("config.json", "eva01-tiny");
  nlohmann::json& vision = config["model_cfg"]["vision_cfg"];
  vision["timm_model_name"] = "eva02_enormous_patch14_clip_224";
  vision["timm_model_kwargs"]["mlp_ratio"] = 6144.0 / 1408.0;  // eva01-tiny's MLP width (209), not EVA02-E's ratio
  WriteConfig(config);
  std::filesystem::create_symlink(testing::FixtureDir("eva01-tiny") / "model.safetensors",
                                  dir_ / "open_clip_model.safetensors");
  Result<ClipModel> model = LoadClipModel(dir_.path());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_TRUE(model->config().vision.eva.post_norm);

  const SafetensorsFile weights =
      SafetensorsFile::Open(testing::FixtureDir("eva01-tiny") / "model.safetensors").value();
  const Tensors tensors = ReadTensors(weights);
  const SafetensorsFile debug =
      SafetensorsFile::Open(testing::FixtureDir("eva01-tiny") / "debug_activations.safetensors").value();
  const Matrix pixels = testing::DebugPixels(debug);
  const Matrix got = model->EncodePixels(pixels).value();
  Matrix normalized = got;
  NormalizeRows(normalized);
  const nlohmann::json pre_norm = testing::ReadFixtureJson("expected.json", "eva01-tiny");
  const VisionConfig& v = model->config().vision;
  for (int i = 0; i < got.rows; ++i) {
    SCOPED_TRACE(i);
    const std::vector<double> want_d =
        Eva02EReference(tensors, pixels.row(i), v.image_size, v.patch_size, v.width, v.heads, v.layers);
    std::vector<float> want(want_d.begin(), want_d.end());
    EXPECT_LE(MaxAbsDiff(got.row(i), want), kUnnormalizedTolerance);
    double norm = 0.0;
    for (double x : want_d) norm += x * x;
    for (float& x : want) x = static_cast<float>(x / std::sqrt(norm));
    EXPECT_LE(MaxAbsDiff(normalized.row(i), want), kNormalizedTolerance);
    // The post-norm tower is not the pre-norm one the fixture computed.
    EXPECT_GT(MaxAbsDiff(normalized.row(i), pre_norm["images"][i]["embedding_normalized"].get<std::vector<float>>()),
              1e-2f);
  }
}

// clip-tiny's visual.* names -> timm VisionTransformer names under visual.trunk.
std::optional<std::string> TimmVitName(const std::string& name) {
  static const std::vector<std::pair<std::regex, std::string>> kTable = {
      {std::regex("visual\\.conv1\\.weight"), "visual.trunk.patch_embed.proj.weight"},
      {std::regex("visual\\.ln_pre\\.(.*)"), "visual.trunk.norm_pre.$1"},
      {std::regex("visual\\.ln_post\\.(.*)"), "visual.trunk.norm.$1"},
      {std::regex("visual\\.transformer\\.resblocks\\.([0-9]+)\\.ln_1\\.(.*)"), "visual.trunk.blocks.$1.norm1.$2"},
      {std::regex("visual\\.transformer\\.resblocks\\.([0-9]+)\\.ln_2\\.(.*)"), "visual.trunk.blocks.$1.norm2.$2"},
      {std::regex("visual\\.transformer\\.resblocks\\.([0-9]+)\\.attn\\.in_proj_(weight|bias)"),
       "visual.trunk.blocks.$1.attn.qkv.$2"},
      {std::regex("visual\\.transformer\\.resblocks\\.([0-9]+)\\.attn\\.out_proj\\.(.*)"),
       "visual.trunk.blocks.$1.attn.proj.$2"},
      {std::regex("visual\\.transformer\\.resblocks\\.([0-9]+)\\.mlp\\.c_fc\\.(.*)"),
       "visual.trunk.blocks.$1.mlp.fc1.$2"},
      {std::regex("visual\\.transformer\\.resblocks\\.([0-9]+)\\.mlp\\.c_proj\\.(.*)"),
       "visual.trunk.blocks.$1.mlp.fc2.$2"},
  };
  for (const auto& [from, to] : kTable) {
    if (std::regex_match(name, from)) return std::regex_replace(name, from, to);
  }
  return std::nullopt;
}

TEST_F(DerivedTimmTrunk, TimmClipVitRunsAsOpenClipsVisionTransformer) {
  const SafetensorsFile clip = SafetensorsFile::Open(testing::FixtureDir("clip-tiny") / "model.safetensors").value();
  std::vector<NamedTensor> out;
  for (const TensorInfo& t : clip.tensors()) {
    std::vector<float> v = SafetensorsFile::ToFloat(t, t.name).value();
    if (t.name == "visual.class_embedding") {
      out.push_back({"visual.trunk.cls_token", {1, 1, t.shape[0]}, v});
    } else if (t.name == "visual.positional_embedding") {
      out.push_back({"visual.trunk.pos_embed", {1, t.shape[0], t.shape[1]}, v});
    } else if (t.name == "visual.proj") {  // [W, E] used as x @ P -> nn.Linear [E, W] + zero bias
      const int64_t w = t.shape[0], e = t.shape[1];
      std::vector<float> transposed(v.size());
      for (int64_t i = 0; i < w; ++i) {
        for (int64_t j = 0; j < e; ++j) transposed[j * w + i] = v[i * e + j];
      }
      out.push_back({"visual.trunk.head.weight", {e, w}, transposed});
      out.push_back({"visual.trunk.head.bias", {e}, std::vector<float>(static_cast<size_t>(e), 0.0f)});
    } else if (std::optional<std::string> renamed = TimmVitName(t.name)) {
      out.push_back({*renamed, t.shape, v});
    } else {
      ASSERT_EQ(t.name.rfind("visual.", 0), std::string::npos) << "unmapped " << t.name;
      out.push_back({t.name, t.shape, v});  // the text tower and logit_scale, unchanged
    }
  }
  ASSERT_TRUE(WriteSafetensors(dir_ / "open_clip_model.safetensors", out).ok());
  nlohmann::json config = testing::ReadFixtureJson("config.json", "clip-tiny");
  config["model_cfg"]["vision_cfg"] = {
      {"image_size", 64},
      {"timm_model_name", "vit_large_patch14_clip_224"},
      {"timm_model_pretrained", false},
      {"timm_pool", "token"},
      {"timm_proj", nullptr},
      {"timm_drop", 0.0},
      {"timm_drop_path", 0.1},
      {"timm_model_kwargs", {{"img_size", 64}, {"patch_size", 16}, {"embed_dim", 64}, {"depth", 2}, {"num_heads", 4}}}};
  WriteConfig(config);
  Result<ClipModel> model = LoadClipModel(dir_.path());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_FALSE(model->config().vision.eva.patch_bias);
  EXPECT_TRUE(model->config().vision.ln_pre);
  EXPECT_EQ(model->config().vision.layer_norm_eps, 1e-5f);
  const SafetensorsFile debug =
      SafetensorsFile::Open(testing::FixtureDir("clip-tiny") / "debug_activations.safetensors").value();
  const Matrix got = model->EncodePixels(testing::DebugPixels(debug)).value();
  Matrix normalized = got;
  NormalizeRows(normalized);
  const nlohmann::json expected = testing::ReadFixtureJson("expected.json", "clip-tiny");
  for (int i = 0; i < got.rows; ++i) {
    SCOPED_TRACE(i);
    EXPECT_LE(MaxAbsDiff(got.row(i), expected["images"][i]["embedding"].get<std::vector<float>>()),
              kUnnormalizedTolerance);
    EXPECT_LE(MaxAbsDiff(normalized.row(i), expected["images"][i]["embedding_normalized"].get<std::vector<float>>()),
              kNormalizedTolerance);
  }
}

}  // namespace
}  // namespace visalign::clip
