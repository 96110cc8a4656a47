// What only the PostgreSQL store does, on a real server this program starts: reaching the server
// and failing to (no password in any message), its schema version and migrations, where it keeps
// images, and claims that skip rows another transaction holds. The behaviour every store shares is
// in store_test.cc.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <cstdlib>
#include <filesystem>

#include "store/store_contract.h"
#include "testing/postgres_database_test.h"
#include "testing/postgres_server.h"
#include "visalign/core/io.h"
#include "visalign/store.h"

namespace visalign::store {
namespace {
namespace fs = std::filesystem;
using std::chrono::milliseconds;
using visalign::testing::PostgresServer;

constexpr milliseconds kLong{60'000};

class PostgresStoreTest : public visalign::testing::PostgresDatabaseTest {
 protected:
  std::unique_ptr<RunStore> Open(StoreOptions options) {
    auto s = OpenStore(url_, options);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  StoreOptions Files() const { return {"", scratch_ / "shared-images", false}; }

  visalign::testing::TempDir scratch_;
};

// `url_` with the user info "visalign:<password>".
std::string WithPasswordInUrl(const std::string& url, const std::string& password) {
  const size_t user = url.find("://") + 3;
  return url.substr(0, user) + "visalign:" + password + url.substr(url.find('@'));
}

TEST(DisplayLocation, ShowsAServerUrlWithoutItsPasswordAndAFolderAsItIs) {
  EXPECT_EQ(DisplayLocation("postgres://ann:s3cret@db.example:5433/runs"), "postgres://ann@db.example:5433/runs");
  EXPECT_EQ(DisplayLocation("postgresql://ann@db/runs?password=s3cret&sslmode=require"),
            "postgresql://ann@db/runs?sslmode=require");
  EXPECT_EQ(DisplayLocation("postgres://db/runs"), "postgres://db/runs");
  EXPECT_EQ(DisplayLocation("./visalign-store"), "./visalign-store");
}

TEST_F(PostgresStoreTest, AnUnreachableServerIsOneLineNamingItWithoutThePassword) {
  const std::string url = "postgres://visalign:s3cret@127.0.0.1:1/nowhere";
  Status st = OpenStore(url).status();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.where(), "postgres://visalign@127.0.0.1:1/nowhere");
  EXPECT_NE(st.what().find("cannot connect to PostgreSQL"), std::string::npos) << st.ToString();
  EXPECT_EQ(st.ToString().find("s3cret"), std::string::npos) << st.ToString();
  EXPECT_EQ(st.ToString().find('\n'), std::string::npos) << st.ToString();
}

TEST_F(PostgresStoreTest, AWrongPasswordIsRefusedAndNeverShownWhereverItCameFrom) {
  const std::string wrong = "wr0ng-Pa55word";
  ::setenv("VISALIGN_TEST_WRONG_PASSWORD", wrong.c_str(), 1);
  StoreOptions from_variable = Files();
  from_variable.password_env = "VISALIGN_TEST_WRONG_PASSWORD";
  for (const auto& [location, options] :
       {std::pair{url_, from_variable}, std::pair{WithPasswordInUrl(url_, wrong), Files()}}) {
    Status st = OpenStore(location, options).status();
    EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
    EXPECT_NE(st.what().find("password authentication failed"), std::string::npos) << st.ToString();
    EXPECT_EQ(st.ToString().find(wrong), std::string::npos) << st.ToString();
  }
  // The right password from a variable of the user's choosing overrides PGPASSWORD.
  ::setenv("VISALIGN_TEST_RIGHT_PASSWORD", server_->password().c_str(), 1);
  StoreOptions right = Files();
  right.password_env = "VISALIGN_TEST_RIGHT_PASSWORD";
  EXPECT_TRUE(OpenStore(WithPasswordInUrl(url_, wrong), right).ok());
  StoreOptions unset = Files();
  unset.password_env = "VISALIGN_TEST_NO_SUCH_VARIABLE";
  Status st = OpenStore(url_, unset).status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.where(), "store password variable");
}

TEST_F(PostgresStoreTest, AStoreOfANewerSchemaIsRefusedAndLeftAsItIs) {
  ASSERT_NE(Open(Files()), nullptr);
  ASSERT_TRUE(server_->Execute(database_, "UPDATE visalign_meta SET value = '99' WHERE key = 'schema_version'").ok());
  for (bool migrate : {false, true}) {
    Status st = migrate ? MigrateStore(url_, Files()).status() : OpenStore(url_, Files()).status();
    EXPECT_EQ(st.code(), StatusCode::kUnsupported);
    EXPECT_NE(st.what().find("schema version 99 is newer"), std::string::npos) << st.ToString();
  }
}

TEST_F(PostgresStoreTest, MigrateCreatesTheSchemaOnceAndThenFindsItCurrent) {
  auto first = MigrateStore(url_, Files());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->from, 0);
  EXPECT_GE(first->to, 1);
  auto again = MigrateStore(url_, Files());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->from, first->to);
  EXPECT_EQ(again->to, first->to);
}

TEST_F(PostgresStoreTest, AStoreOfImageFilesNeedsTheFolderItsWorkersShare) {
  ASSERT_NE(Open(Files()), nullptr);
  Status st = OpenStore(url_).status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.where(), "image root");
  EXPECT_NE(st.what().find("files"), std::string::npos) << st.ToString();
}

TEST_F(PostgresStoreTest, ImagesKeptInTheDatabaseReachEveryWorkersOwnFolder) {
  StoreOptions a{"", scratch_ / "worker-a", true};
  StoreOptions b{"", scratch_ / "worker-b", false};  // the store's choice stands: in the database
  auto wa = Open(a);
  ASSERT_TRUE(wa->OpenRun(RunStoreContract::Info("r")).ok());
  ASSERT_TRUE(wa->AddItems("r", {{"x", 0, "p", {}}}).ok());
  auto img = wa->WriteImage("r", "x", 0, "PNGBYTES", "png");
  ASSERT_TRUE(img.ok());
  ASSERT_EQ(wa->MarkDone("r", "x", 0, "", *img, 1.0).value(), Completion::kRecorded);

  auto wb = Open(b);
  auto done = wb->DoneImages("r");
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  ASSERT_EQ(done->size(), 1u);
  EXPECT_EQ((*done)[0].image_path, scratch_ / "worker-b" / "images/r/x__0.png");
  EXPECT_EQ(ReadFile((*done)[0].image_path).value(), "PNGBYTES");
  // A copy that no longer matches its SHA-256 is replaced.
  ASSERT_TRUE(WriteFileAtomic((*done)[0].image_path, "stale").ok());
  ASSERT_TRUE(wb->DoneImages("r").ok());
  EXPECT_EQ(ReadFile((*done)[0].image_path).value(), "PNGBYTES");
}

TEST_F(PostgresStoreTest, ARowAnotherTransactionHoldsIsBusyNotWaitedFor) {
  auto s = Open(Files());
  ASSERT_TRUE(s->OpenRun(RunStoreContract::Info("r")).ok());
  ASSERT_TRUE(s->AddItems("r", {{"a", 0, "p", {}}, {"b", 0, "q", {}}}).ok());
  PGconn* other = PQconnectdb((url_).c_str());
  ASSERT_EQ(PQstatus(other), CONNECTION_OK) << PQerrorMessage(other);
  PQclear(PQexec(other, "BEGIN"));
  PQclear(PQexec(other, "SELECT * FROM items WHERE item_id = 'a' FOR UPDATE"));
  auto claim = s->ClaimRows("r", "w1", {{"a", 0}, {"b", 0}}, kLong, false);
  PQclear(PQexec(other, "ROLLBACK"));
  PQfinish(other);
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  EXPECT_EQ(claim->claimed, (std::vector<RowKey>{{"b", 0}}));
  EXPECT_EQ(claim->busy, (std::vector<RowKey>{{"a", 0}}));
}

}  // namespace
}  // namespace visalign::store
