// The embedded run store on real SQLite files in a temp folder.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <random>

#include "visalign/core/io.h"
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
    return {name, "violin", "abc123", nlohmann::json{{"backend", "openai"}, {"model", "m1"}}, ""};
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

// A run "r1" of Info() with item a#0 done and b#0 failed.
void AddDoneAndFailedRows(RunStore& s) {
  ASSERT_TRUE(s.AddItems("r1", {{"a", 0, "p", {}}, {"b", 0, "q", {}}}).ok());
  ASSERT_TRUE(s.MarkDone("r1", "a", 0, s.WriteImage("r1", "a", 0, "PNGDATA", "png").value(), 1).ok());
  ASSERT_TRUE(s.MarkFailure("r1", "b", 0, "HTTP 400: no", 1, true).ok());
}

TEST_F(StoreTest, ReopeningARunWithDoneImagesAndOtherSettingsIsRefusedNamingTheDifference) {
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

TEST_F(StoreTest, TheConnectionIsNotPartOfTheIdentityAndIsRecordedAsLastUsed) {
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

TEST_F(StoreTest, ARunWithoutDoneImagesIsTakenOverByNewSettingsAndItsFailuresAskedAgain) {
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

TEST_F(StoreTest, BadRunNamesAreRefused) {
  auto s = Open();
  for (std::string bad : {"", "..", "a/b", "x y", "run;rm"})
    EXPECT_EQ(s->OpenRun(Info(bad)).status().code(), StatusCode::kInvalidArgument) << bad;
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
  EXPECT_FALSE(SqliteStoreExists(dir_));
  Open();
  EXPECT_TRUE(SqliteStoreExists(dir_));
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
  EXPECT_EQ(query("PRAGMA user_version"), "2");
  sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  auto s = OpenSqliteStore(dir_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(s.status().what().find("99"), std::string::npos);
}

// A store exactly as visalign wrote it with schema 1, when the endpoint was part of the backend
// configuration.
void WriteSchemaV1Store(const fs::path& dir) {
  fs::create_directories(dir);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "visalign.db").c_str(), &db), SQLITE_OK);
  const char* sql = R"sql(
PRAGMA journal_mode=WAL;
CREATE TABLE runs(name TEXT PRIMARY KEY, benchmark TEXT NOT NULL, dataset_fingerprint TEXT NOT NULL,
  backend TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE items(run TEXT NOT NULL REFERENCES runs(name), item_id TEXT NOT NULL, k INTEGER NOT NULL,
  prompt TEXT NOT NULL, seed INTEGER,
  status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT NOT NULL DEFAULT '', latency_ms REAL NOT NULL DEFAULT 0,
  image_path TEXT NOT NULL DEFAULT '', sha256 TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL, done_at TEXT NOT NULL DEFAULT '', PRIMARY KEY (run, item_id, k));
CREATE TABLE cache(namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, updated_at TEXT NOT NULL,
  PRIMARY KEY (namespace, key));
INSERT INTO runs VALUES ('old', 'violin', 'abc123',
  '{"api_key_env":"OPENAI_API_KEY","backend":"openai","endpoint":"http://127.0.0.1:55519","model":"m1","params":{}}',
  '2024-05-01T00:00:00.000Z');
INSERT INTO runs VALUES ('cmd', 'violin', 'abc123',
  '{"backend":"command","cmd":"gen --out {out}","timeout_ms":600000}', '2024-05-01T00:00:00.000Z');
INSERT INTO items(run, item_id, k, prompt, status, attempts, image_path, sha256, created_at, updated_at, done_at)
  VALUES ('old', 'a', 0, 'p', 'done', 1, 'images/old/a__0.png', 'ff', 't', 't', 't');
PRAGMA user_version = 1;
)sql";
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST_F(StoreTest, AStoreOfSchemaOneIsUpgradedAndItsRunsResumeFromAnotherEndpoint) {
  WriteSchemaV1Store(dir_);
  auto s = Open();
  auto old = s->FindRun("old").value();
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->identity, nlohmann::json({{"backend", "openai"}, {"model", "m1"}, {"params", nlohmann::json::object()}}));
  EXPECT_EQ(old->connection,
            nlohmann::json({{"endpoint", "http://127.0.0.1:55519"}, {"api_key_env", "OPENAI_API_KEY"}}));
  EXPECT_EQ(s->FindRun("cmd").value()->identity, nlohmann::json({{"backend", "command"}, {"cmd", "gen --out {out}"}}));
  EXPECT_EQ(s->FindRun("cmd").value()->connection, nlohmann::json({{"timeout_ms", 600000}}));
  // The run's done row stays done, and the same model on another port resumes it.
  RunInfo moved{"old", "violin", "abc123", old->identity, "", {{"endpoint", "http://127.0.0.1:49005"}}};
  EXPECT_EQ(s->OpenRun(moved).value(), RunOpening::kResumed);
  EXPECT_EQ(s->Counts("old").value().done, 1u);
  s.reset();
  EXPECT_EQ(Open()->FindRun("old").value()->connection["endpoint"], "http://127.0.0.1:49005");
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
