#include "clip/sentencepiece_tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clip/config.h"
#include "clip/fixture_testing.h"
#include "clip/text_clean.h"

namespace visalign::clip {
namespace {

constexpr const char* kFixture = "siglip-tiny";

class SentencePieceTokenizerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Result<ClipConfig> config = ReadClipConfig(testing::FixtureDir(kFixture));
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    config_ = new ClipConfig(std::move(config).value());
    Result<std::unique_ptr<SentencePieceTokenizer>> t = SentencePieceTokenizer::Load(config_->tokenizer);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    tokenizer_ = t->release();
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    delete config_;
  }
  static ClipConfig* config_;
  static SentencePieceTokenizer* tokenizer_;
};

ClipConfig* SentencePieceTokenizerTest::config_ = nullptr;
SentencePieceTokenizer* SentencePieceTokenizerTest::tokenizer_ = nullptr;

TEST_F(SentencePieceTokenizerTest, ResolvesTheCheckpointsTokenizerFolderAndSpecialTokens) {
  EXPECT_EQ(config_->tokenizer.kind, TokenizerKind::kSentencePiece);
  EXPECT_EQ(config_->tokenizer.model_file, testing::FixtureDir(kFixture) / "tokenizer" / "spiece.model");
  EXPECT_EQ(config_->tokenizer.eos_id, 1);  // </s>
  EXPECT_EQ(config_->text.pad_id, 1);       // SigLIP pads with </s>, not <pad> (id 0)
  EXPECT_EQ(config_->text.context_length, 64);
}

// Every case of the fixture: canonicalised text, SentencePiece pieces, body ids, final and padded
// ids exactly as open_clip's HFTokenizer(clean='canonicalize') produced them.
TEST_F(SentencePieceTokenizerTest, MatchesOpenClipOnAllFixtureCases) {
  const nlohmann::json cases = testing::ReadFixtureJson("tokenizer_cases.json", kFixture)["cases"];
  ASSERT_EQ(cases.size(), 35u);
  const int context = config_->text.context_length;
  for (const auto& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const std::string text = c["text"];
    const std::string cleaned = EncodeUtf8(CanonicalizeText(DecodeUtf8(text).value()));
    EXPECT_EQ(cleaned, c["cleaned"].get<std::string>());
    EXPECT_EQ(tokenizer_->PiecesOfCleaned(cleaned), c["spm_pieces"].get<std::vector<std::string>>());
    EXPECT_EQ(tokenizer_->EncodeCleaned(cleaned), c["encode_ids"].get<std::vector<int32_t>>());
    const std::vector<int32_t> ids = tokenizer_->Tokenize(text, context).value();
    EXPECT_EQ(ids, c["ids"].get<std::vector<int32_t>>());
    std::vector<int32_t> padded = ids;
    padded.resize(static_cast<size_t>(context), config_->text.pad_id);
    EXPECT_EQ(padded, c["ids_padded"].get<std::vector<int32_t>>());
  }
}

TEST_F(SentencePieceTokenizerTest, CanonicalizeDropsAsciiPunctuationOnly) {
  EXPECT_EQ(EncodeUtf8(CanonicalizeText(U"  Forest_Green, «nice»!  ")), "forest green «nice»");
}

TEST_F(SentencePieceTokenizerTest, RejectsInvalidUtf8) {
  EXPECT_FALSE(tokenizer_->Tokenize("caf\xC3", 64).ok());
}

}  // namespace
}  // namespace visalign::clip
