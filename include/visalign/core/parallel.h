// Threading helpers: the process-wide thread budget (set by the CLI's --threads), a ParallelFor
// over an index range (contiguous chunks handed out dynamically) and ParallelForOrdered, which
// produces on workers and consumes in index order with a bounded number of results waiting.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

#include "visalign/core/status.h"

namespace visalign {

// Number of worker threads to use; defaults to the hardware concurrency.
int ThreadCount();
void SetThreadCount(int n);  // n <= 0 restores the default

// Calls fn(i) for i in [0, n) on up to `threads` threads (ThreadCount() when 0).
// fn must be safe to run concurrently for different i. Should fn throw anyway, no worker thread
// terminates the process: the remaining items are skipped and the first exception is rethrown on
// the calling thread once every worker has stopped.
void ParallelFor(size_t n, const std::function<void(size_t)>& fn, int threads = 0);

// Runs worker() on `threads` threads (at least one) and joins them all. An exception escaping a
// worker stops only that worker (the others run to completion) and becomes the returned kInternal
// Status, naming the exception; OK when no worker threw. For pools whose workers share a queue
// (judging, generation), so a bug in one request cannot kill a run with std::terminate.
Status RunWorkers(int threads, const std::function<void()>& worker);

// The kInternal Status for an exception caught at a thread or module boundary ("unexpected
// exception: <what>"); call inside a catch block.
Status StatusFromCurrentException();

// Results waiting per worker in ParallelForOrdered: enough to keep workers busy while the
// consumer catches up.
inline constexpr size_t kOrderedWindowPerThread = 4;

// Runs produce(i) for i in [0, n) on up to `threads` worker threads (ThreadCount() when 0) and
// consume(i, value of produce(i)) on the calling thread in index order, so what consume writes
// keeps the input order whatever the thread count. A worker does not start item i until
// i < consumed + window (window = max(2, kOrderedWindowPerThread * threads)), so at most
// `window` produced values wait at any time. produce must be safe to run concurrently for
// different i. The first non-OK consume stops the pipeline (items not yet started are not
// produced) and is returned; so does an exception escaping produce, as a kInternal Status.
template <typename Produce, typename Consume>
Status ParallelForOrdered(size_t n, Produce produce, Consume consume, int threads = 0) {
  using T = std::invoke_result_t<Produce&, size_t>;
  const size_t workers = std::min(n, static_cast<size_t>(threads > 0 ? threads : ThreadCount()));
  const size_t window = std::max<size_t>(2, kOrderedWindowPerThread * workers);
  std::vector<std::optional<T>> slots(window);
  std::mutex mu;
  std::condition_variable ready_cv, space_cv;
  size_t consumed = 0;
  bool stop = false;
  Status failure;  // the first exception a produce threw
  std::atomic<size_t> next{0};

  auto worker = [&] {
    for (;;) {
      const size_t i = next.fetch_add(1);
      if (i >= n) return;
      {
        std::unique_lock lock(mu);
        space_cv.wait(lock, [&] { return stop || i < consumed + window; });
        if (stop) return;
      }
      std::optional<T> value;
      try {
        value.emplace(produce(i));
      } catch (...) {
        std::lock_guard lock(mu);
        if (failure.ok()) failure = StatusFromCurrentException();
        stop = true;
        ready_cv.notify_all();
        space_cv.notify_all();
        return;
      }
      {
        std::lock_guard lock(mu);
        slots[i % window] = std::move(value);
      }
      ready_cv.notify_one();
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 0; t < workers; ++t) pool.emplace_back(worker);

  Status status;
  for (size_t i = 0; i < n && status.ok(); ++i) {
    std::optional<T> value;
    {
      std::unique_lock lock(mu);
      ready_cv.wait(lock, [&] { return slots[i % window].has_value() || !failure.ok(); });
      if (!slots[i % window].has_value()) {
        status = failure;
        break;
      }
      value = std::move(slots[i % window]);
      slots[i % window].reset();
      ++consumed;
    }
    space_cv.notify_all();
    status = consume(i, std::move(*value));
  }
  {
    std::lock_guard lock(mu);
    stop = true;
  }
  space_cv.notify_all();
  for (auto& th : pool) th.join();
  return status;
}

}  // namespace visalign
