// timm's gelu_tanh SigLIP ViTs (SigLIP2's so400m/16, giantopt, base/32, large/16-512) have no fixture
// of their own: their vision tower is checked against an independent double-precision forward of
// timm's ViT + MAP head written here from the siglip2-tiny README's conventions. The reference is
// first checked against the fixture itself (exact GELU: open_clip's embeddings), then run with tanh
// GELU against visalign's tower loaded from the fixture's weights under a gelu_tanh model name.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "clip/fixture_testing.h"
#include "testing/dirs.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"

namespace visalign::clip {
namespace {

using Vec = std::vector<double>;

constexpr double kLayerNormEps = 1e-6;
// fp32 vs double over two blocks and the head of width 32 (fixture README: fp32 vs fp64 2.5e-7
// normalised): the parity suite's tolerances.
constexpr double kUnnormalizedTolerance = 1e-4;

class ReferenceSiglipVision {
 public:
  explicit ReferenceSiglipVision(const SafetensorsFile& w) : w_(w) {}

  // One image (CHW, size x size) -> the MAP head's output, with `gelu` in the blocks and head MLP.
  Vec Forward(const float* image, int size, int patch, int heads, int layers,
              const std::function<double(double)>& gelu) const {
    const Vec patch_w = Get("patch_embed.proj.weight"), patch_b = Get("patch_embed.proj.bias"), pos = Get("pos_embed");
    const int width = static_cast<int>(patch_b.size());
    const int grid = size / patch;
    const int tokens = grid * grid;
    std::vector<Vec> x(static_cast<size_t>(tokens), Vec(static_cast<size_t>(width)));
    for (int k = 0; k < tokens; ++k) {
      for (int o = 0; o < width; ++o) {
        double sum = patch_b[o];
        for (int c = 0; c < 3; ++c) {
          for (int ky = 0; ky < patch; ++ky) {
            for (int kx = 0; kx < patch; ++kx) {
              sum += patch_w[((static_cast<size_t>(o) * 3 + c) * patch + ky) * patch + kx] *
                     image[(static_cast<size_t>(c) * size + (k / grid) * patch + ky) * size + (k % grid) * patch + kx];
            }
          }
        }
        x[k][o] = sum + pos[static_cast<size_t>(k) * width + o];
      }
    }
    for (int i = 0; i < layers; ++i) {
      const std::string b = "blocks." + std::to_string(i) + ".";
      std::vector<Vec> h;
      for (const Vec& row : x) h.push_back(Linear(b + "attn.qkv", LayerNorm(b + "norm1", row)));
      std::vector<Vec> q, kv;
      for (const Vec& row : h) {
        q.emplace_back(row.begin(), row.begin() + width);
        kv.emplace_back(row.begin() + width, row.end());
      }
      for (int t = 0; t < tokens; ++t) {
        const Vec attended = Attend(q[t], kv, heads);
        const Vec out = Linear(b + "attn.proj", attended);
        for (int c = 0; c < width; ++c) x[t][c] += out[c];
        const Vec mlp = Mlp(b + "mlp", LayerNorm(b + "norm2", x[t]), gelu);
        for (int c = 0; c < width; ++c) x[t][c] += mlp[c];
      }
    }
    std::vector<Vec> kv;
    for (Vec& row : x) kv.push_back(Linear("attn_pool.kv", LayerNorm("norm", row)));
    Vec y = Linear("attn_pool.proj", Attend(Linear("attn_pool.q", Get("attn_pool.latent")), kv, heads));
    const Vec mlp = Mlp("attn_pool.mlp", LayerNorm("attn_pool.norm", y), gelu);
    for (size_t c = 0; c < y.size(); ++c) y[c] += mlp[c];
    return y;
  }

 private:
  Vec Get(const std::string& name) const {
    const std::vector<float> v = SafetensorsFile::ToFloat(*w_.Find("visual.trunk." + name), name).value();
    return Vec(v.begin(), v.end());
  }
  Vec Linear(const std::string& name, const Vec& x) const {
    const Vec w = Get(name + ".weight"), b = Get(name + ".bias");
    Vec y = b;
    for (size_t o = 0; o < y.size(); ++o) {
      for (size_t i = 0; i < x.size(); ++i) y[o] += w[o * x.size() + i] * x[i];
    }
    return y;
  }
  Vec LayerNorm(const std::string& name, const Vec& x) const {
    const Vec g = Get(name + ".weight"), b = Get(name + ".bias");
    double mean = 0.0, var = 0.0;
    for (double v : x) mean += v / static_cast<double>(x.size());
    for (double v : x) var += (v - mean) * (v - mean) / static_cast<double>(x.size());
    Vec y(x.size());
    for (size_t c = 0; c < x.size(); ++c) y[c] = (x[c] - mean) / std::sqrt(var + kLayerNormEps) * g[c] + b[c];
    return y;
  }
  Vec Mlp(const std::string& name, const Vec& x, const std::function<double(double)>& gelu) const {
    Vec h = Linear(name + ".fc1", x);
    for (double& v : h) v = gelu(v);
    return Linear(name + ".fc2", h);
  }
  // softmax(q·kᵀ/√d)·v per head over rows `kv` = [k | v].
  static Vec Attend(const Vec& q, const std::vector<Vec>& kv, int heads) {
    const size_t width = q.size(), d = width / static_cast<size_t>(heads);
    Vec out(width, 0.0);
    for (size_t h = 0; h < static_cast<size_t>(heads); ++h) {
      Vec score(kv.size());
      double top = -1e300, total = 0.0;
      for (size_t t = 0; t < kv.size(); ++t) {
        for (size_t c = 0; c < d; ++c) score[t] += q[h * d + c] * kv[t][h * d + c] / std::sqrt(static_cast<double>(d));
        top = std::max(top, score[t]);
      }
      for (double& s : score) total += (s = std::exp(s - top));
      for (size_t t = 0; t < kv.size(); ++t) {
        for (size_t c = 0; c < d; ++c) out[h * d + c] += score[t] / total * kv[t][width + h * d + c];
      }
    }
    return out;
  }

  const SafetensorsFile& w_;
};

double ExactGelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double TanhGelu(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }

TEST(SiglipVisionReference, TanhGeluTimmTowersMatchADoubleForward) {
  setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0);
  SetThreadCount(1);
  const std::filesystem::path fixture = testing::FixtureDir("siglip2-tiny");
  const SafetensorsFile weights = SafetensorsFile::Open(fixture / "model.safetensors").value();
  const SafetensorsFile debug = SafetensorsFile::Open(fixture / "debug_activations.safetensors").value();
  const Matrix pixels = testing::DebugPixels(debug);
  const Json expected = testing::ReadFixtureJson("expected.json", "siglip2-tiny");
  const ReferenceSiglipVision reference(weights);
  constexpr int kSize = 64, kPatch = 16, kHeads = 2, kLayers = 2;
  // The reference is timm's forward: it gives open_clip's embeddings with the fixture's exact GELU.
  for (int i = 0; i < pixels.rows; ++i) {
    const Vec want = reference.Forward(pixels.row(i), kSize, kPatch, kHeads, kLayers, ExactGelu);
    const std::vector<float> got = expected["images"][i]["embedding"].get<std::vector<float>>();
    for (size_t c = 0; c < want.size(); ++c) EXPECT_NEAR(got[c], want[c], kUnnormalizedTolerance) << i << " " << c;
  }
  // The same weights under a gelu_tanh name (its shapes overridden to the fixture's).
  visalign::testing::TempDir dir;
  Json config = testing::ReadFixtureJson("config.json", "siglip2-tiny");
  config["model_cfg"]["vision_cfg"]["timm_model_name"] = "vit_so400m_patch16_siglip_256";
  config["model_cfg"]["vision_cfg"]["timm_model_kwargs"]["mlp_ratio"] = 4.0;
  ASSERT_TRUE(WriteFileAtomic(dir / "open_clip_config.json", config.dump()).ok());
  std::filesystem::create_symlink(fixture / "model.safetensors", dir / "open_clip_model.safetensors");
  std::filesystem::create_directory_symlink(fixture / "tokenizer", dir / "tokenizer");
  Result<ClipModel> model = LoadClipModel(dir.path());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Matrix got = model->EncodePixels(pixels).value();
  double moved = 0.0;
  for (int i = 0; i < pixels.rows; ++i) {
    const Vec want = reference.Forward(pixels.row(i), kSize, kPatch, kHeads, kLayers, TanhGelu);
    const Vec exact = reference.Forward(pixels.row(i), kSize, kPatch, kHeads, kLayers, ExactGelu);
    for (size_t c = 0; c < want.size(); ++c) {
      EXPECT_NEAR(got.at(i, static_cast<int>(c)), want[c], kUnnormalizedTolerance) << i << " " << c;
      moved = std::max(moved, std::abs(want[c] - exact[c]));
    }
  }
  EXPECT_GT(moved, 3 * kUnnormalizedTolerance);  // 6.4e-4: the two GELUs are told apart at this tolerance
}

}  // namespace
}  // namespace visalign::clip
