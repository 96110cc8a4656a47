// The `hues run` sweep: which models a folder holds, and the scheduler alone and shared through a
// run store — a model another process holds is taken up once that lease ends, a failure releases
// its claim and never stops the others, and a store that fails is the sweep's error
// (testing::FaultInjectionStore).
#include "visalign/benchmarks/hues/sweep.h"

#include <gtest/gtest.h>

#include <mutex>

#include "testing/dirs.h"
#include "testing/fault_injection_store.h"

namespace visalign::hues {
namespace {
namespace fs = std::filesystem;
using std::chrono::milliseconds;
using visalign::testing::FaultInjectionStore;
using visalign::testing::StoreOperation;

// Models named a, b, c (values that are no folders: one preprocessing group, run by name).
SweepOptions ThreeModels(const fs::path& out) {
  SweepOptions o;
  o.models = {{"c", "models/c"}, {"a", "models/a"}, {"b", "models/b"}};
  o.out = out;
  o.lease = milliseconds(300);
  o.busy_poll = milliseconds(20);
  return o;
}

// A run that records the order it was called in and fails model `failing`.
struct Recorder {
  std::vector<std::string> calls;
  std::string failing;
  Result<Json> operator()(const ModelEntry& e, const std::string&) {
    calls.push_back(e.name);
    if (e.name == failing) return Status::Unavailable("no memory", "model " + e.name, "a smaller model");
    return Json{{"model", e.name}, {"status", "done"}};
  }
};

TEST(ModelEntries, AFolderGivesItsModelFoldersByNameAndRefusesOneWithout) {
  visalign::testing::TempDir t;
  t.Write("models/b/config.json", "{}");
  t.Write("models/a/open_clip_config.json", "{}");
  t.Write("models/notes/readme.txt", "not a model");
  Result<std::vector<ModelEntry>> entries = ModelEntries((t / "models").string(), "", false);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].name, "a");
  EXPECT_EQ((*entries)[1].model, (t / "models" / "b").string());
  Result<std::vector<ModelEntry>> none = ModelEntries((t / "models" / "notes").string(), "", false);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().where(), "--models");
}

TEST(ModelEntries, AFileListsModelValuesSkippingCommentsAndBlankLines) {
  visalign::testing::TempDir t;
  t.Write("models/x/config.json", "{}");
  const fs::path file =
      t.Write("models.txt", "# the sweep\n" + (t / "models" / "x").string() + "/\n\nhf-hub:org/SigLIP-tiny  \n");
  Result<std::vector<ModelEntry>> entries = ModelEntries("", file.string(), false);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].name, "x");  // a folder's name, also written with a trailing '/'
  EXPECT_EQ((*entries)[1].model, "hf-hub:org/SigLIP-tiny");
  EXPECT_FALSE(ModelEntries("", t.Write("empty.txt", "# nothing\n").string(), false).ok());
}

TEST(RunModelsFolder, WithoutAStoreRunsEveryModelByNameAndAFailureStopsNoOther) {
  visalign::testing::TempDir t;
  Recorder run{{}, "b"};
  Result<SweepReport> report = RunModelsFolder(ThreeModels(t / "out"), nullptr, std::ref(run));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(run.calls, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(report->models.size(), 3u);
  EXPECT_EQ(report->models[1]["model"], "b");
  EXPECT_EQ(report->models[1]["status"], "failed");
  EXPECT_EQ(report->models[2]["status"], "done");
  EXPECT_EQ(report->failed, 1u);
  const Status st = report->ToStatus();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.what(), "1 of 3 models failed, the first with: no memory");
  EXPECT_EQ(st.where(), "model b");
}

TEST(RunModelsFolder, AModelAnotherProcessHoldsIsTakenUpWhenItsLeaseEnds) {
  visalign::testing::TempDir t;
  std::unique_ptr<store::RunStore> st = store::OpenStore((t / "store").string()).value();
  const std::string key_b = (fs::absolute(t / "out") / "b").lexically_normal().string();
  // Another process claimed b and died: its lease runs out after 150 ms.
  ASSERT_TRUE(st->ClaimCacheKeys(kSweepNamespace, "dead", {key_b}, milliseconds(150)).ok());
  Recorder run;
  const auto start = std::chrono::steady_clock::now();
  Result<SweepReport> report = RunModelsFolder(ThreeModels(t / "out"), st.get(), std::ref(run));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(run.calls, (std::vector<std::string>{"a", "c", "b"}));  // b once its lease expired
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(150));
  EXPECT_TRUE(report->ToStatus().ok());
  // A done model's key holds its run's status, which ends the lease: a later process claims it at
  // once (and its run finds the run record and skips the model).
  EXPECT_EQ(st->CacheGet(kSweepNamespace, key_b).value(), std::optional<std::string>("done"));
  Result<store::CacheClaim> again = st->ClaimCacheKeys(kSweepNamespace, "later", {key_b}, milliseconds(1000));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->busy.empty());
}

TEST(RunModelsFolder, AFailedModelIsReleasedForAnotherProcess) {
  visalign::testing::TempDir t;
  std::unique_ptr<store::RunStore> st = store::OpenStore((t / "store").string()).value();
  Recorder run{{}, "a"};
  Result<SweepReport> report = RunModelsFolder(ThreeModels(t / "out"), st.get(), std::ref(run));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->ToStatus().ok());
  const std::string key_a = (fs::absolute(t / "out") / "a").lexically_normal().string();
  Result<store::CacheClaim> claim = st->ClaimCacheKeys(kSweepNamespace, "other", {key_a}, milliseconds(1000));
  ASSERT_TRUE(claim.ok());
  EXPECT_EQ(claim->claimed, std::vector<std::string>{key_a});
}

TEST(RunModelsFolder, AStoreThatFailsAClaimOrACompletionIsTheSweepsError) {
  visalign::testing::TempDir t;
  FaultInjectionStore st(store::OpenStore((t / "store").string()).value());
  st.FailOperation(StoreOperation::kClaimCacheKeys, Status::Unavailable("database is locked", "store", "a free store"),
                   /*skip=*/1);
  Recorder run;
  Result<SweepReport> claimed = RunModelsFolder(ThreeModels(t / "out"), &st, std::ref(run));
  ASSERT_FALSE(claimed.ok());
  EXPECT_EQ(claimed.status().what(), "database is locked");
  EXPECT_EQ(run.calls, std::vector<std::string>{"a"});  // the second claim failed before b ran

  visalign::testing::TempDir t2;
  FaultInjectionStore st2(store::OpenStore((t2 / "store").string()).value());
  st2.FailOperation(StoreOperation::kCachePut, Status::Unavailable("disk full", "store", "space"));
  Recorder run2;
  Result<SweepReport> put = RunModelsFolder(ThreeModels(t2 / "out"), &st2, std::ref(run2));
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.status().what(), "disk full");
  EXPECT_EQ(run2.calls, std::vector<std::string>{"a"});
}

}  // namespace
}  // namespace visalign::hues
