#include "visalign/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace visalign {
namespace {

TEST(ParallelFor, VisitsEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 7}) {
    std::vector<std::atomic<int>> hits(1001);
    ParallelFor(hits.size(), [&](size_t i) { hits[i]++; }, threads);
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
}

TEST(ParallelFor, EmptyRangeDoesNothing) {
  bool called = false;
  ParallelFor(0, [&](size_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST(ThreadCount, SetAndRestoreDefault) {
  SetThreadCount(3);
  EXPECT_EQ(ThreadCount(), 3);
  SetThreadCount(0);
  EXPECT_GE(ThreadCount(), 1);
}

}  // namespace
}  // namespace visalign
