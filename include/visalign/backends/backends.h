// Model backends: how visalign asks a model for an image (or a judge for an answer), one attempt at
// a time, with every failure classified so the caller knows whether retrying can help.
//   - HttpTransport: HTTP over libcurl with connect/total timeouts and cancellation.
//   - OpenAiClient: JSON POSTs to OpenAI-compatible endpoints (images, chat completions), bearer
//     key kept out of every message, log line and stored configuration.
//   - GenerationBackend: one image per attempt: OpenAI-compatible images API, a local command
//     (argv template, no shell) or a directory of images made elsewhere.
//   - RateLimiter (token bucket) and RetryPolicy (exponential backoff, jitter, Retry-After) with
//     RunWithRetries, the retry loop shared by image generation and judging.
// Classification: timeouts, connection errors, HTTP 408/429/5xx and failed local commands are
// retryable; other 4xx fail at once with the server's message; malformed responses (bad JSON,
// broken base64, undecodable images) fail at once because retrying a paid call rarely fixes them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::backends {

using Millis = std::chrono::milliseconds;

// ---- Errors of one attempt ----------------------------------------------------------------

enum class ErrorKind {
  kTimeout,      // no complete answer within the timeout
  kConnection,   // refused, reset, DNS, TLS
  kRateLimited,  // HTTP 429
  kServer,       // HTTP 408 or 5xx
  kClient,       // other HTTP 4xx: the request itself is wrong
  kProtocol,     // a 2xx answer that is not what the API promises
  kCommand,      // a local command failed (exit status, signal, timeout, missing output)
  kLocal,        // a local problem unrelated to the model (missing file, bad configuration)
  kCancelled,    // aborted by the caller (interrupt grace period over)
  // The provider's content filter declined the prompt (an outcome, not an error: recorded as a
  // refused row with the message as its reason, never retried). The message is the reason.
  kRefused,
};

struct AttemptError {
  ErrorKind kind = ErrorKind::kLocal;
  std::string message;                // one line, for logs and the store; never contains secrets
  std::optional<Millis> retry_after;  // from a Retry-After header
  // What makes two items' failures "the same" when the message also holds per-item details (a
  // command's stderr with progress output): e.g. its exit status and last stderr line. Empty: the
  // message itself.
  std::string signature = {};
  bool retryable() const;
  const std::string& Signature() const { return signature.empty() ? message : signature; }
};

// A value or the error of one attempt.
template <typename T>
struct Attempt {
  std::optional<T> value;
  AttemptError error;  // meaningful only when !value
  bool ok() const { return value.has_value(); }
  static Attempt Ok(T v) { return {std::move(v), {}}; }
  static Attempt Fail(AttemptError e) { return {std::nullopt, std::move(e)}; }
};

// ---- HTTP ---------------------------------------------------------------------------------

struct HttpRequest {
  std::string method = "GET";  // GET or POST
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  size_t max_response_bytes = 0;  // a larger answer is a kProtocol error; 0: the transport's limit (512 MiB)
};

struct HttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  // First header of that (lower-case) name, if any.
  std::optional<std::string> Header(std::string_view name) const;
};

struct HttpTimeouts {
  Millis connect{10'000};
  Millis total{300'000};  // whole request including the body
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Any HTTP status is a response; only transport failures (kTimeout, kConnection, kCancelled
  // when *cancel becomes true) are errors. Safe to call from many threads at once.
  virtual Attempt<HttpResponse> Send(const HttpRequest& request, const HttpTimeouts& timeouts,
                                     const std::atomic<bool>* cancel = nullptr) = 0;
};

// libcurl, reusing connections (a pool of handles). Redirects are followed for GET only.
std::shared_ptr<HttpTransport> MakeCurlTransport();

// The error for a non-2xx response: kind from the status (408/429/5xx retryable; a content
// filter's answer, error code moderation_blocked (OpenAI), InputTextSensitiveContentDetected /
// OutputImageSensitiveContentDetected (ModelArk), 1301 (Zhipu) or DataInspectionFailed (DashScope), is
// kRefused with the server's message as the reason), message
// "HTTP <status>: <server message>" where the message is taken from a JSON error body
// ({"error": {"message"}}, {"error": "..."}, {"message"}, {"detail"}), an HTML page's <title>, or
// the start of the body; Retry-After (seconds or HTTP-date) is parsed.
AttemptError HttpStatusError(const HttpResponse& response);
// Retry-After value as a delay: delta-seconds, or an HTTP-date relative to now. nullopt if unparseable.
std::optional<Millis> ParseRetryAfter(std::string_view value);

// ---- OpenAI-compatible JSON APIs ----------------------------------------------------------

struct OpenAiEndpoint {
  std::string base_url;  // e.g. http://127.0.0.1:8080 or https://gateway/v1 (a trailing /v1 is kept)
  std::string api_key;   // sent as "Authorization: Bearer ..."; empty = no header
  HttpTimeouts timeouts;
};

// Reads the API key from environment variable `var` (empty `var` = no key). InvalidArgument if
// `var` is named but unset or empty; the message names the variable, never a value.
Result<std::string> ApiKeyFromEnv(const std::string& var);

class OpenAiClient {
 public:
  OpenAiClient(OpenAiEndpoint endpoint, std::shared_ptr<HttpTransport> transport);
  // URL of an API path such as "images/generations": base + "/v1/" + path, or base + "/" + path
  // when the base already ends in a version segment (/v1, /api/v3, /api/paas/v4).
  std::string Url(std::string_view path) const;
  // POSTs `body` as JSON to Url(path) and parses the 2xx answer; errors are classified.
  Attempt<Json> PostJson(std::string_view path, const Json& body, const std::atomic<bool>* cancel = nullptr) const;
  // POST chat/completions; the text content of choices[0].message (kProtocol if absent).
  Attempt<std::string> ChatCompletion(const Json& body, const std::atomic<bool>* cancel = nullptr) const;
  // GET an absolute URL (no Authorization header: it may belong to another host); body on 2xx.
  Attempt<std::string> Fetch(const std::string& url, const std::atomic<bool>* cancel = nullptr) const;

 private:
  OpenAiEndpoint endpoint_;
  std::shared_ptr<HttpTransport> transport_;
};

// ---- Image generation ---------------------------------------------------------------------

class RateLimiter;

struct GenerationRequest {
  std::string item_id;
  std::string prompt;
  int k = 0;  // sample index
  std::optional<int64_t> seed;
  // Asynchronous providers: the job submitted for this row earlier ("" = none), to be polled
  // instead of submitting (and paying for) a new one; record_job (may be empty) stores a new job
  // handle, or "" once the job is unusable, in the row; pace (may be null) is taken once per
  // request after the first (polls, downloads), so --rate bounds every request made.
  std::string job = {};
  std::function<void(const std::string&)> record_job = {};
  RateLimiter* pace = nullptr;
};

struct GeneratedImage {
  std::string bytes;      // the file exactly as the model produced it
  std::string extension;  // png, jpg or webp (from the content, not from a name)
};

// Checks that `bytes` decode as an image; returns the extension of its format. `source` names it.
Attempt<std::string> ValidateImageBytes(std::string_view bytes, const std::string& source);

class GenerationBackend {
 public:
  virtual ~GenerationBackend() = default;
  // What the images depend on (backend kind, model, size, request parameters, command template):
  // the run's identity, recorded with it; resuming a run requires the same identity. No secrets.
  virtual Json Identity() const = 0;
  // Where and how the model is reached (endpoint, the API key's variable name, timeouts): recorded
  // as the run's last-used connection and free to change between invocations. No secrets.
  virtual Json Connection() const = 0;
  // One attempt at one image. Called concurrently from several threads; returns promptly with
  // kCancelled once *cancel is true.
  virtual Attempt<GeneratedImage> Generate(const GenerationRequest& request, const std::atomic<bool>& cancel) = 0;
};

struct OpenAiImagesOptions {
  OpenAiEndpoint endpoint;
  std::string model;
  std::string api_key_env;       // recorded in the connection (the name only)
  std::string size;              // "WxH" or empty (server default)
  Json params = Json::object();  // extra body fields, see ImagesRequestBody
};

// Image APIs differ in the request fields they accept, by model family:
//   kGptImage  gpt-image-*: always answers base64 and rejects response_format (HTTP 400
//              "Unknown parameter"), so it is not sent; output_format, background, quality... pass
//   kDallE     dall-e-*: response_format b64_json
//   kGeneric   any other name (OpenAI-compatible servers): response_format b64_json
enum class ImagesApiFamily { kGptImage, kDallE, kGeneric };
// The family of a model name, read from the part after the last '/' ("openai/gpt-image-1" too).
ImagesApiFamily ImagesApiFamilyOf(std::string_view model);
std::string_view ImagesApiFamilyName(ImagesApiFamily family);

// The JSON body of one images/generations request: model, prompt, n = 1, size (if set),
// response_format b64_json unless the family is kGptImage, then `params` on top: a null value
// removes that field (--param response_format=null), the string "{seed}" becomes the request's seed
// (the field is left out when it has none), anything else is sent as given.
Json ImagesRequestBody(const OpenAiImagesOptions& options, const GenerationRequest& request);

// POST {endpoint}/v1/images/generations with ImagesRequestBody; accepts data[0].b64_json or
// data[0].url (fetched without the API key).
Result<std::unique_ptr<GenerationBackend>> MakeOpenAiImagesBackend(OpenAiImagesOptions options,
                                                                   std::shared_ptr<HttpTransport> transport);

struct CommandOptions {
  // e.g. "python gen.py --prompt {prompt} --out {out} --seed {seed}". Split into argv like a shell
  // would split words ('...' and "..." quoting, backslash escapes) but nothing is expanded or run
  // through a shell; then {prompt} {out} {out_stem} {seed} {id} {k} are substituted inside each
  // argument ({{ and }} are literal braces). {out} is the file the command must write; it ends in
  // .png. {out_stem} is the same path without the extension, for programs that pick their own:
  // they write {out_stem}.png, .jpg, .jpeg or .webp. One of the two is required. Either way the
  // format is read from the file's content, not from its name.
  std::string command_template;
  Millis timeout{600'000};            // per item; the whole process group is killed when exceeded
  std::filesystem::path scratch_dir;  // where {out} files are created (on the first Generate)
  size_t stderr_tail_bytes = 2000;
};
Result<std::unique_ptr<GenerationBackend>> MakeCommandBackend(CommandOptions options);
// The argv template split into words (exposed for tests and --help examples).
Result<std::vector<std::string>> SplitCommandTemplate(std::string_view command_template);

// Imports <dir>/<id>.<ext> or <dir>/<id>__<k>.<ext> (ext png, jpg, jpeg, webp in any case, as
// `violin evaluate --images` matches them; <id>.<ext> only serves k = 0; the folder is listed once).
// A missing or undecodable file fails the item at once; a folder with no image at all is NotFound.
Result<std::unique_ptr<GenerationBackend>> MakeDirectoryBackend(const std::filesystem::path& dir);

// ---- Rate limiting and retries --------------------------------------------------------------

// Token bucket: `rate` tokens per second, at most `burst` stored. rate <= 0 means unlimited.
class RateLimiter {
 public:
  explicit RateLimiter(double rate, double burst = 1.0);
  // Blocks until a token is available; false (no token taken) once `stop` is true.
  bool Acquire(const std::atomic<bool>& stop);
  // Nobody gets a token before `until` (a 429's Retry-After applies to every worker).
  void PauseUntil(std::chrono::steady_clock::time_point until);

 private:
  double rate_, burst_, tokens_;
  std::chrono::steady_clock::time_point last_, paused_until_;
  std::mutex mu_;
};

struct RetryPolicy {
  int max_attempts = 5;          // attempts per item and invocation, including the first
  Millis initial_backoff{1000};  // delay after the first failure
  Millis max_backoff{60'000};
  double multiplier = 2.0;
  double jitter = 0.5;              // the delay is drawn uniformly from [(1 - jitter)·d, d]
  Millis max_retry_after{600'000};  // longer Retry-After values are capped

  // Delay before attempt `failures + 1` after `failures` failed attempts (failures >= 1). With a
  // Retry-After: that delay (capped) plus up to jitter·initial_backoff, so clients spread out.
  Millis Delay(int failures, std::optional<Millis> retry_after) const;
};

// Sleeps `d` unless `stop` becomes true first; false if stopped.
bool SleepUnlessStopped(Millis d, const std::atomic<bool>& stop);

// Makes attempts until one succeeds (returns nullopt), one fails permanently, max_attempts are
// used, or `stop` is set (returns a kCancelled error). Each attempt first takes a token from
// `limiter` (may be null). After each failed attempt (except cancelled ones) `on_failure(error,
// final)` runs; `final` is true when no further attempt follows. A 429 with Retry-After pauses
// the limiter for everybody.
std::optional<AttemptError> RunWithRetries(const RetryPolicy& policy, RateLimiter* limiter,
                                           const std::atomic<bool>& stop,
                                           const std::function<std::optional<AttemptError>()>& attempt,
                                           const std::function<void(const AttemptError&, bool final)>& on_failure);

}  // namespace visalign::backends
