// A Hugging Face `tokenizers` BPE model read from a checkpoint's tokenizer.json, as OpenCLIP's
// HFTokenizer(clean='canonicalize') runs it: SigLIP2's Gemma tokenizer (256000 pieces, byte fallback).
// Procedure (../shared/fixtures/siglip2-tiny/README.md, docs/clip.md): CanonicalizeText; added tokens
// split off leftmost-longest; each remaining section normalised (the tokenizer.json normalizer:
// Replace / Prepend, or a Sequence of them) and encoded as ONE BPE word (no pre-tokenizer): its
// characters as vocabulary symbols (a character not in the vocabulary becomes its UTF-8 bytes'
// <0xXX> pieces with byte_fallback, else unk, consecutive unks fused with fuse_unk), merged with
// BpeMerges; then [bos]? + body + [eos]? with the body truncated to context_length minus the added
// specials. Anything else tokenizer.json may hold (pre-tokenizers, other models and normalizers,
// word prefixes/suffixes, added tokens that are normalised or strip spaces) is refused by name.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "clip/bpe_merges.h"

#include "clip/text_tokenizer.h"

#include "visalign/core/json.h"

namespace visalign::clip {

class HfBpeTokenizer : public TextTokenizer {
 public:
  // Reads config.model_file (tokenizer.json) and takes the special tokens and cleaning from `config`.
  static Result<std::unique_ptr<HfBpeTokenizer>> Load(const TokenizerConfig& config);
  // Reads a tokenizer.json (`text`; `source` names it in errors).
  static Result<std::unique_ptr<HfBpeTokenizer>> Parse(std::string_view text, const std::string& source);

  // Body ids of already cleaned text (no specials, no truncation); their pieces.
  std::vector<int32_t> EncodeCleaned(std::string_view cleaned) const;
  const std::string& Piece(int32_t id) const { return pieces_[static_cast<size_t>(id)]; }
  size_t vocab_size() const { return pieces_.size(); }
  // The id of a vocabulary piece or added token, or nullopt.
  std::optional<int32_t> TokenId(const std::string& token) const;

  Result<std::vector<int32_t>> Tokenize(std::string_view text, int context_length) const override;

 private:
  struct Replacement {  // a normalizer step: every `from` -> `to`, or (from empty) `to` prepended
    std::string from, to;
  };
  struct AddedToken {
    std::string content;
    int32_t id;
  };
  HfBpeTokenizer() = default;
  void AppendWord(std::string word, std::vector<int32_t>& out) const;
  const AddedToken* AddedTokenAt(std::string_view text, size_t pos) const;

  std::vector<std::string> pieces_;                 // id -> piece ("" where no piece has the id)
  std::unordered_map<std::string, int32_t> vocab_;  // piece -> id
  BpeMerges merges_;
  std::vector<Replacement> normalizer_;
  // Added tokens by first byte, longest first (leftmost-longest matching).
  std::array<std::vector<AddedToken>, 256> added_;
  std::unordered_map<std::string, int32_t> added_ids_;
  std::array<int32_t, 256> byte_ids_{};  // <0xXX> pieces (byte_fallback)
  bool byte_fallback_ = false;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;
  std::optional<int32_t> unk_id_;
  TokenizerConfig config_;
};

// For an OpenCLIP text_cfg whose Hugging Face tokenizer folder `dir` holds tokenizer.json and a
// tokenizer_config.json of class GemmaTokenizer(Fast): sets config.tokenizer (kind kHfBpe,
// model_file, eos/bos ids and add_eos/add_bos from add_eos_token / add_bos_token, transformers'
// Gemma defaults false / true when absent) and config.text.pad_id (pad_token, default "<pad>").
// The special tokens must be in the tokenizer's vocabulary or added tokens; their ids are taken from
// tokenizer_config.json's added_tokens_decoder when it lists all three (no tokenizer.json parse).
Status ResolveHfBpeTokenizer(const std::filesystem::path& dir, const Json& tokenizer_config,
                             const std::string& config_source, ClipConfig& config);

}  // namespace visalign::clip
