// The embedded run store on real SQLite files in a temp folder.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <random>

#include "visalign/io.h"
#include "visalign/store.h"

namespace visalign::store {
namespace {
namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("visalign_store_test_" + std::to_string(std::random_device{}()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::unique_ptr<RunStore> Open() {
    auto s = OpenSqliteStore(dir_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return std::move(s).value();
  }
  static RunInfo Info(const std::string& name) {
    return {name, "violin", "abc123", nlohmann::json{{"kind", "openai"}, {"model", "m1"}}, ""};
  }
  fs::path dir_;
};

TEST_F(StoreTest, NewRowsArePendingAndSurviveReopening) {
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

TEST_F(StoreTest, AddingExistingItemsKeepsTheirState) {
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

TEST_F(StoreTest, DoneRowRecordsImagePathHashAndLatency) {
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
  EXPECT_EQ((*done)[0].image_path, dir_ / "images/r1/v2%2Fx%20y__3.png");
  EXPECT_EQ(ReadFile((*done)[0].image_path).value(), "abc");
  auto rows = s->Rows("r1").value();
  EXPECT_EQ(rows[0].attempts, 1);
  EXPECT_DOUBLE_EQ(rows[0].latency_ms, 41.0);
  EXPECT_FALSE(rows[0].done_at.empty());
  // No temp files are left beside the image.
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "images/r1")) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

TEST_F(StoreTest, FailuresCountAttemptsAndOnlyFinalOnesMarkFailed) {
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

TEST_F(StoreTest, ADoneRowCannotBeMarkedFailedOrDoneAgain) {
  auto s = Open();
  ASSERT_TRUE(s->OpenRun(Info("r1")).ok());
  ASSERT_TRUE(s->AddItems("r1", {{"a", 0, "p", {}}}).ok());
  auto img = s->WriteImage("r1", "a", 0, "x", "png").value();
  ASSERT_TRUE(s->MarkDone("r1", "a", 0, img, 1).ok());
  EXPECT_EQ(s->MarkFailure("r1", "a", 0, "late", 1, true).code(), StatusCode::kNotFound);
  EXPECT_EQ(s->Rows("r1").value()[0].status, RowStatus::kDone);
  EXPECT_EQ(s->MarkDone("r1", "missing", 0, img, 1).code(), StatusCode::kNotFound);
}

TEST_F(StoreTest, ReopeningARunWithOtherSettingsIsRefusedNamingTheDifference) {
  auto s = Open();
  ASSERT_TRUE(s->OpenRun(Info("r1")).ok());
  EXPECT_TRUE(s->OpenRun(Info("r1")).ok());
  RunInfo other = Info("r1");
  other.backend["model"] = "m2";
  Status st = s->OpenRun(other);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.what().find("m2"), std::string::npos) << st.ToString();
  other = Info("r1");
  other.dataset_fingerprint = "zzz";
  st = s->OpenRun(other);
  EXPECT_NE(st.what().find("dataset fingerprint abc123"), std::string::npos) << st.ToString();
  auto runs = s->ListRuns().value();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].backend["model"], "m1");
}

TEST_F(StoreTest, BadRunNamesAreRefused) {
  auto s = Open();
  for (std::string bad : {"", "..", "a/b", "x y", "run;rm"})
    EXPECT_EQ(s->OpenRun(Info(bad)).code(), StatusCode::kInvalidArgument) << bad;
  EXPECT_TRUE(s->OpenRun(Info("gpt-image-1_v2.0")).ok());
}

TEST_F(StoreTest, DoneImagesOfAnUnknownRunIsNotFound) {
  auto s = Open();
  EXPECT_EQ(s->DoneImages("nope").status().code(), StatusCode::kNotFound);
}

TEST_F(StoreTest, CacheStoresAndOverwritesValuesPerNamespace) {
  auto s = Open();
  EXPECT_EQ(s->CacheGet("judge", "k1").value(), std::nullopt);
  ASSERT_TRUE(s->CachePut("judge", "k1", R"({"rating": 0.5})").ok());
  ASSERT_TRUE(s->CachePut("other", "k1", "x").ok());
  EXPECT_EQ(s->CacheGet("judge", "k1").value(), std::optional<std::string>(R"({"rating": 0.5})"));
  ASSERT_TRUE(s->CachePut("judge", "k1", "v2").ok());
  EXPECT_EQ(s->CacheGet("judge", "k1").value(), std::optional<std::string>("v2"));
  EXPECT_EQ(s->CacheGet("other", "k1").value(), std::optional<std::string>("x"));
}

TEST_F(StoreTest, DatabaseUsesWalAndRecordsTheSchemaVersion) {
  Open();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "visalign.db").c_str(), &db), SQLITE_OK);
  auto query = [&](const char* sql) {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, sql, -1, &st, nullptr);
    sqlite3_step(st);
    std::string v = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
  };
  EXPECT_EQ(query("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(query("PRAGMA user_version"), "1");
  sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  auto s = OpenSqliteStore(dir_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(s.status().what().find("99"), std::string::npos);
}

TEST_F(StoreTest, AFileThatIsNotADatabaseIsReportedAsCorrupt) {
  fs::create_directories(dir_);
  ASSERT_TRUE(WriteFileAtomic(dir_ / "visalign.db", std::string(4096, 'x')).ok());
  auto s = OpenSqliteStore(dir_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(s.status().where().find("visalign.db"), std::string::npos);
}

TEST_F(StoreTest, TwoConnectionsToOneStoreSeeEachOthersWrites) {
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

}  // namespace
}  // namespace visalign::store
