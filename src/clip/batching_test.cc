// Length buckets and thread plans: what ClipModel's batching promises (every input encoded once, in
// batches of bounded size, padding only where it is cheaper than another forward pass).
#include "clip/batching.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace visalign::clip {
namespace {

// Batches tile positions [0, n) without gaps, each at most max_items; order is a permutation.
void ExpectValidBuckets(const TextBatches& b, size_t n, int max_items) {
  std::vector<int> sorted = b.order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> identity(n);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(sorted, identity);
  std::vector<Chunk> batches = b.batches;
  std::sort(batches.begin(), batches.end(), [](const Chunk& x, const Chunk& y) { return x.begin < y.begin; });
  int next = 0;
  for (const Chunk& c : batches) {
    EXPECT_EQ(c.begin, next);
    EXPECT_GT(c.end, c.begin);
    EXPECT_LE(c.end - c.begin, max_items);
    next = c.end;
  }
  EXPECT_EQ(next, static_cast<int>(n));
}

int Longest(const TextBatches& b, const std::vector<int>& lengths, const Chunk& c) {
  return lengths[b.order[c.end - 1]];
}

TEST(BucketByLengthTest, SortsStablyByLengthAndKeepsShortAndLongTextsApart) {
  // 25 truncated texts (77 positions) among short captions, as in a typical caption set.
  std::vector<int> lengths;
  for (int i = 0; i < 100; ++i) lengths.push_back(i % 4 == 0 ? 77 : 5 + i % 7);
  const TextBatches b = BucketByLength(lengths, 64);
  ExpectValidBuckets(b, lengths.size(), 64);
  for (size_t p = 1; p < b.order.size(); ++p) {
    const int prev = b.order[p - 1];
    const int cur = b.order[p];
    EXPECT_TRUE(lengths[prev] < lengths[cur] || (lengths[prev] == lengths[cur] && prev < cur));
  }
  // No batch mixes a truncated text with a caption: the captions' padding would cost far more than
  // a forward pass.
  for (const Chunk& c : b.batches) {
    EXPECT_TRUE(lengths[b.order[c.begin]] == 77 || Longest(b, lengths, c) < 77);
  }
  // Longest batch first.
  EXPECT_EQ(Longest(b, lengths, b.batches.front()), 77);
}

TEST(BucketByLengthTest, PadsOnlyWhereCheaperThanAnotherBatch) {
  // 3 and 4 positions: one batch (3 padded positions < the cost of a batch).
  EXPECT_EQ(BucketByLength({4, 3, 3, 3}, 64).batches.size(), 1u);
  // 3 and 40 positions: two batches (37 padded positions > kBatchCostInPositions).
  const TextBatches b = BucketByLength({40, 3, 3}, 64);
  ASSERT_EQ(b.batches.size(), 2u);
  EXPECT_EQ(b.order, (std::vector<int>{1, 2, 0}));
  // Over random-looking lengths, no batch can be split with a saving: for every split point,
  // (texts before it) × (longest − their longest) ≤ kBatchCostInPositions.
  std::vector<int> lengths;
  for (int i = 0; i < 300; ++i) lengths.push_back(2 + (i * 37) % 76);
  const TextBatches many = BucketByLength(lengths, 32);
  ExpectValidBuckets(many, lengths.size(), 32);
  EXPECT_GT(many.batches.size(), 300u / 32);  // more batches than the size limit alone needs
  for (const Chunk& c : many.batches) {
    const int longest = Longest(many, lengths, c);
    for (int k = c.begin + 1; k < c.end; ++k) {
      EXPECT_LE((k - c.begin) * (longest - lengths[many.order[k - 1]]), kBatchCostInPositions);
    }
  }
}

TEST(BucketByLengthTest, EqualLengthsFillBatchesUpToTheLimit) {
  const TextBatches b = BucketByLength(std::vector<int>(100, 5), 32);
  ExpectValidBuckets(b, 100, 32);
  EXPECT_EQ(b.batches.size(), 4u);  // ceil(100 / 32)
  EXPECT_TRUE(BucketByLength({}, 32).batches.empty());
}

TEST(ThreadPlanTest, SplitsLargeBatchesAcrossThreadsInEqualChunks) {
  const ThreadPlan small = PlanThreads(6, 64, 2);
  EXPECT_FALSE(small.across_threads);
  EXPECT_EQ(small.chunk_items, 64);
  const ThreadPlan large = PlanThreads(480, 64, 2);
  EXPECT_TRUE(large.across_threads);
  EXPECT_EQ(large.chunk_items, 32);
  const std::vector<Chunk> chunks = EvenChunks(480, large, 2);
  ASSERT_EQ(chunks.size(), 16u);  // 15 chunks of 32 rounded up to a multiple of 2 threads: 16 of 30
  for (const Chunk& c : chunks) EXPECT_EQ(c.end - c.begin, 30);
  EXPECT_EQ(chunks.back().end, 480);
  EXPECT_FALSE(PlanThreads(100, 64, 1).across_threads);
}

}  // namespace
}  // namespace visalign::clip
