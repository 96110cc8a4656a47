// OpenCLIP options the towers accept beyond what a fixture exercises directly: ConvNeXt at an image
// size that is not a multiple of 32 (timm floors every strided convolution), tanh-GELU text towers
// (act_kwargs) with a SentencePiece tokenizer, timm's gelu_tanh SigLIP ViTs (SigLIP2's towers), and a
// text tower without projection (proj_type none: ViT-SO400M-16-SigLIP-i18n-256).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>

#include "clip/config.h"
#include "clip/fixture_testing.h"
#include "testing/dirs.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"

namespace visalign::clip {
namespace {

namespace fs = std::filesystem;
using testing::MaxAbsDiff;

constexpr float kUnnormalizedTolerance = 1e-4f;  // fixture_parity_test.cc's, for the same embeddings
constexpr int kFixtureSize = 64;

class OpenClipOptionsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0);
    SetThreadCount(1);
  }

  // A model folder: `fixture`'s weights and tokenizer folder (if any) with `config` as its config.
  Result<ClipModel> Load(const std::string& fixture, const Json& config) {
    const fs::path from = testing::FixtureDir(fixture);
    EXPECT_TRUE(WriteFileAtomic(dir_ / "open_clip_config.json", config.dump()).ok());
    if (!fs::exists(dir_ / "open_clip_model.safetensors")) {
      fs::create_symlink(from / "model.safetensors", dir_ / "open_clip_model.safetensors");
      if (fs::is_directory(from / "tokenizer")) fs::create_directory_symlink(from / "tokenizer", dir_ / "tokenizer");
    }
    return LoadClipModel(dir_.path());
  }

  static Matrix FixturePixels(const std::string& fixture) {
    const SafetensorsFile debug =
        SafetensorsFile::Open(testing::FixtureDir(fixture) / "debug_activations.safetensors").value();
    return testing::DebugPixels(debug);
  }

  static void ExpectFixtureEmbeddings(const Matrix& got, const std::string& fixture, const std::string& tower) {
    const Json expected = testing::ReadFixtureJson("expected.json", fixture);
    ASSERT_EQ(static_cast<size_t>(got.rows), expected[tower].size());
    for (int i = 0; i < got.rows; ++i) {
      EXPECT_LE(MaxAbsDiff(got.row(i), expected[tower][i]["embedding"].get<std::vector<float>>()),
                kUnnormalizedTolerance)
          << tower << " " << i;
    }
  }

  static float LargestDifference(const Matrix& a, const Matrix& b) { return MaxAbsDiff(a.data.data(), b.data); }

  visalign::testing::TempDir dir_;
};

// The fixture's 64 x 64 pixel_values in the top-left of `size` x `size` images, the margin `fill`.
Matrix Embedded(const Matrix& fixture, int size, float fill) {
  Matrix out(fixture.rows, 3 * size * size);
  for (int i = 0; i < out.rows; ++i) {
    for (int c = 0; c < 3; ++c) {
      for (int y = 0; y < size; ++y) {
        for (int x = 0; x < size; ++x) {
          const bool inside = y < kFixtureSize && x < kFixtureSize;
          out.row(i)[(c * size + y) * size + x] =
              inside ? fixture.row(i)[(c * kFixtureSize + y) * kFixtureSize + x] : fill * (c + 1);
        }
      }
    }
  }
  return out;
}

// timm's stem (4 x 4, stride 4) floors 67 px to 16 positions, dropping the last 3 pixels: the
// clip-convnext-tiny fixture declared at 67 px on 67 x 67 inputs whose top-left 64 x 64 are the
// fixture's gives the fixture's embeddings, whatever the margin holds. The downsampling convolutions
// floor the same way (conv_test.cc checks 2 x 2 stride-2 convolutions of odd maps against a direct
// convolution); 200 px runs through maps of 50, 25, 12 and 6.
TEST_F(OpenClipOptionsTest, ConvNextFloorsAnImageSizeThatIsNotAMultipleOf32) {
  Json config = testing::ReadFixtureJson("config.json", "clip-convnext-tiny");
  constexpr int kSize = 67;
  config["model_cfg"]["vision_cfg"]["image_size"] = kSize;
  config["preprocess_cfg"]["size"] = kSize;
  Result<ClipModel> model = Load("clip-convnext-tiny", config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Matrix pixels = FixturePixels("clip-convnext-tiny");
  const Matrix got = model->EncodePixels(Embedded(pixels, kSize, 9.0f)).value();
  ExpectFixtureEmbeddings(got, "clip-convnext-tiny", "images");
  EXPECT_EQ(LargestDifference(got, model->EncodePixels(Embedded(pixels, kSize, -4.0f)).value()), 0.0f);

  constexpr int kOddStages = 200;
  config["model_cfg"]["vision_cfg"]["image_size"] = kOddStages;
  config["preprocess_cfg"]["size"] = kOddStages;
  model = Load("clip-convnext-tiny", config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Matrix big = model->EncodePixels(Embedded(pixels, kOddStages, 0.5f)).value();
  ASSERT_EQ(big.rows, pixels.rows);
  for (float v : big.data) ASSERT_TRUE(std::isfinite(v));
  EXPECT_GT(LargestDifference(big, got), 1e-3f);  // another image, another embedding

  config["model_cfg"]["vision_cfg"]["image_size"] = 31;
  config["preprocess_cfg"]["size"] = 31;
  EXPECT_THAT(Load("clip-convnext-tiny", config).status().ToString(), ::testing::HasSubstr("at least 32"));
}

// act_kwargs {approximate: tanh} on a SigLIP text tower with its SentencePiece tokenizer (the
// combination SigLIP2 has with the Gemma tokenizer instead): the text blocks run PyTorch's tanh GELU
// (its numbers are checked on siglip2-tiny, fixture_parity_test.cc), the image tower is unchanged.
TEST_F(OpenClipOptionsTest, TanhGeluTextTowerWithASentencePieceTokenizer) {
  Json config = testing::ReadFixtureJson("config.json", "siglip-tiny");
  config["model_cfg"]["text_cfg"]["act_kwargs"] = {{"approximate", "tanh"}};
  Result<ClipModel> model = Load("siglip-tiny", config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->config().text.activation, Activation::kGeluTanh);
  EXPECT_EQ(model->config().tokenizer.kind, TokenizerKind::kSentencePiece);
  const Json expected = testing::ReadFixtureJson("expected.json", "siglip-tiny");
  EXPECT_EQ(model->Tokenize("BANANA").value(), expected["texts"][1]["token_ids"].get<std::vector<int32_t>>());
  ExpectFixtureEmbeddings(model->EncodePixels(FixturePixels("siglip-tiny")).value(), "siglip-tiny", "images");
  const Matrix tanh_text = model->EncodeTexts({"a photo of a red square"}).value();
  config["model_cfg"]["text_cfg"]["act_kwargs"] = {{"approximate", "none"}};
  model = Load("siglip-tiny", config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->config().text.activation, Activation::kGelu);
  const Matrix exact_text = model->EncodeTexts({"a photo of a red square"}).value();
  std::vector<std::string> texts;
  for (const Json& t : expected["texts"]) texts.push_back(t["text"].get<std::string>());
  ExpectFixtureEmbeddings(model->EncodeTexts(texts).value(), "siglip-tiny", "texts");
  // The two GELUs differ by up to ~1e-3 per unit: the embedding moves, but only slightly.
  EXPECT_GT(LargestDifference(tanh_text, exact_text), 1e-6f);
  EXPECT_LT(LargestDifference(tanh_text, exact_text), 0.1f);
}

// timm registers SigLIP2's larger ViTs with act_layer 'gelu_tanh' (blocks and MAP head); the others
// keep the exact GELU.
TEST(TimmSiglipActivation, FollowsTheTimmModelName) {
  for (const auto& [name, tanh] : std::vector<std::pair<std::string, bool>>{{"vit_so400m_patch16_siglip_256", true},
                                                                            {"vit_giantopt_patch16_siglip_384", true},
                                                                            {"vit_base_patch32_siglip_256", true},
                                                                            {"vit_base_patch16_siglip_224", false},
                                                                            {"vit_so400m_patch14_siglip_384", false}}) {
    SCOPED_TRACE(name);
    Json config = testing::ReadFixtureJson("config.json", "siglip2-tiny");
    config["model_cfg"]["vision_cfg"]["timm_model_name"] = name;
    config["model_cfg"]["vision_cfg"]["timm_model_kwargs"]["patch_size"] = 16;
    const Result<ClipConfig> c = ParseOpenClipConfig(config, "config.json");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->vision.activation == std::optional<Activation>(Activation::kGeluTanh), tanh);
  }
}

// proj_type "none": open_clip's TextTransformer has no text_projection and returns the pooled row.
// siglip-tiny (text width = embed_dim = 64) without its text_projection tensors embeds each text as the
// fixture's traced text.pooled_before_proj; a width other than embed_dim is refused.
TEST_F(OpenClipOptionsTest, TextTowerWithoutProjectionReturnsThePooledRow) {
  const fs::path from = testing::FixtureDir("siglip-tiny");
  const SafetensorsFile weights = SafetensorsFile::Open(from / "model.safetensors").value();
  std::vector<NamedTensor> kept;
  for (const TensorInfo& t : weights.tensors()) {
    if (t.name.rfind("text.text_projection", 0) == 0) continue;
    kept.push_back({t.name, t.shape, SafetensorsFile::ToFloat(t, "weights").value()});
  }
  ASSERT_EQ(kept.size() + 2, weights.tensors().size());
  ASSERT_TRUE(WriteSafetensors(dir_ / "open_clip_model.safetensors", kept).ok());
  fs::create_directory_symlink(from / "tokenizer", dir_ / "tokenizer");
  Json config = testing::ReadFixtureJson("config.json", "siglip-tiny");
  config["model_cfg"]["text_cfg"]["proj_type"] = "none";
  Result<ClipModel> model = Load("siglip-tiny", config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const SafetensorsFile debug = SafetensorsFile::Open(from / "debug_activations.safetensors").value();
  const Matrix got = model->EncodeTokens(testing::DebugTokenIds(debug)).value();
  std::vector<float> want;
  for (const TensorInfo& t : debug.tensors()) {
    if (t.name == "text.pooled_before_proj") want = SafetensorsFile::ToFloat(t, "debug").value();
  }
  ASSERT_EQ(want.size(), got.data.size());
  EXPECT_LE(MaxAbsDiff(got.data.data(), want), kUnnormalizedTolerance);

  config["model_cfg"]["embed_dim"] = 32;
  EXPECT_THAT(Load("siglip-tiny", config).status().what(), ::testing::HasSubstr("text width 64 without a projection"));
}

}  // namespace
}  // namespace visalign::clip
