// The run store contract: what every RunStore implementation does, as value-parameterised tests
// over a StoreFactory (store_contract.h). Each implementation instantiates the suite: the embedded
// SQLite store, the PostgreSQL store (on a server this test program starts) keeping images as
// files and in the database, and the fault-injecting wrapper (with no faults) to show it is
// transparent.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <thread>

#include "store/store_contract.h"
#include "testing/fault_injection_store.h"
#include "visalign/core/io.h"

#include <fmt/format.h>

namespace visalign::store {
namespace {
namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr milliseconds kLong{60'000};
constexpr milliseconds kShort{50};
constexpr milliseconds kPastShort{120};

TEST_P(RunStoreContract, NewRowsArePendingAndSurviveReopening) {
  {
    auto s = Open();
    ASSERT_TRUE(s->OpenRun(Info("r1")).ok());
    ASSERT_TRUE(
        s->AddItems("r1", {{"v1-a", 0, "red please", 7}, {"v1-a", 1, "red please", 8}, {"v1-b", 0, "blue", {}}}).ok());
  }
  auto s = Open();
  auto rows = s->Rows("r1");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].item_id, "v1-a");
  EXPECT_EQ((*rows)[0].k, 0);
  EXPECT_EQ((*rows)[0].prompt, "red please");
  EXPECT_EQ((*rows)[0].seed, 7);
  EXPECT_EQ((*rows)[2].seed, std::nullopt);
  EXPECT_EQ((*rows)[1].status, RowStatus::kPending);
  EXPECT_EQ((*rows)[1].attempts, 0);
  EXPECT_FALSE((*rows)[1].created_at.empty());
}

TEST_P(RunStoreContract, AddingExistingItemsKeepsTheirState) {
  auto s = Open();
  ASSERT_TRUE(s->OpenRun(Info("r1")).ok());
  ASSERT_TRUE(s->AddItems("r1", {{"a", 0, "p", {}}}).ok());
  auto img = s->WriteImage("r1", "a", 0, "PNGDATA", "png");
  ASSERT_TRUE(img.ok());
  ASSERT_TRUE(s->MarkDone("r1", "a", 0, "", *img, 12.5).ok());
  ASSERT_TRUE(s->AddItems("r1", {{"a", 0, "p", {}}, {"b", 0, "q", {}}}).ok());
  auto c = s->Counts("r1");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->done, 1u);
  EXPECT_EQ(c->pending, 1u);
}

TEST_P(RunStoreContract, DoneRowRecordsImagePathHashAndLatency) {
  auto s = Open();
  ASSERT_TRUE(s->OpenRun(Info("r1")).ok());
  ASSERT_TRUE(s->AddItems("r1", {{"v2/x y", 3, "p", {}}}).ok());
  auto img = s->WriteImage("r1", "v2/x y", 3, "abc", "png");
  ASSERT_TRUE(img.ok());
  EXPECT_EQ(img->relative_path, "images/r1/v2%2Fx%20y__3.png");
  // SHA-256("abc"), FIPS 180-2 appendix B.1.
  EXPECT_EQ(img->sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  ASSERT_TRUE(s->MarkDone("r1", "v2/x y", 3, "", *img, 41.0).ok());
  auto done = s->DoneImages("r1");
  ASSERT_TRUE(done.ok());
  ASSERT_EQ(done->size(), 1u);
  EXPECT_EQ((*done)[0].item_id, "v2/x y");
  EXPECT_EQ((*done)[0].k, 3);
  EXPECT_EQ((*done)[0].image_path, s->root() / "images/r1/v2%2Fx%20y__3.png");
  EXPECT_EQ(ReadFile((*done)[0].image_path).value(), "abc");
  auto rows = s->Rows("r1").value();
  EXPECT_EQ(rows[0].attempts, 1);
  EXPECT_DOUBLE_EQ(rows[0].latency_ms, 41.0);
  EXPECT_FALSE(rows[0].done_at.empty());
  // No temp files are left beside the image.
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(s->root() / "images/r1")) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

TEST_P(RunStoreContract, FailuresCountAttemptsAndOnlyFinalOnesMarkFailed) {
  auto s = Open();
  ASSERT_TRUE(s->OpenRun(Info("r1")).ok());
  ASSERT_TRUE(s->AddItems("r1", {{"a", 0, "p", {}}}).ok());
  ASSERT_TRUE(s->MarkFailure("r1", "a", 0, "", "HTTP 503", 5, false).ok());
  EXPECT_EQ(s->Rows("r1").value()[0].status, RowStatus::kPending);
  ASSERT_TRUE(s->MarkFailure("r1", "a", 0, "", "HTTP 400: bad prompt", 6, true).ok());
  Row r = s->Rows("r1").value()[0];
  EXPECT_EQ(r.status, RowStatus::kFailed);
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(r.last_error, "HTTP 400: bad prompt");
  // A failed row may be retried and then succeed.
  auto img = s->WriteImage("r1", "a", 0, "x", "png").value();
  ASSERT_TRUE(s->MarkDone("r1", "a", 0, "", img, 7).ok());
  r = s->Rows("r1").value()[0];
  EXPECT_EQ(r.status, RowStatus::kDone);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(r.last_error, "");
}

TEST_P(RunStoreContract, ADoneRowCannotBeMarkedFailedOrDoneAgain) {
  auto s = Open();
  ASSERT_TRUE(s->OpenRun(Info("r1")).ok());
  ASSERT_TRUE(s->AddItems("r1", {{"a", 0, "p", {}}}).ok());
  auto img = s->WriteImage("r1", "a", 0, "x", "png").value();
  ASSERT_TRUE(s->MarkDone("r1", "a", 0, "", img, 1).ok());
  EXPECT_EQ(s->MarkFailure("r1", "a", 0, "", "late", 1, true).value(), Completion::kLeaseLost);
  EXPECT_EQ(s->MarkDone("r1", "a", 0, "", s->WriteImage("r1", "a", 0, "y", "png").value(), 1).value(),
            Completion::kLeaseLost);
  EXPECT_EQ(ReadFile(s->root() / img.relative_path).value(), "x");
  EXPECT_EQ(s->Rows("r1").value()[0].status, RowStatus::kDone);
  EXPECT_EQ(s->MarkDone("r1", "missing", 0, "", img, 1).status().code(), StatusCode::kNotFound);
}

// A run "r1" of Info() with item a#0 done and b#0 failed.
void AddDoneAndFailedRows(RunStore& s) {
  ASSERT_TRUE(s.AddItems("r1", {{"a", 0, "p", {}}, {"b", 0, "q", {}}}).ok());
  ASSERT_TRUE(s.MarkDone("r1", "a", 0, "", s.WriteImage("r1", "a", 0, "PNGDATA", "png").value(), 1).ok());
  ASSERT_TRUE(s.MarkFailure("r1", "b", 0, "", "HTTP 400: no", 1, true).ok());
}

TEST_P(RunStoreContract, ReopeningARunWithDoneImagesAndOtherSettingsIsRefusedNamingTheDifference) {
  auto s = Open();
  EXPECT_EQ(s->OpenRun(Info("r1")).value(), RunOpening::kCreated);
  AddDoneAndFailedRows(*s);
  EXPECT_EQ(s->OpenRun(Info("r1")).value(), RunOpening::kResumed);
  RunInfo other = Info("r1");
  other.identity["model"] = "m2";
  Status st = s->OpenRun(other).status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.what().find("1 done images made with"), std::string::npos) << st.ToString();
  EXPECT_NE(st.what().find("m2"), std::string::npos) << st.ToString();
  other = Info("r1");
  other.dataset_fingerprint = "zzz";
  st = s->OpenRun(other).status();
  EXPECT_NE(st.what().find("dataset fingerprint abc123"), std::string::npos) << st.ToString();
  auto runs = s->ListRuns().value();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].identity["model"], "m1");
}

TEST_P(RunStoreContract, AnIdentityWithItsKeysInAnotherOrderIsTheSameIdentity) {
  // Stores written before visalign::Json kept insertion order hold identities key-sorted, and
  // PostgreSQL's jsonb reorders keys: a run resumes when the values agree (SameJson).
  auto s = Open();
  RunInfo first = Info("r1");
  first.identity = {{"model", "m1"}, {"backend", "openai"}};
  ASSERT_TRUE(s->OpenRun(first).ok());
  AddDoneAndFailedRows(*s);
  EXPECT_EQ(s->OpenRun(Info("r1")).value(), RunOpening::kResumed);
}

TEST_P(RunStoreContract, TheConnectionIsNotPartOfTheIdentityAndIsRecordedAsLastUsed) {
  auto s = Open();
  RunInfo first = Info("r1");
  first.connection = {{"endpoint", "http://127.0.0.1:55519"}};
  ASSERT_TRUE(s->OpenRun(first).ok());
  AddDoneAndFailedRows(*s);
  RunInfo moved = Info("r1");
  moved.connection = {{"endpoint", "http://127.0.0.1:49005"}, {"concurrency", 8}};
  EXPECT_EQ(s->OpenRun(moved).value(), RunOpening::kResumed);
  EXPECT_EQ(s->FindRun("r1").value()->connection, moved.connection);
  EXPECT_EQ(s->Rows("r1").value()[1].status, RowStatus::kFailed);
}

TEST_P(RunStoreContract, ARunWithoutDoneImagesIsTakenOverByNewSettingsAndItsFailuresAskedAgain) {
  auto s = Open();
  ASSERT_TRUE(s->OpenRun(Info("r1")).ok());
  ASSERT_TRUE(s->AddItems("r1", {{"b", 0, "q", {}}}).ok());
  ASSERT_TRUE(s->MarkFailure("r1", "b", 0, "", "HTTP 400: Unknown parameter: 'response_format'.", 1, true).ok());
  RunInfo fixed = Info("r1");
  fixed.identity["params"] = {{"response_format", nullptr}};
  EXPECT_EQ(s->OpenRun(fixed).value(), RunOpening::kTakenOver);
  EXPECT_EQ(s->FindRun("r1").value()->identity, fixed.identity);
  auto row = s->Rows("r1").value()[0];
  EXPECT_EQ(row.status, RowStatus::kPending);
  EXPECT_EQ(row.attempts, 1);
  // Another dataset is never taken over: its rows are other items.
  fixed.dataset_fingerprint = "zzz";
  EXPECT_EQ(s->OpenRun(fixed).status().code(), StatusCode::kInvalidArgument);
}

TEST_P(RunStoreContract, BadRunNamesAreRefused) {
  auto s = Open();
  for (std::string bad : {"", "..", "a/b", "x y", "run;rm"})
    EXPECT_EQ(s->OpenRun(Info(bad)).status().code(), StatusCode::kInvalidArgument) << bad;
  EXPECT_TRUE(s->OpenRun(Info("gpt-image-1_v2.0")).ok());
}

TEST_P(RunStoreContract, DoneImagesOfAnUnknownRunIsNotFound) {
  auto s = Open();
  EXPECT_EQ(s->DoneImages("nope").status().code(), StatusCode::kNotFound);
}

TEST_P(RunStoreContract, CacheStoresAndOverwritesValuesPerNamespace) {
  auto s = Open();
  EXPECT_EQ(s->CacheGet("judge", "k1").value(), std::nullopt);
  ASSERT_TRUE(s->CachePut("judge", "k1", R"({"rating": 0.5})").ok());
  ASSERT_TRUE(s->CachePut("other", "k1", "x").ok());
  EXPECT_EQ(s->CacheGet("judge", "k1").value(), std::optional<std::string>(R"({"rating": 0.5})"));
  ASSERT_TRUE(s->CachePut("judge", "k1", "v2").ok());
  EXPECT_EQ(s->CacheGet("judge", "k1").value(), std::optional<std::string>("v2"));
  EXPECT_EQ(s->CacheGet("other", "k1").value(), std::optional<std::string>("x"));
}

TEST_P(RunStoreContract, TwoConnectionsToOneStoreSeeEachOthersWrites) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a->OpenRun(Info("r1")).ok());
  ASSERT_TRUE(a->AddItems("r1", {{"x", 0, "p", {}}}).ok());
  ASSERT_TRUE(b->MarkFailure("r1", "x", 0, "", "e", 1, true).ok());
  EXPECT_EQ(a->Rows("r1").value()[0].status, RowStatus::kFailed);
}

// A run "r1" with pending rows a#0, b#0 and c#0.
void AddThreeRows(RunStore& s) {
  ASSERT_TRUE(s.OpenRun(RunStoreContract::Info("r1")).ok());
  ASSERT_TRUE(s.AddItems("r1", {{"a", 0, "p", {}}, {"b", 0, "q", {}}, {"c", 0, "r", {}}}).ok());
}

TEST_P(RunStoreContract, AClaimedRowIsBusyForOtherWorkersUntilItsLeaseExpires) {
  auto s = Open();
  AddThreeRows(*s);
  Claim first = s->ClaimRows("r1", "w1", {{"a", 0}, {"b", 0}}, kShort, false).value();
  EXPECT_EQ(first.claimed, (std::vector<RowKey>{{"a", 0}, {"b", 0}}));
  EXPECT_TRUE(first.busy.empty());
  Claim second = s->ClaimRows("r1", "w2", {{"a", 0}, {"b", 0}, {"c", 0}, {"missing", 0}}, kLong, false).value();
  EXPECT_EQ(second.claimed, (std::vector<RowKey>{{"c", 0}}));
  EXPECT_EQ(second.busy, (std::vector<RowKey>{{"a", 0}, {"b", 0}}));
  // The owner may claim its own rows again; the lease of a worker that stopped renewing expires.
  EXPECT_EQ(s->ClaimRows("r1", "w1", {{"a", 0}}, kShort, false).value().claimed.size(), 1u);
  std::this_thread::sleep_for(kPastShort);
  Claim later = s->ClaimRows("r1", "w2", {{"a", 0}, {"b", 0}}, kLong, false).value();
  EXPECT_EQ(later.claimed.size(), 2u);
  Row a = s->Rows("r1").value()[0];
  EXPECT_EQ(a.lease_owner, "w2");
  EXPECT_GT(a.lease_expires_ms, NowUnixMs());
  EXPECT_EQ(s->Counts("r1").value().leased, 3u);
}

TEST_P(RunStoreContract, ALateWorkersMarkDoneIsRefusedAndItsImageDiscarded) {
  auto s = Open();
  AddThreeRows(*s);
  ASSERT_EQ(s->ClaimRows("r1", "late", {{"a", 0}}, kShort, false).value().claimed.size(), 1u);
  std::this_thread::sleep_for(kPastShort);
  ASSERT_EQ(s->ClaimRows("r1", "new", {{"a", 0}}, kLong, false).value().claimed.size(), 1u);
  StoredImage late = s->WriteImage("r1", "a", 0, "LATE", "png").value();
  StoredImage fresh = s->WriteImage("r1", "a", 0, "FRESH", "png").value();
  EXPECT_EQ(s->MarkDone("r1", "a", 0, "late", late, 1).value(), Completion::kLeaseLost);
  EXPECT_FALSE(fs::exists(s->root() / late.staged_path));
  EXPECT_FALSE(fs::exists(s->root() / late.relative_path));
  EXPECT_EQ(s->MarkFailure("r1", "a", 0, "late", "HTTP 500", 1, false).value(), Completion::kLeaseLost);
  EXPECT_EQ(s->MarkDone("r1", "a", 0, "new", fresh, 2).value(), Completion::kRecorded);
  Row a = s->Rows("r1").value()[0];
  EXPECT_EQ(a.status, RowStatus::kDone);
  EXPECT_EQ(a.attempts, 1);
  EXPECT_EQ(a.lease_owner, "");
  EXPECT_EQ(a.sha256, Sha256Hex("FRESH"));
  EXPECT_EQ(ReadFile(s->root() / a.image_path).value(), "FRESH");
  // A done row is never claimed again.
  EXPECT_TRUE(s->ClaimRows("r1", "other", {{"a", 0}}, kLong, true).value().claimed.empty());
}

TEST_P(RunStoreContract, OnlyTheLeaseOwnerCompletesARow) {
  auto s = Open();
  AddThreeRows(*s);
  ASSERT_EQ(s->ClaimRows("r1", "w1", {{"a", 0}}, kLong, false).value().claimed.size(), 1u);
  StoredImage img = s->WriteImage("r1", "a", 0, "x", "png").value();
  EXPECT_EQ(s->MarkDone("r1", "a", 0, "", img, 1).value(), Completion::kLeaseLost);
  EXPECT_EQ(s->MarkDone("r1", "a", 0, "w2", s->WriteImage("r1", "a", 0, "x", "png").value(), 1).value(),
            Completion::kLeaseLost);
  EXPECT_EQ(s->Rows("r1").value()[0].status, RowStatus::kPending);
  EXPECT_EQ(s->Rows("r1").value()[0].attempts, 0);
}

TEST_P(RunStoreContract, ARetryableFailureKeepsTheLeaseAndAFinalOneReleasesIt) {
  auto s = Open();
  AddThreeRows(*s);
  ASSERT_EQ(s->ClaimRows("r1", "w1", {{"a", 0}}, kLong, false).value().claimed.size(), 1u);
  EXPECT_EQ(s->MarkFailure("r1", "a", 0, "w1", "HTTP 503", 1, false).value(), Completion::kRecorded);
  EXPECT_EQ(s->ClaimRows("r1", "w2", {{"a", 0}}, kLong, true).value().busy.size(), 1u);
  EXPECT_EQ(s->MarkFailure("r1", "a", 0, "w1", "HTTP 400", 1, true).value(), Completion::kRecorded);
  Row a = s->Rows("r1").value()[0];
  EXPECT_EQ(a.status, RowStatus::kFailed);
  EXPECT_EQ(a.lease_owner, "");
  // A failed row is claimed only when failed rows are retried.
  EXPECT_TRUE(s->ClaimRows("r1", "w2", {{"a", 0}}, kLong, false).value().claimed.empty());
  EXPECT_EQ(s->ClaimRows("r1", "w2", {{"a", 0}}, kLong, true).value().claimed.size(), 1u);
}

TEST_P(RunStoreContract, RenewedLeasesOutliveTheirFirstExpiryAndReleasedOnesAreFreeAtOnce) {
  auto s = Open();
  AddThreeRows(*s);
  ASSERT_EQ(s->ClaimRows("r1", "w1", {{"a", 0}, {"b", 0}}, kShort, false).value().claimed.size(), 2u);
  EXPECT_EQ(s->RenewLeases("r1", "w1", kLong).value(), 2u);
  EXPECT_EQ(s->RenewLeases("r1", "nobody", kLong).value(), 0u);
  std::this_thread::sleep_for(kPastShort);
  EXPECT_EQ(s->ClaimRows("r1", "w2", {{"a", 0}, {"b", 0}}, kLong, false).value().busy.size(), 2u);
  ASSERT_TRUE(s->ReleaseLeases("r1", "w1").ok());
  EXPECT_EQ(s->Counts("r1").value().leased, 0u);
  EXPECT_EQ(s->ClaimRows("r1", "w2", {{"a", 0}, {"b", 0}}, kLong, false).value().claimed.size(), 2u);
}

TEST_P(RunStoreContract, CountsShowLeasesAttemptsAndTheFirstAndLastUpdate) {
  auto s = Open();
  AddThreeRows(*s);
  ASSERT_EQ(s->ClaimRows("r1", "w1", {{"a", 0}, {"b", 0}}, kLong, false).value().claimed.size(), 2u);
  ASSERT_EQ(s->MarkFailure("r1", "a", 0, "w1", "HTTP 503", 1, false).value(), Completion::kRecorded);
  ASSERT_EQ(s->MarkDone("r1", "a", 0, "w1", s->WriteImage("r1", "a", 0, "x", "png").value(), 1).value(),
            Completion::kRecorded);
  RunCounts c = s->Counts("r1").value();
  EXPECT_EQ(c.done, 1u);
  EXPECT_EQ(c.pending, 2u);
  EXPECT_EQ(c.leased, 1u);
  EXPECT_EQ(c.attempts, 2u);
  EXPECT_FALSE(c.first_update.empty());
  EXPECT_LE(c.first_update, c.last_update);
  EXPECT_EQ(c.last_update, s->Rows("r1").value()[0].updated_at);
}

TEST_P(RunStoreContract, ACacheKeyIsComputedByOneWorkerUntilItsValueIsPutOrItsLeaseExpires) {
  auto a = Open();
  auto b = Open();
  EXPECT_EQ(a->ClaimCacheKeys("judge", "w1", {"k1", "k2"}, kShort).value().claimed,
            (std::vector<std::string>{"k1", "k2"}));
  CacheClaim other = b->ClaimCacheKeys("judge", "w2", {"k1", "k2", "k3"}, kLong).value();
  EXPECT_EQ(other.claimed, (std::vector<std::string>{"k3"}));
  EXPECT_EQ(other.busy, (std::vector<std::string>{"k1", "k2"}));
  // Another namespace is another key.
  EXPECT_EQ(b->ClaimCacheKeys("other", "w2", {"k1"}, kLong).value().claimed.size(), 1u);
  // Putting the value ends the lease; renewing keeps the others; an expired lease is free.
  ASSERT_TRUE(a->CachePut("judge", "k1", "v1").ok());
  ASSERT_TRUE(a->RenewCacheLeases("judge", "w1", kShort).ok());
  EXPECT_EQ(b->ClaimCacheKeys("judge", "w2", {"k1"}, kLong).value().claimed.size(), 1u);
  EXPECT_EQ(b->ClaimCacheKeys("judge", "w2", {"k2"}, kLong).value().busy.size(), 1u);
  std::this_thread::sleep_for(kPastShort);
  EXPECT_EQ(b->ClaimCacheKeys("judge", "w2", {"k2"}, kLong).value().claimed.size(), 1u);
  ASSERT_TRUE(b->ReleaseCacheLeases("judge", "w2").ok());
  EXPECT_EQ(a->ClaimCacheKeys("judge", "w1", {"k1", "k2", "k3"}, kLong).value().claimed.size(), 3u);
  EXPECT_EQ(a->CacheGet("judge", "k1").value(), std::optional<std::string>("v1"));
}

TEST_P(RunStoreContract, ARenewerKeepsCacheKeysPastTheirFirstExpiryUntilItGoes) {
  constexpr milliseconds kRenewed{300};  // renewed every 100 ms: room for a loaded machine
  auto a = Open();
  auto b = Open();
  ASSERT_EQ(a->ClaimCacheKeys("models", "w1", {"m"}, kRenewed).value().claimed.size(), 1u);
  {
    CacheLeaseRenewer renewer(*a, "models", "w1", kRenewed);
    std::this_thread::sleep_for(3 * kRenewed);
    EXPECT_EQ(b->ClaimCacheKeys("models", "w2", {"m"}, kLong).value().busy.size(), 1u);
  }
  std::this_thread::sleep_for(kRenewed + kPastShort);
  EXPECT_EQ(b->ClaimCacheKeys("models", "w2", {"m"}, kLong).value().claimed.size(), 1u);
}

TEST_P(RunStoreContract, ARunIsRemovedWithItsImagesButNotWhileWorkersHoldItsRows) {
  auto s = Open();
  AddThreeRows(*s);
  ASSERT_TRUE(s->OpenRun(Info("r2")).ok());
  ASSERT_TRUE(s->AddItems("r2", {{"a", 0, "p", {}}}).ok());
  ASSERT_EQ(s->MarkDone("r1", "a", 0, "", s->WriteImage("r1", "a", 0, "x", "png").value(), 1).value(),
            Completion::kRecorded);
  ASSERT_EQ(s->ClaimRows("r1", "w1", {{"b", 0}}, kShort, false).value().claimed.size(), 1u);
  Status busy = s->RemoveRun("r1");
  EXPECT_EQ(busy.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(busy.what().find("1 rows leased"), std::string::npos) << busy.ToString();
  EXPECT_EQ(s->Rows("r1").value().size(), 3u);
  std::this_thread::sleep_for(kPastShort);
  ASSERT_TRUE(s->RemoveRun("r1").ok());
  EXPECT_EQ(s->FindRun("r1").value(), std::nullopt);
  EXPECT_TRUE(s->Rows("r1").value().empty());
  EXPECT_FALSE(fs::exists(s->root() / "images" / "r1"));
  EXPECT_EQ(s->Rows("r2").value().size(), 1u);
  EXPECT_EQ(s->RemoveRun("r1").code(), StatusCode::kNotFound);
}

TEST_P(RunStoreContract, ConnectionsClaimingTogetherNeverGetTheSameRow) {
  constexpr int kRows = 120, kWorkers = 4, kBatch = 5;
  auto setup = Open();
  ASSERT_TRUE(setup->OpenRun(Info("r1")).ok());
  std::vector<ItemSpec> specs;
  std::vector<RowKey> keys;
  for (int i = 0; i < kRows; ++i) {
    specs.push_back({fmt::format("item{:03d}", i), 0, "p", {}});
    keys.push_back({specs.back().item_id, 0});
  }
  ASSERT_TRUE(setup->AddItems("r1", specs).ok());
  std::vector<std::vector<RowKey>> got(kWorkers);
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w)
    workers.emplace_back([&, w] {
      auto s = Open();
      const std::string owner = "w" + std::to_string(w);
      for (size_t at = 0; at < keys.size(); at += kBatch) {
        std::vector<RowKey> batch(keys.begin() + at, keys.begin() + std::min(keys.size(), at + kBatch));
        auto claim = s->ClaimRows("r1", owner, batch, kLong, false);
        ASSERT_TRUE(claim.ok()) << claim.status().ToString();
        for (const RowKey& k : claim->claimed) {
          ASSERT_EQ(s->MarkDone("r1", k.item_id, 0, owner, s->WriteImage("r1", k.item_id, 0, owner, "png").value(), 1)
                        .value(),
                    Completion::kRecorded);
          got[w].push_back(k);
        }
      }
    });
  for (std::thread& t : workers) t.join();
  std::set<std::string> seen;
  size_t total = 0;
  for (const auto& g : got) {
    total += g.size();
    for (const RowKey& k : g) seen.insert(k.item_id);
  }
  EXPECT_EQ(total, static_cast<size_t>(kRows));
  EXPECT_EQ(seen.size(), static_cast<size_t>(kRows));
  EXPECT_EQ(setup->Counts("r1").value().done, static_cast<size_t>(kRows));
}

TEST(SafeFileName, KeepsPortableCharactersAndEscapesTheRest) {
  EXPECT_EQ(SafeFileName("v3-t12-00451"), "v3-t12-00451");
  EXPECT_EQ(SafeFileName("a/b"), "a%2Fb");
  EXPECT_EQ(SafeFileName(".."), "%2E.");
  EXPECT_EQ(SafeFileName("忠"), "%E5%BF%A0");
}

INSTANTIATE_TEST_SUITE_P(Sqlite, RunStoreContract, ::testing::Values(SqliteStoreFactory()), StoreFactoryName);
INSTANTIATE_TEST_SUITE_P(Postgres, RunStoreContract,
                         ::testing::Values(PostgresStoreFactory(false), PostgresStoreFactory(true)), StoreFactoryName);
INSTANTIATE_TEST_SUITE_P(FaultInjectionWithoutFaults, RunStoreContract,
                         ::testing::Values(StoreFactory{
                             "fault_injection",
                             [](const fs::path& scratch) -> Result<std::unique_ptr<RunStore>> {
                               VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<RunStore> base, OpenStore(scratch / "store"));
                               return std::unique_ptr<RunStore>(
                                   std::make_unique<visalign::testing::FaultInjectionStore>(std::move(base)));
                             }}),
                         StoreFactoryName);

}  // namespace
}  // namespace visalign::store
