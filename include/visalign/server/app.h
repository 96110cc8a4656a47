// `visalign serve`: the web app of a self-hosted study (the Hues and Cues game, the regionalization
// tool, the result explorer, the ACVA rating page) and its JSON API, served from one binary through
// backends::HttpServer with every page asset embedded at build time.
//
// App holds what every route file shares: the options, the study settings, the board and the
// words, the study store (participants, answers, records) and the run store. Each feature adds its
// routes in its own file (src/server/routes.h). Shared conventions:
//   - an error reply is {"error": {"what", "where", "expected"}} with a 4xx status (Fail);
//   - a participant is whoever holds the `visalign_session` cookie (HttpOnly, SameSite=Strict),
//     set by POST /api/session with {"consent": true}; nothing is stored before that (RequireSession);
//   - admin endpoints need `Authorization: Bearer <token>`, the token read from the environment
//     variable named by --admin-token-env; without one configured they answer 403 (RequireAdmin);
//   - every body is parsed with ParseJson (depth-limited) and capped at the study's max_body_bytes;
//   - every reply carries a Content-Security-Policy that allows only this origin's scripts and
//     styles (no inline script), and per-IP and per-session rate limits answer 429.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "visalign/backends/http_server.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/server/category_names.h"
#include "visalign/server/study.h"
#include "visalign/store.h"
#include "visalign/store/study_store.h"

namespace visalign::server {

struct ServeOptions {
  std::string store = "visalign-store";  // run and study store location (a folder or postgres://...)
  store::StoreOptions store_options;     // its password variable and image root
  std::string host = "127.0.0.1";
  int port = 8080;                  // 0: any free port
  std::filesystem::path port_file;  // the bound port is written here
  std::filesystem::path words;      // words.csv (word_en,word_es,category,clue_id); empty: data/hues/words.csv
  std::filesystem::path study;      // study settings (JSON/TOML); empty: the defaults of StudyConfig
  std::string admin_token_env;      // environment variable holding the admin token; empty: no admin
  std::vector<std::filesystem::path> results;  // `hues evaluate` output folders, for the explorer
  std::vector<std::string> acva_runs;          // ACVA runs of the store whose images are rated
  int threads = 0;                             // HTTP worker threads, one per open connection; 0: kDefaultServeThreads
};

// Browsers keep connections open, and each open connection holds a worker thread: enough for a
// few hundred participants at once.
inline constexpr int kDefaultServeThreads = 256;
inline constexpr size_t kKeepAliveRequests = 1000;

inline constexpr char kSessionCookie[] = "visalign_session";
inline constexpr char kContentSecurityPolicy[] =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "frame-ancestors 'none'";

class App {
 public:
  // Loads the words, the board, the category names, the study file and the admin token, checks
  // that the port is free, opens both stores and registers every route. Errors name the input:
  // "word list", "category names", "study file", "port", "store location", "admin token variable".
  static Result<std::unique_ptr<App>> Create(ServeOptions options);
  ~App();

  // Listens (Unavailable when the port is taken); then ServeUntil blocks until `stop` is set.
  Status Start();
  void ServeUntil(const std::atomic<bool>& stop);
  std::string url() const;
  int port() const;

  const ServeOptions& options() const { return options_; }
  const StudyConfig& study() const { return study_; }
  const hues::Vocabulary& vocabulary() const { return vocabulary_; }
  const hues::Board& board() const { return board_; }
  const CategoryNames& category_names() const { return category_names_; }
  store::StudyStore& study_store() { return *study_store_; }
  store::RunStore& run_store() { return *run_store_; }
  // The HTTP server every route is on (Dispatch answers a request without a socket).
  backends::HttpServer& http_server() { return *server_; }

  // The participant whose session cookie the request carries; on failure the Status to answer with
  // 401 (no cookie, or one no participant has).
  Result<store::Participant> RequireSession(const backends::HttpServerRequest& req);
  // OK when the request carries the admin token; else the Status to answer with 403.
  Status RequireAdmin(const backends::HttpServerRequest& req) const;
  // The request body as a JSON object (ParseJson, depth-limited); else InvalidArgument at "request body".
  static Result<Json> JsonBody(const backends::HttpServerRequest& req);

  // The one error reply: {"error": {"what", "where", "expected"}} with `http_status`.
  static void Fail(backends::HttpServerResponse& res, int http_status, const Status& error);
  // The same with the HTTP status that fits the error's code (InvalidArgument/Corrupt 400,
  // NotFound 404, Unsupported 422, Unavailable 503, otherwise 500).
  static void Fail(backends::HttpServerResponse& res, const Status& error);

  // GET `path` answers the page shell of `page`: common.css, <page>.css when there is one,
  // common.js and the ES module /static/<page>.js; no inline script or style.
  void AddPage(backends::HttpServer& server, const std::string& path, const std::string& page,
               const std::string& title);

 private:
  App(ServeOptions options, StudyConfig study, hues::Vocabulary vocabulary, hues::Board board);
  struct Limits;
  ServeOptions options_;
  StudyConfig study_;
  hues::Vocabulary vocabulary_;
  hues::Board board_;
  CategoryNames category_names_;
  std::string admin_token_;
  std::unique_ptr<store::StudyStore> study_store_;
  std::unique_ptr<store::RunStore> run_store_;
  std::unique_ptr<Limits> limits_;
  std::unique_ptr<backends::HttpServer> server_;
};

// SHA-256 (hex) of a session token: what the study store keeps instead of the token itself.
std::string SessionHash(const std::string& token);

}  // namespace visalign::server
