// `visalign violin generate` over real HTTP on 127.0.0.1 against the in-process VIOLIN reference server:
// failures and rate limits, SIGINT / SIGKILL interruption and resume without duplicate requests,
// timeouts, the command backend with hostile prompts, and secrets kept out of logs and the store.
// The API profiles, early stops, moved servers and --dry-run are in generate_api_test.cc.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "testing/cli_runner.h"
#include "testing/violin_generation.h"
#include "visalign/benchmarks/violin/dataset.h"
#include "visalign/benchmarks/violin/reference_server.h"
#include "visalign/core/io.h"
#include "visalign/imaging/image.h"
#include "visalign/store.h"

namespace visalign {
namespace {
namespace fs = std::filesystem;
using testing::RunResult;
using testing::RunVisalign;
using testing::StartVisalign;
using testing::TempDir;
using testing::Wait;

using testing::Counts;
using testing::GenerateArgs;
using testing::kSide;
using testing::StartServer;
using testing::WriteDataset;

size_t DoneCount(const fs::path& store) {
  auto s = store::OpenStore(store).value();
  auto c = s->Counts("ref");
  return c.ok() ? c->done : 0;
}

void WaitUntilDone(const fs::path& store, size_t at_least) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (DoneCount(store) < at_least && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// Every done row has its complete image with the recorded SHA-256, and every file in the run's
// image folder at a final name decodes.
void ExpectStoreConsistent(const fs::path& store) {
  auto s = store::OpenStore(store).value();
  auto done = s->DoneImages("ref").value();
  for (const auto& d : done) {
    ASSERT_TRUE(fs::exists(d.image_path)) << d.image_path;
    EXPECT_EQ(Sha256File(d.image_path).value(), d.sha256) << d.image_path;
  }
  for (const auto& e : fs::directory_iterator(store / "images/ref"))
    if (e.path().extension() == ".png") {
      EXPECT_TRUE(imaging::ReadImage(e.path()).ok()) << e.path();
    }
}

TEST(GenerateReference, FailuresAndRateLimitsStillGiveEveryItemExactlyOnce) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", /*fail_rate=*/0.2, 0, /*rate_limit=*/40);
  auto r = RunVisalign(GenerateArgs(t / "ds", t / "store", srv->url(), {"--concurrency", "8", "--max-attempts", "30"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(std::to_string(items.size()) + " of " + std::to_string(items.size()) + " images done now"),
            std::string::npos)
      << r.out;
  Json stats = srv->Stats();
  EXPECT_GT(stats["by_status"].value("500", 0), 0) << stats.dump();
  EXPECT_GT(stats["by_status"].value("429", 0), 0) << stats.dump();
  auto images = Counts(*srv, "images_by_prompt");
  EXPECT_EQ(images.size(), items.size());
  for (const auto& [prompt, n] : images) EXPECT_EQ(n, 1u) << prompt;
  // Each stored image is exactly the ground truth (exact profile), under its own item.
  auto store = store::OpenStore(t / "store").value();
  auto done = store->DoneImages("ref").value();
  ASSERT_EQ(done.size(), items.size());
  std::map<std::string, const violin::ManifestItem*> by_id;
  for (const auto& it : items) by_id[it.id] = &it;
  for (const auto& d : done) {
    auto img = imaging::ReadImage(d.image_path).value();
    EXPECT_EQ(img.rgb, violin::RenderGroundTruth(*by_id.at(d.item_id), kSide, kSide).rgb) << d.item_id;
  }
  auto rows = store->Rows("ref").value();
  for (const auto& row : rows) EXPECT_GE(row.attempts, 1);
}

// After an interrupted run: re-running the same command completes the run, and no item that was
// already done is requested again (counted by the server).
void ResumeWithoutRepeatingDoneItems(const TempDir& t, const violin::ReferenceServer& srv,
                                     const std::vector<violin::ManifestItem>& items, store::RunStore& store,
                                     const std::vector<store::DoneImage>& done_before) {
  auto requests_before = Counts(srv, "requests_by_prompt");
  auto r = RunVisalign(GenerateArgs(t / "ds", t / "store", srv.url(), {"--concurrency", "8"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(store.Counts("ref").value().done, items.size());
  auto requests_after = Counts(srv, "requests_by_prompt");
  std::map<std::string, std::string> prompt_of;
  for (const auto& it : items) prompt_of[it.id] = it.prompt;
  for (const auto& d : done_before)
    EXPECT_EQ(requests_after[prompt_of[d.item_id]], requests_before[prompt_of[d.item_id]]) << d.item_id;
}

TEST(GenerateReference, SigintStopsGracefullyAndResumeNeverRepeatsDoneItems) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", 0, /*latency_ms=*/40);
  const testing::Child child =
      StartVisalign(GenerateArgs(t / "ds", t / "store", srv->url(), {"--concurrency", "2"}), t.path(), "gen");
  WaitUntilDone(t / "store", 4);
  kill(child.pid, SIGINT);
  const RunResult stopped = Wait(child);
  EXPECT_EQ(stopped.exit_code, 130);
  const std::string log = stopped.out + stopped.err;
  EXPECT_NE(log.find("left pending"), std::string::npos) << log;
  EXPECT_NE(log.find("run the same command again to resume"), std::string::npos) << log;
  ExpectStoreConsistent(t / "store");
  auto store = store::OpenStore(t / "store").value();
  auto done_before = store->DoneImages("ref").value();
  ASSERT_GE(done_before.size(), 4u);
  ASSERT_LT(done_before.size(), items.size());
  ResumeWithoutRepeatingDoneItems(t, *srv, items, *store, done_before);
  for (const auto& [prompt, n] : Counts(*srv, "images_by_prompt")) EXPECT_EQ(n, 1u) << prompt;
}

TEST(GenerateReference, SigkillLosesOnlyInFlightWorkAndResumeCompletes) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", 0, /*latency_ms=*/15);
  const testing::Child child =
      StartVisalign(GenerateArgs(t / "ds", t / "store", srv->url(), {"--concurrency", "4"}), t.path(), "gen");
  WaitUntilDone(t / "store", 6);
  kill(child.pid, SIGKILL);
  EXPECT_EQ(Wait(child).exit_code, 128 + SIGKILL);
  ExpectStoreConsistent(t / "store");
  auto store = store::OpenStore(t / "store").value();
  auto done_before = store->DoneImages("ref").value();
  ResumeWithoutRepeatingDoneItems(t, *srv, items, *store, done_before);
  ExpectStoreConsistent(t / "store");
}

TEST(GenerateReference, ASecondSigintExitsAtOnce) {
  TempDir t;
  WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", 0, /*latency_ms=*/3000);
  const testing::Child child =
      StartVisalign(GenerateArgs(t / "ds", t / "store", srv->url(), {"--concurrency", "2"}), t.path(), "gen");
  // Signal only once requests are in flight (the handlers are installed by then).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (srv->Stats()["requests"].get<int>() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto t0 = std::chrono::steady_clock::now();
  kill(child.pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  kill(child.pid, SIGINT);
  const RunResult stopped = Wait(child);
  EXPECT_EQ(stopped.exit_code, 130);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1500));
  EXPECT_NE((stopped.out + stopped.err).find("exiting now"), std::string::npos) << stopped.err;
}

TEST(GenerateReference, AHangingServerAndAnUnknownPromptAreClearPerItemErrors) {
  TempDir t;
  WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", 0, /*latency_ms=*/2000);
  auto r = RunVisalign(
      GenerateArgs(t / "ds", t / "store", srv->url(), {"--timeout", "0.2", "--max-attempts", "2", "--limit", "2"}));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("0 of 2 images done now, 2 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("timed out"), std::string::npos) << r.out;
  auto rows = store::OpenStore(t / "store").value()->Rows("ref").value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, store::RowStatus::kFailed);
  EXPECT_EQ(rows[0].attempts, 2);
  EXPECT_NE(rows[0].last_error.find("timed out"), std::string::npos) << rows[0].last_error;

  // A dataset whose prompt the server does not know: HTTP 400 with the server's message, no retry.
  TempDir t2;
  WriteDataset(t2 / "ds", "a prompt the server has never seen");
  auto r2 = RunVisalign(GenerateArgs(t2 / "ds", t2 / "store", srv->url(), {"--limit", "1", "--timeout", "10"}));
  EXPECT_EQ(r2.exit_code, 2);
  EXPECT_NE(r2.out.find("HTTP 400: unknown prompt"), std::string::npos) << r2.out;
  EXPECT_EQ(store::OpenStore(t2 / "store").value()->Rows("ref").value()[0].attempts, 1);
}

TEST(GenerateReference, TheApiKeyIsSentButNeverLoggedOrStored) {
  TempDir t;
  WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", /*fail_rate=*/0.3);
  const std::string secret = "sk-test-DO-NOT-LEAK-4242";
  auto r = RunVisalign(GenerateArgs(t / "ds", t / "store", srv->url(),
                                    {"--api-key-env", "VISALIGN_TEST_API_KEY", "--limit", "5", "--max-attempts", "20",
                                     "--log-level", "debug"}),
                       {{"VISALIGN_TEST_API_KEY", secret}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find(secret), std::string::npos);
  EXPECT_EQ(r.err.find(secret), std::string::npos);
  for (const auto& e : fs::recursive_directory_iterator(t / "store"))
    if (e.is_regular_file()) {
      EXPECT_EQ(ReadFile(e.path()).value().find(secret), std::string::npos) << e.path();
    }
  auto run = store::OpenStore(t / "store").value()->FindRun("ref").value();
  EXPECT_EQ(run->connection["api_key_env"], "VISALIGN_TEST_API_KEY");
  EXPECT_FALSE(run->identity.contains("api_key_env"));
  // A named but unset variable is an argument error naming it.
  auto missing = RunVisalign(GenerateArgs(t / "ds", t / "store2", srv->url(), {"--api-key-env", "VISALIGN_UNSET_KEY"}));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("VISALIGN_UNSET_KEY"), std::string::npos) << missing.err;
}

TEST(GenerateReference, CommandBackendPassesHostilePromptsVerbatim) {
  TempDir t;
  const std::string prompt = R"(Pure "red" 'now' $(touch pwned); rm -rf ~ `id` & #D00000)";
  auto items = WriteDataset(t / "ds", prompt);
  fs::create_directories(t / "fixture");
  ASSERT_TRUE(imaging::WritePng(t / "fixture/x.png", violin::RenderGroundTruth(items[0], 8, 8)).ok());
  std::string script = "printf '%s' \"$1\" > \"$3/seen.txt\"; cp \"$4\" \"$2\"";
  std::string cmd =
      "/bin/sh -c '" + script + "' sh {prompt} {out} " + t.path().string() + " " + (t / "fixture/x.png").string();
  auto r = RunVisalign({"violin", "generate", "--dataset", (t / "ds").string(), "--store", (t / "store").string(),
                        "--run", "cmd", "--backend", "command", "--cmd", cmd, "--limit", "1", "--samples", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ReadFile(t / "seen.txt").value(), prompt);
  EXPECT_FALSE(fs::exists(t / "pwned"));
  EXPECT_FALSE(fs::exists("pwned"));
  auto done = store::OpenStore(t / "store").value()->DoneImages("cmd").value();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[1].k, 1);
}

TEST(GenerateReference, DirectoryBackendImportsAndReportsMissingImages) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  fs::create_directories(t / "imgs");
  ASSERT_TRUE(imaging::WritePng(t / "imgs" / (items[0].id + ".png"), violin::RenderGroundTruth(items[0], 8, 8)).ok());
  auto r = RunVisalign({"violin", "generate", "--dataset", (t / "ds").string(), "--store", (t / "store").string(),
                        "--run", "imp", "--backend", "directory", "--path", (t / "imgs").string(), "--limit", "2"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("1 of 2 images done now, 1 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(items[1].id), std::string::npos) << r.out;
}

}  // namespace
}  // namespace visalign
