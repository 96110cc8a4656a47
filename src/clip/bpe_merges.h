// The merge step both BPE tokenizers share (CLIP's byte-level BPE, tokenizer.cc; Hugging Face
// tokenizers' BPE from tokenizer.json, hf_bpe_tokenizer.cc): a table of ranked merges of two symbol
// ids into one, applied to a word's symbols lowest rank first, leftmost on ties, as Python CLIP's
// bpe() rounds and the Rust tokenizers' Word::merge_all both do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace visalign::clip {

class BpeMerges {
 public:
  // Appends the merge (left, right) -> merged with the next rank (0, 1, ...). A pair added twice
  // keeps its last rank, as the reference implementations' dicts do.
  void Add(int32_t left, int32_t right, int32_t merged);
  // The rank of a pair's merge, or nullptr.
  const int32_t* Find(int32_t left, int32_t right) const;
  size_t size() const { return result_.size(); }

  // Merges `ids` in place until no adjacent pair has a merge. O(n log n) in the word's length:
  // symbols in a linked list, candidate pairs in a heap ordered by (rank, position). A merge's
  // result only takes part in merges of higher rank (BPE learns a symbol before any merge that uses
  // it), so taking the leftmost lowest-rank pair one at a time is CLIP's round, occurrence by
  // occurrence; it is what tokenizers' Word::merge_all does.
  void Apply(std::vector<int32_t>& ids) const;

 private:
  std::unordered_map<uint64_t, int32_t> rank_;  // (left id, right id) -> rank
  std::vector<int32_t> result_;                 // rank -> merged id
};

}  // namespace visalign::clip
