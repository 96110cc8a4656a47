// What only the embedded SQLite store does (WAL, schema versions and upgrades, a corrupt file), and
// how OpenStore chooses an implementation from a location (postgres_store_test.cc: the server). The behaviour every
// store shares is in store_test.cc.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "testing/dirs.h"
#include "visalign/core/io.h"
#include "visalign/store.h"

namespace visalign::store {
namespace {
namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<RunStore> Open() {
    auto s = OpenStore(dir_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return std::move(s).value();
  }
  visalign::testing::TempDir scratch_;
  const fs::path dir_ = scratch_ / "store";
};

TEST_F(StoreTest, DatabaseUsesWalAndRecordsTheSchemaVersion) {
  EXPECT_FALSE(StoreExists(dir_));
  Open();
  EXPECT_TRUE(StoreExists(dir_));
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
  EXPECT_EQ(query("PRAGMA user_version"), "4");
  sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  auto s = OpenStore(dir_);
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
  EXPECT_EQ(old->identity, Json({{"backend", "openai"}, {"model", "m1"}, {"params", Json::object()}}));
  EXPECT_EQ(old->connection, Json({{"endpoint", "http://127.0.0.1:55519"}, {"api_key_env", "OPENAI_API_KEY"}}));
  EXPECT_EQ(s->FindRun("cmd").value()->identity, Json({{"backend", "command"}, {"cmd", "gen --out {out}"}}));
  EXPECT_EQ(s->FindRun("cmd").value()->connection, Json({{"timeout_ms", 600000}}));
  // The run's done row stays done, and the same model on another port resumes it.
  RunInfo moved{"old", "violin", "abc123", old->identity, "", {{"endpoint", "http://127.0.0.1:49005"}}};
  EXPECT_EQ(s->OpenRun(moved).value(), RunOpening::kResumed);
  EXPECT_EQ(s->Counts("old").value().done, 1u);
  s.reset();
  EXPECT_EQ(Open()->FindRun("old").value()->connection["endpoint"], "http://127.0.0.1:49005");
}

TEST_F(StoreTest, ASchemaThreeStoreKeepsItsRowsAndLeasesAndAcceptsRefusedRowsAndJobs) {
  WriteSchemaV1Store(dir_);
  ASSERT_TRUE(Open()->AddItems("old", {{"b", 0, "q", {}}}).ok());  // upgraded to 4: make it 3 again
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "visalign.db").c_str(), &db), SQLITE_OK);
  const char* back_to_three = R"sql(
CREATE TABLE items_v3(run TEXT NOT NULL REFERENCES runs(name), item_id TEXT NOT NULL, k INTEGER NOT NULL,
  prompt TEXT NOT NULL, seed INTEGER, status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT NOT NULL DEFAULT '', latency_ms REAL NOT NULL DEFAULT 0,
  image_path TEXT NOT NULL DEFAULT '', sha256 TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL, done_at TEXT NOT NULL DEFAULT '', lease_owner TEXT NOT NULL DEFAULT '',
  lease_expires INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (run, item_id, k));
INSERT INTO items_v3 SELECT run, item_id, k, prompt, seed, status, attempts, last_error, latency_ms, image_path,
  sha256, created_at, updated_at, done_at, 'w1', 4102444800000 FROM items;
DROP TABLE items;
ALTER TABLE items_v3 RENAME TO items;
PRAGMA user_version = 3;
)sql";
  ASSERT_EQ(sqlite3_exec(db, back_to_three, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
  auto s = Open();
  auto rows = s->Rows("old").value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, RowStatus::kDone);
  EXPECT_EQ(rows[0].sha256, "ff");
  EXPECT_EQ(rows[1].lease_owner, "w1");
  EXPECT_EQ(rows[1].job, "");
  EXPECT_EQ(s->SetJob("old", "b", 0, "w1", "t-1").value(), Completion::kRecorded);
  EXPECT_EQ(s->MarkRefused("old", "b", 0, "w1", "DataInspectionFailed", 1).value(), Completion::kRecorded);
  EXPECT_EQ(s->Rows("old").value()[1].status, RowStatus::kRefused);
  EXPECT_EQ(s->Rows("old").value()[1].job, "t-1");
}

TEST_F(StoreTest, AFileThatIsNotADatabaseIsReportedAsCorrupt) {
  fs::create_directories(dir_);
  ASSERT_TRUE(WriteFileAtomic(dir_ / "visalign.db", std::string(4096, 'x')).ok());
  auto s = OpenStore(dir_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(s.status().where().find("visalign.db"), std::string::npos);
}

TEST(OpenStore, AFolderIsTheEmbeddedStoreAndUnknownSchemesAreRefusedByName) {
  visalign::testing::TempDir t;
  auto folder = OpenStore(t / "store");
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  EXPECT_TRUE(StoreExists(t / "store"));
  EXPECT_FALSE(StoreExists(t / "elsewhere"));
  Status other = OpenStore("mysql://ann:s3cret@localhost/v").status();
  EXPECT_EQ(other.code(), StatusCode::kUnsupported);
  EXPECT_NE(other.what().find("\"mysql://\""), std::string::npos) << other.ToString();
  EXPECT_EQ(other.ToString().find("s3cret"), std::string::npos) << other.ToString();
  EXPECT_EQ(other.where(), "store location");
  // A server location counts as existing: opening it is what says whether it is there.
  EXPECT_TRUE(StoreExists("postgres://localhost/v"));
}

TEST(MigrateStore, UpgradesAnEmbeddedStoreOfSchemaOneAndSaysFromWhichVersion) {
  visalign::testing::TempDir t;
  WriteSchemaV1Store(t / "store");
  auto first = MigrateStore(t / "store");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->from, 1);
  EXPECT_EQ(first->to, 4);
  auto again = MigrateStore(t / "store");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->from, 4);
  EXPECT_EQ(again->to, 4);
}

TEST(ValidateRunName, NamesTheInputItChecksNotACommandLineFlag) {
  Status st = ValidateRunName("x y");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.where(), "run name");
  EXPECT_TRUE(ValidateRunName("gpt-image-1_v2.0").ok());
}

}  // namespace
}  // namespace visalign::store
