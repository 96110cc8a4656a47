// A local imitation of the Hugging Face Hub's HTTP behaviour on 127.0.0.1, for tests: the `resolve`
// endpoint (backends::HttpServer; HEAD and GET) answering X-Repo-Commit, ETag, and for LFS files
// X-Linked-Etag / X-Linked-Size with a 302 to a content server; 401 for a gated repository without
// its token, 404 with X-Error-Code for a missing repository, revision or file. The content server is a
// plain socket server (HttpServer cannot cut a reply short) that honours `Range: bytes=N-`, and on
// request cuts a transfer after some bytes, corrupts a byte, or sends slowly. A fallback repository
// (SetFallback) answers for every repository not added, e.g. all of open_clip's pretrained table for
// the examples' `hues run --published` (tests/examples_test.cc, help_examples_test.cc). Used by the
// hub module's and the command-line tests only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "visalign/backends/http_server.h"
#include "visalign/core/io.h"

namespace visalign::hub::testing {

struct FakeRepo {
  std::string commit;                        // 40 hex digits
  std::map<std::string, std::string> files;  // path in the repository -> bytes
  std::string token;                         // non-empty: gated, needs "Authorization: Bearer <token>"
};

// The file of `r` answering for `file`: the exact path, else a "*<suffix>" entry (a fallback
// repository's "*.safetensors" answers every safetensors name), else null.
inline const std::string* RepoFile(const FakeRepo& r, const std::string& file) {
  if (const auto f = r.files.find(file); f != r.files.end()) return &f->second;
  for (const auto& [pattern, bytes] : r.files)
    if (pattern.starts_with('*') && file.ends_with(pattern.substr(1))) return &bytes;
  return nullptr;
}

// The fixture SigLIP (<fixtures>/siglip-tiny, its .bin from siglip-tiny-bin) laid out as open_clip's
// timm/ViT-B-16-SigLIP repository holds it.
inline FakeRepo SiglipTinyRepo(const std::filesystem::path& fixtures, const std::string& commit) {
  const auto bytes = [&](const std::string& path) { return ReadFile(fixtures / path).value(); };
  FakeRepo r;
  r.commit = commit;
  r.files = {{"open_clip_config.json", bytes("siglip-tiny/config.json")},
             {"open_clip_pytorch_model.bin", bytes("siglip-tiny-bin/open_clip_pytorch_model.bin")},
             {"tokenizer/spiece.model", bytes("siglip-tiny/tokenizer/spiece.model")},
             {"tokenizer/tokenizer_config.json", bytes("siglip-tiny/tokenizer/tokenizer_config.json")},
             {"tokenizer/special_tokens_map.json", bytes("siglip-tiny/tokenizer/special_tokens_map.json")}};
  return r;
}

// Files the Hub stores in LFS (answered with a redirect to the content server).
inline bool IsLfs(const std::string& file) {
  return file.ends_with(".safetensors") || file.ends_with(".bin") || file.ends_with(".pt") || file.ends_with(".model");
}

class ContentServer {
 public:
  ContentServer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    ::listen(listener_, 16);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ContentServer() {
    stop_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    thread_.join();
  }

  std::string url() const { return fmt::format("http://127.0.0.1:{}", port_); }
  void Put(const std::string& sha, const std::string& bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    blobs_[sha] = bytes;
  }
  // The next transfer stops after `bytes` bytes of body (the connection is closed).
  void CutNextAfter(size_t bytes) { cut_after_ = static_cast<long>(bytes); }
  void CorruptEverything(bool corrupt) { corrupt_ = corrupt; }
  void SendSlowly(bool slow) { slow_ = slow; }
  int gets() const { return gets_.load(); }
  std::vector<std::string> ranges() const {
    std::lock_guard<std::mutex> lock(mu_);
    return ranges_;
  }
  bool saw_authorization() const { return saw_authorization_.load(); }

 private:
  void Serve() {
    while (!stop_) {
      const int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) continue;
      std::thread([this, fd] { Handle(fd); }).detach();
    }
  }

  void Handle(int fd) {
    std::string request;
    char buf[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n <= 0) break;
      request.append(buf, static_cast<size_t>(n));
    }
    std::string lower = request;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("\r\nauthorization:") != std::string::npos) saw_authorization_ = true;
    const size_t path_begin = request.find(' ') + 1;
    const std::string path = request.substr(path_begin, request.find(' ', path_begin) - path_begin);
    std::string body;
    bool found = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const std::string sha = path.substr(path.rfind('/') + 1);
      if (auto it = blobs_.find(sha); it != blobs_.end()) {
        body = it->second;
        found = true;
      }
    }
    ++gets_;
    size_t from = 0;
    if (const size_t r = lower.find("\r\nrange: bytes="); r != std::string::npos) {
      from = std::stoull(request.substr(r + 15));
      std::lock_guard<std::mutex> lock(mu_);
      ranges_.push_back(fmt::format("bytes={}-", from));
    }
    if (corrupt_ && !body.empty()) body[body.size() / 2] = static_cast<char>(body[body.size() / 2] ^ 0x5A);
    std::string head;
    if (!found) {
      head = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      body.clear();
    } else if (from > 0 && from < body.size()) {
      head = fmt::format(
          "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {}-{}/{}\r\nContent-Length: {}\r\nConnection: "
          "close\r\n\r\n",
          from, body.size() - 1, body.size(), body.size() - from);
      body = body.substr(from);
    } else if (from > 0) {
      head = fmt::format(
          "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{}\r\nContent-Length: 0\r\nConnection: "
          "close\r\n\r\n",
          body.size());
      body.clear();
    } else {
      head = fmt::format("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.size());
    }
    const long cut = cut_after_.exchange(-1);
    const size_t send = cut >= 0 ? std::min(body.size(), static_cast<size_t>(cut)) : body.size();
    WriteAll(fd, head);
    constexpr size_t kSlowChunk = 16384;
    for (size_t at = 0; at < send;) {
      const size_t n = slow_ ? std::min(kSlowChunk, send - at) : send - at;
      if (!WriteAll(fd, body.substr(at, n))) break;
      at += n;
      if (slow_) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::close(fd);
  }

  static bool WriteAll(int fd, const std::string& s) {
    size_t done = 0;
    while (done < s.size()) {
      const ssize_t n = ::send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> blobs_;
  std::vector<std::string> ranges_;
  std::atomic<long> cut_after_{-1};
  std::atomic<bool> corrupt_{false}, slow_{false}, saw_authorization_{false};
  std::atomic<int> gets_{0};
};

class FakeHub {
 public:
  FakeHub() : server_(backends::HttpServerOptions{}) {
    server_.Route(
        "GET", "/([^/]+)/([^/]+)/resolve/([^/]+)/(.+)",
        [this](const backends::HttpServerRequest& req, backends::HttpServerResponse& res) { Resolve(req, res); });
  }
  Status Start() { return server_.Start(); }
  std::string url() const { return server_.url(); }
  ContentServer& content() { return content_; }

  void AddRepo(const std::string& repo, FakeRepo r) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [file, bytes] : r.files) {
      if (IsLfs(file)) content_.Put(Sha256Hex(bytes), bytes);
    }
    repos_[repo] = std::move(r);
  }
  // The repository answering for every repository not added (e.g. all of open_clip's pretrained
  // table at once); its files may be "*<suffix>" patterns (RepoFile).
  void SetFallback(FakeRepo r) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [file, bytes] : r.files) {
      if (IsLfs(file)) content_.Put(Sha256Hex(bytes), bytes);
    }
    fallback_ = std::move(r);
  }
  // Requests (HEAD and GET) the resolve endpoint answered for `file`.
  int requests_for(const std::string& file) const {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = requests_.find(file);
    return it == requests_.end() ? 0 : it->second;
  }

 private:
  void Resolve(const backends::HttpServerRequest& req, backends::HttpServerResponse& res) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string repo = req.matches[1] + "/" + req.matches[2];
    const std::string revision = req.matches[3];
    const std::string file = req.matches[4];
    ++requests_[file];
    const auto it = repos_.find(repo);
    if (it == repos_.end() && !fallback_) {
      res.headers.emplace_back("X-Error-Code", "RepoNotFound");
      res.Set(404, "Repository not found", "text/plain");
      return;
    }
    const FakeRepo& r = it == repos_.end() ? *fallback_ : it->second;
    if (!r.token.empty() && req.Header("Authorization") != "Bearer " + r.token) {
      res.headers.emplace_back("X-Error-Code", "GatedRepo");
      res.Set(401, "Access to this model is restricted", "text/plain");
      return;
    }
    if (revision != "main" && revision != r.commit) {
      res.headers.emplace_back("X-Error-Code", "RevisionNotFound");
      res.Set(404, "Revision not found", "text/plain");
      return;
    }
    res.headers.emplace_back("X-Repo-Commit", r.commit);
    const std::string* bytes = RepoFile(r, file);
    if (bytes == nullptr) {
      res.headers.emplace_back("X-Error-Code", "EntryNotFound");
      res.Set(404, "Entry not found", "text/plain");
      return;
    }
    const std::string sha = Sha256Hex(*bytes);
    if (IsLfs(file)) {
      res.headers.emplace_back("X-Linked-Etag", "\"" + sha + "\"");
      res.headers.emplace_back("X-Linked-Size", std::to_string(bytes->size()));
      res.headers.emplace_back("ETag", "\"" + sha + "\"");
      res.headers.emplace_back("Location", content_.url() + "/blobs/" + sha);
      res.Set(302, "", "text/plain");
      return;
    }
    res.headers.emplace_back("ETag", "\"" + sha.substr(0, 40) + "\"");
    res.Set(200, *bytes, "application/octet-stream");
  }

  ContentServer content_;
  backends::HttpServer server_;
  mutable std::mutex mu_;
  std::map<std::string, FakeRepo> repos_;
  std::optional<FakeRepo> fallback_;
  std::map<std::string, int> requests_;
};

}  // namespace visalign::hub::testing
