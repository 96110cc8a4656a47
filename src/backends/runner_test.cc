// The generation runner over a scripted backend and a real SQLite store: resume, retries,
// failures, interruption, and a store that fails a write (testing::FaultInjectionStore).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "backends/test_util.h"
#include "testing/dirs.h"
#include "testing/fault_injection_store.h"
#include "visalign/backends/runner.h"
#include "visalign/core/io.h"

namespace visalign::backends {
namespace {
namespace fs = std::filesystem;

// Answers by prompt: "ok" succeeds; "flaky" fails with 503 on its first attempt; "bad" gets a 400
// (the same for every item); "refused" cannot connect; "reset-once" cannot on its first attempt; "slow" takes 300 ms
// (or until cancelled); "broken-cmd" is a command failing the same way every time (its message names the item, its
// signature does not); "flaky-cmd" a command failing on its first attempt only. Counts calls per (id, k).
class ScriptedBackend : public GenerationBackend {
 public:
  Json Identity() const override { return {{"backend", "scripted"}}; }
  Json Connection() const override { return {{"endpoint", "script"}}; }
  Attempt<GeneratedImage> Generate(const GenerationRequest& r, const std::atomic<bool>& cancel) override {
    int n;
    {
      std::lock_guard lock(mu_);
      n = ++calls_[r.item_id + "#" + std::to_string(r.k)];
    }
    if (before_answer) before_answer(r);
    if (r.prompt == "bad") return Attempt<GeneratedImage>::Fail({ErrorKind::kClient, "HTTP 400: no", {}});
    if (r.prompt == "refused" || (r.prompt == "reset-once" && n == 1))
      return Attempt<GeneratedImage>::Fail(
          {ErrorKind::kConnection, "POST http://127.0.0.1:1/v1/images/generations: Couldn't connect to server", {}});
    if (r.prompt == "flaky" && n == 1) return Attempt<GeneratedImage>::Fail({ErrorKind::kServer, "HTTP 503", {}});
    if (r.prompt == "broken-cmd" || (r.prompt == "flaky-cmd" && n == 1)) {
      AttemptError e{
          ErrorKind::kCommand, "command exited with status 1; stderr: loading " + r.item_id + " ... boom", {}};
      e.signature = "command exited with status 1; last stderr line: boom";
      return Attempt<GeneratedImage>::Fail(std::move(e));
    }
    if (r.prompt == "slow") {
      for (int i = 0; i < 30; ++i) {
        if (cancel.load()) return Attempt<GeneratedImage>::Fail({ErrorKind::kCancelled, "cancelled", {}});
        std::this_thread::sleep_for(Millis(10));
      }
    }
    return Attempt<GeneratedImage>::Ok({testing::TinyPng(static_cast<uint8_t>(r.k)), "png"});
  }
  int calls(const std::string& key) {
    std::lock_guard lock(mu_);
    return calls_[key];
  }
  // Runs before each answer (e.g. another worker acting meanwhile).
  std::function<void(const GenerationRequest&)> before_answer;
  int total() {
    std::lock_guard lock(mu_);
    int t = 0;
    for (auto& [k, v] : calls_) t += v;
    return t;
  }

 private:
  std::mutex mu_;
  std::map<std::string, int> calls_;
};

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = store::OpenStore(dir_.path()).value();
    options_.progress = false;
    options_.concurrency = 3;
    options_.retry.initial_backoff = Millis(1);
    options_.retry.max_backoff = Millis(2);
  }
  Result<RunSummary> Run(const std::vector<WorkItem>& items, const std::atomic<bool>& stop) {
    return RunGeneration(*store_, {"r", "test", "fp", {}, ""}, items, backend_, options_, stop);
  }
  visalign::testing::TempDir dir_;
  std::unique_ptr<store::RunStore> store_;
  ScriptedBackend backend_;
  RunnerOptions options_;
};

TEST_F(RunnerTest, CompletesRetriesAndRecordsFailures) {
  std::atomic<bool> stop{false};
  std::vector<WorkItem> items = {{"a", "ok", 0, 1}, {"a", "ok", 1, 2}, {"b", "flaky", 0, 3}, {"c", "bad", 0, 4}};
  auto s = Run(items, stop);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->done, 3u);
  EXPECT_EQ(s->failed, 1u);
  EXPECT_EQ(s->attempts, 5u);
  ASSERT_EQ(s->failures.size(), 1u);
  EXPECT_EQ(s->failures[0].id, "c");
  EXPECT_EQ(s->failures[0].error.rfind("HTTP 400: no", 0), 0u);
  auto rows = store_->Rows("r").value();
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[2].item_id, "b");
  EXPECT_EQ(rows[2].status, store::RowStatus::kDone);
  EXPECT_EQ(rows[2].attempts, 2);
  EXPECT_EQ(rows[3].status, store::RowStatus::kFailed);
  EXPECT_EQ(rows[3].attempts, 1);
  auto done = store_->DoneImages("r").value();
  ASSERT_EQ(done.size(), 3u);
  EXPECT_TRUE(fs::exists(done[1].image_path));
  auto run = store_->FindRun("r").value();
  EXPECT_EQ(run->identity, Json({{"backend", "scripted"}}));
  EXPECT_EQ(run->connection["endpoint"], "script");
  EXPECT_EQ(run->connection["concurrency"], 3);
}

TEST_F(RunnerTest, ResumeNeverRequestsDoneItemsAndRetriesFailuresOnlyWhenAsked) {
  std::atomic<bool> stop{false};
  std::vector<WorkItem> items = {{"a", "ok", 0, {}}, {"c", "bad", 0, {}}};
  ASSERT_TRUE(Run(items, stop).ok());
  auto again = Run(items, stop).value();
  EXPECT_EQ(again.already_done, 1u);
  EXPECT_EQ(again.skipped_failed, 1u);
  EXPECT_EQ(again.attempts, 0u);
  EXPECT_EQ(backend_.calls("a#0"), 1);
  options_.retry_failed = true;
  auto retried = Run(items, stop).value();
  EXPECT_EQ(retried.attempts, 1u);
  EXPECT_EQ(backend_.calls("a#0"), 1);
  EXPECT_EQ(backend_.calls("c#0"), 2);
  EXPECT_EQ(store_->Rows("r").value()[1].attempts, 2);
}

std::vector<WorkItem> Items(const std::vector<std::string>& prompts) {
  std::vector<WorkItem> items;
  for (size_t i = 0; i < prompts.size(); ++i) items.push_back({"i" + std::to_string(i), prompts[i], 0, {}});
  return items;
}

TEST_F(RunnerTest, TheSameNonRetryableErrorOnThreeItemsInARowStopsTheRun) {
  std::atomic<bool> stop{false};
  options_.concurrency = 1;
  auto s = Run(Items(std::vector<std::string>(10, "bad")), stop).value();
  EXPECT_EQ(s.attempts, 3u);
  EXPECT_EQ(s.failed, 3u);
  EXPECT_EQ(s.left_pending, 7u);
  EXPECT_FALSE(s.interrupted);
  ASSERT_TRUE(s.same_failure.has_value());
  EXPECT_EQ(s.same_failure->message, "HTTP 400: no");
  EXPECT_EQ(s.same_failure->kind, ErrorKind::kClient);
  EXPECT_EQ(s.same_failure_items, 3u);
  EXPECT_NE(s.ToText().find("stopped early: 3 different items in a row failed with the same error: HTTP 400: no"),
            std::string::npos)
      << s.ToText();
  EXPECT_EQ(s.ToJson()["stopped_early"]["error"], "HTTP 400: no");
  EXPECT_EQ(store_->Counts("r").value().pending, 7u);
  Status st = s.StoppedEarly("run r");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.what(), "stopped after 3 different items failed with the same error: HTTP 400: no");
  EXPECT_EQ(st.where(), "run r");
  EXPECT_NE(st.expected().find("KEY=null removes a field"), std::string::npos) << st.ToString();
}

TEST_F(RunnerTest, AnEndpointThatCannotBeReachedBeforeAnyImageStopsTheRunAtOnceWithNothingMarkedFailed) {
  std::atomic<bool> stop{false};
  options_.retry.initial_backoff = Millis(60'000);  // a retry would wait a minute: the test would time out
  auto s = Run(Items(std::vector<std::string>(10, "refused")), stop).value();
  EXPECT_LE(s.attempts, 3u);  // the requests already in flight when the first failed, no more
  EXPECT_EQ(s.failed, 0u);
  EXPECT_EQ(s.left_pending, 10u);
  EXPECT_EQ(store_->Counts("r").value().pending, 10u);
  ASSERT_TRUE(s.same_failure.has_value());
  EXPECT_EQ(s.same_failure->kind, ErrorKind::kConnection);
  EXPECT_NE(s.ToText().find("stopped early: the endpoint cannot be reached: POST http://127.0.0.1:1/v1/images/"
                            "generations: Couldn't connect to server"),
            std::string::npos)
      << s.ToText();
  Status st = s.StoppedEarly("run r");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.what().find("http://127.0.0.1:1/v1/images/generations"), std::string::npos) << st.ToString();
  EXPECT_NE(st.expected().find("--endpoint"), std::string::npos) << st.ToString();
}

TEST_F(RunnerTest, AConnectionFailureAfterAnImageWasMadeKeepsTheRetryPolicy) {
  std::atomic<bool> stop{false};
  options_.concurrency = 1;
  auto s = Run(Items({"ok", "reset-once", "ok"}), stop).value();
  EXPECT_FALSE(s.same_failure.has_value());
  EXPECT_EQ(s.done, 3u);
  EXPECT_EQ(backend_.calls("i1#0"), 2);
}

TEST_F(RunnerTest, ASuccessInBetweenStartsTheCountAgain) {
  std::atomic<bool> stop{false};
  options_.concurrency = 1;
  auto s = Run(Items({"bad", "bad", "ok", "bad", "bad", "ok", "bad"}), stop).value();
  EXPECT_FALSE(s.same_failure.has_value());
  EXPECT_TRUE(s.StoppedEarly("run r").ok());
  EXPECT_EQ(s.done, 2u);
  EXPECT_EQ(s.failed, 5u);
  EXPECT_EQ(s.ToJson()["stopped_early"], nullptr);
  options_.stop_after_same_failures = 0;  // never
  auto never = RunGeneration(*store_, {"r0", "test", "fp", {}, ""}, Items(std::vector<std::string>(5, "bad")), backend_,
                             options_, stop)
                   .value();
  EXPECT_EQ(never.failed, 5u);
}

TEST_F(RunnerTest, ACommandFailingTheSameWayOnTheFirstItemsStopsAtOnceAndLeavesThemPending) {
  std::atomic<bool> stop{false};
  options_.concurrency = 1;  // the worst case: without setting items aside, each would use all attempts
  auto s = Run(Items(std::vector<std::string>(6, "broken-cmd")), stop).value();
  EXPECT_EQ(s.attempts, 3u);
  EXPECT_EQ(s.failed, 0u);
  EXPECT_EQ(s.left_pending, 6u);
  ASSERT_TRUE(s.same_failure.has_value());
  EXPECT_EQ(s.same_failure->message, "command exited with status 1; stderr: loading i2 ... boom");
  auto rows = store_->Rows("r").value();
  EXPECT_EQ(rows[0].status, store::RowStatus::kPending);
  EXPECT_EQ(rows[0].attempts, 1);
  EXPECT_NE(rows[0].last_error.find("loading i0"), std::string::npos) << rows[0].last_error;
  EXPECT_EQ(rows[5].attempts, 0);
}

TEST_F(RunnerTest, ACommandThatFailedBeforeAnythingWorkedIsRetriedOnceSomethingDoes) {
  std::atomic<bool> stop{false};
  options_.concurrency = 1;
  auto s = Run(Items({"flaky-cmd", "ok", "ok"}), stop).value();
  EXPECT_FALSE(s.same_failure.has_value());
  EXPECT_EQ(s.done, 3u);
  EXPECT_EQ(s.attempts, 4u);
  EXPECT_EQ(backend_.calls("i0#0"), 2);
}

TEST_F(RunnerTest, FewerItemsThanTheLimitFailingTheSameWayUseTheirAttemptsAndNoMore) {
  std::atomic<bool> stop{false};
  options_.concurrency = 1;
  options_.retry.max_attempts = 4;
  auto s = Run(Items({"broken-cmd", "broken-cmd"}), stop).value();
  EXPECT_FALSE(s.same_failure.has_value());
  EXPECT_EQ(s.failed, 2u);
  EXPECT_EQ(backend_.calls("i0#0"), 4);
  EXPECT_EQ(backend_.calls("i1#0"), 4);
  EXPECT_EQ(store_->Rows("r").value()[0].attempts, 4);
}

TEST_F(RunnerTest, AChangedSeedForAnExistingRowIsRefused) {
  std::atomic<bool> stop{false};
  ASSERT_TRUE(Run({{"a", "ok", 0, 1}}, stop).ok());
  auto s = Run({{"a", "ok", 0, 2}}, stop);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().what().find("made with seed 1, now the seed is 2"), std::string::npos) << s.status().ToString();
}

TEST_F(RunnerTest, AChangedPromptForAnExistingRowIsRefused) {
  std::atomic<bool> stop{false};
  ASSERT_TRUE(Run({{"a", "ok", 0, {}}}, stop).ok());
  auto s = Run({{"a", "flaky", 0, {}}}, stop);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().what().find("now the prompt is \"flaky\""), std::string::npos) << s.status().ToString();
}

TEST_F(RunnerTest, StopLetsInFlightItemsFinishAndLeavesTheRestPending) {
  std::atomic<bool> stop{false};
  std::vector<WorkItem> items;
  for (int i = 0; i < 9; ++i) items.push_back({"s" + std::to_string(i), "slow", 0, {}});
  std::thread t([&] {
    std::this_thread::sleep_for(Millis(100));
    stop = true;
  });
  auto s = Run(items, stop).value();
  t.join();
  EXPECT_TRUE(s.interrupted);
  EXPECT_EQ(s.done, 3u);  // the three in flight finished within the grace period
  EXPECT_EQ(s.left_pending, 6u);
  EXPECT_EQ(backend_.total(), 3);
  EXPECT_EQ(store_->Counts("r").value().pending, 6u);
}

TEST_F(RunnerTest, AfterTheGracePeriodInFlightItemsAreCancelledAndStayPending) {
  std::atomic<bool> stop{false};
  options_.grace = Millis(50);
  std::vector<WorkItem> items = {{"s0", "slow", 0, {}}, {"s1", "slow", 0, {}}};
  std::thread t([&] {
    std::this_thread::sleep_for(Millis(50));
    stop = true;
  });
  auto s = Run(items, stop).value();
  t.join();
  EXPECT_EQ(s.done, 0u);
  EXPECT_EQ(s.left_pending, 2u);
  EXPECT_EQ(s.attempts, 0u);
  auto rows = store_->Rows("r").value();
  EXPECT_EQ(rows[0].status, store::RowStatus::kPending);
  EXPECT_EQ(rows[0].attempts, 0);
}

TEST_F(RunnerTest, AFailedMarkDoneStopsTheRunWithoutMarkingOrPublishingTheImage) {
  using visalign::testing::StoreOperation;
  std::atomic<bool> stop{false};
  options_.concurrency = 1;
  visalign::testing::FaultInjectionStore faulty(store::OpenStore(dir_.path()).value());
  faulty.FailOperation(StoreOperation::kMarkDone, Status::IoError("disk I/O error (injected)", "visalign.db"));
  std::vector<WorkItem> items = {{"a", "ok", 0, {}}, {"b", "ok", 0, {}}};
  auto failed = RunGeneration(faulty, {"r", "test", "fp", {}, ""}, items, backend_, options_, stop);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kIoError);
  EXPECT_NE(failed.status().what().find("injected"), std::string::npos) << failed.status().ToString();
  EXPECT_EQ(faulty.injected(StoreOperation::kMarkDone), 1);
  // Nothing is done that the store did not record, and nothing more was generated than it could keep.
  auto rows = store_->Rows("r").value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, store::RowStatus::kPending);
  EXPECT_EQ(rows[0].image_path, "");
  EXPECT_EQ(rows[1].status, store::RowStatus::kPending);
  EXPECT_EQ(backend_.calls("b#0"), 0);
  EXPECT_TRUE(store_->DoneImages("r").value().empty());
  // An image that is not recorded is not published either, and its staged file is gone.
  const fs::path image = dir_.path() / "images" / "r" / "a__0.png";
  EXPECT_FALSE(fs::exists(image));
  EXPECT_TRUE(fs::is_empty(dir_.path() / "tmp" / "staged" / "r"));
  // Once the store works again, resuming finishes the run.
  auto resumed = RunGeneration(faulty, {"r", "test", "fp", {}, ""}, items, backend_, options_, stop);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(resumed->done, 2u);
  EXPECT_EQ(backend_.calls("a#0"), 2);
  auto done = store_->DoneImages("r").value();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].image_path, image);
  EXPECT_EQ(done[0].sha256, Sha256Hex(testing::TinyPng(0)));
}

std::vector<WorkItem> OkItems(int n) {
  std::vector<WorkItem> items;
  for (int i = 0; i < n; ++i) items.push_back({"item" + std::to_string(100 + i), "ok", 0, {}});
  return items;
}

TEST_F(RunnerTest, WorkersSharingARunRequestEveryImageOnce) {
  constexpr int kItems = 60, kWorkers = 3;
  std::atomic<bool> stop{false};
  const std::vector<WorkItem> items = OkItems(kItems);
  std::vector<Result<RunSummary>> summaries(kWorkers, Status::Internal("not run"));
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w)
    workers.emplace_back([&, w] {
      auto own = store::OpenStore(dir_.path()).value();
      summaries[w] = RunGeneration(*own, {"r", "test", "fp", {}, ""}, items, backend_, options_, stop);
    });
  for (std::thread& t : workers) t.join();
  size_t done = 0;
  for (const auto& s : summaries) {
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->left_pending, 0u);
    EXPECT_EQ(s->done + s->finished_elsewhere + s->already_done, static_cast<size_t>(kItems));
    done += s->done;
  }
  EXPECT_EQ(done, static_cast<size_t>(kItems));
  for (const WorkItem& it : items) EXPECT_EQ(backend_.calls(it.id + "#0"), 1) << it.id;
  EXPECT_EQ(store_->Counts("r").value().done, static_cast<size_t>(kItems));
  EXPECT_EQ(store_->Counts("r").value().leased, 0u);
}

TEST_F(RunnerTest, RowsOfAWorkerThatDiedAreTakenOverWhenItsLeaseExpires) {
  constexpr Millis kDeadLease{300};
  std::atomic<bool> stop{false};
  const std::vector<WorkItem> items = OkItems(4);
  ASSERT_TRUE(store_->OpenRun({"r", "test", "fp", backend_.Identity(), ""}).ok());
  ASSERT_TRUE(store_->AddItems("r", {{items[0].id, 0, "ok", {}}, {items[1].id, 0, "ok", {}}}).ok());
  ASSERT_EQ(store_->ClaimRows("r", "dead", {{items[0].id, 0}, {items[1].id, 0}}, kDeadLease, false)->claimed.size(),
            2u);
  const auto t0 = std::chrono::steady_clock::now();
  auto s = Run(items, stop);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_GE(std::chrono::steady_clock::now() - t0, kDeadLease);
  EXPECT_EQ(s->done, 4u);
  EXPECT_EQ(store_->Counts("r").value().done, 4u);
}

TEST_F(RunnerTest, AWorkerWhoseLeaseWasTakenOverDiscardsItsImageAndKeepsTheOtherWorkers) {
  std::atomic<bool> stop{false};
  auto thief = store::OpenStore(dir_.path()).value();
  const std::string other_image = testing::TinyPng(9);
  // While this worker generates, its lease ends and another worker claims the row and finishes it.
  backend_.before_answer = [&](const GenerationRequest& r) {
    const std::string victim = thief->Rows("r").value()[0].lease_owner;
    ASSERT_TRUE(thief->ReleaseLeases("r", victim).ok());
    ASSERT_EQ(thief->ClaimRows("r", "thief", {{r.item_id, r.k}}, Millis(60'000), false)->claimed.size(), 1u);
    auto img = thief->WriteImage("r", r.item_id, r.k, other_image, "png").value();
    ASSERT_EQ(thief->MarkDone("r", r.item_id, r.k, "thief", img, 1).value(), store::Completion::kRecorded);
  };
  options_.concurrency = 1;
  auto s = Run({{"a", "ok", 0, {}}}, stop);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->done, 0u);
  EXPECT_EQ(s->lease_lost, 1u);
  EXPECT_EQ(s->left_pending, 0u);
  EXPECT_NE(s->ToText().find("discarded"), std::string::npos) << s->ToText();
  auto done = store_->DoneImages("r").value();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(ReadFile(done[0].image_path).value(), other_image);
  EXPECT_EQ(done[0].sha256, Sha256Hex(other_image));
  EXPECT_TRUE(fs::is_empty(dir_.path() / "tmp" / "staged" / "r"));
}

}  // namespace
}  // namespace visalign::backends
