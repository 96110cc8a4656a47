// BERT's WordPiece tokenizer (Hugging Face BertTokenizer(Fast) from a checkpoint's vocab.txt and
// tokenizer_config.json) as OpenCLIP's HFTokenizer runs it for CLIPA. Procedure
// (../shared/fixtures/clipa-tiny/README.md, docs/clip.md):
//   1. the config's open_clip cleaning (CLIPA: clean='whitespace', no lowercasing);
//   2. BertNormalizer: drop U+0000, U+FFFD and category-C characters except \t \n \r, whitespace ->
//      ' '; spaces around CJK ideographs (tokenize_chinese_chars); with strip_accents NFD and every
//      Mn mark dropped; with do_lower_case each character lowercased;
//   3. BertPreTokenizer: split on whitespace, every punctuation character (ASCII punctuation or a
//      Unicode P* category) its own pre-token;
//   4. WordPiece per pre-token: greedy longest prefix in the vocabulary, continuations prefixed
//      "##"; a word that cannot be covered, or of more than 100 characters, is one [UNK];
//   5. [CLS] + pieces[:context_length - 2] + [SEP], the [SEP] left out with strip_sep_token (open_clip
//      replaces it by the pad id, which is what right padding adds anyway).
// Linear time: each position tries prefixes no longer than the vocabulary's longest piece.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "clip/text_tokenizer.h"

#include "visalign/core/json.h"

namespace visalign::clip {

class WordPieceTokenizer : public TextTokenizer {
 public:
  // Reads config.model_file (vocab.txt) and takes the normaliser options, specials and cleaning
  // from `config`.
  static Result<std::unique_ptr<WordPieceTokenizer>> Load(const TokenizerConfig& config);
  // A vocabulary given as vocab.txt's text (one piece per line, the line number its id; `source`
  // names it in errors).
  static Result<std::unique_ptr<WordPieceTokenizer>> Parse(std::string_view vocab_text, const TokenizerConfig& config,
                                                           const std::string& source);

  // Steps 2 and 3 on already cleaned text.
  std::u32string Normalize(std::u32string_view cleaned) const;
  std::vector<std::u32string> PreTokenize(std::u32string_view normalized) const;
  // Steps 2-4: body ids of already cleaned text (no specials, no truncation).
  std::vector<int32_t> EncodeCleaned(std::u32string_view cleaned) const;
  const std::string& Piece(int32_t id) const { return pieces_[static_cast<size_t>(id)]; }
  size_t vocab_size() const { return pieces_.size(); }
  // The id of a vocabulary piece, or nullopt.
  std::optional<int32_t> TokenId(const std::string& piece) const;

  Result<std::vector<int32_t>> Tokenize(std::string_view text, int context_length) const override;

 private:
  WordPieceTokenizer() = default;
  void AppendWord(std::u32string_view word, std::vector<int32_t>& out) const;

  std::vector<std::string> pieces_;                 // id -> piece
  std::unordered_map<std::string, int32_t> vocab_;  // piece -> id (a repeated line: the last one)
  size_t longest_piece_ = 0;                        // code points, "##" included
  TokenizerConfig config_;
};

// For an OpenCLIP text_cfg whose Hugging Face tokenizer folder `dir` holds vocab.txt and a
// tokenizer_config.json of class BertTokenizer(Fast): sets config.tokenizer (kind kWordPiece,
// model_file, [CLS] / [SEP] / [UNK] ids, do_lower_case / strip_accents / tokenize_chinese_chars,
// keeping the cleaning and add_eos = !strip_sep_token the text_cfg parser set) and config.text.pad_id
// ([PAD]).
Status ResolveWordPieceTokenizer(const std::filesystem::path& dir, const Json& tokenizer_config,
                                 const std::string& config_source, ClipConfig& config);

}  // namespace visalign::clip
