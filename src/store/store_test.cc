// The run store contract: what every RunStore implementation does, as value-parameterised tests
// over a StoreFactory (store_contract.h). Each implementation instantiates the suite: the embedded
// SQLite store here, and the fault-injecting wrapper (with no faults) to show it is transparent.
#include <gtest/gtest.h>

#include <filesystem>

#include "store/store_contract.h"
#include "testing/fault_injection_store.h"
#include "visalign/core/io.h"

namespace visalign::store {
namespace {
namespace fs = std::filesystem;

TEST_P(RunStoreContract, NewRowsArePendingAndSurviveReopening) {
  {
    auto s = Open();
    ASSERT_TRUE(s->OpenRun(Info("r1")).ok());
    ASSERT_TRUE(s->AddItems("r1", {{"v1-a", 0, "red please", 7}, {"v1-a", 1, "red please", 8}, {"v1-b", 0, "blue", {}}}).ok());
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
  ASSERT_TRUE(s->MarkDone("r1", "a", 0, *img, 12.5).ok());
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
  ASSERT_TRUE(s->MarkDone("r1", "v2/x y", 3, *img, 41.0).ok());
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
  ASSERT_TRUE(s->MarkFailure("r1", "a", 0, "HTTP 503", 5, false).ok());
  EXPECT_EQ(s->Rows("r1").value()[0].status, RowStatus::kPending);
  ASSERT_TRUE(s->MarkFailure("r1", "a", 0, "HTTP 400: bad prompt", 6, true).ok());
  Row r = s->Rows("r1").value()[0];
  EXPECT_EQ(r.status, RowStatus::kFailed);
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(r.last_error, "HTTP 400: bad prompt");
  // A failed row may be retried and then succeed.
  auto img = s->WriteImage("r1", "a", 0, "x", "png").value();
  ASSERT_TRUE(s->MarkDone("r1", "a", 0, img, 7).ok());
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
  ASSERT_TRUE(s->MarkDone("r1", "a", 0, img, 1).ok());
  EXPECT_EQ(s->MarkFailure("r1", "a", 0, "late", 1, true).code(), StatusCode::kNotFound);
  EXPECT_EQ(s->Rows("r1").value()[0].status, RowStatus::kDone);
  EXPECT_EQ(s->MarkDone("r1", "missing", 0, img, 1).code(), StatusCode::kNotFound);
}

// A run "r1" of Info() with item a#0 done and b#0 failed.
void AddDoneAndFailedRows(RunStore& s) {
  ASSERT_TRUE(s.AddItems("r1", {{"a", 0, "p", {}}, {"b", 0, "q", {}}}).ok());
  ASSERT_TRUE(s.MarkDone("r1", "a", 0, s.WriteImage("r1", "a", 0, "PNGDATA", "png").value(), 1).ok());
  ASSERT_TRUE(s.MarkFailure("r1", "b", 0, "HTTP 400: no", 1, true).ok());
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
  ASSERT_TRUE(s->MarkFailure("r1", "b", 0, "HTTP 400: Unknown parameter: 'response_format'.", 1, true).ok());
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
  ASSERT_TRUE(b->MarkFailure("r1", "x", 0, "e", 1, true).ok());
  EXPECT_EQ(a->Rows("r1").value()[0].status, RowStatus::kFailed);
}

TEST(SafeFileName, KeepsPortableCharactersAndEscapesTheRest) {
  EXPECT_EQ(SafeFileName("v3-t12-00451"), "v3-t12-00451");
  EXPECT_EQ(SafeFileName("a/b"), "a%2Fb");
  EXPECT_EQ(SafeFileName(".."), "%2E.");
  EXPECT_EQ(SafeFileName("忠"), "%E5%BF%A0");
}


INSTANTIATE_TEST_SUITE_P(Sqlite, RunStoreContract, ::testing::Values(SqliteStoreFactory()), StoreFactoryName);
INSTANTIATE_TEST_SUITE_P(FaultInjectionWithoutFaults, RunStoreContract,
                         ::testing::Values(StoreFactory{"fault_injection", [](const fs::path& scratch)
                                                                               -> Result<std::unique_ptr<RunStore>> {
                           VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<RunStore> base, OpenStore(scratch / "store"));
                           return std::unique_ptr<RunStore>(
                               std::make_unique<visalign::testing::FaultInjectionStore>(std::move(base)));
                         }}),
                         StoreFactoryName);

}  // namespace
}  // namespace visalign::store
