// The Hugging Face tokenizers BPE (tokenizer.json) as OpenCLIP's HFTokenizer runs SigLIP2's Gemma
// tokenizer: the siglip2-tiny fixture's 63 cases exactly (cleaned text, pieces, body ids, ids, padded
// ids; made by transformers.js and an independent Python BPE), the options Gemma's file does not use
// on small hand-made files, fuzzed input, and refusals.
#include "clip/hf_bpe_tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "clip/config.h"
#include "clip/fixture_testing.h"
#include "clip/text_clean.h"
#include "testing/dirs.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip {
namespace {

using ::testing::HasSubstr;

class GemmaTokenizerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Result<ClipConfig> c = ReadClipConfig(testing::FixtureDir("siglip2-tiny"));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    config_ = new ClipConfig(*c);
    Result<std::unique_ptr<HfBpeTokenizer>> t = HfBpeTokenizer::Load(c->tokenizer);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    tokenizer_ = t->release();
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    delete config_;
  }
  static inline const HfBpeTokenizer* tokenizer_ = nullptr;
  static inline const ClipConfig* config_ = nullptr;
};

TEST_F(GemmaTokenizerTest, ResolvesTheSettingsOfTokenizerConfig) {
  EXPECT_EQ(config_->tokenizer.kind, TokenizerKind::kHfBpe);
  EXPECT_EQ(config_->tokenizer.model_file.filename(), "tokenizer.json");
  EXPECT_TRUE(config_->tokenizer.add_eos);
  EXPECT_FALSE(config_->tokenizer.add_bos);
  EXPECT_EQ(config_->tokenizer.eos_id, 1);
  EXPECT_EQ(config_->tokenizer.bos_id, 2);
  EXPECT_EQ(config_->text.pad_id, 0);
  EXPECT_EQ(tokenizer_->vocab_size(), 256000u);
  EXPECT_EQ(config_->text.activation, Activation::kGeluTanh);  // act_kwargs {approximate: tanh}
}

TEST_F(GemmaTokenizerTest, MatchesEveryFixtureCaseExactly) {
  const Json cases = testing::ReadFixtureJson("tokenizer_cases.json", "siglip2-tiny");
  const int context = cases["context_length"].get<int>();
  ASSERT_EQ(cases["cases"].size(), 63u);
  for (const Json& c : cases["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const std::string cleaned = EncodeUtf8(CanonicalizeText(DecodeUtf8(c["text"].get<std::string>()).value()));
    EXPECT_EQ(cleaned, c["cleaned"].get<std::string>());
    const std::vector<int32_t> body = tokenizer_->EncodeCleaned(cleaned);
    EXPECT_EQ(body, c["encode_ids"].get<std::vector<int32_t>>());
    std::vector<std::string> pieces;
    for (int32_t id : body) pieces.push_back(tokenizer_->Piece(id));
    EXPECT_EQ(pieces, c["tokens"].get<std::vector<std::string>>());
    std::vector<int32_t> ids = tokenizer_->Tokenize(c["text"].get<std::string>(), context).value();
    EXPECT_EQ(ids, c["ids"].get<std::vector<int32_t>>());
    ids.resize(static_cast<size_t>(context), config_->text.pad_id);
    EXPECT_EQ(ids, c["ids_padded"].get<std::vector<int32_t>>());
  }
}

// Random mixes of ASCII, the metaspace, added-token text, multi-byte and unknown characters and
// invalid bytes: Tokenize fails only on invalid UTF-8, else gives ids of the vocabulary ending in
// eos within the context. One long input of each kind finishes (the BPE is O(n log n) per section).
TEST_F(GemmaTokenizerTest, FuzzedInputNeverCrashesAndStaysInRange) {
  const std::vector<std::string> parts = {"a",
                                          "red ",
                                          "\u2581",
                                          "\u2581\u2581\u2581",
                                          "<eos>",
                                          "\xe5\xbf\xa0",
                                          "\xf0\x93\x80\x80",
                                          "\xf3\xb0\x80\x80",
                                          " ",
                                          "\t",
                                          "\xff",
                                          "\xc3",
                                          "\xe2\x80\x8b",
                                          "&amp;",
                                          "_",
                                          "9"};
  std::mt19937 rng(31);
  for (int iteration = 0; iteration < 2000; ++iteration) {
    std::string text;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) text += parts[rng() % parts.size()];
    const bool valid = DecodeUtf8(text).ok();
    const Result<std::vector<int32_t>> ids = tokenizer_->Tokenize(text, 16);
    ASSERT_EQ(ids.ok(), valid) << QuoteText(text);
    if (!valid) continue;
    ASSERT_FALSE(ids->empty());
    EXPECT_LE(ids->size(), 16u);
    EXPECT_EQ(ids->back(), 1);
    for (int32_t id : *ids) EXPECT_LT(static_cast<size_t>(id), tokenizer_->vocab_size());
  }
  for (const std::string& unit :
       {std::string("\u2581"), std::string("ab"), std::string("\xf0\x93\x80\x80"), std::string("x y ")}) {
    std::string text;
    while (text.size() < 400000) text += unit;
    EXPECT_FALSE(tokenizer_->EncodeCleaned(text).empty());
  }
}

// A tokenizer.json of a few pieces exercising what Gemma's does not: [left, right] merges, a
// Sequence normalizer with Prepend, an unknown character with fuse_unk, no byte fallback,
// ignore_merges.
Json SmallTokenizer() {
  return {{"model",
           {{"type", "BPE"},
            {"vocab",
             {{"<unk>", 0}, {"<s>", 1}, {"_", 2}, {"a", 3}, {"b", 4}, {"ab", 5}, {"_ab", 6}, {"ba", 7}, {"bab", 8}}},
            {"merges", Json::array({Json::array({"a", "b"}), "_ ab", Json::array({"b", "a"}), "b ab"})},
            {"unk_token", "<unk>"},
            {"fuse_unk", true},
            {"byte_fallback", false}}},
          {"normalizer",
           {{"type", "Sequence"},
            {"normalizers", Json::array({{{"type", "Prepend"}, {"prepend", "_"}},
                                         {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "_"}}})}}},
          {"pre_tokenizer", nullptr},
          {"added_tokens", Json::array({{{"id", 1}, {"content", "<s>"}, {"normalized", false}}})}};
}

TEST(HfBpeTokenizer, AppliesMergesNormalizersUnknownsAndAddedTokens) {
  const auto t = HfBpeTokenizer::Parse(SmallTokenizer().dump(), "small").value();
  // "_abab": _ a b a b -> (a b) rank 0 twice -> _ ab ab -> (_ ab) rank 1 -> _ab ab.
  EXPECT_EQ(t->EncodeCleaned("abab"), (std::vector<int32_t>{6, 5}));
  // "bab": b a b -> (a b) first: b ab -> (b ab) rank 3 -> bab; "cc" unknown, fused into one <unk>.
  EXPECT_EQ(t->EncodeCleaned("<s>bab"), (std::vector<int32_t>{1, 2, 8}));
  EXPECT_EQ(t->EncodeCleaned("a ccb"), (std::vector<int32_t>{2, 3, 2, 0, 4}));
  Json ignore = SmallTokenizer();
  ignore["model"]["ignore_merges"] = true;
  ignore["model"]["vocab"]["_abab"] = 9;
  EXPECT_EQ(HfBpeTokenizer::Parse(ignore.dump(), "small").value()->EncodeCleaned("abab"), (std::vector<int32_t>{9}));
}

TEST(HfBpeTokenizer, RefusesWhatItDoesNotImplementNamingIt) {
  struct Case {
    std::string pointer;
    Json value;
    StatusCode code;
    std::string what;
  };
  const std::vector<Case> cases = {
      {"/model/type", "WordPiece", StatusCode::kUnsupported, "unsupported tokenizer model type \"WordPiece\""},
      {"/pre_tokenizer", {{"type", "Metaspace"}}, StatusCode::kUnsupported, "unsupported pre_tokenizer"},
      {"/model/continuing_subword_prefix", "##", StatusCode::kUnsupported, "continuing_subword_prefix"},
      {"/normalizer", {{"type", "NFKC"}}, StatusCode::kUnsupported, "unsupported normalizer"},
      {"/added_tokens/0/normalized", true, StatusCode::kUnsupported, "added token with normalized true"},
      {"/added_tokens/0/id", 99, StatusCode::kInvalidArgument, "added token"},
      {"/model/merges/1", "_ zz", StatusCode::kInvalidArgument, "merge 1 is \"_ zz\""},
      {"/model/vocab/a", 2, StatusCode::kInvalidArgument, "vocab piece"},
      {"/model/byte_fallback", "yes", StatusCode::kInvalidArgument, "byte_fallback"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pointer);
    Json j = SmallTokenizer();
    j[Json::json_pointer(c.pointer)] = c.value;
    const Result<std::unique_ptr<HfBpeTokenizer>> t = HfBpeTokenizer::Parse(j.dump(), "small");
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), c.code) << t.status().ToString();
    EXPECT_THAT(t.status().what(), HasSubstr(c.what));
  }
  EXPECT_EQ(HfBpeTokenizer::Parse("[", "small").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(HfBpeTokenizer::Parse("{}", "small").status().what(), "no \"model\" object");
}

// tokenizer_config.json decides the template (transformers' GemmaTokenizerFast rebuilds the
// post-processor from add_bos_token / add_eos_token; Gemma's defaults add bos, not eos).
TEST(HfBpeTokenizer, HonoursAddBosAndAddEosOfTokenizerConfig) {
  visalign::testing::TempDir dir;
  const std::filesystem::path fixture = testing::FixtureDir("siglip2-tiny");
  std::filesystem::copy_file(fixture / "config.json", dir / "open_clip_config.json");
  std::filesystem::create_symlink(fixture / "model.safetensors", dir / "open_clip_model.safetensors");
  std::filesystem::create_directory(dir / "tokenizer");
  std::filesystem::create_symlink(fixture / "tokenizer" / "tokenizer.json", dir / "tokenizer" / "tokenizer.json");
  // The fixture's settings without add_bos_token / add_eos_token: Gemma's defaults.
  Json settings = testing::ReadFixtureJson("tokenizer/tokenizer_config.json", "siglip2-tiny");
  settings.erase("add_bos_token");
  settings.erase("add_eos_token");
  const auto write = [&](const Json& j) {
    ASSERT_TRUE(WriteFileAtomic(dir / "tokenizer" / "tokenizer_config.json", j.dump()).ok());
  };
  write(settings);
  Result<ClipConfig> c = ReadClipConfig(dir.path());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->tokenizer.add_bos);
  EXPECT_FALSE(c->tokenizer.add_eos);
  const auto t = HfBpeTokenizer::Load(c->tokenizer).value();
  EXPECT_EQ(t->Tokenize("banana", 64).value(), (std::vector<int32_t>{2, 68092}));
  settings["tokenizer_class"] = "GemmaTokenizerFast";
  settings["add_eos_token"] = true;
  settings["pad_token"] = "<eos>";
  write(settings);
  c = ReadClipConfig(dir.path());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->text.pad_id, 1);
  const auto both = HfBpeTokenizer::Load(c->tokenizer).value();
  EXPECT_EQ(both->Tokenize("banana banana banana", 3).value(), (std::vector<int32_t>{2, 68092, 1}));
  EXPECT_EQ(both->Tokenize("x", 2).status().code(), StatusCode::kInvalidArgument);
  // A token added_tokens_decoder does not list is looked up in tokenizer.json.
  write(Json{{"tokenizer_class", "GemmaTokenizer"}, {"pad_token", "<nope>"}});
  EXPECT_THAT(ReadClipConfig(dir.path()).status().what(), HasSubstr("is not a token of the tokenizer"));
  write(Json{{"tokenizer_class", "GemmaTokenizer"}, {"add_bos_token", "no"}});
  EXPECT_EQ(ReadClipConfig(dir.path()).status().what(), "field add_bos_token is \"no\"");
  std::filesystem::remove(dir / "tokenizer" / "tokenizer.json");
  EXPECT_EQ(ReadClipConfig(dir.path()).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace visalign::clip
