// The HTTP server scaffold on 127.0.0.1: any free port written to the port file, /health, routes
// with pattern groups and headers, uncompressed JSON, a port that is taken, and a graceful stop.
#include "visalign/backends/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "testing/dirs.h"
#include "visalign/core/io.h"

namespace visalign::backends {
namespace {

namespace fs = std::filesystem;

TEST(HttpServer, ListensOnAFreePortWritesThePortFileAndAnswersHealth) {
  const visalign::testing::TempDir tmp;
  const fs::path& dir = tmp.path();
  HttpServerOptions options;
  options.port_file = dir / "port.txt";
  HttpServer server(options);
  ASSERT_TRUE(server.Start().ok());
  EXPECT_GT(server.port(), 0);
  EXPECT_EQ(server.url(), "http://127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(ReadFile(dir / "port.txt").value(), std::to_string(server.port()) + "\n");
  httplib::Client client(server.url());
  auto res = client.Get("/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(Json::parse(res->body), Json({{"status", "ok"}}));
  EXPECT_EQ(res->get_header_value("Content-Type"), kJsonContentType);
  EXPECT_EQ(client.Get("/nowhere")->status, 404);
}

TEST(HttpServer, RoutesSeePatternGroupsBodiesAndHeadersAndSetStatusAndHeaders) {
  HttpServer server({});
  server.Route("GET", R"(/items/(\d+)\.png)", [](const HttpServerRequest& req, HttpServerResponse& res) {
    res.Set(200, req.matches.at(1), "image/png");
  });
  server.Route("POST", "/echo", [](const HttpServerRequest& req, HttpServerResponse& res) {
    res.headers.emplace_back("Retry-After", "3");
    res.SetJson(429, {{"body", req.body}, {"key", req.Header("x-key")}, {"method", req.method}, {"path", req.path}});
  });
  ASSERT_TRUE(server.Start().ok());
  httplib::Client client(server.url());
  auto png = client.Get("/items/42.png");
  ASSERT_TRUE(png);
  EXPECT_EQ(png->body, "42");
  EXPECT_EQ(png->get_header_value("Content-Type"), "image/png");
  auto echo = client.Post("/echo", httplib::Headers{{"X-Key", "k1"}}, "hello", "text/plain");
  ASSERT_TRUE(echo);
  EXPECT_EQ(echo->status, 429);
  EXPECT_EQ(echo->get_header_value("Retry-After"), "3");
  EXPECT_EQ(Json::parse(echo->body), Json({{"body", "hello"}, {"key", "k1"}, {"method", "POST"}, {"path", "/echo"}}));
}

TEST(HttpServer, PublicServersCapBodiesAddHeadersGateRequestsAndServeAssets) {
  HttpServerOptions options;
  options.max_body_bytes = 16;
  options.default_headers = {{"Content-Security-Policy", "default-src 'self'"}};
  options.gate = [](const HttpServerRequest& req, HttpServerResponse& res) {
    if (req.Header("X-Client") != "blocked") return true;
    res.SetJson(429, {{"error", {{"what", "too many requests"}}}});
    return false;
  };
  HttpServer server(options);
  static constexpr std::string_view kScript = "export const x = 1;\n";
  server.Asset("/static/x.js", kScript, "text/javascript");
  server.Route("POST", "/who", [](const HttpServerRequest& req, HttpServerResponse& res) {
    res.SetJson(200, {{"address", req.remote_address}, {"q", req.Query("q")}, {"session", req.Cookie("session")}});
  });
  ASSERT_TRUE(server.Start().ok());
  httplib::Client client(server.url());
  auto who =
      client.Post("/who?q=a%20b", httplib::Headers{{"Cookie", "theme=dark; session=s1"}}, "{}", "application/json");
  ASSERT_TRUE(who);
  EXPECT_EQ(Json::parse(who->body), Json({{"address", "127.0.0.1"}, {"q", "a b"}, {"session", "s1"}}));
  EXPECT_EQ(who->get_header_value("Content-Security-Policy"), "default-src 'self'");
  auto big = client.Post("/who", std::string(17, 'x'), "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_EQ(Json::parse(big->body)["error"]["what"], "request body too large");
  auto blocked = client.Get("/health", httplib::Headers{{"X-Client", "blocked"}});
  ASSERT_TRUE(blocked);
  EXPECT_EQ(blocked->status, 429);
  auto missing = client.Get("/nowhere");
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(Json::parse(missing->body)["error"]["what"], "no such page");
  EXPECT_EQ(missing->get_header_value("Content-Security-Policy"), "default-src 'self'");
  auto script = client.Get("/static/x.js");
  EXPECT_EQ(script->body, kScript);
  EXPECT_EQ(script->get_header_value("Content-Type"), "text/javascript");
}

TEST(HttpServer, JsonRepliesAreNeverCompressed) {
  HttpServer server({});
  const std::string big(100000, 'a');
  server.Route("GET", "/big", [&](const HttpServerRequest&, HttpServerResponse& res) {
    res.SetJson(200, {{"data", big}});
  });
  ASSERT_TRUE(server.Start().ok());
  httplib::Client client(server.url());
  auto res = client.Get("/big", httplib::Headers{{"Accept-Encoding", "br, gzip, deflate"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("Content-Encoding"), "");
  EXPECT_EQ(Json::parse(res->body)["data"], big);
}

TEST(HttpServer, ATakenPortIsUnavailable) {
  HttpServer first({});
  ASSERT_TRUE(first.Start().ok());
  HttpServerOptions taken;
  taken.port = first.port();
  HttpServer second(taken);
  Status st = second.Start();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.where(), "port");
  EXPECT_NE(st.what().find("cannot listen on 127.0.0.1:" + std::to_string(first.port())), std::string::npos);
}

TEST(HttpServer, StopAnswersTheRequestInFlightThenRefusesConnections) {
  HttpServer server({});
  std::atomic<bool> entered{false};
  server.Route("GET", "/slow", [&](const HttpServerRequest&, HttpServerResponse& res) {
    entered = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    res.Set(200, "done", "text/plain");
  });
  ASSERT_TRUE(server.Start().ok());
  const std::string url = server.url();
  int slow_status = 0;
  std::string slow_body;
  std::thread asker([&] {
    auto res = httplib::Client(url).Get("/slow");
    if (res) slow_status = res->status, slow_body = res->body;
  });
  while (!entered) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::atomic<bool> stop{true};
  server.ServeUntil(stop);  // stops at once: `stop` is already set
  asker.join();
  EXPECT_EQ(slow_status, 200);
  EXPECT_EQ(slow_body, "done");
  httplib::Client late(url);
  late.set_connection_timeout(std::chrono::seconds(1));
  EXPECT_FALSE(late.Get("/health"));
  server.Stop();  // again: nothing to do
}

}  // namespace
}  // namespace visalign::backends
