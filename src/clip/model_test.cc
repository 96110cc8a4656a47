// The ViT CLIP model on the clip-tiny fixture beyond the shared parity checks (fixture_parity_test.cc):
// its config, text trimming and length bucketing, bf16 and automatic precision, empty and bad inputs,
// the fingerprint.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
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

class ClipModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0);
    // The tiny model is too small to gain from threads; on a loaded machine thread hand-offs
    // dominate. fixture_parity_test.cc covers the multithreaded paths.
    SetThreadCount(1);
    Result<ClipModel> m = LoadClipModel(testing::FixtureDir());
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    model_ = new ClipModel(std::move(m).value());
    expected_ = new Json(testing::ReadFixtureJson("expected.json"));
    Result<SafetensorsFile> debug = SafetensorsFile::Open(testing::FixtureDir() / "debug_activations.safetensors");
    ASSERT_TRUE(debug.ok()) << debug.status().ToString();
    debug_ = new SafetensorsFile(std::move(debug).value());
  }
  static void TearDownTestSuite() {
    delete model_;
    delete expected_;
    delete debug_;
  }

  static Matrix DebugPixels() { return testing::DebugPixels(*debug_); }
  static std::vector<std::vector<int32_t>> DebugTokenIds() { return testing::DebugTokenIds(*debug_); }

  static ClipModel* model_;
  static Json* expected_;
  static SafetensorsFile* debug_;
};

ClipModel* ClipModelTest::model_ = nullptr;
Json* ClipModelTest::expected_ = nullptr;
SafetensorsFile* ClipModelTest::debug_ = nullptr;

TEST_F(ClipModelTest, ReadsConfigAndLogitScale) {
  const ClipConfig& c = model_->config();
  EXPECT_EQ(c.embed_dim, 64);
  EXPECT_EQ(c.vision.image_size, 64);
  EXPECT_EQ(c.vision.patch_size, 16);
  EXPECT_EQ(c.vision.heads, 4);
  EXPECT_EQ(c.vision.mlp_width, 256);
  EXPECT_EQ(c.text.heads, 4);
  EXPECT_EQ(c.text.context_length, 77);
  EXPECT_EQ(c.activation, Activation::kGelu);
  EXPECT_EQ(c.layout, CheckpointLayout::kOpenClip);
  EXPECT_NEAR(model_->LogitScale(), (*expected_)["logit_scale_exp"].get<float>(), 1e-5);
}

TEST_F(ClipModelTest, TrimmingTextToEotGivesTheSameEmbeddings) {
  Result<ClipConfig> config = ReadClipConfig(testing::FixtureDir());
  Result<ClipWeights> weights = LoadClipWeights(*config);
  ForwardOptions full;
  full.trim_text_to_eot = false;
  const Matrix a = EncodeText(*config, *weights, DebugTokenIds(), full);
  const Matrix b = EncodeText(*config, *weights, DebugTokenIds(), ForwardOptions{});
  EXPECT_LE(MaxAbsDiff(a.data.data(), b.data), 1e-6f);
}

// Token ids of `count` pseudo-random texts of 1 to 75 tokens (sot ... eot), lengths in random order.
std::vector<std::vector<int32_t>> RandomTokenIds(int count, int vocab, uint32_t seed) {
  std::vector<std::vector<int32_t>> ids;
  uint32_t state = seed;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;  // LCG (Numerical Recipes): deterministic everywhere
    return state >> 8;
  };
  for (int i = 0; i < count; ++i) {
    std::vector<int32_t> t = {kStartOfText};
    const int tokens = 1 + static_cast<int>(next() % 75);
    for (int k = 0; k < tokens; ++k) t.push_back(static_cast<int32_t>(next() % static_cast<uint32_t>(vocab - 2)));
    t.push_back(kEndOfText);
    ids.push_back(std::move(t));
  }
  return ids;
}

// Today's unbucketed path: every text in one batch, padded to the longest eot of the batch.
Matrix EncodeUnbucketed(const ClipModel& model, std::vector<std::vector<int32_t>> ids) {
  for (auto& t : ids) t.resize(static_cast<size_t>(model.context_length()), kPadToken);
  const ClipConfig config = ReadClipConfig(testing::FixtureDir()).value();
  const ClipWeights weights = LoadClipWeights(config).value();
  return EncodeText(config, weights, ids, ForwardOptions{});
}

TEST_F(ClipModelTest, LengthBucketedTextsEqualTheUnbucketedPassInInputOrder) {
  std::vector<std::vector<int32_t>> ids = DebugTokenIds();
  for (auto& t : ids) t.resize(static_cast<size_t>(std::find(t.begin(), t.end(), kEndOfText) - t.begin()) + 1);
  const std::vector<std::vector<int32_t>> random = RandomTokenIds(40, model_->config().text.vocab_size, 7);
  ids.insert(ids.end(), random.begin(), random.end());
  Matrix unbucketed = EncodeUnbucketed(*model_, ids);
  // One thread and one batch limit; two threads with chunks of 3 (across threads, many buckets).
  Matrix bucketed = model_->EncodeTokens(ids).value();
  ClipLoadOptions small_batches;
  small_batches.max_batch = 6;
  const ClipModel chunked = LoadClipModel(testing::FixtureDir(), small_batches).value();
  SetThreadCount(2);
  Matrix bucketed_threads = chunked.EncodeTokens(ids).value();
  SetThreadCount(1);
  ASSERT_EQ(bucketed.rows, static_cast<int>(ids.size()));
  // Normalised embeddings (what cosines use) within 1e-6. Unnormalised values are up to ~5 here, and
  // oneDNN's blocking for a different number of rows moves them by a few ulps (~1.5e-6).
  for (Matrix* m : {&unbucketed, &bucketed, &bucketed_threads}) NormalizeRows(*m);
  EXPECT_LE(MaxAbsDiff(unbucketed.data.data(), bucketed.data), 1e-6f);
  EXPECT_LE(MaxAbsDiff(unbucketed.data.data(), bucketed_threads.data), 1e-6f);
  // Input order: each row is its own text's embedding (encoded alone).
  for (size_t i = 0; i < ids.size(); ++i) {
    Matrix alone = model_->EncodeTokens({ids[i]}).value();
    NormalizeRows(alone);
    EXPECT_LE(MaxAbsDiff(bucketed_threads.row(static_cast<int>(i)), alone.data), 1e-6f) << "text " << i;
  }
}

// Cosine distance 1 - cos between row i of a and b.
double CosineDistance(const Matrix& a, const Matrix& b, int i) {
  double dot = 0.0, na = 0.0, nb = 0.0;
  for (int c = 0; c < a.cols; ++c) {
    dot += static_cast<double>(a.at(i, c)) * b.at(i, c);
    na += static_cast<double>(a.at(i, c)) * a.at(i, c);
    nb += static_cast<double>(b.at(i, c)) * b.at(i, c);
  }
  return 1.0 - dot / std::sqrt(na * nb);
}

// Bounds on the cosine distance to fp32 per item: the for bf16 (measured ~5e-5 here); for
// bf16x3, whose operands carry ~16 bits where bf16 carries 8, errors shrink ~2^8 and distances (which
// are quadratic in them) ~2^16.
constexpr double kBf16CosineDistance = 2e-3;
constexpr double kBf16x3CosineDistance = 1e-7;

TEST_F(ClipModelTest, ReducedPrecisionEmbeddingsAreWithinTheirCosineBoundsOfFp32) {
  const Matrix pixels = DebugPixels();
  std::vector<std::vector<int32_t>> ids = RandomTokenIds(20, model_->config().text.vocab_size, 3);
  const Matrix images32 = model_->EncodePixels(pixels).value();
  const Matrix texts32 = model_->EncodeTokens(ids).value();
  for (const auto& [precision, bound] :
       {std::pair{Precision::kBf16, kBf16CosineDistance}, std::pair{Precision::kBf16x3, kBf16x3CosineDistance}}) {
    SCOPED_TRACE(std::string(PrecisionName(precision)));
    ClipLoadOptions options;
    options.precision = precision;
    Result<ClipModel> m = LoadClipModel(testing::FixtureDir(), options);
    if (!Bf16Support().available) {
      // The refusal is what this CPU must give.
      ASSERT_FALSE(m.ok());
      EXPECT_EQ(m.status().code(), StatusCode::kUnsupported);
      EXPECT_THAT(m.status().expected(), ::testing::HasSubstr("AVX512_BF16 or AMX"));
      continue;
    }
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(m->precision(), precision);
    EXPECT_NE(m->Fingerprint().value(), model_->Fingerprint().value());
    const Matrix images = m->EncodePixels(pixels).value();
    const Matrix texts = m->EncodeTokens(ids).value();
    double worst = 0.0;
    for (int i = 0; i < images32.rows; ++i) worst = std::max(worst, CosineDistance(images32, images, i));
    for (int i = 0; i < texts32.rows; ++i) worst = std::max(worst, CosineDistance(texts32, texts, i));
    EXPECT_LE(worst, bound);
    EXPECT_GT(worst, 0.0);  // the reduced precision really ran
    RecordProperty(std::string(PrecisionName(precision)) + "_worst_cosine_distance", std::to_string(worst));
  }
  if (!Bf16Support().available)
    GTEST_SKIP() << "no AVX512_BF16/AMX on this CPU (oneDNN: " << Bf16Support().isa << "): refusals tested";
}

TEST_F(ClipModelTest, AutoPrecisionFollowsTheCpu) {
  ClipLoadOptions automatic;
  automatic.precision = Precision::kAuto;
  const ClipModel m = LoadClipModel(testing::FixtureDir(), automatic).value();
  EXPECT_EQ(m.precision(), Bf16Support().amx ? Precision::kBf16 : Precision::kFp32);
  EXPECT_THAT(m.precision_reason(), ::testing::HasSubstr("auto"));
  EXPECT_EQ(model_->precision(), Precision::kFp32);
  EXPECT_EQ(ParsePrecision("bf16").value(), Precision::kBf16);
  EXPECT_EQ(ParsePrecision("bf16x3").value(), Precision::kBf16x3);
  EXPECT_EQ(ParsePrecision("fp16").status().expected(), "fp32, bf16, bf16x3 or auto");
}

TEST_F(ClipModelTest, EmptyInputsGiveEmptyMatrices) {
  EXPECT_EQ(model_->EncodeTexts({}).value().rows, 0);
  EXPECT_EQ(model_->EncodeImages({}).value().rows, 0);
}

TEST_F(ClipModelTest, RejectsBadPixelMatrixAndTokenIds) {
  const Result<Matrix> pixels = model_->EncodePixels(Matrix(1, 10));
  ASSERT_FALSE(pixels.ok());
  EXPECT_THAT(pixels.status().expected(), ::testing::HasSubstr("12288 floats per image"));
  const Result<Matrix> ids = model_->EncodeTokens({{kStartOfText, 50000, kEndOfText}});
  ASSERT_FALSE(ids.ok());
  EXPECT_THAT(ids.status().what(), ::testing::HasSubstr("token id 50000"));
}

TEST_F(ClipModelTest, FingerprintHashesWeightsAndPreprocessing) {
  const std::string fp = model_->Fingerprint().value();
  EXPECT_EQ(fp.size(), 64u);
  EXPECT_EQ(fp, model_->Fingerprint().value());
}

}  // namespace
}  // namespace visalign::clip
