// HttpServer: the one loopback HTTP server scaffold behind every server visalign runs (VIOLIN's and
// ACVA's reference servers, later `visalign serve`). It owns what they share: binding a host and a
// port (0: any free port), writing the bound port to a port file, a worker pool, TCP_NODELAY,
// GET /health, and a graceful stop (the listening socket closes, requests in flight are answered,
// the accept thread is joined). For public-facing servers (`visalign serve`) it also caps request
// bodies (413), adds headers to every reply (a Content-Security-Policy), and runs a gate before
// routing (per-client rate limits answer 429 there). Routes are registered before Start() and are plain functions of
// HttpServerRequest/HttpServerResponse, so no HTTP library type crosses the module boundary.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::backends {

// The JSON content type for every JSON reply. cpp-httplib compresses (brotli/gzip) a reply whose type
// is exactly "application/json" when the client accepts it, and libcurl does: on ~250 KB of base64
// PNG brotli costs ~300 ms per image and saves little. With the explicit charset it never does.
inline constexpr char kJsonContentType[] = "application/json; charset=utf-8";

struct HttpServerRequest {
  std::string method;  // "GET", "POST"
  std::string path;    // "/v1/images/generations"
  std::string body;
  std::vector<std::string> matches;  // the route pattern's match: [0] the whole path, then its groups
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::pair<std::string, std::string>> query;  // the URL's query parameters, decoded, in order
  std::string remote_address;                              // the client's IP address ("127.0.0.1")
  // The first header named `name` (case-insensitive), "" if none.
  std::string Header(std::string_view name) const;
  // The first query parameter named `name` (case-sensitive), "" if none.
  std::string Query(std::string_view name) const;
  // The value of cookie `name` from the Cookie header(s), "" if none.
  std::string Cookie(std::string_view name) const;
};

struct HttpServerResponse {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain";
  std::vector<std::pair<std::string, std::string>> headers;  // added to the reply
  void Set(int status, std::string body, std::string content_type);
  void SetJson(int status, const Json& body);  // dump() as kJsonContentType
};

using HttpHandler = std::function<void(const HttpServerRequest&, HttpServerResponse&)>;
// Runs before routing (without `matches`): true lets the request through to its route; false means
// the gate answered it itself (e.g. 429 Too Many Requests).
using HttpGate = std::function<bool(const HttpServerRequest&, HttpServerResponse&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;                     // 0: any free port (see HttpServer::port())
  std::filesystem::path port_file;  // if set, the bound port and a newline are written here (atomically)
  int threads = 0;                  // worker threads, one per open connection; 0: cpp-httplib's default
  size_t max_body_bytes = 0;        // larger request bodies are answered 413 unread; 0: no limit
  // Requests one kept-alive connection may carry before it is closed; 0: cpp-httplib's default (5).
  // Many clients that keep connections open need threads >= clients and a larger count.
  size_t keep_alive_max_requests = 0;
  // Added to every reply, including errors and /health (e.g. Content-Security-Policy).
  std::vector<std::pair<std::string, std::string>> default_headers;
  HttpGate gate;  // if set, runs before every route
};

class HttpServer {
 public:
  // GET /health answers {"status": "ok"} from the start; add the others with Route().
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Serves `method` ("GET" or "POST") requests whose path matches the regular expression `pattern`
  // in full. Only before Start().
  void Route(std::string_view method, const std::string& pattern, HttpHandler handler);
  // GET `path` (exactly) answers `body` (which must outlive the server, e.g. an embedded asset)
  // with `content_type`. Only before Start().
  void Asset(const std::string& path, std::string_view body, std::string content_type);

  // Answers `request` in this process, without a socket, as a client's request would be answered:
  // the gate, then the route whose method and pattern match the path (its `matches` filled in), a
  // handler exception as 500, no route 404. For fuzzing the handlers (tests/fuzz/serve_requests_fuzzer.cc).
  HttpServerResponse Dispatch(HttpServerRequest request) const;

  // Binds host:port, writes the port file, and serves on a background thread; when it returns OK the
  // accept loop runs (clients that connected earlier wait in the backlog). Unavailable when the port
  // cannot be bound or the server does not start.
  Status Start();
  int port() const { return port_; }  // the bound port once started
  std::string url() const;            // http://<host>:<port>
  // Stops accepting, lets requests in flight finish and joins the server thread. Idempotent.
  void Stop();
  // Blocks until `stop` is true (polled), then Stop()s: the main loop of a server command.
  void ServeUntil(const std::atomic<bool>& stop);

 private:
  struct Impl;
  HttpServerOptions options_;
  std::unique_ptr<Impl> impl_;
  int port_ = -1;
};

}  // namespace visalign::backends
