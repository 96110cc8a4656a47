#include "visalign/core/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <vector>

namespace visalign {
namespace {

TEST(ParallelFor, VisitsEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 7}) {
    std::vector<std::atomic<int>> hits(1001);
    ParallelFor(
        hits.size(), [&](size_t i) { hits[i]++; }, threads);
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
}

TEST(ParallelFor, EmptyRangeDoesNothing) {
  bool called = false;
  ParallelFor(0, [&](size_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST(ParallelForOrdered, ConsumesEveryValueInIndexOrder) {
  for (int threads : {1, 2, 7}) {
    std::vector<size_t> order;
    const Status st = ParallelForOrdered(
        500, [](size_t i) { return i * i; },
        [&](size_t i, size_t value) {
          EXPECT_EQ(value, i * i);
          order.push_back(i);
          return Status::Ok();
        },
        threads);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(order.size(), 500u);
    for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i);
  }
}

TEST(ParallelForOrdered, KeepsAtMostTheWindowOfValuesWaiting) {
  constexpr int kThreads = 3;
  std::atomic<size_t> produced{0}, consumed{0}, worst{0};
  const Status st = ParallelForOrdered(
      300,
      [&](size_t i) {
        ++produced;  // started, so counted as waiting until consumed
        return i;
      },
      [&](size_t, size_t) {
        ++consumed;
        worst = std::max(worst.load(), produced.load() - consumed.load());
        return Status::Ok();
      },
      kThreads);
  ASSERT_TRUE(st.ok());
  EXPECT_LE(worst.load(), kOrderedWindowPerThread * kThreads);
}

TEST(ParallelForOrdered, StopsAtTheFirstFailedConsume) {
  std::vector<size_t> seen;
  const Status st = ParallelForOrdered(
      1000, [](size_t i) { return i; },
      [&](size_t i, size_t) {
        seen.push_back(i);
        return i == 5 ? Status::InvalidArgument("stop at 5") : Status::Ok();
      },
      4);
  EXPECT_EQ(st.what(), "stop at 5");
  EXPECT_EQ(seen, (std::vector<size_t>{0, 1, 2, 3, 4, 5}));
}

TEST(ParallelForOrdered, EmptyRangeProducesNothing) {
  bool called = false;
  const Status st = ParallelForOrdered(
      0,
      [&](size_t i) {
        called = true;
        return i;
      },
      [&](size_t, size_t) {
        called = true;
        return Status::Ok();
      });
  EXPECT_TRUE(st.ok());
  EXPECT_FALSE(called);
}

// A bug that throws in a worker (a type_error on an unexpected reply) must not std::terminate the
// process: each pool hands the exception back to its caller.
TEST(ParallelFor, AnExceptionInAWorkerReachesTheCaller) {
  std::atomic<size_t> ran{0};
  EXPECT_THROW(ParallelFor(
                   1000,
                   [&](size_t i) {
                     ++ran;
                     if (i == 500) throw std::runtime_error("bad reply");
                   },
                   4),
               std::runtime_error);
  EXPECT_GE(ran.load(), 1u);
}

TEST(ParallelForOrdered, AnExceptionInProduceIsAnInternalStatus) {
  std::vector<size_t> consumed;
  const Status st = ParallelForOrdered(
      100,
      [](size_t i) {
        if (i == 7) throw std::runtime_error("bad reply");
        return i;
      },
      [&](size_t i, size_t) {
        consumed.push_back(i);
        return Status::Ok();
      },
      3);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_EQ(st.what(), "unexpected exception: bad reply");
  EXPECT_LE(consumed.size(), 7u);  // nothing at or after the failed item
}

TEST(RunWorkers, AThrowingWorkerStopsAloneAndBecomesTheStatus) {
  std::atomic<int> finished{0};
  std::atomic<int> started{0};
  const Status st = RunWorkers(4, [&] {
    if (started++ == 0) throw std::out_of_range("choices[0] is not an object");
    ++finished;
  });
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_EQ(st.what(), "unexpected exception: choices[0] is not an object");
  EXPECT_EQ(finished.load(), 3);
  EXPECT_TRUE(RunWorkers(2, [] {}).ok());
}

TEST(ThreadCount, SetAndRestoreDefault) {
  SetThreadCount(3);
  EXPECT_EQ(ThreadCount(), 3);
  SetThreadCount(0);
  EXPECT_GE(ThreadCount(), 1);
}

}  // namespace
}  // namespace visalign
