// The run store's per-item cost of sharing a run (docs/performance.md "Many workers on one run"):
// claiming rows (one BEGIN IMMEDIATE transaction per batch of 4, as a worker with --concurrency 4
// does), and completing one (WriteImage of a 1 KB image: staging file + fsync; MarkDone: the lease
// check, the rename and the row update in one transaction), on a fresh SQLite store.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "visalign/store.h"

namespace visalign::store {
namespace {

constexpr size_t kBatch = 4;
constexpr size_t kRows = 100'000;
constexpr size_t kImageBytes = 1024;
constexpr std::chrono::minutes kLease{1};

// A store of kRows pending rows in a fresh temporary folder, removed afterwards.
struct Fixture {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              fmt::format("visalign-store-bench-{}-{}", ::getpid(), counter++);
  std::unique_ptr<RunStore> store = OpenStore(dir).value();
  std::vector<RowKey> keys;
  static inline int counter = 0;
  ~Fixture() {
    store.reset();
    std::filesystem::remove_all(dir);
  }
  Fixture() {
    std::vector<ItemSpec> specs;
    for (size_t i = 0; i < kRows; ++i) {
      specs.push_back({fmt::format("v1-t01-{:06d}", i), 0, "prompt", {}});
      keys.push_back({specs.back().item_id, 0});
    }
    (void)store->OpenRun({"bench", "violin", "fp", {{"backend", "bench"}}, ""});
    (void)store->AddItems("bench", specs);
  }
};

void BM_ClaimBatchOf4(benchmark::State& state) {
  Fixture f;
  size_t at = 0;
  for (auto _ : state) {
    std::vector<RowKey> batch(f.keys.begin() + static_cast<std::ptrdiff_t>(at % kRows),
                              f.keys.begin() + static_cast<std::ptrdiff_t>(at % kRows + kBatch));
    benchmark::DoNotOptimize(f.store->ClaimRows("bench", "w", batch, kLease, false));
    at += kBatch;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
}
BENCHMARK(BM_ClaimBatchOf4)->Unit(benchmark::kMicrosecond);

void BM_CompleteOne(benchmark::State& state) {
  Fixture f;
  const std::string image(kImageBytes, 'x');
  size_t at = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const RowKey& key = f.keys[at++ % kRows];
    (void)f.store->ClaimRows("bench", "w", {key}, kLease, false);
    state.ResumeTiming();
    auto staged = f.store->WriteImage("bench", key.item_id, 0, image, "png");
    benchmark::DoNotOptimize(f.store->MarkDone("bench", key.item_id, 0, "w", staged.value(), 1));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_CompleteOne)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace visalign::store

BENCHMARK_MAIN();
