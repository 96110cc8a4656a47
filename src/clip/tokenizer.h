// CLIP's byte-level BPE tokenizer (OpenAI CLIP / open_clip SimpleTokenizer) with the vocabulary
// shipped in data/clip/bpe_simple_vocab_16e6.txt.gz.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "clip/bpe_merges.h"
#include "visalign/core/status.h"

namespace visalign::clip {

class BpeTokenizer {
 public:
  // Reads the gzipped merges file (first line a header, then "a b" merges).
  static Result<BpeTokenizer> Load(const std::filesystem::path& vocab_gz);
  // The process-wide tokenizer for DataFile("clip/bpe_simple_vocab_16e6.txt.gz"), loaded once.
  static Result<const BpeTokenizer*> Default();

  // BPE ids of already cleaned text (no sot/eot, no truncation).
  std::vector<int32_t> EncodeCleaned(std::u32string_view cleaned) const;
  // The full pipeline: clean, encode, wrap in sot/eot, truncate to context_length (eot last).
  Result<std::vector<int32_t>> Tokenize(std::string_view text, int context_length) const;

  // The vocabulary string of an id (byte-level symbols, "</w>" marks a word end).
  const std::string& Token(int32_t id) const { return vocab_[static_cast<size_t>(id)]; }
  size_t vocab_size() const { return vocab_.size(); }

  // Splits cleaned text like CLIP's pre-tokenisation regex.
  static std::vector<std::u32string> PreTokenize(std::u32string_view cleaned);

 private:
  void AppendBpe(std::u32string_view piece, std::vector<int32_t>* out) const;

  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int32_t> encoder_;  // last id of each string (as Python's dict)
  BpeMerges merges_;
  int32_t byte_id_[256] = {};  // byte -> id of its symbol
};

}  // namespace visalign::clip
