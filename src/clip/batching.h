// How ClipModel splits a list of inputs into forward passes: equal chunks (images) or length
// buckets (texts), and how those chunks are spread over threads. Internal to the clip module.
#pragma once

#include <vector>

namespace visalign::clip {

// Positions [begin, end) of an encoding order, encoded as one forward pass.
struct Chunk {
  int begin = 0;
  int end = 0;
};

// With at least this many items per thread, a batch is split across threads (each encoding its own
// chunks single-threaded) instead of running every operation on all threads.
inline constexpr int kMinItemsPerThread = 4;

// Independent chunks of at most `chunk_items` items each encoded single-threaded on its own thread
// (`across_threads`: no synchronisation per operation, which dominates on a busy machine, and
// single-threaded GEMMs at full efficiency), or one chunk at a time with every operation on all
// threads (small batches). Either way at most max_batch items are in flight (activation memory).
struct ThreadPlan {
  bool across_threads = false;
  int chunk_items = 1;
};
ThreadPlan PlanThreads(int count, int max_batch, int threads);

// `count` items in order cut into equal chunks of at most plan.chunk_items; across threads, their
// number is a multiple of `threads` so that every thread gets the same work.
std::vector<Chunk> EvenChunks(int count, const ThreadPlan& plan, int threads);

// The cost of one more text batch, in token positions: what a forward pass costs beyond its rows
// (GEMM calls, packing every weight matrix once). Bucketing pads a batch only where that is cheaper.
inline constexpr int kBatchCostInPositions = 16;

// Texts grouped by length: order[p] is the input index of position p (inputs stably sorted by
// length), batches are runs of positions, longest batch first (threads taking batches in turn then
// finish together).
struct TextBatches {
  std::vector<int> order;
  std::vector<Chunk> batches;
};

// Length buckets of at most max_items texts (lengths = positions a text needs: eot index + 1) that
// minimise the computed positions (batch size × longest length, summed) plus kBatchCostInPositions
// per batch. So a batch pads its shorter texts only where splitting them off would cost more: for
// every split of a batch, (texts before it) × (longest − their longest) ≤ kBatchCostInPositions.
TextBatches BucketByLength(const std::vector<int>& lengths, int max_items);

}  // namespace visalign::clip
