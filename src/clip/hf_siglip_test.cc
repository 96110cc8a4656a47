// transformers SiglipModel checkpoints: the siglip-tiny fixture's OpenCLIP weights rewritten under
// the HF names (hf_siglip_testing.h: an explicit name table; q/k/v split from timm's fused qkv, the
// pooling head's q and kv fused into MultiheadAttention's in_proj) give the fixture's expected
// outputs in fixture_parity_test.cc (case siglip_tiny_hf_layout). Here: what is particular to the HF
// layout, where transformers' conventions differ from OpenCLIP's (SiglipTokenizer's cleaning, the
// config defaults), and the refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <memory>

#include "clip/config.h"
#include "clip/fixture_testing.h"
#include "clip/hf_siglip_testing.h"
#include "testing/dirs.h"
#include "visalign/clip.h"
#include "visalign/core/parallel.h"

namespace visalign::clip {
namespace {

using ::testing::HasSubstr;
using testing::MaxAbsDiff;

constexpr const char* kFixture = "siglip-tiny";
constexpr float kSameWeightsTolerance = 1e-6f;  // both layouts run the same arithmetic on the same weights

struct HfFixture {
  visalign::testing::TempDir dir;
  std::vector<std::string> unmapped;
  Status written = Status::Ok();
  Json expected = testing::ReadFixtureJson("expected.json", kFixture);
  HfFixture() { written = testing::WriteHfSiglipFixture(dir.path(), unmapped); }
};

const HfFixture& Fixture() {
  static const HfFixture* fixture = new HfFixture();
  return *fixture;
}

class HfSiglipTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0);
    SetThreadCount(1);
  }
  void SetUp() override {
    ASSERT_TRUE(Fixture().written.ok()) << Fixture().written.ToString();
    ASSERT_TRUE(Fixture().unmapped.empty()) << "no HF name for " << Fixture().unmapped.front();
    Result<ClipModel> m = LoadClipModel(Fixture().dir.path());
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    model_ = std::make_unique<ClipModel>(std::move(m).value());
  }

  const Json& expected() const { return Fixture().expected; }

  std::unique_ptr<ClipModel> model_;
};

TEST_F(HfSiglipTest, ReadsTheSiglipModelConfigOntoTheSiglipTowers) {
  const ClipConfig& c = model_->config();
  EXPECT_EQ(c.layout, CheckpointLayout::kHuggingFace);
  EXPECT_TRUE(c.sigmoid_logits);
  EXPECT_EQ(c.vision.pooling, Pooling::kAttentionPool);
  EXPECT_FALSE(c.vision.class_token);
  EXPECT_FALSE(c.vision.ln_pre);
  EXPECT_EQ(c.text.pooling, Pooling::kLast);
  EXPECT_FALSE(c.text.causal);
  EXPECT_EQ(c.text.context_length, 64);
  EXPECT_EQ(c.embed_dim, 64);
  EXPECT_EQ(c.tokenizer.kind, TokenizerKind::kSentencePiece);
  EXPECT_EQ(c.tokenizer.cleaning, TextCleaning::kHfSiglip);
  EXPECT_EQ(c.text.pad_id, 1);  // SiglipTokenizer pads with "</s>"
  // SiglipImageProcessor: resize to size x size (squash), mean = std = 0.5.
  EXPECT_EQ(c.preprocess.resize_mode, ResizeMode::kSquash);
  EXPECT_EQ(c.preprocess.mean[1], 0.5f);
  EXPECT_NEAR(model_->LogitScale(), expected()["logit_scale_exp"].get<float>(), 1e-5);
  EXPECT_EQ(model_->LogitBias(), expected()["logit_bias"].get<float>());
}

// SiglipTokenizer (lowercase, delete string.punctuation, collapse whitespace; no ftfy/HTML
// unescaping; "▁" + text with SentencePiece's dummy prefix off) gives the fixture's ids for its
// non-empty texts (checked in fixture_parity_test.cc); for the empty text it encodes the lone "▁"
// piece before "</s>", where open_clip encodes only "</s>". This follows transformers'
// tokenization_siglip.py: there is no upstream fixture of the HF tokenizer.
TEST_F(HfSiglipTest, SiglipTokenizerDiffersFromOpenClipWhereTransformersDoes) {
  size_t empty = SIZE_MAX;
  for (size_t i = 0; i < expected()["texts"].size(); ++i) {
    const Json& t = expected()["texts"][i];
    const std::string text = t["text"].get<std::string>();
    SCOPED_TRACE(text);
    const std::vector<int32_t> ids = model_->Tokenize(text).value();
    if (text.empty()) {
      empty = i;
      ASSERT_EQ(ids.size(), 2u);
      EXPECT_NE(ids[0], 2) << "\"▁\" is in the fixture's vocabulary, not <unk>";
      EXPECT_EQ(ids[1], 1);
    } else {
      EXPECT_EQ(ids, t["token_ids"].get<std::vector<int32_t>>());
    }
  }
  ASSERT_NE(empty, SIZE_MAX);
  // Where the two cleanings differ: '_' is deleted (open_clip: a space), entities are not unescaped.
  EXPECT_EQ(model_->Tokenize("red_square").value(), model_->Tokenize("redsquare").value());
  EXPECT_EQ(model_->Tokenize("a &amp; b").value(), model_->Tokenize("a amp b").value());
}

TEST_F(HfSiglipTest, GivesTheNumbersOfTheSameWeightsInTheOpenClipLayout) {
  const SafetensorsFile debug =
      SafetensorsFile::Open(testing::FixtureDir(kFixture) / "debug_activations.safetensors").value();
  const ClipModel open_clip = LoadClipModel(testing::FixtureDir(kFixture)).value();
  const Matrix pixels = testing::DebugPixels(debug);
  const std::vector<std::vector<int32_t>> ids = testing::DebugTokenIds(debug);
  EXPECT_LE(MaxAbsDiff(model_->EncodePixels(pixels).value().data.data(), open_clip.EncodePixels(pixels).value().data),
            kSameWeightsTolerance);
  EXPECT_LE(MaxAbsDiff(model_->EncodeTokens(ids).value().data.data(), open_clip.EncodeTokens(ids).value().data),
            kSameWeightsTolerance);
  EXPECT_EQ(model_->LogitScale(), open_clip.LogitScale());
  EXPECT_EQ(model_->LogitBias(), open_clip.LogitBias());
}

// Published HF SigLIP configs leave most fields out: SiglipVisionConfig/SiglipTextConfig's defaults
// apply (hidden_act gelu_pytorch_tanh, layer_norm_eps 1e-6, 224 px, patch 16, context 64, vocab 32000).
TEST(HfSiglipConfig, OmittedFieldsTakeTransformersDefaults) {
  const Json config = {{"model_type", "siglip"},
                       {"vision_config", {{"model_type", "siglip_vision_model"}}},
                       {"text_config", {{"model_type", "siglip_text_model"}}}};
  const Result<ClipConfig> c = ParseHuggingFaceConfig(config, Json(), "config.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->activation, Activation::kGeluTanh);
  EXPECT_FLOAT_EQ(c->vision.layer_norm_eps, 1e-6f);
  EXPECT_FLOAT_EQ(c->text.layer_norm_eps, 1e-6f);
  EXPECT_EQ(c->vision.image_size, 224);
  EXPECT_EQ(c->vision.patch_size, 16);
  EXPECT_EQ(c->vision.width, 768);
  EXPECT_EQ(c->vision.mlp_width, 3072);
  EXPECT_EQ(c->vision.layers, 12);
  EXPECT_EQ(c->vision.heads, 12);
  EXPECT_EQ(c->text.context_length, 64);
  EXPECT_EQ(c->text.vocab_size, 32000);
  EXPECT_EQ(c->embed_dim, 768);
}

TEST(HfSiglipConfig, RefusesWhatTheSiglipTowersDoNotImplement) {
  struct Case {
    std::string pointer;
    Json value;
    std::string feature;
  };
  const std::vector<Case> cases = {
      {"/vision_config/hidden_act", "relu", "activation \"relu\""},
      {"/text_config/hidden_act", "quick_gelu", "different activations"},
      {"/vision_config/vision_use_head", false, "without its pooling head"},
      {"/text_config/projection_size", 32, "projection_size 32"},
      {"/model_type", "siglip2", "siglip2"},
      {"/text_config/fancy_new_option", 1, "unknown config field"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pointer);
    Json config = testing::HfSiglipConfig();
    config[Json::json_pointer(c.pointer)] = c.value;
    const Result<ClipConfig> parsed = ParseHuggingFaceConfig(config, Json(), "config.json");
    ASSERT_FALSE(parsed.ok());
    EXPECT_THAT(parsed.status().what(), HasSubstr(c.feature));
  }
}

}  // namespace
}  // namespace visalign::clip
