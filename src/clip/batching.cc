#include "clip/batching.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace visalign::clip {

ThreadPlan PlanThreads(int count, int max_batch, int threads) {
  ThreadPlan plan;
  plan.across_threads = threads > 1 && count >= kMinItemsPerThread * threads;
  plan.chunk_items = std::max(1, plan.across_threads ? max_batch / threads : max_batch);
  return plan;
}

std::vector<Chunk> EvenChunks(int count, const ThreadPlan& plan, int threads) {
  const int multiple = plan.across_threads ? threads : 1;
  int chunks = (count + plan.chunk_items - 1) / plan.chunk_items;
  chunks = (chunks + multiple - 1) / multiple * multiple;
  std::vector<Chunk> out;
  for (int c = 0; c < chunks; ++c) {
    const int begin = static_cast<int>(static_cast<int64_t>(count) * c / chunks);
    const int end = static_cast<int>(static_cast<int64_t>(count) * (c + 1) / chunks);
    if (end > begin) out.push_back({begin, end});
  }
  return out;
}

TextBatches BucketByLength(const std::vector<int>& lengths, int max_items) {
  TextBatches b;
  const int n = static_cast<int>(lengths.size());
  b.order.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) b.order[i] = i;
  std::stable_sort(b.order.begin(), b.order.end(), [&](int x, int y) { return lengths[x] < lengths[y]; });
  // Optimal partition of the sorted lengths by dynamic programming: best[i] is the cheapest cost of
  // positions [0, i); a batch [j, i) costs (i - j) · lengths[order[i - 1]] + kBatchCostInPositions.
  std::vector<int64_t> best(static_cast<size_t>(n) + 1, std::numeric_limits<int64_t>::max());
  std::vector<int> start(static_cast<size_t>(n) + 1, 0);
  best[0] = 0;
  for (int i = 1; i <= n; ++i) {
    const int64_t longest = lengths[b.order[i - 1]];
    for (int j = i - 1; j >= std::max(0, i - max_items); --j) {
      const int64_t cost = best[j] + (i - j) * longest + kBatchCostInPositions;
      if (cost < best[i]) {
        best[i] = cost;
        start[i] = j;
      }
    }
  }
  for (int i = n; i > 0; i = start[i]) b.batches.push_back({start[i], i});  // longest first
  return b;
}

}  // namespace visalign::clip
