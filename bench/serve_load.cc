// Loopback load generator for `visalign serve` (docs/performance.md "visalign serve under load"):
// P simulated players play the Hues and Cues game against a running server for S seconds, each on
// its own kept-alive connection, exactly as the page does (consent, profile, then answers, each
// reply carrying the next item; a finished player starts a new session). Afterwards it downloads
// the admin export and checks that every acknowledged answer (HTTP 201) is in it, once, with its
// coordinate, and that nothing else is. Prints one JSON object.
//   serve_load --url http://127.0.0.1:PORT --token-env VAR [--players 200] [--seconds 60]
//              [--think-ms 1000] [--seed 1]
// --think-ms is the mean pause between a reply and the next answer (uniform in [0.5, 1.5] x the
// mean; 0: answer at once, a saturation test).
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "visalign/core/io.h"
#include "visalign/core/json.h"

using visalign::Json;

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string url;
  std::string token_env;
  int players = 200;
  double seconds = 60;
  double think_ms = 1000;
  uint64_t seed = 1;
};

// (userId, clueId) -> coordinate of an acknowledged answer.
using Key = std::pair<std::string, int>;

struct Totals {
  std::mutex mu;
  std::vector<double> answer_ms;  // latency of every acknowledged answer
  std::map<Key, std::string> acknowledged;
  std::map<std::string, int> errors;  // "HTTP 500", "transport", ...
  int64_t requests = 0, sessions = 0;
};

std::string Arg(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return argv[i + 1];
  return fallback;
}

class Player {
 public:
  Player(const Options& o, Totals& totals, uint64_t seed) : o_(o), totals_(totals), rng_(seed), client_(o.url) {
    client_.set_keep_alive(true);
    client_.set_tcp_nodelay(true);  // as browsers do: no 40 ms delayed-ACK stall between header and body
    client_.set_connection_timeout(std::chrono::seconds(10));
    client_.set_read_timeout(std::chrono::seconds(30));
  }

  void Run(Clock::time_point end) {
    while (Clock::now() < end) {
      if (!Join()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      Json item = Send("GET", "/api/next", "", 200);
      while (item.is_object() && !item.value("done", true) && Clock::now() < end) {
        Think();
        item = Answer(item);
      }
    }
  }

 private:
  bool Join() {
    cookie_.clear();
    auto res =
        client_.Post("/api/session", R"({"consent": true, "params": {"PROLIFIC_PID": "load"}})", "application/json");
    Count("POST /api/session", res, 201);
    if (!res || res->status != 201) return false;
    const std::string set = res->get_header_value("Set-Cookie");
    cookie_ = set.substr(0, set.find(';'));
    user_ = Json::parse(res->body)["participant"];
    {
      std::lock_guard lock(totals_.mu);
      ++totals_.sessions;
    }
    return Send(
               "POST", "/api/profile",
               R"({"language": "en", "gender": "other", "age_range": "30-39", "colorblind": "no", "metadata": {"load": true}})",
               200)
        .is_object();
  }

  Json Answer(const Json& item) {
    std::string cell = item["kind"] == "attention"
                           ? item["cell"].get<std::string>()
                           : std::string(1, static_cast<char>('A' + rng_() % 16)) + std::to_string(1 + rng_() % 30);
    char id[40];
    std::snprintf(id, sizeof id, "load-%016llx", static_cast<unsigned long long>(rng_()));
    const Json body = {{"index", item["index"]}, {"coordinate", cell}, {"client_id", id}};
    const auto start = Clock::now();
    Json next = Send("POST", "/api/answer", body.dump(), 201);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (next.is_object() && item["kind"] == "word") {
      std::lock_guard lock(totals_.mu);
      totals_.answer_ms.push_back(ms);
      totals_.acknowledged[{user_, item["clue_id"].get<int>()}] = cell;
    }
    return next;
  }

  void Think() {
    if (o_.think_ms <= 0) return;
    std::uniform_real_distribution<double> pause(0.5 * o_.think_ms, 1.5 * o_.think_ms);
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(pause(rng_)));
  }

  // The reply's JSON when it has status `expected`, else null (counted as an error).
  Json Send(const std::string& method, const std::string& path, const std::string& body, int expected) {
    httplib::Headers headers = {{"Cookie", cookie_}};
    auto res = method == "GET" ? client_.Get(path, headers) : client_.Post(path, headers, body, "application/json");
    Count(method + " " + path, res, expected);
    if (!res || res->status != expected) return nullptr;
    return Json::parse(res->body, nullptr, false);
  }

  void Count(const std::string& what, const httplib::Result& res, int expected) {
    std::lock_guard lock(totals_.mu);
    ++totals_.requests;
    if (!res)
      ++totals_.errors[what + ": transport " + httplib::to_string(res.error())];
    else if (res->status != expected)
      ++totals_.errors[what + ": HTTP " + std::to_string(res->status)];
  }

  const Options& o_;
  Totals& totals_;
  std::mt19937_64 rng_;
  httplib::Client client_;
  std::string cookie_, user_;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  return v[i];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.url = Arg(argc, argv, "--url", "");
  o.token_env = Arg(argc, argv, "--token-env", "");
  o.players = std::stoi(Arg(argc, argv, "--players", "200"));
  o.seconds = std::stod(Arg(argc, argv, "--seconds", "60"));
  o.think_ms = std::stod(Arg(argc, argv, "--think-ms", "1000"));
  o.seed = std::stoull(Arg(argc, argv, "--seed", "1"));
  const char* token = o.token_env.empty() ? nullptr : std::getenv(o.token_env.c_str());
  if (o.url.empty() || !token || o.players < 1 || o.seconds <= 0) {
    std::fprintf(stderr,
                 "usage: serve_load --url http://127.0.0.1:PORT --token-env VAR [--players N] [--seconds S] "
                 "[--think-ms MS] [--seed N]\n");
    return 2;
  }
  Totals totals;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  std::vector<std::thread> threads;
  for (int p = 0; p < o.players; ++p)
    threads.emplace_back([&, p] { Player(o, totals, o.seed * 1000003 + static_cast<uint64_t>(p)).Run(end); });
  for (std::thread& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();

  // Every acknowledged answer must be in the export, once, as acknowledged; nothing else may be.
  httplib::Client admin(o.url);
  admin.set_read_timeout(std::chrono::seconds(120));
  auto exported = admin.Get("/api/admin/export", httplib::Headers{{"Authorization", std::string("Bearer ") + token}});
  int64_t missing = 0, wrong = 0, extra = 0, duplicated = 0, exported_rows = 0;
  if (exported && exported->status == 200) {
    auto table = visalign::ParseCsv(exported->body, "export");
    if (table.ok()) {
      const size_t user = *table->Column("userId"), clue = *table->Column("clueId"),
                   coordinate = *table->Column("coordinate");
      std::set<Key> seen;
      for (const auto& row : table->rows) {
        ++exported_rows;
        const Key key{row[user], std::stoi(row[clue])};
        if (!seen.insert(key).second) ++duplicated;
        auto it = totals.acknowledged.find(key);
        if (it == totals.acknowledged.end())
          ++extra;  // answered, but the reply was lost in the last moments (or not acknowledged)
        else if (it->second != row[coordinate])
          ++wrong;
      }
      for (const auto& [key, cell] : totals.acknowledged) missing += !seen.count(key);
    }
  }
  const Json out = {{"players", o.players},
                    {"seconds", elapsed},
                    {"think_ms", o.think_ms},
                    {"sessions", totals.sessions},
                    {"requests", totals.requests},
                    {"answers_acknowledged", totals.answer_ms.size()},
                    {"answers_per_second", static_cast<double>(totals.answer_ms.size()) / elapsed},
                    {"requests_per_second", static_cast<double>(totals.requests) / elapsed},
                    {"answer_ms",
                     {{"p50", Percentile(totals.answer_ms, 0.50)},
                      {"p90", Percentile(totals.answer_ms, 0.90)},
                      {"p99", Percentile(totals.answer_ms, 0.99)},
                      {"max", Percentile(totals.answer_ms, 1.0)}}},
                    {"errors", totals.errors},
                    {"export",
                     {{"status", exported ? exported->status : 0},
                      {"rows", exported_rows},
                      {"missing", missing},
                      {"wrong_coordinate", wrong},
                      {"duplicated", duplicated},
                      {"not_acknowledged", extra}}}};
  std::printf("%s\n", out.dump(2).c_str());
  const bool ok =
      totals.errors.empty() && exported && exported->status == 200 && missing == 0 && wrong == 0 && duplicated == 0;
  return ok ? 0 : 1;
}
