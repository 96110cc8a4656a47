// Threading helpers: the process-wide thread budget (set by the CLI's --threads) and a
// ParallelFor over an index range. Work is split into contiguous chunks handed out dynamically.
#pragma once

#include <cstddef>
#include <functional>

namespace visalign {

// Number of worker threads to use; defaults to the hardware concurrency.
int ThreadCount();
void SetThreadCount(int n);  // n <= 0 restores the default

// Calls fn(i) for i in [0, n) on up to `threads` threads (ThreadCount() when 0).
// fn must be safe to run concurrently for different i. Exceptions are not allowed to escape fn.
void ParallelFor(size_t n, const std::function<void(size_t)>& fn, int threads = 0);

}  // namespace visalign
