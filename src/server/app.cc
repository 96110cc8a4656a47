#include "visalign/server/app.h"

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <random>
#include <unordered_map>

#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/assets.h"
#include "server/routes.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::server {
namespace {

using backends::HttpServer;
using backends::HttpServerRequest;
using backends::HttpServerResponse;

constexpr int kSessionTokenBytes = 32;
constexpr size_t kMaxUrlParams = 16;
constexpr size_t kMaxUrlParamBytes = 200;
constexpr size_t kMaxBuckets = 100000;  // clients remembered by the rate limiter before it forgets the idle ones

std::string RandomToken() {
  std::random_device rd;
  std::string bytes;
  for (int i = 0; i < kSessionTokenBytes; ++i) bytes.push_back(static_cast<char>(rd() & 0xFF));
  return Sha256Hex(bytes);  // 64 hex digits
}

std::string HtmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

bool HasAsset(std::string_view name) {
  for (const internal::Asset& a : internal::Assets())
    if (a.name == name) return true;
  return false;
}

// Unavailable when nothing can listen on host:port, found before anything is created (a store
// opened and then left behind by a server that cannot start). Port 0 (any free port) always can.
// The probe binds as the server will (SO_REUSEADDR, so a port in TIME_WAIT counts as free) and
// closes again; Start() reports a port taken in between.
Status CheckPortFree(const std::string& host, int port) {
  if (port == 0) return Status::Ok();
  const std::string address = host + ":" + std::to_string(port);
  const Status busy = Status::Unavailable("cannot listen on " + address, "port", "a free port (0 picks one)");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found) return busy;
  bool bound = false;
  for (addrinfo* a = found; a && !bound; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    bound = ::bind(fd, a->ai_addr, a->ai_addrlen) == 0;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return bound ? Status::Ok() : busy;
}

}  // namespace

// Token buckets per client address and per session cookie.
struct App::Limits {
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point last;
  };
  std::mutex mu;
  std::unordered_map<std::string, Bucket> buckets;

  // Whether `key` may make one more request under `limit` (a limit of 0 always may).
  bool Admit(const std::string& key, const RateLimit& limit) {
    if (limit.per_second <= 0) return true;
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mu);
    if (buckets.size() > kMaxBuckets) buckets.clear();
    auto [it, fresh] = buckets.try_emplace(key, Bucket{std::max(limit.burst, 1.0), now});
    Bucket& b = it->second;
    if (!fresh) {
      const double seconds = std::chrono::duration<double>(now - b.last).count();
      b.tokens = std::min(std::max(limit.burst, 1.0), b.tokens + seconds * limit.per_second);
      b.last = now;
    }
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
};

std::string SessionHash(const std::string& token) { return Sha256Hex(token); }

App::App(ServeOptions options, StudyConfig study, hues::Vocabulary vocabulary, hues::Board board)
    : options_(std::move(options)),
      study_(std::move(study)),
      vocabulary_(std::move(vocabulary)),
      board_(std::move(board)),
      limits_(std::make_unique<Limits>()) {}
App::~App() = default;

Result<std::unique_ptr<App>> App::Create(ServeOptions options) {
  Result<hues::Vocabulary> vocabulary =
      options.words.empty() ? hues::Vocabulary::Default() : hues::Vocabulary::Load(options.words);
  if (!vocabulary.ok()) return vocabulary.status().WithContext("word list");
  VISALIGN_ASSIGN_OR_RETURN(hues::Board board, hues::Board::Default(hues::Chromaticity::kDisplay));
  StudyConfig study;
  if (!options.study.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(study, LoadStudyConfig(options.study));
  }
  std::string token;
  if (!options.admin_token_env.empty()) {
    const char* value = std::getenv(options.admin_token_env.c_str());
    if (!value || std::string_view(value).size() < 16)
      return Status::InvalidArgument(
          "variable " + QuoteText(options.admin_token_env) + " is unset or shorter than 16 bytes",
          "admin token variable", "an environment variable holding a long random token");
    token = value;
  }
  VISALIGN_ASSIGN_OR_RETURN(CategoryNames category_names, CategoryNames::Default());
  VISALIGN_RETURN_IF_ERROR(CheckPortFree(options.host, options.port));
  std::unique_ptr<App> app(new App(std::move(options), std::move(study), std::move(*vocabulary), std::move(board)));
  app->category_names_ = std::move(category_names);
  app->admin_token_ = std::move(token);
  VISALIGN_ASSIGN_OR_RETURN(app->run_store_, store::OpenStore(app->options_.store, app->options_.store_options));
  VISALIGN_ASSIGN_OR_RETURN(app->study_store_,
                            store::StudyStore::Open(app->options_.store, app->options_.store_options));

  backends::HttpServerOptions http;
  http.host = app->options_.host;
  http.port = app->options_.port;
  http.port_file = app->options_.port_file;
  http.threads = app->options_.threads > 0 ? app->options_.threads : kDefaultServeThreads;
  http.keep_alive_max_requests = kKeepAliveRequests;
  http.max_body_bytes = app->study_.max_body_bytes;
  http.default_headers = {{"Content-Security-Policy", kContentSecurityPolicy},
                          {"X-Content-Type-Options", "nosniff"},
                          {"Referrer-Policy", "no-referrer"},
                          {"Cache-Control", "no-store"}};
  App* self = app.get();
  http.gate = [self](const HttpServerRequest& req, HttpServerResponse& res) {
    const std::string session = req.Cookie(kSessionCookie);
    if (self->limits_->Admit("ip " + req.remote_address, self->study_.per_ip) &&
        (session.empty() || self->limits_->Admit("session " + session, self->study_.per_session)))
      return true;
    res.headers.emplace_back("Retry-After", "1");
    Fail(res, 429, Status::Unavailable("too many requests", req.path, "fewer requests per second"));
    return false;
  };
  app->server_ = std::make_unique<HttpServer>(std::move(http));
  for (const internal::Asset& a : internal::Assets())
    app->server_->Asset("/static/" + std::string(a.name), a.body, std::string(a.content_type));
  for (const RouteFile& routes : RouteFiles()) VISALIGN_RETURN_IF_ERROR(routes.add(*app, *app->server_));
  return app;
}

Status App::Start() { return server_->Start(); }
void App::ServeUntil(const std::atomic<bool>& stop) { server_->ServeUntil(stop); }
std::string App::url() const { return server_->url(); }
int App::port() const { return server_->port(); }

Result<store::Participant> App::RequireSession(const HttpServerRequest& req) {
  const std::string token = req.Cookie(kSessionCookie);
  if (token.empty())
    return Status::InvalidArgument("no session", "cookie visalign_session",
                                   "POST /api/session with {\"consent\": true} first");
  VISALIGN_ASSIGN_OR_RETURN(std::optional<store::Participant> p, study_store_->FindSession(SessionHash(token)));
  if (!p)
    return Status::InvalidArgument("unknown session", "cookie visalign_session", "a session from POST /api/session");
  return std::move(*p);
}

Status App::RequireAdmin(const HttpServerRequest& req) const {
  if (admin_token_.empty())
    return Status::Unsupported("admin endpoints are off", "Authorization", "visalign serve --admin-token-env VAR");
  const std::string header = req.Header("Authorization");
  // Compared in constant time over the token's length.
  const std::string expected = "Bearer " + admin_token_;
  unsigned diff = header.size() != expected.size();
  for (size_t i = 0; i < expected.size(); ++i)
    diff |= static_cast<unsigned char>(expected[i] ^ (i < header.size() ? header[i] : 0));
  if (diff) return Status::InvalidArgument("missing or wrong admin token", "Authorization", "Bearer <admin token>");
  return Status::Ok();
}

Result<Json> App::JsonBody(const HttpServerRequest& req) {
  auto doc = ParseJson(req.body);
  if (!doc.ok()) return Status::InvalidArgument(doc.status().what(), "request body", "a JSON object");
  if (!doc->is_object()) return Status::InvalidArgument("not an object", "request body", "a JSON object");
  return std::move(*doc);
}

void App::Fail(HttpServerResponse& res, int http_status, const Status& error) {
  res.SetJson(http_status, {{"error",
                             {{"what", EscapeControlBytes(error.what(), 2000)},
                              {"where", EscapeControlBytes(error.where(), 2000)},
                              {"expected", EscapeControlBytes(error.expected(), 2000)}}}});
}

void App::Fail(HttpServerResponse& res, const Status& error) {
  switch (error.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kCorrupt:
      return Fail(res, 400, error);
    case StatusCode::kNotFound:
      return Fail(res, 404, error);
    case StatusCode::kUnsupported:
      return Fail(res, 422, error);
    case StatusCode::kUnavailable:
      return Fail(res, 503, error);
    default:
      return Fail(res, 500, Status::Internal("internal server error"));
  }
}

void App::AddPage(HttpServer& server, const std::string& path, const std::string& page, const std::string& title) {
  std::string html = fmt::format(
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n"
      "<link rel=\"icon\" href=\"data:,\">\n<link rel=\"stylesheet\" href=\"/static/common.css\">\n",
      HtmlEscape(title));
  if (HasAsset(page + ".css"))
    html += fmt::format("<link rel=\"stylesheet\" href=\"/static/{}.css\">\n", HtmlEscape(page));
  html += fmt::format(
      "<script type=\"module\" src=\"/static/common.js\"></script>\n"
      "<script type=\"module\" src=\"/static/{}.js\"></script>\n</head>\n"
      "<body data-page=\"{}\">\n<main id=\"app\" aria-live=\"polite\"><noscript>This page needs "
      "JavaScript.</noscript></main>\n"
      "</body>\n</html>\n",
      HtmlEscape(page), HtmlEscape(page));
  server.Route("GET", path, [html = std::move(html)](const HttpServerRequest&, HttpServerResponse& res) {
    res.Set(200, html, "text/html; charset=utf-8");
  });
}

Status AddCoreRoutes(App& app, HttpServer& server) {
  // The board as the models see it: every cell's sRGB value from board.csv.
  Json board = {{"rows", Json::array()}, {"cols", hues::kCols}, {"cells", Json::array()}};
  for (int r = 0; r < hues::kRows; ++r) board["rows"].push_back(std::string(1, static_cast<char>('A' + r)));
  for (const hues::Cell& c : app.board().cells())
    board["cells"].push_back(
        {{"cell", c.name}, {"row", std::string(1, c.row)}, {"col", c.col}, {"rgb", {c.rgb.r, c.rgb.g, c.rgb.b}}});
  server.Route("GET", "/api/board", [board = board.dump()](const HttpServerRequest&, HttpServerResponse& res) {
    res.Set(200, board, backends::kJsonContentType);
  });
  server.Route("GET", "/api/study", [&app](const HttpServerRequest&, HttpServerResponse& res) {
    res.SetJson(200, app.study().PublicJson());
  });

  // Consent creates the participant; nothing is stored before it.
  server.Route("POST", "/api/session", [&app](const HttpServerRequest& req, HttpServerResponse& res) {
    auto body = App::JsonBody(req);
    if (!body.ok()) return App::Fail(res, body.status());
    auto consent = body->find("consent");
    if (consent == body->end() || !consent->is_boolean() || !consent->get<bool>())
      return App::Fail(res, 400, Status::InvalidArgument("no consent", "request body field consent", "true"));
    Json params = Json::object();
    if (auto p = body->find("params"); p != body->end()) {
      if (!p->is_object() || p->size() > kMaxUrlParams)
        return App::Fail(res, 400,
                         Status::InvalidArgument("not an object of at most 16 strings", "request body field params",
                                                 "{\"PROLIFIC_PID\": \"...\", \"STUDY_ID\": \"...\", ...}"));
      for (const auto& [name, value] : p->items()) {
        if (!value.is_string() || name.size() > kMaxUrlParamBytes ||
            value.get_ref<const std::string&>().size() > kMaxUrlParamBytes)
          return App::Fail(res, 400,
                           Status::InvalidArgument("parameter " + QuoteText(name), "request body field params",
                                                   "string values of at most 200 bytes"));
        params[name] = value;
      }
    }
    const std::string token = RandomToken();
    auto participant = app.study_store().AddParticipant(SessionHash(token), params);
    if (!participant.ok()) return App::Fail(res, participant.status());
    // Behind a TLS-terminating proxy the cookie is marked Secure too.
    const bool https = req.Header("X-Forwarded-Proto") == "https";
    res.headers.emplace_back("Set-Cookie", std::string(kSessionCookie) + "=" + token +
                                               "; HttpOnly; SameSite=Strict; Path=/" + (https ? "; Secure" : ""));
    res.SetJson(201, {{"participant", participant->user_id}});
  });

  // Who the page is talking to, without failing for a visitor who has not consented yet.
  server.Route("GET", "/api/me", [&app](const HttpServerRequest& req, HttpServerResponse& res) {
    if (req.Cookie(kSessionCookie).empty()) return res.SetJson(200, {{"session", false}});
    auto p = app.RequireSession(req);
    if (!p.ok()) return res.SetJson(200, {{"session", false}});
    res.SetJson(200, {{"session", true},
                      {"participant", p->user_id},
                      {"onboarded", p->onboarded()},
                      {"language", p->language},
                      {"completed", !p->completed_at.empty()}});
  });

  server.Route("GET", "/api/admin/counts", [&app](const HttpServerRequest& req, HttpServerResponse& res) {
    if (Status admin = app.RequireAdmin(req); !admin.ok()) return App::Fail(res, 403, admin);
    auto counts = app.study_store().Counts();
    if (!counts.ok()) return App::Fail(res, counts.status());
    res.SetJson(200, {{"participants", counts->participants},
                      {"onboarded", counts->onboarded},
                      {"completed", counts->completed},
                      {"answers", counts->answers},
                      {"events", counts->events},
                      {"records", counts->records}});
  });
  server.Route("POST", "/api/admin/reset", [&app](const HttpServerRequest& req, HttpServerResponse& res) {
    if (Status admin = app.RequireAdmin(req); !admin.ok()) return App::Fail(res, 403, admin);
    auto body = App::JsonBody(req);
    if (!body.ok()) return App::Fail(res, body.status());
    if (StringMember(*body, "confirm") != "delete all study data")
      return App::Fail(
          res, 400,
          Status::InvalidArgument("not confirmed", "request body field confirm", "\"delete all study data\""));
    if (Status st = app.study_store().Reset(); !st.ok()) return App::Fail(res, st);
    res.SetJson(200, {{"reset", true}});
  });
  return Status::Ok();
}

}  // namespace visalign::server
