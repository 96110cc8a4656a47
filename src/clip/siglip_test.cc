// Conformance of the SigLIP forward pass (timm ViT with MAP head, bidirectional text tower pooled at
// the last position, sigmoid logits with bias) with OpenCLIP on the siglip-tiny fixture: embeddings
// from the exact model inputs and from strings, every traced activation, end to end from the PNGs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <map>

#include "clip/config.h"
#include "clip/fixture_testing.h"
#include "clip/towers.h"
#include "visalign/clip.h"
#include "visalign/core/parallel.h"

namespace visalign::clip {
namespace {

using testing::MaxAbsDiff;

constexpr const char* kFixture = "siglip-tiny";
// As for clip-tiny (model_test.cc): fp32 against PyTorch fp32 with another summation order.
// Logits are cosines times exp(2.5) = 12.18 plus a bias: 1e-5 x 12.18 < 2e-4. Sigmoid
// probabilities have slope <= 1/4 in the logit: 1e-5.
constexpr float kNormalizedTolerance = 1e-5f;
constexpr float kUnnormalizedTolerance = 1e-4f;
constexpr float kActivationTolerance = 1e-4f;
constexpr float kLogitTolerance = 2e-4f;
constexpr float kProbabilityTolerance = 1e-5f;

std::vector<float> Row(const nlohmann::json& j) { return j.get<std::vector<float>>(); }

class SiglipModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    SetThreadCount(1);
    Result<ClipModel> m = LoadClipModel(testing::FixtureDir(kFixture));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    model_ = new ClipModel(std::move(m).value());
    expected_ = new nlohmann::json(testing::ReadFixtureJson("expected.json", kFixture));
    Result<SafetensorsFile> debug = SafetensorsFile::Open(testing::FixtureDir(kFixture) / "debug_activations.safetensors");
    ASSERT_TRUE(debug.ok()) << debug.status().ToString();
    debug_ = new SafetensorsFile(std::move(debug).value());
  }
  static void TearDownTestSuite() {
    delete model_;
    delete expected_;
    delete debug_;
  }

  static std::vector<std::string> Texts() {
    std::vector<std::string> texts;
    for (const auto& t : (*expected_)["texts"]) texts.push_back(t["text"].get<std::string>());
    return texts;
  }

  static void ExpectEmbeddings(const Matrix& got, const std::string& tower) {
    Matrix normalized = got;
    NormalizeRows(normalized);
    ASSERT_EQ(static_cast<size_t>(got.rows), (*expected_)[tower].size());
    for (int i = 0; i < got.rows; ++i) {
      SCOPED_TRACE(tower + " " + std::to_string(i));
      EXPECT_LE(MaxAbsDiff(got.row(i), Row((*expected_)[tower][i]["embedding"])), kUnnormalizedTolerance);
      EXPECT_LE(MaxAbsDiff(normalized.row(i), Row((*expected_)[tower][i]["embedding_normalized"])),
                kNormalizedTolerance);
    }
  }

  static ClipModel* model_;
  static nlohmann::json* expected_;
  static SafetensorsFile* debug_;
};

ClipModel* SiglipModelTest::model_ = nullptr;
nlohmann::json* SiglipModelTest::expected_ = nullptr;
SafetensorsFile* SiglipModelTest::debug_ = nullptr;

TEST_F(SiglipModelTest, ReadsTheSiglipConfigAndStoredLogitScaleAndBias) {
  const ClipConfig& c = model_->config();
  EXPECT_TRUE(c.sigmoid_logits);
  EXPECT_TRUE(c.custom_text);
  EXPECT_EQ(c.vision.pooling, Pooling::kAttentionPool);
  EXPECT_FALSE(c.vision.class_token);
  EXPECT_FALSE(c.vision.ln_pre);
  EXPECT_EQ(c.vision.image_size, 64);
  EXPECT_EQ(c.vision.patch_size, 16);
  EXPECT_EQ(c.vision.width, 64);
  EXPECT_EQ(c.vision.layers, 2);
  EXPECT_EQ(c.vision.heads, 4);
  EXPECT_EQ(c.vision.mlp_width, 256);
  EXPECT_FLOAT_EQ(c.vision.layer_norm_eps, 1e-6f);
  EXPECT_EQ(c.text.pooling, Pooling::kLast);
  EXPECT_FALSE(c.text.causal);
  EXPECT_TRUE(c.text.projection_bias);
  EXPECT_FLOAT_EQ(c.text.layer_norm_eps, 1e-6f);
  EXPECT_EQ(c.preprocess.resize_mode, ResizeMode::kSquash);
  EXPECT_EQ(c.preprocess.mean[0], 0.5f);
  EXPECT_EQ(c.preprocess.std[2], 0.5f);
  // The weights' values (2.5, -6.25), not the config's init values (log 10, -10).
  EXPECT_NEAR(model_->LogitScale(), (*expected_)["logit_scale_exp"].get<float>(), 1e-5);
  EXPECT_EQ(model_->LogitBias(), (*expected_)["logit_bias"].get<float>());
}

TEST_F(SiglipModelTest, ImageEmbeddingsFromPixelValuesMatchOpenClip) {
  ExpectEmbeddings(model_->EncodePixels(testing::DebugPixels(*debug_)).value(), "images");
}

TEST_F(SiglipModelTest, TokenIdsAndTextEmbeddingsFromStringsMatchOpenClip) {
  std::vector<std::vector<int32_t>> unpadded;
  for (const auto& t : (*expected_)["texts"]) {
    SCOPED_TRACE(t["text"].get<std::string>());
    const std::vector<int32_t> ids = model_->Tokenize(t["text"].get<std::string>()).value();
    EXPECT_EQ(ids, t["token_ids"].get<std::vector<int32_t>>());
    unpadded.push_back(ids);
  }
  ExpectEmbeddings(model_->EncodeTokens(unpadded).value(), "texts");
  ExpectEmbeddings(model_->EncodeTexts(Texts()).value(), "texts");
}

TEST_F(SiglipModelTest, PaddedDebugTokenIdsGiveTheSameTextEmbeddings) {
  ExpectEmbeddings(model_->EncodeTokens(testing::DebugTokenIds(*debug_)).value(), "texts");
}

TEST_F(SiglipModelTest, SigmoidLogitsAndProbabilitiesMatchOpenClip) {
  const Matrix cos =
      CosineSimilarity(model_->EncodePixels(testing::DebugPixels(*debug_)).value(), model_->EncodeTexts(Texts()).value());
  const auto& expected_cos = (*expected_)["cosine_similarity"]["values"];
  const auto& logits = (*expected_)["logits_per_image"]["values"];
  const auto& probabilities = (*expected_)["sigmoid_probabilities"]["values"];
  ASSERT_EQ(static_cast<size_t>(cos.rows), expected_cos.size());
  for (int i = 0; i < cos.rows; ++i) {
    SCOPED_TRACE(i);
    EXPECT_LE(MaxAbsDiff(cos.row(i), Row(expected_cos[i])), kNormalizedTolerance);
    std::vector<float> logit(cos.row(i), cos.row(i) + cos.cols);
    std::vector<float> probability(logit.size());
    for (size_t j = 0; j < logit.size(); ++j) {
      logit[j] = model_->LogitScale() * logit[j] + model_->LogitBias();
      probability[j] = 1.0f / (1.0f + std::exp(-logit[j]));
    }
    EXPECT_LE(MaxAbsDiff(logit.data(), Row(logits[i])), kLogitTolerance);
    EXPECT_LE(MaxAbsDiff(probability.data(), Row(probabilities[i])), kProbabilityTolerance);
  }
}

TEST_F(SiglipModelTest, IntermediateActivationsMatchOpenClip) {
  std::map<std::string, std::vector<float>> traced;
  const TraceFn trace = [&](const std::string& name, const float* data, size_t size) {
    traced[name].assign(data, data + size);
  };
  ForwardOptions options;
  options.trace = &trace;
  const Result<ClipConfig> config = ReadClipConfig(testing::FixtureDir(kFixture));
  ASSERT_TRUE(config.ok());
  const Result<ClipWeights> weights = LoadClipWeights(*config);
  ASSERT_TRUE(weights.ok());
  EncodeVision(*config, *weights, testing::DebugPixels(*debug_), options);
  EncodeText(*config, *weights, testing::DebugTokenIds(*debug_), options);
  // The fixture names timm's blocks "blocks.<i>_out"; the shared block loop traces "block<i>_out".
  const std::map<std::string, std::string> renamed = {{"visual.trunk.blocks.0_out", "visual.trunk.block0_out"},
                                                      {"visual.trunk.blocks.1_out", "visual.trunk.block1_out"}};
  int compared = 0;
  for (const auto& t : debug_->tensors()) {
    if (t.name.rfind("inputs.", 0) == 0) continue;
    SCOPED_TRACE(t.name);
    const std::string name = renamed.count(t.name) ? renamed.at(t.name) : t.name;
    ASSERT_TRUE(traced.count(name));
    const std::vector<float> expected = SafetensorsFile::ToFloat(t, "debug").value();
    ASSERT_EQ(traced[name].size(), expected.size());
    EXPECT_LE(MaxAbsDiff(traced[name].data(), expected), kActivationTolerance);
    ++compared;
  }
  EXPECT_EQ(compared, 12);  // 7 vision + 5 text activations
}

TEST_F(SiglipModelTest, ImagesEndToEndFromPngsMatchOpenClip) {
  std::vector<imaging::Image> images;
  for (const auto& img : (*expected_)["images"]) {
    Result<imaging::Image> im = imaging::ReadImage(testing::FixtureDir(kFixture) / img["file"].get<std::string>());
    ASSERT_TRUE(im.ok()) << im.status().ToString();
    images.push_back(std::move(im).value());
  }
  // Squash preprocessing reproduces the model input bit for bit, including the resampled images.
  EXPECT_EQ(PreprocessImages(images, model_->config().preprocess).value().data, testing::DebugPixels(*debug_).data);
  ExpectEmbeddings(model_->EncodeImages(images).value(), "images");
}

TEST_F(SiglipModelTest, ResultsDoNotDependOnThreadsOrBatching) {
  const Matrix pixels = testing::DebugPixels(*debug_);
  const Matrix one_thread = model_->EncodePixels(pixels).value();
  const Matrix texts_one_thread = model_->EncodeTexts(Texts()).value();
  SetThreadCount(2);
  ClipLoadOptions small_batches;
  small_batches.max_batch = 3;
  const ClipModel chunked = LoadClipModel(testing::FixtureDir(kFixture), small_batches).value();
  const Matrix images_chunked = chunked.EncodePixels(pixels).value();
  const Matrix texts_chunked = chunked.EncodeTexts(Texts()).value();
  SetThreadCount(1);
  EXPECT_LE(MaxAbsDiff(one_thread.data.data(), images_chunked.data), 1e-5f);
  EXPECT_LE(MaxAbsDiff(texts_one_thread.data.data(), texts_chunked.data), 1e-5f);
}

}  // namespace
}  // namespace visalign::clip
