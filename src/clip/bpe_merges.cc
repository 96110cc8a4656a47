#include "clip/bpe_merges.h"

#include <functional>
#include <queue>

namespace visalign::clip {
namespace {

uint64_t PairKey(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

}  // namespace

void BpeMerges::Add(int32_t left, int32_t right, int32_t merged) {
  rank_[PairKey(left, right)] = static_cast<int32_t>(result_.size());
  result_.push_back(merged);
}

const int32_t* BpeMerges::Find(int32_t left, int32_t right) const {
  const auto it = rank_.find(PairKey(left, right));
  return it == rank_.end() ? nullptr : &it->second;
}

void BpeMerges::Apply(std::vector<int32_t>& ids) const {
  const auto n = static_cast<int32_t>(ids.size());
  if (n < 2) return;
  std::vector<int32_t> next(static_cast<size_t>(n)), prev(static_cast<size_t>(n));
  for (int32_t k = 0; k < n; ++k) {
    next[k] = k + 1 < n ? k + 1 : -1;
    prev[k] = k - 1;
  }
  struct Candidate {
    int32_t rank, left, left_id, right_id;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  const auto consider = [&](int32_t left) {
    if (left < 0 || next[left] < 0) return;
    if (const int32_t* rank = Find(ids[left], ids[next[left]])) heap.push({*rank, left, ids[left], ids[next[left]]});
  };
  for (int32_t k = 0; k + 1 < n; ++k) consider(k);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    const int32_t right = next[c.left];
    // Stale: a symbol of the pair was merged into something else since it was pushed.
    if (ids[c.left] != c.left_id || right < 0 || ids[right] != c.right_id) continue;
    ids[c.left] = result_[static_cast<size_t>(c.rank)];
    ids[right] = -1;
    next[c.left] = next[right];
    if (next[right] >= 0) prev[next[right]] = c.left;
    consider(prev[c.left]);
    consider(c.left);
  }
  size_t out = 0;
  for (int32_t k = 0; k >= 0; k = next[k]) ids[out++] = ids[k];
  ids.resize(out);
}

}  // namespace visalign::clip
