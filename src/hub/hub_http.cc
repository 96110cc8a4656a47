#include "hub/hub_http.h"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "backends/curl_library.h"
#include "visalign/core/untrusted.h"

namespace visalign::hub {
namespace {

constexpr long kMaxRedirects = 10;
constexpr long kConnectTimeoutMs = 30'000;
// A transfer slower than 1 byte/s for a minute is cut (and resumed by the caller) rather than hanging.
constexpr long kLowSpeedBytes = 1;
constexpr long kLowSpeedSeconds = 60;
constexpr size_t kMaxErrorBody = 4096;

struct Transfer {
  HubResponse response;
  DownloadSink* sink = nullptr;
  uint64_t written = 0;
  int write_errno = 0;
};

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string_view line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    t->response.headers.clear();  // a new response (after a redirect)
    const size_t space = line.find(' ');
    t->response.status =
        space == std::string_view::npos ? 0 : std::atol(std::string(line.substr(space + 1, 3)).c_str());
  } else if (const size_t colon = line.find(':'); colon != std::string_view::npos) {
    std::string name = Trim(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    t->response.headers.emplace_back(std::move(name), Trim(line.substr(colon + 1)));
  }
  return size * n;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * n;
  const bool content = t->sink != nullptr && (t->response.status == 200 || t->response.status == 206);
  if (!content) {
    t->response.body.append(data, std::min(bytes, kMaxErrorBody - std::min(kMaxErrorBody, t->response.body.size())));
    return bytes;
  }
  if (t->response.status == 200 && t->sink->offset > 0) {
    // The server ignored the Range request and sends the whole file: start the file over.
    if (::ftruncate(t->sink->fd, 0) != 0 || ::lseek(t->sink->fd, 0, SEEK_SET) != 0) {
      t->write_errno = errno;
      return 0;
    }
    t->sink->offset = 0;
  }
  size_t done = 0;
  while (done < bytes) {
    const ssize_t w = ::write(t->sink->fd, data + done, bytes - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      t->write_errno = w < 0 ? errno : ENOSPC;
      return 0;  // aborts the transfer
    }
    done += static_cast<size_t>(w);
  }
  t->written += bytes;
  if (t->sink->on_bytes) t->sink->on_bytes(bytes);
  return bytes;
}

Result<HubResponse> Perform(const std::string& url, const std::string& token, bool head, DownloadSink* sink,
                            uint64_t* written) {
  VISALIGN_ASSIGN_OR_RETURN(const backends::CurlLibrary* curl, backends::Curl());
  CURL* h = curl->easy_init();
  if (h == nullptr) return Status::Unavailable("curl_easy_init failed", url, "a working libcurl");
  curl_slist* headers = nullptr;
  if (!token.empty()) headers = curl->slist_append(headers, ("Authorization: Bearer " + token).c_str());
  headers = curl->slist_append(headers, "User-Agent: visalign");
  std::string range;
  Transfer t;
  t.sink = sink;
  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl->easy_setopt(h, CURLOPT_URL, url.c_str());
  curl->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl->easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl->easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl->easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
  curl->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl->easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, kConnectTimeoutMs);
  curl->easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, kLowSpeedBytes);
  curl->easy_setopt(h, CURLOPT_LOW_SPEED_TIME, kLowSpeedSeconds);
  curl->easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
  curl->easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl->easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
  curl->easy_setopt(h, CURLOPT_WRITEDATA, &t);
  if (head) {
    curl->easy_setopt(h, CURLOPT_NOBODY, 1L);
    curl->easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  } else {
    curl->easy_setopt(h, CURLOPT_HTTPGET, 1L);
    curl->easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl->easy_setopt(h, CURLOPT_MAXREDIRS, kMaxRedirects);
    if (sink != nullptr && sink->offset > 0) {
      range = fmt::format("{}-", sink->offset);
      curl->easy_setopt(h, CURLOPT_RANGE, range.c_str());
    }
  }
  const CURLcode rc = curl->easy_perform(h);
  curl->easy_cleanup(h);
  curl->slist_free_all(headers);
  if (written != nullptr) *written = t.written;
  if (t.write_errno != 0) {
    const bool full = t.write_errno == ENOSPC || t.write_errno == EDQUOT;
    return Status::IoError(
        full ? "disk full" : fmt::format("cannot write the download: {}", std::strerror(t.write_errno)),
        "the model cache",
        full ? "free space for the model's files (or $VISALIGN_CACHE elsewhere)" : "a writable cache folder");
  }
  if (rc != CURLE_OK) {
    const std::string why = error_buffer[0] != '\0' ? std::string(error_buffer) : std::string(curl->easy_strerror(rc));
    return Status::Unavailable(fmt::format("download failed: {}", EscapeControlBytes(why, 200)), url,
                               "a reachable Hub (HF_ENDPOINT) or --offline with the files in the cache");
  }
  return std::move(t.response);
}

}  // namespace

std::string HubResponse::Header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (n == name) return v;
  }
  return "";
}

Result<HubResponse> Head(const std::string& url, const std::string& token) {
  return Perform(url, token, /*head=*/true, nullptr, nullptr);
}

Result<HubResponse> Get(const std::string& url, const std::string& token, DownloadSink& sink, uint64_t* written) {
  return Perform(url, token, /*head=*/false, &sink, written);
}

}  // namespace visalign::hub
