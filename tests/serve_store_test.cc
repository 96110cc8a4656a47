// `visalign serve` on each kind of store (a folder, a PostgreSQL database on a real server this
// program starts): players answer through the real HTTP API on 127.0.0.1, several at once, and
// `hues export-humans --store` of the same location writes exactly the acknowledged answers, without
// those of the player who failed the attention check when asked. A server location that cannot be
// reached, a wrong password and a study schema newer than this build are one error line, exit 2,
// never showing the password.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include "server/plates.h"
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
  const std::string user = Json::parse(session->body)["participant"];
  const std::string set = session->get_header_value("Set-Cookie");
  const httplib::Headers cookie = {{"Cookie", set.substr(0, set.find(';'))}};
  auto profile = client.Post("/api/profile", cookie,
                             R"({"language": "en", "gender": "other", "age_range": "30-39", "colorblind": "no"})",
                             "application/json");
  if (!profile || profile->status != 200) return fail("no profile");
  auto next = client.Get("/api/next", cookie);
  if (!next || next->status != 200) return fail("no first item");
  Json item = Json::parse(next->body);
  for (int n = 0; !item["done"].get<bool>(); ++n) {
    const bool attention = item["kind"] == "attention";
    const std::string cell = attention ? (fail_attention ? "A1" : kAttentionCell)
                                       : std::string(1, static_cast<char>('A' + player)) + std::to_string(1 + n);
    const Json body = {{"index", item["index"]},
                       {"coordinate", cell},
                       {"client_id", "player" + std::to_string(player) + "-item" + std::to_string(n)}};
    auto answer = client.Post("/api/answer", cookie, body.dump(), "application/json");
    if (!answer || answer->status != 201) return fail("answer " + std::to_string(n) + " refused");
    if (!attention) {
      std::lock_guard lock(mu);
      acknowledged.emplace_back(user, std::to_string(item["clue_id"].get<int>()), cell);
    }
    item = Json::parse(answer->body);
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
    for (const auto& r : t.rows)
      out.emplace_back(r[*t.Column("userId")], r[*t.Column("clueId")], r[*t.Column("coordinate")]);
    return out;
  }

  TempDir dir_;
  std::string location_;
  std::map<std::string, std::string> env_ = {{kPasswordVariable, ""}, {"SERVE_STORE_TOKEN", kToken}};
};

TEST_P(ServeStore, AnswersPostedOverHttpAreExactlyWhatExportHumansWrites) {
  const Json study = {{"words_per_participant", kWords}, {"attention_check", {{"position", 1}}}, {"cvd_screen", false}};
  std::vector<Row> acknowledged;
  std::string admin_export, failed_user;
  {
    ServeProcess serve(
        Store({"--study", dir_.Write("study.json", study.dump()).string(), "--admin-token-env", "SERVE_STORE_TOKEN"}),
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
    const Json c = Json::parse(counts->body);
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
  RunResult json = RunVisalign(
      Store({"hues", "export-humans", "--exclude-failed-attention", "--out", (dir_ / "j.csv").string(), "--json"}),
      env_);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(Json::parse(json.out)["excluded_participants"], 1);

  // The tools' exports read the same store.
  ExpectOneLineError(RunVisalign(Store({"acva", "export-ratings", "--run", "none", "--out", "-"}), env_),
                     "no ratings of run \"none\"", kToken);
}

// A participant of the game over HTTP, step by step (for tests that need each step's choice).
struct Participant {
  httplib::Client& client;
  httplib::Headers cookie;
  std::string user;

  Participant(httplib::Client& c, const Json& params) : client(c) {
    auto session =
        client.Post("/api/session", Json({{"consent", true}, {"params", params}}).dump(), "application/json");
    EXPECT_TRUE(session && session->status == 201);
    if (!session) return;
    user = Json::parse(session->body)["participant"];
    const std::string set = session->get_header_value("Set-Cookie");
    cookie = {{"Cookie", set.substr(0, set.find(';'))}};
  }
  int Post(const std::string& path, const Json& body) {
    auto res = client.Post(path, cookie, body.dump(), "application/json");
    return res ? res->status : 0;
  }
  // Every item: word n at cell A<n+1>, the attention check at `attention_cell`.
  void Play(const std::string& attention_cell) {
    auto next = client.Get("/api/next", cookie);
    ASSERT_TRUE(next && next->status == 200);
    Json item = Json::parse(next->body);
    for (int n = 0; !item["done"].get<bool>(); ++n) {
      const std::string cell = item["kind"] == "attention" ? attention_cell : "A" + std::to_string(n + 1);
      auto answer = client.Post(
          "/api/answer", cookie,
          Json({{"index", item["index"]}, {"coordinate", cell}, {"client_id", user + "-" + std::to_string(n)}}).dump(),
          "application/json");
      ASSERT_TRUE(answer && answer->status == 201);
      item = Json::parse(answer->body);
    }
  }
};

// The screen's answers that read `right` of the confusion plates of participant `user` (the plates
// are drawn from the participant's id), the control plate read.
Json PlateAnswers(const std::string& location, const std::string& user, int right) {
  auto study = store::StudyStore::Open(location);
  EXPECT_TRUE(study.ok()) << study.status().ToString();
  int64_t id = 0;
  for (const store::Participant& p : (*study)->Participants().value())
    if (p.user_id == user) id = p.id;
  Json answers = Json::array();
  for (const server::Plate& plate : server::ScreeningPlates(static_cast<uint64_t>(id)))
    answers.push_back(plate.control || right-- > 0 ? Json(plate.digit) : Json());
  return {{"answers", answers}};
}

// Who took part, beyond their answers: the platform ids, the plate score, the attention check and
// the session metadata, as CSV and as JSON; a participant who read no plate is exported as
// colour-blind, and --min-plate-score leaves out who scored less or was not screened.
TEST_P(ServeStore, ExportParticipantsAndThePlateScoreRules) {
  const Json study = {{"words_per_participant", 2}, {"attention_check", {{"position", 1}}}, {"cvd_screen", true}};
  const Json profile = {
      {"language", "en"},
      {"gender", "female"},
      {"age_range", "20-29"},
      {"colorblind", "no"},
      {"metadata", {{"user_agent", "Test/1.0"}, {"viewport", {390, 844}}, {"device_pixel_ratio", 3}}}};
  std::vector<std::string> users;
  {
    ServeProcess serve(Store({"--study", dir_.Write("study.json", study.dump()).string()}), dir_.path(), env_);
    ASSERT_TRUE(serve.ok()) << serve.error();
    httplib::Client client(serve.url());
    // A reads every plate, B none, C is not screened and fails the attention check, D only consents.
    for (const char* pid : {"pid-a", "pid-b", "pid-c", "pid-d"}) {
      Participant p(client, {{"PROLIFIC_PID", pid}, {"STUDY_ID", "study-1"}, {"SESSION_ID", std::string("s-") + pid}});
      users.push_back(p.user);
      if (std::string(pid) == "pid-d") continue;
      ASSERT_EQ(p.Post("/api/profile", profile), 200);
      if (std::string(pid) != "pid-c")
        ASSERT_EQ(p.Post("/api/screen", PlateAnswers(location_, p.user, pid == std::string("pid-a") ? 4 : 0)), 200);
      ASSERT_NO_FATAL_FAILURE(p.Play(pid == std::string("pid-c") ? "A1" : kAttentionCell));
    }
  }
  RunResult csv_run =
      RunVisalign(Store({"hues", "export-participants", "--out", (dir_ / "participants.csv").string()}), env_);
  ASSERT_EQ(csv_run.exit_code, 0) << csv_run.err;
  EXPECT_EQ(csv_run.out, "wrote 4 participants to " + (dir_ / "participants.csv").string() + "\n");
  const CsvTable t = ReadCsv(dir_ / "participants.csv").value();
  ASSERT_EQ(t.rows.size(), 4u);
  const auto col = [&](size_t row, const char* name) { return t.rows[row][*t.Column(name)]; };
  const std::vector<std::vector<std::string>> expected = {
      // userId, PROLIFIC_PID, plate_score, colorblind_reported, colorblind, attention_check, items, answers
      {users[0], "pid-a", "1.0", "no", "no", "passed", "3", "2"},
      {users[1], "pid-b", "0.0", "no", "YES", "passed", "3", "2"},
      {users[2], "pid-c", "", "no", "no", "failed", "3", "2"},
      {users[3], "pid-d", "", "", "", "none", "0", "0"}};
  for (size_t r = 0; r < 4; ++r) {
    SCOPED_TRACE(r);
    const std::vector<std::string> got = {
        col(r, "userId"),     col(r, "PROLIFIC_PID"),    col(r, "plate_score"), col(r, "colorblind_reported"),
        col(r, "colorblind"), col(r, "attention_check"), col(r, "items"),       col(r, "answers")};
    EXPECT_EQ(got, expected[r]);
    EXPECT_EQ(col(r, "STUDY_ID"), "study-1");
    EXPECT_EQ(col(r, "completed_at").empty(), r == 3);
  }
  EXPECT_EQ(col(0, "plate_control"), "true");
  EXPECT_EQ(col(0, "viewport"), "390x844");
  EXPECT_EQ(col(0, "user_agent"), "Test/1.0");
  EXPECT_EQ(col(0, "device_pixel_ratio"), "3");
  EXPECT_EQ(col(2, "attention_expected"), kAttentionCell);
  EXPECT_EQ(col(2, "attention_answer"), "A1");

  RunResult json_run = RunVisalign(Store({"hues", "export-participants", "--format", "json", "--out", "-"}), env_);
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const Json doc = Json::parse(json_run.out);
  ASSERT_EQ(doc["participants"].size(), 4u);
  EXPECT_EQ(doc["participants"][1]["plate_score"], 0.0);
  EXPECT_EQ(doc["participants"][1]["screen"]["answers"][1], nullptr);
  EXPECT_EQ(doc["participants"][0]["url_params"]["SESSION_ID"], "s-pid-a");
  EXPECT_EQ(doc["participants"][0]["metadata"]["viewport"], Json({390, 844}));
  EXPECT_EQ(doc["participants"][2]["attention_check"]["passed"], false);
  EXPECT_EQ(doc["participants"][3]["attention_check"], nullptr);

  // export-humans: B (no plate read) is colour-blind; --min-plate-score keeps only A.
  const CsvTable all = Export("answers.csv");
  std::map<std::string, std::set<std::string>> colorblind;
  for (const auto& r : all.rows) colorblind[r[*all.Column("userId")]].insert(r[*all.Column("colorblind")]);
  EXPECT_EQ(colorblind, (std::map<std::string, std::set<std::string>>{
                            {users[0], {"no"}}, {users[1], {"YES"}}, {users[2], {"no"}}}));
  const CsvTable screened = Export("screened.csv", {"--min-plate-score", "0.5"});
  std::set<std::string> kept;
  for (const auto& r : screened.rows) kept.insert(r[*screened.Column("userId")]);
  EXPECT_EQ(kept, std::set<std::string>{users[0]});
  RunResult counts = RunVisalign(Store({"--json", "hues", "export-humans", "--min-plate-score", "0.5",
                                        "--exclude-failed-attention", "--out", (dir_ / "s.csv").string()}),
                                 env_);
  ASSERT_EQ(counts.exit_code, 0) << counts.err;
  const Json c = Json::parse(counts.out);
  EXPECT_EQ(c["excluded_plate_score"], 2);
  EXPECT_EQ(c["excluded_failed_attention"], 1);
  EXPECT_EQ(c["excluded_participants"], 2);
  EXPECT_EQ(c["answers"], 2);

  ExpectOneLineError(
      RunVisalign(Store({"hues", "export-humans", "--min-plate-score", "1.5", "--out", (dir_ / "x.csv").string()}),
                  env_),
      "--min-plate-score", kToken);
  ExpectOneLineError(
      RunVisalign(Store({"hues", "export-participants", "--format", "xml", "--out", (dir_ / "x.csv").string()}), env_),
      "--format", kToken);
}

// A port another program listens on: `serve` says so in one line and has created no store (no
// folder, no study tables).
TEST_P(ServeStore, ABusyPortIsOneLineAndCreatesNoStore) {
  httplib::Server other;
  const int port = other.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread listening([&other] { other.listen_after_bind(); });
  while (!other.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ExpectOneLineError(RunVisalign(Store({"serve", "--host", "127.0.0.1", "--port", std::to_string(port)}), env_),
                     "cannot listen on 127.0.0.1:" + std::to_string(port), kToken);
  other.stop();
  listening.join();
  if (GetParam() == "sqlite")
    EXPECT_FALSE(fs::exists(location_)) << "the store folder was created";
  else
    EXPECT_FALSE(store::StudyStore::Exists(location_).value()) << "the study tables were created";
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
  ExpectOneLineError(
      RunVisalign({"serve", "--store", url_, "--store-password-env", kPasswordVariable, "--port", "0"}, env),
      "password authentication failed", wrong);
  ExpectOneLineError(RunVisalign({"hues", "export-humans", "--store", url_, "--store-password-env", kPasswordVariable,
                                  "--out", (dir_ / "a.csv").string()},
                                 env),
                     "password authentication failed", wrong);
}

TEST_F(ServePostgresErrors, ADatabaseWithoutAStudyOrWithANewerOneIsRefused) {
  const std::vector<std::string> export_humans = {"hues", "export-humans", "--store",
                                                  url_,   "--out",         (dir_ / "a.csv").string()};
  ExpectOneLineError(RunVisalign(export_humans), "no study store in " + url_, server_->password());
  EXPECT_FALSE(store::StudyStore::Exists(url_).value()) << "the command created nothing";
  ASSERT_TRUE(store::StudyStore::Open(url_).ok());
  ASSERT_TRUE(server_
                  ->Execute(url_.substr(url_.rfind('/') + 1),
                            "UPDATE visalign_meta SET value = '99' WHERE key = 'study_schema_version'")
                  .ok());
  ExpectOneLineError(RunVisalign(export_humans), "study store schema version 99 is newer than this visalign's 1",
                     server_->password());
  ExpectOneLineError(RunVisalign({"serve", "--store", url_, "--port", "0"}), "study store schema version 99 is newer",
                     server_->password());
}

}  // namespace
}  // namespace visalign
