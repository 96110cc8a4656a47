// Requests to `visalign serve` as anyone on the network may send them: the input is a request body
// (or a Cookie / Authorization header), answered in this process by the real App and its routes
// (HttpServer::Dispatch: the gate, routing, the handlers; no socket) over a real SQLite study store
// in a scratch folder. The first byte picks the request (modulo 8):
//   0 POST /api/session   1 POST /api/profile (a fresh session)   2 POST /api/answer (an onboarded
//   participant)   3 POST /api/events   4 POST /api/screen (a fresh session)   5 GET /api/next with
//   the input as Cookie header   6 POST /api/admin/reset with the input as Authorization header
//   7 GET /api/me with the input as Cookie header.
// Every reply is below 500, is JSON, and an error is {"error": {what, where, expected}} in one line.
#include <cstdlib>
#include <memory>
#include <string>

#include "fuzz/fuzz_support.h"
#include "visalign/core/untrusted.h"
#include "visalign/server/app.h"

namespace backends = visalign::backends;
namespace server = visalign::server;
using visalign::fuzz::CheckErrorLine;

namespace {

constexpr int kAnswersPerParticipant = 8;

backends::HttpServerResponse Send(server::App& app, const std::string& method, const std::string& path,
                                  std::string body, std::vector<std::pair<std::string, std::string>> headers = {}) {
  backends::HttpServerRequest req;
  req.method = method;
  req.path = path;
  req.body = std::move(body);
  req.remote_address = "127.0.0.1";
  req.headers = std::move(headers);
  return app.http_server().Dispatch(std::move(req));
}

// A new participant's cookie header; onboarded if asked.
std::pair<std::string, std::string> Join(server::App& app, bool onboard) {
  backends::HttpServerResponse res = Send(app, "POST", "/api/session", R"({"consent": true})");
  std::string cookie;
  for (const auto& [name, value] : res.headers)
    if (name == "Set-Cookie") cookie = value.substr(0, value.find(';'));
  VISALIGN_FUZZ_CHECK(res.status == 201 && !cookie.empty(), res.body);
  if (onboard)
    Send(app, "POST", "/api/profile",
         R"({"language": "es", "gender": "male", "age_range": "10-19", "colorblind": "no"})", {{"Cookie", cookie}});
  return {"Cookie", cookie};
}

server::App& TheApp() {
  static std::unique_ptr<server::App> app = [] {
    setenv("VISALIGN_FUZZ_ADMIN_TOKEN", "fuzz-admin-token-0123456789", 1);
    const std::filesystem::path dir =
        visalign::fuzz::WriteScratchFile("serve_study.json",
                                         R"({"words_per_participant": 3, "attention_check": {"position": 1},
            "rate_limit_per_ip": {"per_second": 0}, "rate_limit_per_session": {"per_second": 0}})")
            .parent_path();
    server::ServeOptions options;
    options.store = (dir / "serve_store").string();
    options.study = dir / "serve_study.json";
    options.admin_token_env = "VISALIGN_FUZZ_ADMIN_TOKEN";
    auto created = server::App::Create(options);
    VISALIGN_FUZZ_CHECK(created.ok(), created.status().ToString());
    return std::move(*created);
  }();
  return *app;
}

void CheckReply(const backends::HttpServerResponse& res) {
  VISALIGN_FUZZ_CHECK(res.status >= 200 && res.status < 500, std::to_string(res.status) + " " + res.body);
  auto body = visalign::ParseJson(res.body);
  VISALIGN_FUZZ_CHECK(body.ok(), res.body);
  if (res.status < 400) return;
  auto error = body->find("error");
  VISALIGN_FUZZ_CHECK(error != body->end() && error->is_object(), res.body);
  for (const char* part : {"what", "where", "expected"}) {
    auto it = error->find(part);
    VISALIGN_FUZZ_CHECK(it != error->end() && it->is_string(), res.body);
    CheckErrorLine(it->get<std::string>());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  server::App& app = TheApp();
  static std::pair<std::string, std::string> player = Join(app, true);
  static int answers = 0;
  const auto [selector, input] = visalign::fuzz::Select(data, size);
  const std::string text(input);
  switch (selector % 8) {
    case 0:
      CheckReply(Send(app, "POST", "/api/session", text));
      break;
    case 1:
      CheckReply(Send(app, "POST", "/api/profile", text, {Join(app, false)}));
      break;
    case 2:
      if (++answers % kAnswersPerParticipant == 0) player = Join(app, true);
      CheckReply(Send(app, "POST", "/api/answer", text, {player}));
      break;
    case 3:
      CheckReply(Send(app, "POST", "/api/events", text, {player}));
      break;
    case 4:
      CheckReply(Send(app, "POST", "/api/screen", text, {Join(app, false)}));
      break;
    case 5:
      CheckReply(Send(app, "GET", "/api/next", "", {{"Cookie", text}}));
      break;
    case 6:
      CheckReply(Send(app, "POST", "/api/admin/reset", R"({"confirm": "no"})", {{"Authorization", text}}));
      break;
    case 7:
      CheckReply(Send(app, "GET", "/api/me", "", {{"Cookie", text}}));
      break;
  }
  return 0;
}
