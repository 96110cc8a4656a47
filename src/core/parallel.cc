#include "visalign/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace visalign {
namespace {
std::atomic<int> g_threads{0};
}

int ThreadCount() {
  int n = g_threads.load();
  if (n > 0) return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

void SetThreadCount(int n) { g_threads = n > 0 ? n : 0; }

void ParallelFor(size_t n, const std::function<void(size_t)>& fn, int threads) {
  if (n == 0) return;
  int t = threads > 0 ? threads : ThreadCount();
  t = static_cast<int>(std::min<size_t>(static_cast<size_t>(t), n));
  if (t <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // Chunks small enough to balance uneven work, large enough to keep the counter cold.
  const size_t chunk = std::max<size_t>(1, n / (static_cast<size_t>(t) * 16));
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr first_exception;
  auto worker = [&] {
    try {
      for (;;) {
        size_t begin = next.fetch_add(chunk);
        if (begin >= n) return;
        size_t end = std::min(n, begin + chunk);
        for (size_t i = begin; i < end; ++i) fn(i);
      }
    } catch (...) {
      next = n;  // the others stop after their current chunk
      std::lock_guard lock(mu);
      if (!first_exception) first_exception = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(t - 1));
  for (int i = 1; i < t; ++i) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (first_exception) std::rethrow_exception(first_exception);
}

Status RunWorkers(int threads, const std::function<void()>& worker) {
  std::mutex mu;
  Status first_failure;
  auto guarded = [&] {
    try {
      worker();
    } catch (...) {
      Status st = StatusFromCurrentException();
      std::lock_guard lock(mu);
      if (first_failure.ok()) first_failure = std::move(st);
    }
  };
  std::vector<std::thread> pool;
  for (int i = 0; i < std::max(1, threads); ++i) pool.emplace_back(guarded);
  for (auto& th : pool) th.join();
  return first_failure;
}

Status StatusFromCurrentException() {
  try {
    throw;
  } catch (const std::exception& e) {
    return Status::Internal(std::string("unexpected exception: ") + e.what());
  } catch (...) {
    return Status::Internal("unexpected exception of unknown type");
  }
}

}  // namespace visalign
