#include "visalign/backends/http_server.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
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

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

// An httplib handler around `handler`: our request in, our response out.
httplib::Server::Handler Adapt(HttpHandler handler) {
  return [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    HttpServerRequest request;
    request.method = req.method;
    request.path = req.path;
    request.body = req.body;
    for (const auto& m : req.matches) request.matches.push_back(m.str());
    for (const auto& [name, value] : req.headers) request.headers.emplace_back(name, value);
    HttpServerResponse response;
    try {
      handler(request, response);
    } catch (...) {
      // A handler bug answers 500 without the exception text (which may quote the request).
      spdlog::error("{} {}: {}", EscapeControlBytes(req.method, kQuoteLimit), EscapeControlBytes(req.path, kQuoteLimit),
                    StatusFromCurrentException().ToString());
      response = HttpServerResponse();
      response.SetJson(500, {{"error", {{"message", "internal server error"}}}});
    }
    res.status = response.status;
    for (const auto& [name, value] : response.headers) res.set_header(name, value);
    res.set_content(std::move(response.body), response.content_type);
  };
}

}  // namespace

std::string HttpServerRequest::Header(std::string_view name) const {
  for (const auto& [n, value] : headers)
    if (EqualsIgnoringCase(n, name)) return value;
  return {};
}

void HttpServerResponse::Set(int status_code, std::string text, std::string type) {
  status = status_code;
  body = std::move(text);
  content_type = std::move(type);
}

void HttpServerResponse::SetJson(int status_code, const nlohmann::json& json) { Set(status_code, json.dump(), kJsonContentType); }

struct HttpServer::Impl {
  httplib::Server server;
  std::thread thread;
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
  impl_->server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  Route("GET", "/health", [](const HttpServerRequest&, HttpServerResponse& res) { res.SetJson(200, {{"status", "ok"}}); });
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Route(std::string_view method, const std::string& pattern, HttpHandler handler) {
  if (method == "POST")
    impl_->server.Post(pattern, Adapt(std::move(handler)));
  else
    impl_->server.Get(pattern, Adapt(std::move(handler)));
}

Status HttpServer::Start() {
  const std::string address = options_.host + ":" + std::to_string(options_.port);
  httplib::Server& server = impl_->server;
  port_ = options_.port == 0 ? server.bind_to_any_port(options_.host)
                             : (server.bind_to_port(options_.host, options_.port) ? options_.port : -1);
  if (port_ <= 0) return Status::Unavailable("cannot listen on " + address, "port", "a free port (0 picks one)");
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
