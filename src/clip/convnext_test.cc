// OpenCLIP's `timm_proj: mlp` head of a ConvNeXt tower, for which no upstream fixture exists. The
// clip-convnext-tiny fixture (linear head) is turned into an mlp-head model by replacing
// visual.head.proj with seeded random visual.head.mlp.{fc1,fc2} tensors, and the model's image
// embeddings are checked against an independent evaluation of timm's Mlp, written here in Eigen
// from its definition as OpenCLIP's TimmModel builds it (timm_model.py:
// `Mlp(C, 2·embed_dim, embed_dim, bias=(True, proj_bias))`): y = fc2(GELU(fc1(x))), fc1 with bias,
// fc2 with bias only when timm_proj_bias, exact erf GELU (timm's default nn.GELU). Its input x is
// the fixture's own `visual.trunk_out` activation (pooled + head-normed features, from open_clip),
// so the check covers the head alone; the trunk has its own parity tests (conv_towers_test.cc).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "clip/fixture_testing.h"
#include "clip/safetensors.h"
#include "testing/dirs.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"

namespace visalign::clip {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr int kEmbed = 64;  // the fixture's embed_dim
constexpr int kTrunk = 64;  // its last stage width (dims[3])
constexpr int kHidden = 2 * kEmbed;
constexpr float kTolerance = 1e-4f;  // the fixture's tolerance for unnormalised embeddings

NamedTensor Random(const std::string& name, std::vector<int64_t> shape, float scale, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-scale, scale);
  NamedTensor t{name, std::move(shape), {}};
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  for (int64_t i = 0; i < n; ++i) t.values.push_back(u(rng));
  return t;
}

RowMatrix ToEigen(const std::vector<float>& v, int rows, int cols) {
  RowMatrix m(rows, cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) m(r, c) = v[static_cast<size_t>(r) * cols + c];
  return m;
}

class ConvNextMlpHeadTest : public ::testing::TestWithParam<bool> {
 protected:
  static void SetUpTestSuite() { setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0); }
};

TEST_P(ConvNextMlpHeadTest, EqualsTimmMlpOnTheFixtureTrunkFeatures) {
  const bool proj_bias = GetParam();
  const std::filesystem::path fixture = testing::FixtureDir("clip-convnext-tiny");
  visalign::testing::TempDir dir;

  Json config = testing::ReadFixtureJson("config.json", "clip-convnext-tiny");
  config["model_cfg"]["vision_cfg"]["timm_proj"] = "mlp";
  config["model_cfg"]["vision_cfg"]["timm_proj_bias"] = proj_bias;
  ASSERT_TRUE(WriteFileAtomic(dir / "open_clip_config.json", config.dump()).ok());

  const SafetensorsFile weights = SafetensorsFile::Open(fixture / "model.safetensors").value();
  std::vector<NamedTensor> tensors;
  for (const TensorInfo& t : weights.tensors()) {
    if (t.name == "visual.head.proj.weight") continue;
    tensors.push_back({t.name, t.shape, SafetensorsFile::ToFloat(t, t.name).value()});
  }
  std::mt19937 rng(18);
  tensors.push_back(Random("visual.head.mlp.fc1.weight", {kHidden, kTrunk}, 0.2f, rng));
  tensors.push_back(Random("visual.head.mlp.fc1.bias", {kHidden}, 0.2f, rng));
  tensors.push_back(Random("visual.head.mlp.fc2.weight", {kEmbed, kHidden}, 0.2f, rng));
  if (proj_bias) tensors.push_back(Random("visual.head.mlp.fc2.bias", {kEmbed}, 0.2f, rng));
  std::map<std::string, const NamedTensor*> by_name;
  for (const NamedTensor& t : tensors) by_name[t.name] = &t;
  ASSERT_TRUE(WriteSafetensors(dir / "open_clip_model.safetensors", tensors).ok());

  Result<ClipModel> model = LoadClipModel(dir.path());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ(model->config().vision.convnext.projection, ConvNextProjection::kMlp);
  const SafetensorsFile debug = SafetensorsFile::Open(fixture / "debug_activations.safetensors").value();
  const Matrix got = model->EncodePixels(testing::DebugPixels(debug)).value();

  // timm Mlp, in double: hidden = GELU(x W1ᵀ + b1), y = hidden W2ᵀ (+ b2).
  const TensorInfo* trunk_out = debug.Find("visual.trunk_out");
  ASSERT_NE(trunk_out, nullptr);
  const int n = static_cast<int>(trunk_out->shape[0]);
  const RowMatrix x = ToEigen(SafetensorsFile::ToFloat(*trunk_out, "trunk_out").value(), n, kTrunk);
  const RowMatrix w1 = ToEigen(by_name["visual.head.mlp.fc1.weight"]->values, kHidden, kTrunk);
  const RowMatrix b1 = ToEigen(by_name["visual.head.mlp.fc1.bias"]->values, 1, kHidden);
  const RowMatrix w2 = ToEigen(by_name["visual.head.mlp.fc2.weight"]->values, kEmbed, kHidden);
  RowMatrix hidden = (x * w1.transpose()).rowwise() + b1.row(0);
  hidden = hidden.unaryExpr([](double h) { return 0.5 * h * (1.0 + std::erf(h / std::sqrt(2.0))); });
  RowMatrix expected = hidden * w2.transpose();
  if (proj_bias) expected = expected.rowwise() + ToEigen(by_name["visual.head.mlp.fc2.bias"]->values, 1, kEmbed).row(0);

  ASSERT_EQ(got.rows, n);
  ASSERT_EQ(got.cols, kEmbed);
  double max_diff = 0.0;
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < kEmbed; ++c) max_diff = std::max(max_diff, std::abs(got.at(r, c) - expected(r, c)));
  EXPECT_LE(max_diff, kTolerance);
  // The head is not the identity on these features (the check would be vacuous otherwise).
  EXPECT_GT(expected.cwiseAbs().maxCoeff(), 0.1);
}

INSTANTIATE_TEST_SUITE_P(ProjectionBias, ConvNextMlpHeadTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "WithFc2Bias" : "WithoutFc2Bias"; });

}  // namespace
}  // namespace visalign::clip
