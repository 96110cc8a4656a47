#include "visalign/backends/http_server.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <regex>
#include <thread>

#include <spdlog/spdlog.h>

#include "visalign/core/io.h"
#include "visalign/core/parallel.h"
#include "visalign/core/untrusted.h"

namespace visalign::backends {
namespace {

constexpr std::chrono::milliseconds kStartPoll{1};
constexpr std::chrono::seconds kStartTimeout{10};
constexpr std::chrono::milliseconds kStopPoll{50};
// cpp-httplib 0.11 (a compiled library in Debian) listens with a backlog of 5: a burst of clients
// connecting at once overflows it and some connections are dropped. Start() listens again with this.
constexpr int kListenBacklog = 1024;

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

HttpServerRequest ToRequest(const httplib::Request& req) {
  HttpServerRequest request;
  request.method = req.method;
  request.path = req.path;
  request.body = req.body;
  request.remote_address = req.remote_addr;
  for (const auto& m : req.matches) request.matches.push_back(m.str());
  for (const auto& [name, value] : req.headers) request.headers.emplace_back(name, value);
  for (const auto& [name, value] : req.params) request.query.emplace_back(name, value);
  return request;
}

void ToResponse(HttpServerResponse response, httplib::Response& res) {
  res.status = response.status;
  for (const auto& [name, value] : response.headers) res.set_header(name, value);
  res.set_content(std::move(response.body), response.content_type);
}

// Runs `fn(response)`; a handler bug answers 500 without the exception text (which may quote the request).
template <typename Fn>
void Guarded(const httplib::Request& req, HttpServerResponse& response, Fn&& fn) {
  try {
    fn(response);
  } catch (...) {
    spdlog::error("{} {}: {}", EscapeControlBytes(req.method, kQuoteLimit), EscapeControlBytes(req.path, kQuoteLimit),
                  StatusFromCurrentException().ToString());
    response = HttpServerResponse();
    response.SetJson(500, {{"error", {{"what", "internal server error"}}}});
  }
}

// The body of an error the scaffold answers itself (no route, a body over the limit).
Json ScaffoldError(int status, const std::string& path, size_t max_body_bytes) {
  std::string what = "bad request", expected = "a well-formed HTTP request";
  if (status == 404) what = "no such page", expected = "a path this server serves";
  if (status == 413) what = "request body too large", expected = "at most " + std::to_string(max_body_bytes) + " bytes";
  return {{"error", {{"what", what}, {"where", EscapeControlBytes(path, kQuoteLimit)}, {"expected", expected}}}};
}

// An httplib handler around `handler`: our request in, our response out.
httplib::Server::Handler Adapt(HttpHandler handler) {
  return [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    const HttpServerRequest request = ToRequest(req);
    HttpServerResponse response;
    Guarded(req, response, [&](HttpServerResponse& r) { handler(request, r); });
    ToResponse(std::move(response), res);
  };
}

}  // namespace

std::string HttpServerRequest::Header(std::string_view name) const {
  for (const auto& [n, value] : headers)
    if (EqualsIgnoringCase(n, name)) return value;
  return {};
}

std::string HttpServerRequest::Query(std::string_view name) const {
  for (const auto& [n, value] : query)
    if (n == name) return value;
  return {};
}

std::string HttpServerRequest::Cookie(std::string_view name) const {
  for (const auto& [n, value] : headers) {
    if (!EqualsIgnoringCase(n, "Cookie")) continue;
    std::string_view rest = value;
    while (!rest.empty()) {
      const size_t end = std::min(rest.find(';'), rest.size());
      std::string_view pair = rest.substr(0, end);
      rest.remove_prefix(std::min(end + 1, rest.size()));
      while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
      const size_t eq = pair.find('=');
      if (eq != std::string_view::npos && pair.substr(0, eq) == name) return std::string(pair.substr(eq + 1));
    }
  }
  return {};
}

void HttpServerResponse::Set(int status_code, std::string text, std::string type) {
  status = status_code;
  body = std::move(text);
  content_type = std::move(type);
}

void HttpServerResponse::SetJson(int status_code, const Json& json) { Set(status_code, json.dump(), kJsonContentType); }

struct HttpServer::Impl {
  struct Entry {
    std::string method;
    std::regex pattern;
    HttpHandler handler;
  };
  std::vector<Entry> routes;  // the same routes, for Dispatch
  httplib::Server server;
  std::thread thread;
  std::atomic<int> listen_socket{-1};
};

HttpServer::HttpServer(HttpServerOptions options) : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  if (options_.threads > 0) {
    const size_t threads = static_cast<size_t>(options_.threads);
    impl_->server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  }
  impl_->server.set_tcp_nodelay(true);  // no Nagle delay between the header and body writes
  // cpp-httplib's default is SO_REUSEPORT, with which a second server binds a port that is taken and
  // the kernel splits the connections between the two. SO_REUSEADDR only allows a restart while old
  // connections linger in TIME_WAIT.
  impl_->server.set_socket_options([impl = impl_.get()](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    impl->listen_socket = sock;
  });
  if (options_.max_body_bytes > 0) impl_->server.set_payload_max_length(options_.max_body_bytes);
  if (options_.keep_alive_max_requests > 0) impl_->server.set_keep_alive_max_count(options_.keep_alive_max_requests);
  if (!options_.default_headers.empty()) {
    httplib::Headers headers;
    for (const auto& [name, value] : options_.default_headers) headers.emplace(name, value);
    impl_->server.set_default_headers(std::move(headers));
  }
  if (options_.gate) {
    impl_->server.set_pre_routing_handler([gate = options_.gate](const httplib::Request& req, httplib::Response& res) {
      const HttpServerRequest request = ToRequest(req);
      HttpServerResponse response;
      bool pass = true;
      Guarded(req, response, [&](HttpServerResponse& r) { pass = gate(request, r); });
      if (pass) return httplib::Server::HandlerResponse::Unhandled;
      ToResponse(std::move(response), res);
      return httplib::Server::HandlerResponse::Handled;
    });
  }
  // Errors cpp-httplib answers itself (no route: 404; a body over the limit: 413) get a JSON body.
  impl_->server.set_error_handler(
      [limit = options_.max_body_bytes](const httplib::Request& req, httplib::Response& res) {
        if (res.body.empty()) res.set_content(ScaffoldError(res.status, req.path, limit).dump(), kJsonContentType);
      });
  Route("GET", "/health", [](const HttpServerRequest&, HttpServerResponse& res) {
    res.SetJson(200, {{"status", "ok"}});
  });
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Route(std::string_view method, const std::string& pattern, HttpHandler handler) {
  impl_->routes.push_back({std::string(method), std::regex(pattern), handler});
  if (method == "POST")
    impl_->server.Post(pattern, Adapt(std::move(handler)));
  else
    impl_->server.Get(pattern, Adapt(std::move(handler)));
}

void HttpServer::Asset(const std::string& path, std::string_view body, std::string content_type) {
  impl_->server.Get(path,
                    [body, content_type = std::move(content_type)](const httplib::Request&, httplib::Response& res) {
                      res.set_content(body.data(), body.size(), content_type.c_str());
                    });
}

HttpServerResponse HttpServer::Dispatch(HttpServerRequest request) const {
  HttpServerResponse response;
  const auto guarded = [&](const auto& fn) {
    try {
      fn();
    } catch (...) {
      response = HttpServerResponse();
      response.SetJson(500, {{"error", {{"what", "internal server error"}}}});
    }
  };
  bool pass = true;
  if (options_.gate) guarded([&] { pass = options_.gate(request, response); });
  if (!pass) return response;
  if (options_.max_body_bytes > 0 && request.body.size() > options_.max_body_bytes) {
    response.SetJson(413, ScaffoldError(413, request.path, options_.max_body_bytes));
    return response;
  }
  for (const Impl::Entry& route : impl_->routes) {
    std::smatch m;
    if (route.method != request.method || !std::regex_match(request.path, m, route.pattern)) continue;
    request.matches.clear();
    for (const auto& group : m) request.matches.push_back(group.str());
    guarded([&] { route.handler(request, response); });
    return response;
  }
  response.SetJson(404, ScaffoldError(404, request.path, options_.max_body_bytes));
  return response;
}

Status HttpServer::Start() {
  const std::string address = options_.host + ":" + std::to_string(options_.port);
  httplib::Server& server = impl_->server;
  port_ = options_.port == 0 ? server.bind_to_any_port(options_.host)
                             : (server.bind_to_port(options_.host, options_.port) ? options_.port : -1);
  if (port_ <= 0) return Status::Unavailable("cannot listen on " + address, "port", "a free port (0 picks one)");
  if (impl_->listen_socket >= 0) ::listen(impl_->listen_socket, kListenBacklog);  // Linux updates the backlog
  // The socket is bound and listening: early clients wait in the backlog until accept() runs.
  impl_->thread = std::thread([&server] { server.listen_after_bind(); });
  // Stop() before the accept loop runs would be lost: wait until it does.
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (!server.is_running()) {
    if (std::chrono::steady_clock::now() > deadline) {
      Stop();
      return Status::Unavailable("the server on " + url() + " did not start", "port", "a free port (0 picks one)");
    }
    std::this_thread::sleep_for(kStartPoll);
  }
  if (!options_.port_file.empty()) {
    Status written = WriteFileAtomic(options_.port_file, std::to_string(port_) + "\n");
    if (!written.ok()) {
      Stop();
      return written;
    }
  }
  return Status::Ok();
}

std::string HttpServer::url() const { return "http://" + options_.host + ":" + std::to_string(port_); }

void HttpServer::Stop() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void HttpServer::ServeUntil(const std::atomic<bool>& stop) {
  while (!stop.load()) std::this_thread::sleep_for(kStopPoll);
  Stop();
}

}  // namespace visalign::backends
