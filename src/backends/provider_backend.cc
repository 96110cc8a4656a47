// The backend of every hosted provider (providers.h): submission, shared polling, job records,
// downloads and validation around a Provider's requests and answer readers.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "backends/provider.h"
#include "visalign/core/base64.h"
#include "visalign/core/untrusted.h"

namespace visalign::backends {
namespace {
using Clock = std::chrono::steady_clock;

constexpr std::string_view kSeedPlaceholder = "{seed}";
constexpr Millis kMaxPollRetryAfter{60'000};
constexpr size_t kQuotedAnswerChars = 300;

double Uniform(double lo, double hi) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return hi <= lo ? lo : std::uniform_real_distribution<double>(lo, hi)(rng);
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), s.begin(), [](char a, char b) {
           return a == std::tolower(static_cast<unsigned char>(b));
         });
}

// Replaces every "{seed}" string in `v` by the seed, or by null (a merge patch then removes it).
void SubstituteSeed(Json& v, std::optional<int64_t> seed) {
  if (v.is_string() && v.get_ref<const std::string&>() == kSeedPlaceholder) {
    v = seed ? Json(*seed) : Json(nullptr);
  } else if (v.is_structured()) {
    for (auto& child : v) SubstituteSeed(child, seed);
  }
}

Attempt<std::string> Fail(ErrorKind kind, std::string message) {
  return Attempt<std::string>::Fail({kind, std::move(message), {}});
}

class ProviderBackend final : public GenerationBackend {
 public:
  ProviderBackend(ProviderOptions options, std::unique_ptr<Provider> provider, std::shared_ptr<HttpTransport> transport)
      : options_(std::move(options)), provider_(std::move(provider)), transport_(std::move(transport)) {}

  Json Identity() const override {
    Json c = {{"backend", options_.kind}, {"model", options_.model}, {"params", options_.params}};
    if (!options_.size.empty()) c["size"] = options_.size;
    if (!options_.workflow_sha256.empty()) c["workflow_sha256"] = options_.workflow_sha256;
    return c;
  }

  Json Connection() const override {
    Json c = {{"endpoint", BaseUrl(options_)},
              {"connect_timeout_ms", options_.timeouts.connect.count()},
              {"timeout_ms", options_.timeouts.total.count()},
              {"job_timeout_ms", options_.poll.job_timeout.count()},
              {"poll_ms", options_.poll.initial.count()},
              {"max_poll_ms", options_.poll.max.count()}};
    if (!options_.api_key_env.empty()) c["api_key_env"] = options_.api_key_env;
    return c;
  }

  Attempt<GeneratedImage> Generate(const GenerationRequest& request, const std::atomic<bool>& cancel) override {
    using Out = Attempt<GeneratedImage>;
    std::string job = request.job;
    auto record = [&](const std::string& value) {
      job = value;
      if (request.record_job) request.record_job(value);
    };
    JobAnswer answer;
    bool stored = !job.empty();
    if (!stored) {
      auto submitted = Send(provider_->Submit(request), true, nullptr, cancel);
      if (!submitted.ok()) return Out::Fail(submitted.error);
      auto read = provider_->ReadSubmitted(*submitted.value);
      if (!read.ok()) return Out::Fail(read.error);
      answer = std::move(*read.value);
      if (!answer.ready) {
        if (answer.job.empty()) return Out::Fail({ErrorKind::kProtocol, "the provider's answer names no job", {}});
        record(answer.job);
      }
    }
    const auto deadline = Clock::now() + options_.poll.job_timeout;
    bool at_once = stored;  // a stored job (or one that moved on) is polled without a wait first
    for (int polls = 0; !answer.ready; ++polls) {
      if (Clock::now() >= deadline) {
        const std::string what = fmt::format(
            "job {} not finished after {} s (--job-timeout); a new one is submitted "
            "on the next attempt",
            QuoteText(job), options_.poll.job_timeout.count() / 1000);
        record("");
        return Out::Fail({ErrorKind::kTimeout, what, {}});
      }
      // A stored job is polled at once; a job just submitted (or still running) after a wait.
      if (!std::exchange(at_once, false) &&
          !SleepUnlessStopped(std::min(options_.poll.Wait(polls + 1),
                                       std::chrono::duration_cast<Millis>(deadline - Clock::now()) + Millis(1)),
                              cancel))
        return Out::Fail({ErrorKind::kCancelled, "cancelled while polling", {}});
      auto [poll, with_key] = provider_->Poll(job);
      int status = 0;
      auto polled = Send(std::move(poll), with_key, request.pace, cancel, &status);
      if (!polled.ok()) {
        const AttemptError& e = polled.error;
        if (e.kind == ErrorKind::kCancelled) return Out::Fail(e);
        if (e.retryable()) {  // polling is free: through transient failures until the job timeout
          if (e.retry_after && !SleepUnlessStopped(std::min(*e.retry_after, kMaxPollRetryAfter), cancel))
            return Out::Fail({ErrorKind::kCancelled, "cancelled while polling", {}});
          continue;
        }
        record("");
        if (status == 404 || status == 410)
          return Out::Fail({ErrorKind::kServer,
                            fmt::format("job {} is gone ({}); a new one is submitted on the next "
                                        "attempt",
                                        QuoteText(job), e.message),
                            {}});
        return Out::Fail(e);
      }
      auto read = provider_->ReadPolled(*polled.value);
      if (!read.ok()) {
        record("");
        AttemptError e = read.error;
        if (e.kind != ErrorKind::kRefused) e.message = fmt::format("job {}: {}", QuoteText(job), e.message);
        return Out::Fail(std::move(e));
      }
      answer = std::move(*read.value);
      if (!answer.ready && !answer.job.empty()) {
        record(answer.job);
        at_once = true;
      }
    }
    if (answer.images.empty()) return Out::Fail({ErrorKind::kProtocol, "the finished job lists no image", {}});
    const std::string& url = answer.images.front();
    if (IsHttpUrl(url) && request.pace && !request.pace->Acquire(cancel))
      return Out::Fail({ErrorKind::kCancelled, "cancelled before the download", {}});
    auto bytes = FetchResult(*transport_, url, options_.timeouts, options_.max_download_bytes, &cancel);
    if (!bytes.ok()) {
      if (bytes.error.kind == ErrorKind::kServer) record("");  // an expired link: the job's image is lost
      return Out::Fail(bytes.error);
    }
    const std::string source =
        StartsWithNoCase(url, "data:") ? std::string("the answer's inline image") : "result " + QuoteText(url);
    auto ext = ValidateImageBytes(*bytes.value, source);
    if (!ext.ok()) return Out::Fail(ext.error);
    return Out::Ok({std::move(*bytes.value), *ext.value});
  }

 private:
  // Sends `req` (with the key header when `with_key`), after taking a token from `pace` if given;
  // the 2xx answer as a JSON object. `status` (optional) receives the HTTP status.
  Attempt<Json> Send(HttpRequest req, bool with_key, RateLimiter* pace, const std::atomic<bool>& cancel,
                     int* status = nullptr) const {
    using Out = Attempt<Json>;
    if (pace && !pace->Acquire(cancel)) return Out::Fail({ErrorKind::kCancelled, "cancelled", {}});
    if (with_key && !options_.api_key.empty()) req.headers.push_back(provider_->KeyHeader(options_.api_key));
    req.headers.emplace_back("Accept", "application/json");
    auto sent = transport_->Send(req, options_.timeouts, &cancel);
    if (!sent.ok()) return Out::Fail(sent.error);
    const HttpResponse& r = *sent.value;
    if (status) *status = r.status;
    if (r.status < 200 || r.status >= 300) {
      AttemptError e = HttpStatusError(r);
      provider_->ExplainError(r.body, e);
      if (pace && e.kind == ErrorKind::kRateLimited && e.retry_after)
        pace->PauseUntil(Clock::now() + std::min(*e.retry_after, kMaxPollRetryAfter));
      return Out::Fail(std::move(e));
    }
    auto j = ParseJson(r.body);
    if (!j.ok() || !j->is_object())
      return Out::Fail({ErrorKind::kProtocol,
                        fmt::format("HTTP {} from {} {} with a malformed JSON body ({}; {} bytes starting {})",
                                    r.status, req.method, QuoteText(req.url),
                                    j.ok() ? "not an object" : j.status().what(), r.body.size(), QuoteText(r.body)),
                        {}});
    return Out::Ok(std::move(*j));
  }

  ProviderOptions options_;
  std::unique_ptr<Provider> provider_;
  std::shared_ptr<HttpTransport> transport_;
};

std::unique_ptr<Provider> MakeProvider(const ProviderOptions& options) {
  if (options.kind == "gemini") return MakeGeminiProvider(options);
  if (options.kind == "bfl") return MakeBflProvider(options);
  if (options.kind == "replicate") return MakeReplicateProvider(options);
  if (options.kind == "fal") return MakeFalProvider(options);
  if (options.kind == "a1111") return MakeA1111Provider(options);
  if (options.kind == "comfyui") return MakeComfyUiProvider(options);
  return MakeDashScopeProvider(options);
}

// The host of an http(s) URL, lower-cased ("" if none).
std::string HostOf(std::string_view url) {
  const size_t start = url.find("://");
  if (start == std::string_view::npos) return "";
  std::string_view rest = url.substr(start + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) rest = rest.substr(at + 1);
  rest = rest.substr(0, rest.find(':'));
  std::string host(rest);
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return std::tolower(c); });
  return host;
}

// The last two labels of a DNS name ("bfl.ai" of "api.us1.bfl.ai"); an IP address as it is.
std::string SiteOf(const std::string& host) {
  if (host.find_first_not_of("0123456789.") == std::string::npos) return host;
  const size_t last = host.rfind('.');
  if (last == std::string::npos || last == 0) return host;
  const size_t before = host.rfind('.', last - 1);
  return before == std::string::npos ? host : host.substr(before + 1);
}

}  // namespace

Millis PollPolicy::Wait(int polls) const {
  const double d = std::min(static_cast<double>(max.count()),
                            static_cast<double>(initial.count()) * std::pow(multiplier, std::max(0, polls - 1)));
  const double j = std::clamp(jitter, 0.0, 1.0);
  return Millis(static_cast<int64_t>(Uniform((1.0 - j) * d, d)));
}

bool IsProviderKind(std::string_view kind) { return !DefaultProviderEndpoint(kind).empty(); }

std::string_view DefaultProviderEndpoint(std::string_view kind) {
  if (kind == "gemini") return "https://generativelanguage.googleapis.com";
  if (kind == "bfl") return "https://api.bfl.ai";
  if (kind == "dashscope") return "https://dashscope-intl.aliyuncs.com";
  if (kind == "replicate") return "https://api.replicate.com";
  if (kind == "fal") return "https://queue.fal.run";
  if (kind == "a1111") return "http://127.0.0.1:7860";
  if (kind == "comfyui") return "http://127.0.0.1:8188";
  return "";
}

bool IsHttpUrl(std::string_view url) {
  if (!StartsWithNoCase(url, "http://") && !StartsWithNoCase(url, "https://")) return false;
  const size_t scheme = url.find("://") + 3;
  return url.size() > scheme && std::none_of(url.begin(), url.end(),
                                             [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; });
}

Attempt<std::string> FetchResult(HttpTransport& transport, const std::string& url, const HttpTimeouts& timeouts,
                                 size_t max_bytes, const std::atomic<bool>* cancel) {
  if (StartsWithNoCase(url, "data:")) {
    const size_t comma = url.find(',');
    const std::string_view meta = std::string_view(url).substr(0, comma == std::string::npos ? 0 : comma);
    if (comma == std::string::npos || !meta.ends_with(";base64"))
      return Fail(ErrorKind::kProtocol, "a data: URI without ;base64, data: " + QuoteText(url.substr(0, 64)));
    if ((url.size() - comma) / 4 * 3 > max_bytes)
      return Fail(ErrorKind::kProtocol, fmt::format("an inline image larger than {} bytes", max_bytes));
    auto bytes = DecodeBase64(std::string_view(url).substr(comma + 1));
    if (!bytes) return Fail(ErrorKind::kProtocol, "an inline image that is not valid base64 (truncated?)");
    return Attempt<std::string>::Ok(std::move(*bytes));
  }
  if (!IsHttpUrl(url))
    return Fail(ErrorKind::kProtocol, "result " + QuoteText(url) + " is neither an http(s) URL nor a data: URI");
  HttpRequest req;
  req.url = url;
  req.max_response_bytes = max_bytes;
  auto sent = transport.Send(req, timeouts, cancel);
  if (!sent.ok()) return Attempt<std::string>::Fail(sent.error);
  HttpResponse& r = *sent.value;
  if (r.status >= 200 && r.status < 300) return Attempt<std::string>::Ok(std::move(r.body));
  AttemptError e = HttpStatusError(r);
  if (r.status == 403 || r.status == 404 || r.status == 410) {
    e.kind = ErrorKind::kServer;
    e.message = fmt::format("result {} has expired or is refused ({}); the job is submitted again on the next attempt",
                            QuoteText(url), e.message);
  } else {
    e.message = "fetching " + QuoteText(url) + ": " + e.message;
  }
  return Attempt<std::string>::Fail(std::move(e));
}

Json WithParams(Json base, const Json& params, std::optional<int64_t> seed) {
  Json patch = params;
  SubstituteSeed(patch, seed);
  base.merge_patch(patch);
  return base;
}

std::optional<std::pair<int, int>> ParseImageSize(const std::string& size) {
  const size_t x = size.find('x');
  if (x == std::string::npos || x == 0 || x + 1 >= size.size() || size.size() > 11 ||
      size.find_first_not_of("0123456789x") != std::string::npos || size.find('x', x + 1) != std::string::npos)
    return std::nullopt;
  const int w = std::stoi(size.substr(0, x)), h = std::stoi(size.substr(x + 1));
  if (w < 1 || h < 1) return std::nullopt;
  return std::pair{w, h};
}

HttpRequest JsonPost(std::string url, const Json& body) {
  HttpRequest req;
  req.method = "POST";
  req.url = std::move(url);
  req.headers = {{"Content-Type", "application/json"}};
  req.body = body.dump();
  return req;
}

std::string BaseUrl(const ProviderOptions& options) {
  std::string url = options.endpoint.empty() ? std::string(DefaultProviderEndpoint(options.kind)) : options.endpoint;
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

Attempt<JobAnswer> Malformed(const std::string& what, const Json& answer) {
  return Attempt<JobAnswer>::Fail({ErrorKind::kProtocol, what + ": " + QuoteJson(answer, kQuotedAnswerChars), {}});
}

std::string StringAt(const Json& answer, const char* key) {
  const auto it = answer.find(key);
  return it != answer.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool SameSite(std::string_view url, std::string_view base) {
  return IsHttpUrl(url) && !HostOf(url).empty() && SiteOf(HostOf(url)) == SiteOf(HostOf(base));
}

std::string UrlEncode(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '~')
      out += c;
    else
      out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
  }
  return out;
}

Result<std::unique_ptr<GenerationBackend>> MakeProviderBackend(ProviderOptions options,
                                                               std::shared_ptr<HttpTransport> transport) {
  if (!IsProviderKind(options.kind))
    return Status::InvalidArgument("unknown provider " + QuoteText(options.kind), "backend",
                                   "gemini, bfl, dashscope, replicate, fal, a1111 or comfyui");
  const std::string url = BaseUrl(options);
  if (!IsHttpUrl(url))
    return Status::InvalidArgument("endpoint " + QuoteText(url) + " is not an http(s) URL", "--endpoint",
                                   "e.g. " + std::string(DefaultProviderEndpoint(options.kind)));
  if (options.model.empty())
    return Status::InvalidArgument("no model name", "--model", "the model to ask (docs/backends.md lists examples)");
  if (!options.size.empty() && !ParseImageSize(options.size))
    return Status::InvalidArgument("invalid size " + QuoteText(options.size), "--size", "WxH, e.g. 1024x1024");
  if (!options.params.is_object())
    return Status::InvalidArgument("params must be a JSON object", "--param", "key=value pairs");
  if (options.poll.initial.count() <= 0 || options.poll.max < options.poll.initial ||
      options.poll.job_timeout.count() <= 0)
    return Status::InvalidArgument(
        fmt::format("poll interval {} ms, max {} ms, job timeout {} ms", options.poll.initial.count(),
                    options.poll.max.count(), options.poll.job_timeout.count()),
        "--poll-interval/--job-timeout", "positive durations, the interval at most its max");
  if (options.kind == "gemini") VISALIGN_RETURN_IF_ERROR(GeminiAspectRatio(options.size).status());
  if (options.kind == "comfyui") VISALIGN_RETURN_IF_ERROR(CheckComfyWorkflow(options.workflow, options.size));
  if (options.kind == "replicate" && options.model.find('/') == std::string::npos)
    return Status::InvalidArgument("model " + QuoteText(options.model) + " is not owner/name", "--model",
                                   "a Replicate model such as black-forest-labs/flux-dev (or owner/name:version)");
  std::unique_ptr<Provider> provider = MakeProvider(options);
  return std::unique_ptr<GenerationBackend>(
      std::make_unique<ProviderBackend>(std::move(options), std::move(provider), std::move(transport)));
}

Result<Json> ProviderFirstRequest(const ProviderOptions& options, const GenerationRequest& request) {
  VISALIGN_RETURN_IF_ERROR(MakeProviderBackend(options, nullptr).status());
  std::unique_ptr<Provider> provider = MakeProvider(options);
  HttpRequest req = provider->Submit(request);
  if (!options.api_key_env.empty()) req.headers.push_back(provider->KeyHeader("$" + options.api_key_env));
  Json headers = Json::object();
  for (const auto& [name, value] : req.headers) headers[name] = value;
  auto body = ParseJson(req.body);
  return Json{
      {"method", req.method}, {"url", req.url}, {"headers", headers}, {"body", body.ok() ? *body : Json(req.body)}};
}

}  // namespace visalign::backends
