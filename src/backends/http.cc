// HTTP over libcurl (loaded on first use, curl_library.h) and the classification of HTTP failures.
#include "backends/curl_library.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "visalign/backends/backends.h"
#include "visalign/core/untrusted.h"

namespace visalign::backends {
namespace {

constexpr size_t kMaxResponseBytes = size_t{512} << 20;  // a response larger than this is refused
constexpr size_t kMaxErrorMessageChars = 300;
constexpr long kMaxRedirects = 5;
// Longer Retry-After delays are read as this long: RetryPolicy caps them far lower anyway; this
// keeps the conversion to milliseconds in range (a 20-digit value overflowed int64: undefined behaviour).
constexpr int64_t kMaxRetryAfterSeconds = int64_t{365} * 24 * 3600;

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Whitespace runs (including newlines) collapse to one space; long text is cut with "..."; other
// control bytes are escaped (a server's text is untrusted).
std::string OneLine(std::string_view s, size_t max_chars = kMaxErrorMessageChars) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
    if (out.size() > max_chars) break;
  }
  const bool cut = out.size() > max_chars;
  if (cut) out.resize(max_chars);
  return EscapeControlBytes(out, max_chars) + (cut ? "..." : "");
}

struct Transfer {
  HttpResponse response;
  const std::atomic<bool>* cancel = nullptr;
  size_t limit = kMaxResponseBytes;
  bool too_large = false;
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  if (t->response.body.size() + size * n > t->limit) {
    t->too_large = true;
    return 0;
  }
  t->response.body.append(data, size * n);
  return size * n;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    t->response.headers.clear();  // a new response (after a redirect or 100-continue)
  } else if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    t->response.headers.emplace_back(Lower(Trim(line.substr(0, colon))), Trim(line.substr(colon + 1)));
  }
  return size * n;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  return (t->cancel && t->cancel->load()) ? 1 : 0;
}

class CurlTransport final : public HttpTransport {
 public:
  ~CurlTransport() override {
    if (curl_)
      for (CURL* h : pool_) curl_->easy_cleanup(h);
  }

  Attempt<HttpResponse> Send(const HttpRequest& request, const HttpTimeouts& timeouts,
                             const std::atomic<bool>* cancel) override {
    if (!curl_) {
      Result<const CurlLibrary*> loaded = Curl();
      if (!loaded.ok()) return Attempt<HttpResponse>::Fail({ErrorKind::kLocal, loaded.status().ToString(), {}});
      curl_ = *loaded;
    }
    const CurlLibrary& curl = *curl_;
    CURL* h = Take();
    Transfer t;
    t.cancel = cancel;
    if (request.max_response_bytes > 0) t.limit = std::min(request.max_response_bytes, kMaxResponseBytes);
    curl_slist* headers = nullptr;
    for (const auto& [name, value] : request.headers)
      headers = curl.slist_append(headers, (name + ": " + value).c_str());
    // libcurl would send "Expect: 100-continue" for large bodies, costing a round trip.
    headers = curl.slist_append(headers, "Expect:");
    char error_buffer[CURL_ERROR_SIZE] = {0};
    curl.easy_setopt(h, CURLOPT_URL, request.url.c_str());
    // Only HTTP(S), also after a redirect: a server's answer must not make libcurl read a file:// URL.
    curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl.easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl.easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
    curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeouts.connect.count()));
    curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeouts.total.count()));
    curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
    curl.easy_setopt(h, CURLOPT_WRITEDATA, &t);
    curl.easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
    curl.easy_setopt(h, CURLOPT_HEADERDATA, &t);
    curl.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl.easy_setopt(h, CURLOPT_XFERINFODATA, &t);
    curl.easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    if (request.method == "POST") {
      curl.easy_setopt(h, CURLOPT_POST, 1L);
      curl.easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
      curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      curl.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    } else {
      curl.easy_setopt(h, CURLOPT_HTTPGET, 1L);
      curl.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
      curl.easy_setopt(h, CURLOPT_MAXREDIRS, kMaxRedirects);
    }
    CURLcode rc = curl.easy_perform(h);
    long status = 0;
    curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl.slist_free_all(headers);
    // The handle keeps pointers to this call's buffers: reset them before it is reused.
    curl.easy_reset(h);
    Give(h);

    if (rc == CURLE_OK) {
      t.response.status = static_cast<int>(status);
      return Attempt<HttpResponse>::Ok(std::move(t.response));
    }
    std::string detail = error_buffer[0] ? error_buffer : curl.easy_strerror(rc);
    std::string what = fmt::format("{} {}", request.method, request.url);
    if (rc == CURLE_ABORTED_BY_CALLBACK)
      return Attempt<HttpResponse>::Fail({ErrorKind::kCancelled, what + ": cancelled", {}});
    if (rc == CURLE_OPERATION_TIMEDOUT)
      return Attempt<HttpResponse>::Fail(
          {ErrorKind::kTimeout,
           fmt::format("{}: timed out ({}; limits: connect {} ms, total {} ms)", what, OneLine(detail),
                       timeouts.connect.count(), timeouts.total.count()),
           {}});
    if (t.too_large)
      return Attempt<HttpResponse>::Fail(
          {ErrorKind::kProtocol, fmt::format("{}: response larger than {} bytes", what, t.limit), {}});
    if (rc == CURLE_UNSUPPORTED_PROTOCOL || rc == CURLE_URL_MALFORMAT)
      return Attempt<HttpResponse>::Fail({ErrorKind::kLocal, what + ": " + OneLine(detail), {}});
    return Attempt<HttpResponse>::Fail({ErrorKind::kConnection, what + ": " + OneLine(detail), {}});
  }

 private:
  CURL* Take() {
    {
      std::lock_guard lock(mu_);
      if (!pool_.empty()) {
        CURL* h = pool_.back();
        pool_.pop_back();
        return h;
      }
    }
    return curl_->easy_init();
  }
  void Give(CURL* h) {
    std::lock_guard lock(mu_);
    pool_.push_back(h);
  }

  const CurlLibrary* curl_ = nullptr;  // set by the first Send
  std::mutex mu_;
  std::vector<CURL*> pool_;
};

// Text of an HTML page for an error message: its <title>, or its text without tags.
std::string HtmlSummary(std::string_view html) {
  std::string lower = Lower(html);
  size_t open = lower.find("<title");
  if (open != std::string::npos) {
    size_t start = lower.find('>', open);
    size_t end = lower.find("</title>", open);
    if (start != std::string::npos && end != std::string::npos && start < end)
      return OneLine(html.substr(start + 1, end - start - 1));
  }
  std::string text;
  bool in_tag = false;
  for (char c : html) {
    if (c == '<')
      in_tag = true;
    else if (c == '>') {
      in_tag = false;
      text += ' ';
    } else if (!in_tag)
      text += c;
  }
  return OneLine(text);
}

std::string ServerMessage(const HttpResponse& r) {
  std::string type = Lower(r.Header("content-type").value_or(""));
  const auto parsed = ParseJson(r.body);
  if (parsed.ok() && parsed->is_object()) {
    const Json& j = *parsed;
    auto text = [](const Json& v) -> std::string {
      return v.is_string() ? v.get<std::string>() : QuoteJson(v, kMaxErrorMessageChars);
    };
    if (j.contains("error")) {
      const auto& e = j["error"];
      if (e.is_object() && e.contains("message")) return OneLine(text(e["message"]));
      return OneLine(text(e));
    }
    for (const char* key : {"message", "detail"})
      if (j.contains(key)) return OneLine(text(j[key]));
    return OneLine(r.body);
  }
  std::string_view body = r.body;
  std::string trimmed = Trim(body.substr(0, std::min<size_t>(body.size(), 64)));
  if (type.find("html") != std::string::npos || (!trimmed.empty() && trimmed[0] == '<'))
    return "HTML page: " + HtmlSummary(body);
  if (Trim(body).empty()) return "empty body";
  return OneLine(body);
}

// The error codes of content filters inside {"error": {"code"}}: OpenAI's, BytePlus ModelArk's
// (Seedream) and Zhipu's (GLM-Image, code 1301).
constexpr const char* kContentFilterCodes[] = {"moderation_blocked", "InputTextSensitiveContentDetected",
                                               "OutputImageSensitiveContentDetected", "SensitiveContentDetected",
                                               "1301"};

// Whether an error body is a content filter's: {"error": {"code": one of kContentFilterCodes}} or
// {"code": "DataInspectionFailed"} (DashScope).
bool IsContentFilterAnswer(std::string_view body) {
  const auto parsed = ParseJson(body);
  if (!parsed.ok() || !parsed->is_object()) return false;
  const Json& j = *parsed;
  auto code_is = [](const Json& o, std::string_view code) {
    const auto c = o.find("code");
    return c != o.end() && c->is_string() && c->get_ref<const std::string&>() == code;
  };
  const auto e = j.find("error");
  if (e != j.end() && e->is_object())
    for (const char* code : kContentFilterCodes)
      if (code_is(*e, code)) return true;
  return code_is(j, "DataInspectionFailed");
}

}  // namespace

std::shared_ptr<HttpTransport> MakeCurlTransport() { return std::make_shared<CurlTransport>(); }

std::optional<std::string> HttpResponse::Header(std::string_view name) const {
  std::string key = Lower(name);
  for (const auto& [n, v] : headers)
    if (n == key) return v;
  return std::nullopt;
}

bool AttemptError::retryable() const {
  switch (kind) {
    case ErrorKind::kTimeout:
    case ErrorKind::kConnection:
    case ErrorKind::kRateLimited:
    case ErrorKind::kServer:
    case ErrorKind::kCommand:
      return true;
    default:
      return false;
  }
}

std::optional<Millis> ParseRetryAfter(std::string_view value) {
  std::string v = Trim(value);
  if (v.empty()) return std::nullopt;
  if (std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c) || c == '.'; })) {
    char* end = nullptr;
    double seconds = std::strtod(v.c_str(), &end);
    if (end != v.c_str() + v.size() || seconds < 0) return std::nullopt;
    return Millis(static_cast<int64_t>(std::min(seconds, static_cast<double>(kMaxRetryAfterSeconds)) * 1000.0));
  }
  Result<const CurlLibrary*> curl = Curl();
  if (!curl.ok()) return std::nullopt;
  time_t at = (*curl)->getdate(v.c_str(), nullptr);
  if (at < 0) return std::nullopt;
  time_t now = std::time(nullptr);
  return Millis(std::clamp<int64_t>(static_cast<int64_t>(at) - now, 0, kMaxRetryAfterSeconds) * 1000);
}

AttemptError HttpStatusError(const HttpResponse& r) {
  AttemptError e;
  if (r.status == 429)
    e.kind = ErrorKind::kRateLimited;
  else if (r.status == 408 || r.status >= 500)
    e.kind = ErrorKind::kServer;
  else if (r.status >= 400)
    e.kind = ErrorKind::kClient;
  else
    e.kind = ErrorKind::kProtocol;  // 1xx/3xx where a final answer was expected
  e.message = fmt::format("HTTP {}: {}", r.status, ServerMessage(r));
  if (r.status >= 400 && r.status < 500 && IsContentFilterAnswer(r.body)) e.kind = ErrorKind::kRefused;
  if (auto ra = r.Header("retry-after")) e.retry_after = ParseRetryAfter(*ra);
  return e;
}

}  // namespace visalign::backends
