// Many workers, one run, no coordinator: concurrent `visalign violin generate` processes on one run
// store against the fault-injecting reference server (20 % HTTP 500, a rate limit with 429s), one
// of them SIGKILLed mid-run. Every item ends done exactly once, every done image matches its
// recorded SHA-256, and the server served no prompt twice except those in flight in the killed
// worker.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <thread>

#include "testing/cli_runner.h"
#include "testing/violin_generation.h"
#include "visalign/core/io.h"
#include "visalign/store.h"

namespace visalign {
namespace {
namespace fs = std::filesystem;
using testing::Child;
using testing::RunResult;
using testing::TempDir;

constexpr int kWorkers = 4;
constexpr int kConcurrency = 4;
constexpr double kFailRate = 0.2;
constexpr int kLatencyMs = 20;
constexpr double kServerRateLimit = 30;
constexpr size_t kKillAfterDone = 50;
constexpr std::chrono::seconds kPatience{120};

store::RunCounts CountsOf(const fs::path& store) {
  auto s = store::OpenStore(store);
  if (!s.ok()) return {};
  auto c = (*s)->Counts("ref");
  return c.ok() ? *c : store::RunCounts{};
}

TEST(SharedRun, FourGenerateWorkersOneKilledDoEveryItemOnce) {
  TempDir t;
  const auto items = testing::WriteDataset(t / "ds");
  auto srv = testing::StartServer(t / "ds", kFailRate, kLatencyMs, kServerRateLimit);
  const std::vector<std::string> extra = {"--concurrency", std::to_string(kConcurrency), "--max-attempts", "60",
                                          "--lease", "2"};
  std::vector<Child> workers;
  for (int w = 0; w < kWorkers; ++w)
    workers.push_back(testing::StartVisalign(testing::GenerateArgs(t / "ds", t / "store", srv->url(), extra), t.path(),
                                             "worker" + std::to_string(w)));
  for (const Child& c : workers) ASSERT_GT(c.pid, 0);

  // SIGKILL one worker (the visalign process itself) once the run is well under way.
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (CountsOf(t / "store").done < kKillAfterDone && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(kill(workers[0].pid, SIGKILL), 0);
  const store::RunCounts at_kill = CountsOf(t / "store");
  EXPECT_LT(at_kill.done, items.size()) << "the run ended before the kill";
  EXPECT_EQ(testing::Wait(workers[0]).exit_code, 128 + SIGKILL);
  for (int w = 1; w < kWorkers; ++w) {
    RunResult r = testing::Wait(workers[w]);
    EXPECT_EQ(r.exit_code, 0) << "worker " << w << ":\n" << r.out << r.err;
  }

  // Every item done exactly once, nothing leased, each image as recorded.
  auto s = store::OpenStore(t / "store").value();
  const store::RunCounts c = s->Counts("ref").value();
  EXPECT_EQ(c.done, items.size());
  EXPECT_EQ(c.pending + c.failed + c.leased, 0u);
  std::map<std::string, uint64_t> rows_by_prompt;
  const std::vector<store::Row> rows = s->Rows("ref").value();
  for (const store::Row& r : rows) {
    ++rows_by_prompt[r.prompt];
    EXPECT_EQ(r.status, store::RowStatus::kDone) << r.item_id;
    auto sha = Sha256File(s->root() / r.image_path);
    ASSERT_TRUE(sha.ok()) << r.item_id << ": " << sha.status().ToString();
    EXPECT_EQ(*sha, r.sha256) << r.item_id;
  }
  EXPECT_EQ(rows_by_prompt.size(), items.size());

  // The server's count of images per prompt: once each, except those in flight in the killed worker.
  const nlohmann::json stats = srv->Stats();
  EXPECT_GT(stats["by_status"].value("500", 0), 0) << stats.dump();
  EXPECT_GT(stats["by_status"].value("429", 0), 0) << stats.dump();
  uint64_t served_twice = 0;
  for (const auto& [prompt, served] : testing::Counts(*srv, "images_by_prompt")) {
    ASSERT_EQ(rows_by_prompt.count(prompt), 1u) << prompt;
    EXPECT_LE(served, 2u) << prompt;
    served_twice += served - 1;
  }
  EXPECT_LE(served_twice, static_cast<uint64_t>(kConcurrency));
  std::printf("shared run: %zu items, %d workers x %d in flight, killed one at %zu done; images served twice "
              "(in flight in the killed worker): %llu\n",
              items.size(), kWorkers, kConcurrency, at_kill.done, static_cast<unsigned long long>(served_twice));
}

}  // namespace
}  // namespace visalign
