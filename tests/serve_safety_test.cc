// `visalign serve` under abuse: every bad request answers 4xx with the one error shape and leaves
// the study store as it was — answers before consent, unknown cells and words, oversized, malformed
// and deeply nested bodies, replayed and duplicated submissions, answers out of turn, hostile text,
// too many requests per IP and per session, and admin endpoints without the token. Every reply,
// errors included, carries the Content-Security-Policy; no page script builds HTML from strings.
#include <gtest/gtest.h>
#include <httplib.h>

#include "testing/serve_process.h"
#include "visalign/server/app.h"
#include "visalign/store/study_store.h"

namespace visalign {
namespace {

namespace fs = std::filesystem;
using testing::ServeProcess;
using testing::TempDir;

constexpr char kToken[] = "safety-admin-token-0123456789";

struct Reply {
  int status = 0;
  Json body;
  httplib::Headers headers;
};

class ServeSafety : public ::testing::Test {
 protected:
  void Start(const Json& study) {
    serve_ = std::make_unique<ServeProcess>(
        std::vector<std::string>{"--store", (dir_ / "store").string(), "--study",
                                 dir_.Write("study.json", study.dump()).string(), "--admin-token-env", "SAFETY_TOKEN"},
        dir_.path(), std::map<std::string, std::string>{{"SAFETY_TOKEN", kToken}});
    ASSERT_TRUE(serve_->ok()) << serve_->error();
    client_ = std::make_unique<httplib::Client>(serve_->url());
    auto store = store::StudyStore::Open((dir_ / "store").string());
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
  }
  void SetUp() override {
    Start({{"words_per_participant", 3}, {"attention_check", {{"position", 1}}}, {"cvd_screen", false}});
  }

  Reply Call(const std::string& method, const std::string& path, const std::string& body = "{}",
             httplib::Headers headers = {}) {
    if (!cookie_.empty()) headers.emplace("Cookie", cookie_);
    auto res = method == "GET" ? client_->Get(path, headers) : client_->Post(path, headers, body, "application/json");
    Reply r;
    if (!res) return r;
    r.status = res->status;
    r.body = Json::parse(res->body, nullptr, false);
    r.headers = res->headers;
    return r;
  }
  // A consenting, onboarded participant; their cookie is sent from now on.
  void Join() {
    auto res = client_->Post("/api/session", R"({"consent": true})", "application/json");
    ASSERT_EQ(res->status, 201);
    const std::string set = res->get_header_value("Set-Cookie");
    cookie_ = set.substr(0, set.find(';'));
    ASSERT_EQ(Call("POST", "/api/profile",
                   R"({"language": "en", "gender": "other", "age_range": "30-39", "colorblind": "no"})")
                  .status,
              200);
  }
  store::StudyCounts Counts() { return *store_->Counts(); }
  static std::string Answer(int index, const std::string& coordinate, const std::string& client_id) {
    return Json({{"index", index}, {"coordinate", coordinate}, {"client_id", client_id}}).dump();
  }
  // `call` answers `status` with an error naming `what`, and the store's counts do not move.
  template <typename Fn>
  void ExpectRefused(int status, const std::string& what, Fn&& call) {
    const store::StudyCounts before = Counts();
    Reply r = call();
    EXPECT_EQ(r.status, status) << r.body.dump();
    ASSERT_TRUE(r.body.is_object() && r.body.contains("error")) << r.body.dump();
    EXPECT_NE(r.body["error"]["what"].get<std::string>().find(what), std::string::npos) << r.body.dump();
    for (const char* part : {"what", "where", "expected"}) EXPECT_TRUE(r.body["error"].contains(part));
    const store::StudyCounts after = Counts();
    EXPECT_EQ(after.participants, before.participants);
    EXPECT_EQ(after.answers, before.answers);
    EXPECT_EQ(after.records, before.records);
    EXPECT_EQ(after.events, before.events);
  }

  TempDir dir_;
  std::unique_ptr<ServeProcess> serve_;
  std::unique_ptr<httplib::Client> client_;
  std::unique_ptr<store::StudyStore> store_;
  std::string cookie_;
};

TEST_F(ServeSafety, NothingIsStoredBeforeConsent) {
  ExpectRefused(400, "no consent", [&] { return Call("POST", "/api/session", R"({"consent": "yes"})"); });
  ExpectRefused(400, "no consent", [&] { return Call("POST", "/api/session", R"({"params": {}})"); });
  ExpectRefused(401, "no session", [&] { return Call("POST", "/api/answer", Answer(0, "A1", "client-0001")); });
  ExpectRefused(401, "no session", [&] { return Call("POST", "/api/profile", R"({"language": "en"})"); });
  ExpectRefused(401, "no session",
                [&] { return Call("POST", "/api/events", R"({"events": [{"type": "blur", "t": 1}]})"); });
  ExpectRefused(401, "unknown session", [&] {
    return Call("GET", "/api/next", "",
                {{"Cookie", "visalign_session=0000000000000000000000000000000000000000000000000000000000000000"}});
  });
  EXPECT_EQ(Counts().participants, 0);
}

TEST_F(ServeSafety, UnknownCellsAndWordsAreRefused) {
  Join();
  for (const char* cell : {"Q1", "A31", "A0", "", "C12; DROP TABLE hues_answers", "<img src=x onerror=alert(1)>"})
    ExpectRefused(400, "cell", [&] { return Call("POST", "/api/answer", Answer(0, cell, "client-0001")); });
  ExpectRefused(400, "clue", [&] {
    return Call("POST", "/api/answer",
                R"({"index": 0, "coordinate": "A1", "client_id": "client-0001", "clue_id": 99999})");
  });
  ExpectRefused(400, "item", [&] { return Call("POST", "/api/answer", Answer(7, "A1", "client-0001")); });
  ExpectRefused(400, "item", [&] {
    return Call("POST", "/api/answer", R"({"index": -1, "coordinate": "A1", "client_id": "client-0001"})");
  });
  ExpectRefused(400, "client id", [&] { return Call("POST", "/api/answer", Answer(0, "A1", "x")); });
  auto fresh = client_->Post("/api/session", R"({"consent": true})", "application/json");
  const std::string set = fresh->get_header_value("Set-Cookie");
  cookie_ = set.substr(0, set.find(';'));
  ExpectRefused(400, "value", [&] {
    return Call("POST", "/api/profile",
                R"({"language": "en", "gender": "unicorn", "age_range": "30-39", "colorblind": "no"})");
  });
  ExpectRefused(400, "value", [&] {
    return Call("POST", "/api/profile",
                R"({"language": "fr", "gender": "male", "age_range": "30-39", "colorblind": "no"})");
  });
  EXPECT_FALSE(store_->FindSession(server::SessionHash(cookie_.substr(cookie_.find('=') + 1)))->value().onboarded());
}

TEST_F(ServeSafety, ReplayedDuplicatedAndOutOfTurnAnswersAreRefused) {
  Join();
  ASSERT_EQ(Call("POST", "/api/answer", Answer(0, "C12", "client-0001")).status, 201);
  ExpectRefused(409, "already answered", [&] { return Call("POST", "/api/answer", Answer(0, "C12", "client-0001")); });
  ExpectRefused(409, "already answered", [&] { return Call("POST", "/api/answer", Answer(0, "D4", "client-0002")); });
  ExpectRefused(409, "not reached yet", [&] { return Call("POST", "/api/answer", Answer(2, "D4", "client-0003")); });
  // A replay of an answer's client id on the next item is recognised too.
  ASSERT_EQ(Call("POST", "/api/answer", Answer(1, "H15", "client-0004")).status, 201);  // the attention check
  ExpectRefused(409, "already recorded", [&] { return Call("POST", "/api/answer", Answer(2, "E5", "client-0001")); });
  ExpectRefused(409, "already onboarded", [&] {
    return Call("POST", "/api/profile",
                R"({"language": "es", "gender": "other", "age_range": "30-39", "colorblind": "no"})");
  });
  EXPECT_EQ(Counts().answers, 1);
}

TEST_F(ServeSafety, OversizedMalformedAndDeeplyNestedBodiesAreRefused) {
  Join();
  ExpectRefused(413, "too large", [&] { return Call("POST", "/api/events", std::string(20000, ' ') + "{}"); });
  ExpectRefused(400, "invalid JSON", [&] { return Call("POST", "/api/answer", R"({"index": 0,)"); });
  ExpectRefused(400, "not an object", [&] { return Call("POST", "/api/answer", "[1, 2]"); });
  ExpectRefused(400, "nested deeper",
                [&] { return Call("POST", "/api/answer", std::string(100, '[') + std::string(100, ']')); });
  ExpectRefused(400, "event",
                [&] { return Call("POST", "/api/events", R"({"events": [{"type": "<script>", "t": 1}]})"); });
  Json many = {{"events", Json::array()}};
  for (int i = 0; i < 101; ++i) many["events"].push_back({{"type", "blur"}, {"t", i}});
  ExpectRefused(400, "at most 100", [&] { return Call("POST", "/api/events", many.dump()); });
  cookie_.clear();
  ExpectRefused(400, "parameter", [&] {
    return Call("POST", "/api/session",
                Json({{"consent", true}, {"params", {{"PROLIFIC_PID", std::string(201, 'x')}}}}).dump());
  });
  ExpectRefused(400, "parameter",
                [&] { return Call("POST", "/api/session", R"({"consent": true, "params": {"STUDY_ID": 5}})"); });
}

TEST_F(ServeSafety, HostileTextIsStoredAsTextAndTheSqlIsParameterised) {
  const std::string hostile = "'); DROP TABLE participants; -- <script>alert(1)</script>";
  auto res = client_->Post("/api/session", Json({{"consent", true}, {"params", {{"STUDY_ID", hostile}}}}).dump(),
                           "application/json");
  ASSERT_EQ(res->status, 201);
  auto participants = store_->Participants();
  ASSERT_TRUE(participants.ok()) << participants.status().ToString();
  ASSERT_EQ(participants->size(), 1u);
  EXPECT_EQ(participants->front().url_params["STUDY_ID"], hostile);
}

TEST_F(ServeSafety, NoPageScriptBuildsHtmlFromStrings) {
  for (const char* asset :
       {"/static/common.js", "/static/game.js", "/static/regions.js", "/static/explorer.js", "/static/rate.js"}) {
    auto res = client_->Get(asset);
    ASSERT_EQ(res->status, 200) << asset;
    for (const char* sink : {"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"})
      EXPECT_EQ(res->body.find(sink), std::string::npos) << asset << " uses " << sink;
  }
}

TEST_F(ServeSafety, EveryReplyCarriesTheContentSecurityPolicy) {
  for (const auto& [method, path, body] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"GET", "/", ""},
           {"GET", "/api/board", ""},
           {"GET", "/static/game.js", ""},
           {"GET", "/nowhere", ""},
           {"POST", "/api/answer", "{}"},
           {"POST", "/api/events", std::string(20000, ' ')}}) {
    Reply r = Call(method, path, body);
    EXPECT_EQ(httplib::detail::get_header_value(r.headers, "Content-Security-Policy", 0, ""),
              std::string(server::kContentSecurityPolicy))
        << method << " " << path << " " << r.status;
  }
}

TEST_F(ServeSafety, AdminEndpointsNeedTheToken) {
  Join();
  cookie_.clear();
  ExpectRefused(403, "admin token", [&] { return Call("GET", "/api/admin/export"); });
  ExpectRefused(403, "admin token", [&] {
    return Call("GET", "/api/admin/counts", "", {{"Authorization", "Bearer wrong"}});
  });
  ExpectRefused(403, "admin token",
                [&] { return Call("POST", "/api/admin/reset", R"({"confirm": "delete all study data"})"); });
  const httplib::Headers admin = {{"Authorization", std::string("Bearer ") + kToken}};
  Reply counts = Call("GET", "/api/admin/counts", "", admin);
  EXPECT_EQ(counts.status, 200);
  EXPECT_EQ(counts.body["participants"], 1);
  ExpectRefused(400, "not confirmed", [&] { return Call("POST", "/api/admin/reset", "{}", admin); });
  EXPECT_EQ(Call("POST", "/api/admin/reset", R"({"confirm": "delete all study data"})", admin).status, 200);
  EXPECT_EQ(Counts().participants, 0);
}

TEST_F(ServeSafety, TooManyRequestsPerIpOrPerSessionAnswer429) {
  serve_.reset();
  Start({{"rate_limit_per_ip", {{"per_second", 0.5}, {"burst", 8}}},
         {"rate_limit_per_session", {{"per_second", 0.5}, {"burst", 2}}}});
  auto session = client_->Post("/api/session", R"({"consent": true})",
                               "application/json");  // the IP's burst of 8 also pays for the start-up /health checks
  ASSERT_EQ(session->status, 201);
  const std::string set = session->get_header_value("Set-Cookie");
  cookie_ = set.substr(0, set.find(';'));
  EXPECT_EQ(Call("GET", "/api/me").status, 200);  // 1 of the session's 2
  EXPECT_EQ(Call("GET", "/api/me").status, 200);
  Reply limited = Call("GET", "/api/me");
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(limited.body["error"]["what"], "too many requests");
  EXPECT_EQ(httplib::detail::get_header_value(limited.headers, "Retry-After", 0, ""), std::string("1"));
  cookie_.clear();
  int ip_limited = 0;
  for (int i = 0; i < 8; ++i) ip_limited += Call("GET", "/api/board").status == 429;
  EXPECT_GE(ip_limited, 1) << "the IP's burst of 8 is used up";
}

}  // namespace
}  // namespace visalign
