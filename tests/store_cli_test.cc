// `visalign store ls | show | export | rm | migrate` on a real run made against the VIOLIN reference
// server, static --shard parts, and the store's bad inputs as one-line errors that lose nothing: a
// store of a newer schema, a run name that exists with another dataset, removing a run workers
// hold; for a PostgreSQL store (on a real server this program starts) also an unreachable server
// and a wrong password, which never appears in any output.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "testing/cli_runner.h"
#include "testing/postgres_server.h"
#include "testing/violin_generation.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/store.h"

namespace visalign {
namespace {
namespace fs = std::filesystem;
using testing::RunResult;
using testing::RunVisalign;
using testing::TempDir;

constexpr int kItems = 6;

void ExpectOneLineError(const RunResult& r, const std::string& says) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
}

class StoreCli : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteDataset(t_ / "ds");
    server_ = testing::StartServer(t_ / "ds");
    RunResult r =
        RunVisalign(testing::GenerateArgs(t_ / "ds", store_, server_->url(), {"--limit", std::to_string(kItems)}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::vector<std::string> Store(std::vector<std::string> args) const {
    args.insert(args.end(), {"--store", store_.string()});
    return args;
  }
  TempDir t_;
  const fs::path store_ = t_ / "store";
  std::unique_ptr<violin::ReferenceServer> server_;
};

TEST_F(StoreCli, LsAndShowCountRowsLeasesAttemptsAndTimes) {
  RunResult ls = RunVisalign(Store({"store", "ls"}));
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(ls.out.rfind("ref\tviolin\t6 done, 0 failed, 0 pending (0 leased by running workers); last update ", 0), 0u)
      << ls.out;
  // A worker holding two rows of a second run shows as leased.
  {
    auto s = store::OpenStore(store_).value();
    ASSERT_TRUE(s->OpenRun({"other", "violin", "fp", {{"backend", "x"}}, ""}).ok());
    ASSERT_TRUE(s->AddItems("other", {{"a", 0, "p", {}}, {"b", 0, "q", {}}, {"c", 0, "r", {}}}).ok());
    ASSERT_EQ(s->ClaimRows("other", "w", {{"a", 0}, {"b", 0}}, std::chrono::minutes(1), false)->claimed.size(), 2u);
  }
  RunResult show = RunVisalign(Store({"--json", "store", "show", "--run", "other"}));
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const Json rows = Json::parse(show.out)["runs"][0]["rows"];
  EXPECT_EQ(rows["pending"], 3);
  EXPECT_EQ(rows["leased"], 2);
  EXPECT_EQ(rows["attempts"], 0);
  RunResult text = RunVisalign(Store({"store", "show", "--run", "ref"}));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("rows:       6 done, 0 failed, 0 pending (0 leased by running workers)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("attempts:   6; first row 20"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\"endpoint\":\"" + server_->url()), std::string::npos) << text.out;
  // Removing a run while a worker holds its rows is refused, and nothing is removed.
  RunResult busy = RunVisalign(Store({"store", "rm", "--run", "other"}));
  ExpectOneLineError(busy, "run \"other\" has 2 rows leased by running workers");
  EXPECT_EQ(store::OpenStore(store_).value()->Rows("other").value().size(), 3u);
}

TEST_F(StoreCli, ExportCopiesRowsAndImagesAndRmRemovesTheRun) {
  RunResult exp = RunVisalign(Store({"store", "export", "--run", "ref", "--out", (t_ / "export").string()}));
  ASSERT_EQ(exp.exit_code, 0) << exp.err;
  EXPECT_EQ(exp.out, "exported run ref: 6 rows, 6 images to " + (t_ / "export").string() + "\n");
  const Json run = Json::parse(ReadFile(t_ / "export" / "run.json").value());
  EXPECT_EQ(run["rows"]["done"], kItems);
  const std::string lines = ReadFile(t_ / "export" / "rows.jsonl").value();
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), kItems);
  const Json first = Json::parse(lines.substr(0, lines.find('\n')));
  EXPECT_EQ(first["status"], "done");
  EXPECT_EQ(Sha256File(t_ / "export" / first["image"].get<std::string>()).value(), first["sha256"]);

  RunResult rm = RunVisalign(Store({"store", "rm", "--run", "ref"}));
  ASSERT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_EQ(rm.out, "removed run ref: 6 rows, 6 images\n");
  EXPECT_FALSE(fs::exists(store_ / "images" / "ref"));
  EXPECT_EQ(RunVisalign(Store({"store", "ls"})).out, "");
  ExpectOneLineError(RunVisalign(Store({"store", "rm", "--run", "ref"})), "no run named \"ref\"");
  ExpectOneLineError(RunVisalign(Store({"store", "export", "--run", "ref", "--out", (t_ / "x").string()})),
                     "no run named \"ref\"");
  ExpectOneLineError(RunVisalign({"store", "ls", "--store", (t_ / "nothing").string()}), "no visalign store in");
  EXPECT_FALSE(fs::exists(t_ / "nothing"));
}

TEST_F(StoreCli, ARunNameThatExistsWithAnotherDatasetIsRefusedAndKeptAsItWas) {
  testing::WriteDataset(t_ / "other-ds", "A different first prompt.");
  RunResult r = RunVisalign(testing::GenerateArgs(t_ / "other-ds", store_, server_->url(), {"--limit", "2"}));
  ExpectOneLineError(r, "run \"ref\" exists with dataset fingerprint ");
  EXPECT_EQ(store::OpenStore(store_).value()->Counts("ref").value().done, static_cast<size_t>(kItems));
}

TEST_F(StoreCli, StaticShardsSplitTheItemsOfARunWithoutOverlap) {
  const fs::path sharded = t_ / "sharded";
  for (const char* shard : {"0/2", "1/2"}) {
    RunResult r = RunVisalign(testing::GenerateArgs(t_ / "ds", sharded, server_->url(),
                                                    {"--limit", std::to_string(kItems), "--shard", shard}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("run ref in " + sharded.string() + ": 3 of 3 images done now", 0), 0u) << r.out;
  }
  EXPECT_EQ(store::OpenStore(sharded).value()->Counts("ref").value().done, static_cast<size_t>(kItems));
  EXPECT_EQ(server_->Stats()["by_status"].value("200", 0), 2 * kItems);
  for (const char* bad : {"2/2", "1", "a/2", "0/0", "-1/2"})
    ExpectOneLineError(RunVisalign(testing::GenerateArgs(t_ / "ds", sharded, server_->url(), {"--shard", bad})),
                       std::string("--shard ") + bad + " (--shard): I/N with 0 <= I < N");
}

// The SQLite file header keeps the schema version (PRAGMA user_version) big-endian at offset 60.
constexpr size_t kUserVersionOffset = 60;

TEST_F(StoreCli, AStoreOfANewerSchemaIsRefusedUnchanged) {
  const fs::path db = store_ / "visalign.db";
  ASSERT_FALSE(fs::exists(store_ / "visalign.db-wal")) << "the last connection checkpoints the log";
  std::string bytes = ReadFile(db).value();
  bytes.replace(kUserVersionOffset, 4, std::string("\0\0\0\x63", 4));  // 99
  ASSERT_TRUE(WriteFileAtomic(db, bytes).ok());
  ExpectOneLineError(RunVisalign(Store({"store", "ls"})), "store schema version 99 is newer than this visalign's");
  ExpectOneLineError(RunVisalign(testing::GenerateArgs(t_ / "ds", store_, server_->url(), {"--limit", "7"})),
                     "store schema version 99");
  EXPECT_EQ(server_->Stats()["by_status"].value("200", 0), kItems);
  EXPECT_EQ(ReadFile(db).value(), bytes);
}

// The same on a PostgreSQL store, its images in a shared folder.
class PostgresStoreCli : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = testing::PostgresServer::Shared();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = *server;
    url_ = server_->CreateDatabase().value();
    testing::WriteDataset(t_ / "ds");
    reference_ = testing::StartServer(t_ / "ds");
  }
  std::vector<std::string> Store(std::vector<std::string> args, const std::string& location = "") const {
    args.insert(args.end(), {"--store", location.empty() ? url_ : location, "--image-root", (t_ / "images").string()});
    return args;
  }
  RunResult Generate(const fs::path& dataset, std::vector<std::string> extra, const std::string& location = "") {
    std::vector<std::string> args = testing::GenerateArgs(dataset, location.empty() ? url_ : location,
                                                          reference_->url(), {"--limit", std::to_string(kItems)});
    args.insert(args.end(), {"--image-root", (t_ / "images").string()});
    args.insert(args.end(), extra.begin(), extra.end());
    return RunVisalign(args);
  }
  testing::PostgresServer* server_ = nullptr;
  std::string url_;
  TempDir t_;
  std::unique_ptr<violin::ReferenceServer> reference_;
};

// libpq is opened when a postgres:// store is first used; a machine without it (here: a broken
// libpq.so.5 found first on LD_LIBRARY_PATH) gets one line naming the library and the package.
TEST(PostgresStoreLibrary, AMissingLibpqIsOneLineNamingTheLibraryAndItsPackage) {
  TempDir t;
  fs::create_directories(t / "lib");
  ASSERT_TRUE(WriteFileAtomic(t / "lib" / "libpq.so.5", "not a shared library").ok());
  RunResult r = RunVisalign(
      {"store", "ls", "--store", "postgres://visalign@127.0.0.1:1/visalign", "--image-root", (t / "images").string()},
      {{"LD_LIBRARY_PATH", (t / "lib").string()}});
  ExpectOneLineError(r, "cannot load libpq.so.5: ");
  EXPECT_NE(r.err.find("the Debian package libpq5 (apt-get install -y libpq5)"), std::string::npos) << r.err;
}

TEST_F(PostgresStoreCli, MigrateMakesTheStoreGenerateFillsItAndStoreCommandsReadIt) {
  RunResult made = RunVisalign(Store({"store", "migrate"}));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_EQ(made.out, "store " + url_ + ": created with schema version 2\n");
  RunResult gen = Generate(t_ / "ds", {});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_EQ(gen.out.rfind("run ref in " + url_ + ": 6 of 6 images done now", 0), 0u) << gen.out;
  RunResult ls = RunVisalign(Store({"store", "ls"}));
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(ls.out.rfind("ref\tviolin\t6 done, 0 failed, 0 pending (0 leased by running workers)", 0), 0u) << ls.out;
  RunResult exported = RunVisalign(Store({"store", "export", "--run", "ref", "--out", (t_ / "export").string()}));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(std::distance(fs::directory_iterator(t_ / "export" / "images"), fs::directory_iterator()), kItems);
  RunResult again = RunVisalign(Store({"--json", "store", "migrate"}));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Json::parse(again.out), Json({{"store", url_}, {"from_version", 2}, {"to_version", 2}}));
}

TEST_F(PostgresStoreCli, BadInputIsOneLineAndLosesNothing) {
  ASSERT_EQ(Generate(t_ / "ds", {}).exit_code, 0);
  testing::WriteDataset(t_ / "other-ds", "A different first prompt.");
  ExpectOneLineError(Generate(t_ / "other-ds", {}), "run \"ref\" exists with dataset fingerprint ");
  // Without --image-root the store's image files cannot be found: said, not guessed.
  ExpectOneLineError(RunVisalign({"store", "ls", "--store", url_}),
                     "this store keeps its images as files in a folder its workers share (--image-root)");
  const std::string database = url_.substr(url_.rfind('/') + 1);
  ASSERT_TRUE(server_->Execute(database, "UPDATE visalign_meta SET value = '99' WHERE key = 'schema_version'").ok());
  for (const auto& args : {Store({"store", "ls"}), Store({"store", "migrate"})})
    ExpectOneLineError(RunVisalign(args), "store schema version 99 is newer than this visalign's 2");
  ExpectOneLineError(Generate(t_ / "ds", {}), "store schema version 99");
  ASSERT_TRUE(server_->Execute(database, "UPDATE visalign_meta SET value = '2' WHERE key = 'schema_version'").ok());
  auto s = store::OpenStore(url_, {"", t_ / "images", false}).value();
  EXPECT_EQ(s->Counts("ref").value().done, static_cast<size_t>(kItems));
  EXPECT_EQ(reference_->Stats()["by_status"].value("200", 0), kItems);
}

TEST_F(PostgresStoreCli, AnUnreachableServerOrAWrongPasswordIsOneLineAndThePasswordIsNeverPrinted) {
  const std::string secret = "S3cret-never-printed";
  auto expect_hidden = [&](const RunResult& r, const std::string& says) {
    ExpectOneLineError(r, says);
    EXPECT_EQ(r.out.find(secret), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find(secret), std::string::npos) << r.err;
  };
  const std::string port = std::to_string(server_->port());
  const std::string with_secret = "postgres://visalign:" + secret + "@127.0.0.1:" + port + url_.substr(url_.rfind('/'));
  expect_hidden(RunVisalign({"--log-level", "debug", "store", "ls", "--store",
                             "postgres://visalign:" + secret + "@127.0.0.1:1/visalign"}),
                "cannot connect to PostgreSQL");
  expect_hidden(RunVisalign(Store({"--log-level", "debug", "store", "show"}, with_secret)),
                "password authentication failed for user \"visalign\"");
  expect_hidden(RunVisalign(testing::GenerateArgs(t_ / "ds", url_, reference_->url(),
                                                  {"--store-password-env", "WRONG_PASSWORD", "--image-root",
                                                   (t_ / "images").string(), "--log-level", "debug"}),
                            {{"WRONG_PASSWORD", secret}}),
                "password authentication failed");
  ExpectOneLineError(RunVisalign(Store({"store", "ls", "--store-password-env", "NO_SUCH_VARIABLE"})),
                     "environment variable NO_SUCH_VARIABLE is not set (--store-password-env)");
  // The right password in the URL works, and is neither printed nor recorded.
  ::setenv("RIGHT_PASSWORD", server_->password().c_str(), 1);
  const std::string with_right =
      "postgres://visalign:" + server_->password() + "@127.0.0.1:" + port + url_.substr(url_.rfind('/'));
  RunResult gen = RunVisalign(testing::GenerateArgs(t_ / "ds", with_right, reference_->url(),
                                                    {"--limit", "2", "--image-root", (t_ / "images").string()}));
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  RunResult show = RunVisalign(Store({"--json", "store", "show"}, with_right));
  ASSERT_EQ(show.exit_code, 0) << show.err;
  for (const RunResult& r : {gen, show}) {
    EXPECT_EQ(r.out.find(server_->password()), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find(server_->password()), std::string::npos) << r.err;
  }
  EXPECT_EQ(Json::parse(show.out)["store"], url_);
}

}  // namespace
}  // namespace visalign
