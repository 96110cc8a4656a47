#include "clip/sentencepiece_tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clip/config.h"
#include "clip/fixture_testing.h"
#include "clip/text_clean.h"
#include "testing/dirs.h"

#include <fstream>

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
  const Json cases = testing::ReadFixtureJson("tokenizer_cases.json", kFixture)["cases"];
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

TEST_F(SentencePieceTokenizerTest, RejectsInvalidUtf8) { EXPECT_FALSE(tokenizer_->Tokenize("caf\xC3", 64).ok()); }

// MetaCLIP 2's XLM-R layout (XLMRobertaTokenizer over facebook/xlm-v-base's sentencepiece.bpe.model,
// not obtainable offline): metaclip2-tiny with siglip-tiny's SentencePiece model in its place, in the
// subfolder hf_tokenizer_name names. <s> 0, <pad> 1, </s> 2, <unk> 3, every other piece its
// SentencePiece id + 1, open_clip's clean='whitespace' (case kept), at most context - 2 pieces.
TEST(XlmRobertaLayoutTest, ShiftsSentencePieceIdsByTheFairseqOffset) {
  visalign::testing::TempDir dir;
  std::filesystem::copy_file(testing::FixtureDir("metaclip2-tiny") / "config.json", dir / "open_clip_config.json");
  std::filesystem::create_symlink(testing::FixtureDir("metaclip2-tiny") / "model.safetensors",
                                  dir / "model.safetensors");
  const std::filesystem::path tokenizer_dir = dir / "facebook" / "xlm-v-base";
  std::filesystem::create_directories(tokenizer_dir);
  std::filesystem::copy_file(testing::FixtureDir(kFixture) / "tokenizer" / "spiece.model",
                             tokenizer_dir / "sentencepiece.bpe.model");
  std::ofstream(tokenizer_dir / "tokenizer_config.json") << R"({"tokenizer_class": "XLMRobertaTokenizer"})";
  const Result<ClipConfig> config = ReadClipConfig(dir.path());
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->tokenizer.kind, TokenizerKind::kSentencePiece);
  EXPECT_EQ(config->tokenizer.id_offset, 1);
  EXPECT_EQ(config->tokenizer.cleaning, TextCleaning::kOpenClipWhitespace);
  EXPECT_EQ(config->text.pad_id, 1);
  EXPECT_EQ(config->text.pooling, Pooling::kEos);
  EXPECT_EQ(config->text.eos_id, 2);
  const auto xlmr = SentencePieceTokenizer::Load(config->tokenizer).value();

  TokenizerConfig t5_config = config->tokenizer;
  t5_config.id_offset = 0;
  const auto t5 = SentencePieceTokenizer::Load(t5_config).value();
  const std::string text = "A Red  apple \u5fe0 &amp; more";
  const std::string cleaned = "A Red apple \u5fe0 & more";
  EXPECT_EQ(EncodeUtf8(WhitespaceCleanText(DecodeUtf8(text).value())), cleaned);
  std::vector<int32_t> want = {0};
  bool unknown = false;
  for (int32_t id : t5->EncodeCleaned(cleaned)) {
    unknown = unknown || id == 2;  // T5's <unk>
    want.push_back(id == 2 ? 3 : id + 1);
  }
  EXPECT_TRUE(unknown) << "the text should hold a character the model does not know";
  want.push_back(2);
  EXPECT_EQ(xlmr->Tokenize(text, 77).value(), want);
  const std::vector<int32_t> truncated = xlmr->Tokenize(std::string(400, 'x') + " y z", 5).value();
  EXPECT_EQ(truncated.size(), 5u);
  EXPECT_EQ(truncated.front(), 0);
  EXPECT_EQ(truncated.back(), 2);
  EXPECT_EQ(xlmr->Tokenize("", 77).value(), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(xlmr->Tokenize("x", 1).status().code(), StatusCode::kInvalidArgument);

  // Without any file of the tokenizer the model still loads; only its text side needs token ids.
  std::filesystem::remove_all(dir / "facebook");
  const Result<ClipModel> model = LoadClipModel(dir.path());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_THAT(model->Tokenize("x").status().expected(), ::testing::HasSubstr("facebook/xlm-v-base"));
  EXPECT_EQ(model->EncodeTexts({"x"}).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(model->EncodeTokens({{0, 7, 2}}).ok());
}

}  // namespace
}  // namespace visalign::clip
