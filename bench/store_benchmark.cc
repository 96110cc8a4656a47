// The run store's per-item cost of sharing a run (docs/performance.md "Many workers on one run"):
// claiming rows (one transaction per batch of 4, as a worker with --concurrency 4 does: BEGIN
// IMMEDIATE in SQLite, SELECT ... FOR UPDATE SKIP LOCKED in PostgreSQL), and completing one
// (WriteImage of a 1 KB image: staging file + fsync; MarkDone: the lease check, the rename and the
// row update in one transaction), on a fresh embedded store and a fresh PostgreSQL database of the
// local server tests/testing/PostgresServer starts (loopback, one connection; that server runs
// with fsync off, as for tests).
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "testing/postgres_server.h"
#include "visalign/store.h"

namespace visalign::store {
namespace {

constexpr size_t kBatch = 4;
constexpr size_t kRows = 100'000;
constexpr size_t kImageBytes = 1024;
constexpr std::chrono::minutes kLease{1};

enum class Kind { kSqlite, kPostgres };

// A store of kRows pending rows: in a fresh temporary folder, or a fresh database with its images
// there; the folder is removed afterwards.
struct Fixture {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("visalign-store-bench-{}-{}", ::getpid(), counter++);
  std::unique_ptr<RunStore> store;
  std::vector<RowKey> keys;
  static inline int counter = 0;
  ~Fixture() {
    store.reset();
    std::filesystem::remove_all(dir);
  }
  explicit Fixture(Kind kind) {
    if (kind == Kind::kSqlite) {
      store = OpenStore(dir).value();
    } else {
      const std::string url = visalign::testing::PostgresServer::Shared().value()->CreateDatabase().value();
      store = OpenStore(url, {"", dir, false}).value();
    }
    std::vector<ItemSpec> specs;
    for (size_t i = 0; i < kRows; ++i) {
      specs.push_back({fmt::format("v1-t01-{:06d}", i), 0, "prompt", {}});
      keys.push_back({specs.back().item_id, 0});
    }
    (void)store->OpenRun({"bench", "violin", "fp", {{"backend", "bench"}}, ""});
    (void)store->AddItems("bench", specs);
  }
};

void BM_ClaimBatchOf4(benchmark::State& state, Kind kind) {
  Fixture f(kind);
  size_t at = 0;
  for (auto _ : state) {
    std::vector<RowKey> batch(f.keys.begin() + static_cast<std::ptrdiff_t>(at % kRows),
                              f.keys.begin() + static_cast<std::ptrdiff_t>(at % kRows + kBatch));
    benchmark::DoNotOptimize(f.store->ClaimRows("bench", "w", batch, kLease, false));
    at += kBatch;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
}
BENCHMARK_CAPTURE(BM_ClaimBatchOf4, sqlite, Kind::kSqlite)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ClaimBatchOf4, postgres, Kind::kPostgres)->Unit(benchmark::kMicrosecond);

void BM_CompleteOne(benchmark::State& state, Kind kind) {
  Fixture f(kind);
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
BENCHMARK_CAPTURE(BM_CompleteOne, sqlite, Kind::kSqlite)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_CompleteOne, postgres, Kind::kPostgres)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace visalign::store

BENCHMARK_MAIN();
