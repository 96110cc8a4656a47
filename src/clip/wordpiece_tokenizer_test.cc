// BERT WordPiece as OpenCLIP's HFTokenizer runs it for CLIPA: the clipa-tiny fixture's 32 cases
// exactly (cleaned and normalised text, pre-tokens, pieces, ids, padded ids), the tokenizer_config.json
// options the fixture does not vary on a small hand-made vocabulary, fuzzed input, and refusals.
#include "clip/wordpiece_tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "clip/config.h"
#include "clip/fixture_testing.h"
#include "clip/text_clean.h"
#include "testing/dirs.h"
#include "visalign/core/io.h"

namespace visalign::clip {
namespace {

using ::testing::HasSubstr;

class ClipaTokenizerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Result<ClipConfig> c = ReadClipConfig(testing::FixtureDir("clipa-tiny"));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    config_ = new ClipConfig(*c);
    Result<std::unique_ptr<WordPieceTokenizer>> t = WordPieceTokenizer::Load(c->tokenizer);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    tokenizer_ = t->release();
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    delete config_;
  }
  static inline const WordPieceTokenizer* tokenizer_ = nullptr;
  static inline const ClipConfig* config_ = nullptr;
};

TEST_F(ClipaTokenizerTest, ResolvesTheSettingsOfTokenizerConfig) {
  EXPECT_EQ(config_->tokenizer.kind, TokenizerKind::kWordPiece);
  EXPECT_EQ(config_->tokenizer.model_file.filename(), "vocab.txt");
  EXPECT_EQ(config_->tokenizer.cleaning, TextCleaning::kOpenClipWhitespace);  // HFTokenizer's default clean
  EXPECT_FALSE(config_->tokenizer.add_eos);                                   // strip_sep_token
  EXPECT_EQ(config_->tokenizer.bos_id, 101);
  EXPECT_EQ(config_->tokenizer.eos_id, 102);
  EXPECT_EQ(config_->tokenizer.unk_id, 100);
  EXPECT_TRUE(config_->tokenizer.lowercase);
  EXPECT_TRUE(config_->tokenizer.strip_accents);  // strip_accents null: follows do_lower_case
  EXPECT_EQ(config_->text.pad_id, 0);
  EXPECT_EQ(tokenizer_->vocab_size(), 30522u);
}

TEST_F(ClipaTokenizerTest, MatchesEveryFixtureCaseExactly) {
  const Json cases = testing::ReadFixtureJson("tokenizer_cases.json", "clipa-tiny");
  const int context = cases["context_length"].get<int>();
  ASSERT_EQ(cases["cases"].size(), 32u);
  for (const Json& c : cases["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const std::u32string cleaned = WhitespaceCleanText(DecodeUtf8(c["text"].get<std::string>()).value());
    EXPECT_EQ(EncodeUtf8(cleaned), c["cleaned"].get<std::string>());
    const std::u32string normalized = tokenizer_->Normalize(cleaned);
    EXPECT_EQ(EncodeUtf8(normalized), c["bert_normalized"].get<std::string>());
    std::vector<std::string> words;
    for (const std::u32string& w : tokenizer_->PreTokenize(normalized)) words.push_back(EncodeUtf8(w));
    EXPECT_EQ(words, c["pre_tokens"].get<std::vector<std::string>>());
    const std::vector<int32_t> body = tokenizer_->EncodeCleaned(cleaned);
    EXPECT_EQ(body, c["encode_ids"].get<std::vector<int32_t>>());
    std::vector<std::string> pieces;
    for (int32_t id : body) pieces.push_back(tokenizer_->Piece(id));
    EXPECT_EQ(pieces, c["wordpieces"].get<std::vector<std::string>>());
    std::vector<int32_t> ids = tokenizer_->Tokenize(c["text"].get<std::string>(), context).value();
    std::vector<int32_t> before_strip = c["ids_before_strip"].get<std::vector<int32_t>>();
    before_strip.pop_back();  // the [SEP] strip_sep_token turns into padding
    EXPECT_EQ(ids, before_strip);
    ids.resize(static_cast<size_t>(context), config_->text.pad_id);
    EXPECT_EQ(ids, c["ids_padded"].get<std::vector<int32_t>>());
  }
}

// Random mixes of words, pieces, punctuation, CJK, accents, controls, unknown characters and invalid
// bytes: Tokenize fails only on invalid UTF-8, else gives vocabulary ids starting with [CLS] within
// the context. A long input of each kind finishes fast (each position tries prefixes no longer than
// the longest piece).
TEST_F(ClipaTokenizerTest, FuzzedInputNeverCrashesAndStaysInRange) {
  const std::vector<std::string> parts = {"a",
                                          "red ",
                                          "turquoise",
                                          "##",
                                          "[SEP]",
                                          "\xe5\xbf\xa0",
                                          "\xf0\x9f\x8d\x8c",
                                          "e\xcc\x81",
                                          " ",
                                          "\t",
                                          "\xff",
                                          "\xc3",
                                          "\xe2\x80\x8b",
                                          "&amp;",
                                          "_",
                                          "9",
                                          "\xc4\xb0",
                                          "\x01",
                                          "\xef\xbf\xbd",
                                          ",",
                                          "q",
                                          std::string(1, '\0')};
  std::mt19937 rng(31);
  for (int round = 0; round < 300; ++round) {
    std::string text;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) text += parts[rng() % parts.size()];
    const Result<std::vector<int32_t>> ids = tokenizer_->Tokenize(text, 32);
    if (!DecodeUtf8(text).ok()) {
      EXPECT_FALSE(ids.ok()) << text;
      continue;
    }
    ASSERT_TRUE(ids.ok()) << ids.status().ToString();
    ASSERT_FALSE(ids->empty());
    EXPECT_EQ(ids->front(), 101);
    EXPECT_LE(ids->size(), 32u);
    for (int32_t id : *ids) EXPECT_LT(static_cast<size_t>(id), tokenizer_->vocab_size());
  }
  for (const std::string& part :
       {std::string("q"), std::string("red "), std::string("\xe5\xbf\xa0"), std::string("e\xcc\x81")}) {
    std::string text;
    while (text.size() < 400000) text += part;
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(tokenizer_->Tokenize(text, 32).ok());
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << part;
  }
}

TokenizerConfig SmallConfig() {
  TokenizerConfig t;
  t.kind = TokenizerKind::kWordPiece;
  t.bos_id = 1;
  t.eos_id = 2;
  t.unk_id = 3;
  t.cleaning = TextCleaning::kOpenClipWhitespace;
  return t;
}

constexpr const char* kSmallVocab = "[PAD]\n[CLS]\n[SEP]\n[UNK]\nab\n##c\nabc\nÉcole\necole\n\xe5\xbf\xa0\n,\n";

// The options the fixture does not vary: case kept (do_lower_case false, accents kept with it),
// accents stripped without lowercasing, CJK not split, [SEP] kept, truncation to the context.
TEST(WordPieceTokenizerTest, HonoursTheNormaliserOptionsAndSep) {
  TokenizerConfig t = SmallConfig();
  const auto tokenize = [&](const TokenizerConfig& c, const std::string& text, int context = 16) {
    return WordPieceTokenizer::Parse(kSmallVocab, c, "vocab").value()->Tokenize(text, context).value();
  };
  EXPECT_EQ(tokenize(t, "ABc, École"), (std::vector<int32_t>{1, 6, 10, 8, 2}));  // abc , ecole [SEP]
  t.lowercase = false;
  t.strip_accents = false;
  EXPECT_EQ(tokenize(t, "abc, École ABc"), (std::vector<int32_t>{1, 6, 10, 7, 3, 2}));
  t.strip_accents = true;
  EXPECT_EQ(tokenize(t, "École"), (std::vector<int32_t>{1, 3, 2}));  // "Ecole" is not in the vocabulary
  t = SmallConfig();
  EXPECT_EQ(tokenize(t, "ab\xe5\xbf\xa0"), (std::vector<int32_t>{1, 4, 9, 2}));
  t.split_cjk = false;
  EXPECT_EQ(tokenize(t, "ab\xe5\xbf\xa0"), (std::vector<int32_t>{1, 3, 2}));
  t = SmallConfig();
  EXPECT_EQ(tokenize(t, "abc abc abc", 3), (std::vector<int32_t>{1, 6, 2}));
  t.add_eos = false;
  EXPECT_EQ(tokenize(t, "abc abc abc", 3), (std::vector<int32_t>{1, 6}));
  EXPECT_EQ(WordPieceTokenizer::Parse(kSmallVocab, t, "vocab").value()->Tokenize("x", 1).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(WordPieceTokenizerTest, RefusesBadVocabulariesAndConfigs) {
  EXPECT_THAT(WordPieceTokenizer::Parse("", SmallConfig(), "v.txt").status().what(), HasSubstr("empty vocabulary"));
  EXPECT_THAT(WordPieceTokenizer::Parse("a\n\xff\n", SmallConfig(), "v.txt").status().what(), HasSubstr("line 2"));
  EXPECT_THAT(WordPieceTokenizer::Parse("a\nb\n", SmallConfig(), "v.txt").status().what(),
              HasSubstr("special token id 2 outside the vocabulary"));

  visalign::testing::TempDir dir;
  Json config = testing::ReadFixtureJson("config.json", "clipa-tiny");
  ASSERT_TRUE(WriteFileAtomic(dir / "open_clip_config.json", config.dump()).ok());
  std::filesystem::create_symlink(testing::FixtureDir("clipa-tiny") / "model.safetensors", dir / "model.safetensors");
  std::filesystem::create_directory(dir / "tokenizer");
  const auto write = [&](const Json& tokenizer_config) {
    ASSERT_TRUE(WriteFileAtomic(dir / "tokenizer" / "tokenizer_config.json", tokenizer_config.dump()).ok());
  };
  write({{"tokenizer_class", "BertTokenizer"}});
  EXPECT_EQ(ReadClipConfig(dir.path()).status().code(), StatusCode::kNotFound);  // no vocab.txt
  ASSERT_TRUE(WriteFileAtomic(dir / "tokenizer" / "vocab.txt", kSmallVocab).ok());
  write({{"tokenizer_class", "BertTokenizer"}, {"pad_token", "<pad>"}});
  EXPECT_THAT(ReadClipConfig(dir.path()).status().what(), HasSubstr("is not in the vocabulary"));
  write({{"tokenizer_class", "BertTokenizerFast"}, {"unk_token", {{"content", "[UNK]"}}}});
  const Result<ClipConfig> ok = ReadClipConfig(dir.path());
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->tokenizer.unk_id, 3);
  write({{"tokenizer_class", "BertTokenizer"}, {"do_lower_case", "yes"}});
  EXPECT_EQ(ReadClipConfig(dir.path()).status().what(), "field do_lower_case is \"yes\"");
  config["model_cfg"]["text_cfg"]["tokenizer_kwargs"] = {{"clean", "lower"}};
  ASSERT_TRUE(WriteFileAtomic(dir / "open_clip_config.json", config.dump()).ok());
  const Status clean = ReadClipConfig(dir.path()).status();
  EXPECT_EQ(clean.code(), StatusCode::kUnsupported);
  EXPECT_EQ(clean.what(), "unsupported tokenizer clean \"lower\"");
  config["model_cfg"]["text_cfg"]["tokenizer_kwargs"] = {{"strip_sep_token", true}, {"language", "en"}};
  ASSERT_TRUE(WriteFileAtomic(dir / "open_clip_config.json", config.dump()).ok());
  EXPECT_THAT(ReadClipConfig(dir.path()).status().what(), HasSubstr("language"));
}

}  // namespace
}  // namespace visalign::clip
