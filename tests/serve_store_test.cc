// `visalign serve` on each kind of store (a folder, a PostgreSQL database on a real server this
// program starts): players answer through the real HTTP API on 127.0.0.1, several at once, and
// `hues export-humans --store` of the same location writes exactly the acknowledged answers, without
// those of the player who failed the attention check when asked. A server location that cannot be
// reached, a wrong password and a study schema newer than this build are one error line, exit 2,
// never showing the password.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include "testing/postgres_database_test.h"
#include "testing/postgres_server.h"
#include "testing/serve_process.h"
#include "visalign/core/io.h"
#include "visalign/store/study_store.h"

namespace visalign {
namespace {

namespace fs = std::filesystem;
using testing::PostgresServer;
using testing::RunResult;
using testing::RunVisalign;
using testing::ServeProcess;
using testing::TempDir;

constexpr char kToken[] = "store-admin-token-0123456789";
constexpr char kPasswordVariable[] = "VISALIGN_TEST_STUDY_DB_PASSWORD";
constexpr int kPlayers = 4;
constexpr int kWords = 4;
constexpr char kAttentionCell[] = "H15";

void ExpectOneLineError(const RunResult& r, const std::string& says, const std::string& secret) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  EXPECT_EQ((r.out + r.err).find(secret), std::string::npos) << r.err;
}

// One acknowledged answer: (userId, clueId, coordinate).
using Row = std::tuple<std::string, std::string, std::string>;

// A player of the game over HTTP: consent, profile, then every item; the attention check answered
// right unless `fail_attention`. The acknowledged answers go to `acknowledged`.
void Play(const std::string& url, int player, bool fail_attention, std::mutex& mu, std::vector<Row>& acknowledged,
          std::vector<std::string>& errors) {
  httplib::Client client(url);
  auto fail = [&](const std::string& what) {
    std::lock_guard lock(mu);
    errors.push_back("player " + std::to_string(player) + ": " + what);
  };
  auto session = client.Post("/api/session", R"({"consent": true})", "application/json");
  if (!session || session->status != 201) return fail("no session");
  const std::string user = nlohmann::json::parse(session->body)["participant"];
  const std::string set = session->get_header_value("Set-Cookie");
  const httplib::Headers cookie = {{"Cookie", set.substr(0, set.find(';'))}};
  auto profile = client.Post("/api/profile", cookie,
                             R"({"language": "en", "gender": "other", "age_range": "30-39", "colorblind": "no"})",
                             "application/json");
  if (!profile || profile->status != 200) return fail("no profile");
  auto next = client.Get("/api/next", cookie);
  if (!next || next->status != 200) return fail("no first item");
  nlohmann::json item = nlohmann::json::parse(next->body);
  for (int n = 0; !item["done"].get<bool>(); ++n) {
    const bool attention = item["kind"] == "attention";
    const std::string cell = attention ? (fail_attention ? "A1" : kAttentionCell)
                                       : std::string(1, static_cast<char>('A' + player)) + std::to_string(1 + n);
    const nlohmann::json body = {{"index", item["index"]}, {"coordinate", cell},
                                 {"client_id", "player" + std::to_string(player) + "-item" + std::to_string(n)}};
    auto answer = client.Post("/api/answer", cookie, body.dump(), "application/json");
    if (!answer || answer->status != 201) return fail("answer " + std::to_string(n) + " refused");
    if (!attention) {
      std::lock_guard lock(mu);
      acknowledged.emplace_back(user, std::to_string(item["clue_id"].get<int>()), cell);
    }
    item = nlohmann::json::parse(answer->body);
  }
}

class ServeStore : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "sqlite") {
      location_ = (dir_ / "store").string();
      return;
    }
    auto server = PostgresServer::Shared();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    auto url = (*server)->CreateDatabase();
    ASSERT_TRUE(url.ok()) << url.status().ToString();
    location_ = *url;
    env_[kPasswordVariable] = (*server)->password();
  }
  // The --store flags of every command.
  std::vector<std::string> Store(std::vector<std::string> args) const {
    args.insert(args.end(), {"--store", location_, "--store-password-env", kPasswordVariable});
    return args;
  }
  CsvTable Export(const std::string& name, std::vector<std::string> extra = {}) const {
    std::vector<std::string> args = Store({"hues", "export-humans", "--out", (dir_ / name).string()});
    args.insert(args.end(), extra.begin(), extra.end());
    RunResult r = RunVisalign(args, env_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto table = ReadCsv(dir_ / name);
    EXPECT_TRUE(table.ok()) << table.status().ToString();
    return table.ok() ? *table : CsvTable{};
  }
  static std::vector<Row> Rows(const CsvTable& t) {
    std::vector<Row> out;
    for (const auto& r : t.rows) out.emplace_back(r[*t.Column("userId")], r[*t.Column("clueId")], r[*t.Column("coordinate")]);
    return out;
  }

  TempDir dir_;
  std::string location_;
  std::map<std::string, std::string> env_ = {{kPasswordVariable, ""}, {"SERVE_STORE_TOKEN", kToken}};
};

TEST_P(ServeStore, AnswersPostedOverHttpAreExactlyWhatExportHumansWrites) {
  const nlohmann::json study = {{"words_per_participant", kWords}, {"attention_check", {{"position", 1}}},
                                {"cvd_screen", false}};
  std::vector<Row> acknowledged;
  std::string admin_export, failed_user;
  {
    ServeProcess serve(Store({"--study", dir_.Write("study.json", study.dump()).string(), "--admin-token-env",
                              "SERVE_STORE_TOKEN"}),
                       dir_.path(), env_);
    ASSERT_TRUE(serve.ok()) << serve.error();
    std::mutex mu;
    std::vector<std::string> errors;
    std::vector<std::thread> players;
    for (int p = 0; p < kPlayers; ++p)
      players.emplace_back(Play, serve.url(), p, /*fail_attention=*/p == 2, std::ref(mu), std::ref(acknowledged),
                           std::ref(errors));
    for (std::thread& t : players) t.join();
    ASSERT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
    httplib::Client client(serve.url());
    const httplib::Headers admin = {{"Authorization", std::string("Bearer ") + kToken}};
    auto counts = client.Get("/api/admin/counts", admin);
    ASSERT_TRUE(counts && counts->status == 200);
    const nlohmann::json c = nlohmann::json::parse(counts->body);
    EXPECT_EQ(c["participants"], kPlayers);
    EXPECT_EQ(c["completed"], kPlayers);
    EXPECT_EQ(c["answers"], kPlayers * kWords);
    EXPECT_EQ(c["records"]["attention_check"], kPlayers);
    auto exported = client.Get("/api/admin/export", admin);
    ASSERT_TRUE(exported && exported->status == 200);
    admin_export = exported->body;
    RunResult stopped = serve.Stop();
    EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  }
  ASSERT_EQ(acknowledged.size(), static_cast<size_t>(kPlayers * kWords));

  const CsvTable all = Export("answers.csv");
  EXPECT_EQ(ReadFile(dir_ / "answers.csv").value(), admin_export);
  std::vector<Row> rows = Rows(all);
  // In the order accepted: each player's answers in their order, players interleaved as they came.
  std::map<std::string, std::vector<Row>> by_user;
  for (const Row& r : acknowledged) by_user[std::get<0>(r)].push_back(r);
  std::map<std::string, std::vector<Row>> exported_by_user;
  for (const Row& r : rows) exported_by_user[std::get<0>(r)].push_back(r);
  EXPECT_EQ(exported_by_user, by_user);
  std::sort(rows.begin(), rows.end());
  std::sort(acknowledged.begin(), acknowledged.end());
  EXPECT_EQ(rows, acknowledged);

  // The player who failed the attention check (their coordinates are in row C) is left out.
  const CsvTable attentive = Export("attentive.csv", {"--exclude-failed-attention"});
  std::vector<Row> expected;
  for (const Row& r : acknowledged)
    if (std::get<2>(r)[0] != 'C') expected.push_back(r);
  std::vector<Row> kept = Rows(attentive);
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, expected);
  EXPECT_EQ(kept.size(), static_cast<size_t>((kPlayers - 1) * kWords));
  RunResult json = RunVisalign(Store({"hues", "export-humans", "--exclude-failed-attention", "--out",
                                      (dir_ / "j.csv").string(), "--json"}),
                               env_);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["excluded_participants"], 1);

  // The tools' exports read the same store.
  ExpectOneLineError(RunVisalign(Store({"acva", "export-ratings", "--run", "none", "--out", "-"}), env_),
                     "no ratings of run \"none\"", kToken);
}

INSTANTIATE_TEST_SUITE_P(Stores, ServeStore, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

class ServePostgresErrors : public testing::PostgresDatabaseTest {
 protected:
  TempDir dir_;
};

TEST_F(ServePostgresErrors, AnUnreachableServerIsOneLineWithoutThePassword) {
  const std::string url = "postgres://visalign:s3cret-Pw@127.0.0.1:1/nowhere";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"serve", "--store", url, "--port", "0"},
        std::vector<std::string>{"hues", "export-humans", "--store", url, "--out", (dir_ / "a.csv").string()},
        std::vector<std::string>{"hues", "export-regions", "--store", url, "--out", "-"}})
    ExpectOneLineError(RunVisalign(args), "cannot connect to PostgreSQL", "s3cret-Pw");
}

TEST_F(ServePostgresErrors, AWrongPasswordIsOneLineAndNeverShown) {
  const std::string wrong = "Wr0ng-Study-Pw";
  const std::map<std::string, std::string> env = {{kPasswordVariable, wrong}};
  ExpectOneLineError(RunVisalign({"serve", "--store", url_, "--store-password-env", kPasswordVariable, "--port", "0"}, env),
                     "password authentication failed", wrong);
  ExpectOneLineError(RunVisalign({"hues", "export-humans", "--store", url_, "--store-password-env", kPasswordVariable,
                                  "--out", (dir_ / "a.csv").string()},
                                 env),
                     "password authentication failed", wrong);
}

TEST_F(ServePostgresErrors, ADatabaseWithoutAStudyOrWithANewerOneIsRefused) {
  const std::vector<std::string> export_humans = {"hues", "export-humans", "--store", url_, "--out",
                                                  (dir_ / "a.csv").string()};
  ExpectOneLineError(RunVisalign(export_humans), "no study store in " + url_, server_->password());
  EXPECT_FALSE(store::StudyStore::Exists(url_).value()) << "the command created nothing";
  ASSERT_TRUE(store::StudyStore::Open(url_).ok());
  ASSERT_TRUE(server_->Execute(url_.substr(url_.rfind('/') + 1),
                               "UPDATE visalign_meta SET value = '99' WHERE key = 'study_schema_version'")
                  .ok());
  ExpectOneLineError(RunVisalign(export_humans), "study store schema version 99 is newer than this visalign's 1",
                     server_->password());
  ExpectOneLineError(RunVisalign({"serve", "--store", url_, "--port", "0"}), "study store schema version 99 is newer",
                     server_->password());
}

}  // namespace
}  // namespace visalign
