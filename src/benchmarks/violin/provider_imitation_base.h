// What the provider imitations share (internal to the violin module; provider_imitation.h is the
// interface): the Imitation base (admission, jobs, result URLs, keys), request helpers, and one
// factory per file of imitations:
//   provider_imitation_jobs.cc    the asynchronous job APIs: BFL, DashScope, Replicate, fal
//   provider_imitation_sync.cc    the synchronous hosted APIs: Gemini, Seedream, GLM-Image
//   provider_imitation_local.cc   the local runners: AUTOMATIC1111 / Forge, ComfyUI
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "benchmarks/violin/provider_imitation.h"
#include "visalign/backends/http_server.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::violin::internal {

using Clock = std::chrono::steady_clock;
using backends::HttpServerRequest;
using backends::HttpServerResponse;

constexpr int kMaxSide = 4096;
constexpr int kBflSizeStep = 32;  // BFL's width and height are multiples of 32
constexpr const char* kExpiredBody =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code><Message>Request has expired."
    "</Message></Error>";

// One submitted job.
struct Job {
  std::string prompt;
  int width = 0, height = 0;
  std::optional<int64_t> seed;
  Clock::time_point submitted;
  bool moderated = false, fails = false;
  int polls = 0;
};

// What every imitation shares: admission (rate limit, injected failures), jobs, result URLs, keys.
class Imitation : public ProviderImitation {
 public:
  Imitation(const ReferenceServerOptions& options, ImitationHooks hooks)
      : options_(options), hooks_(std::move(hooks)) {}

  Json Stats() const override {
    std::lock_guard lock(mu_);
    return {{"submitted", jobs_.size()}, {"polls", polls_}, {"downloads", downloads_}};
  }

 protected:
  // The provider's error body.
  virtual void Error(HttpServerResponse& res, int status, const std::string& code,
                     const std::string& message) const = 0;

  // Runs `handler` as one counted request: answered 429 (with Retry-After) over the rate limit or
  // 500 for an injected failure, or, when the key is checked, 401 without the right `key`.
  template <typename Handler>
  void Serve(const HttpServerRequest& req, HttpServerResponse& res, const std::string& key, Handler handler) {
    const auto t0 = Clock::now();
    bool fail = false;
    const std::optional<double> retry_after = hooks_.admit(&fail);
    if (retry_after) {
      res.headers.emplace_back("Retry-After", std::to_string(static_cast<int>(std::ceil(*retry_after))));
      Error(res, 429, "rate_limited", fmt::format("rate limit of {} requests/s exceeded", options_.rate_limit));
    } else if (fail) {
      Error(res, 500, "internal", "injected failure (--fail-rate)");
    } else if (!options_.api_key.empty() && key != options_.api_key) {
      Error(res, 401, "unauthenticated", key.empty() ? "no API key sent" : "invalid API key");
    } else if (options_.malformed && req.method == "POST") {
      res.SetJson(200, {{"unexpected", "an answer that is not the API's"}});
    } else {
      handler();
    }
    hooks_.count(res.status, t0);
  }

  bool Moderated(const std::string& prompt) const {
    return !options_.moderate.empty() && prompt.find(options_.moderate) != std::string::npos;
  }

  // A new job for `prompt` (counted as its request); its id.
  std::string Submit(const std::string& prompt, int width, int height, std::optional<int64_t> seed) {
    hooks_.count_prompt(prompt, false);
    std::lock_guard lock(mu_);
    const size_t n = jobs_.size();
    const std::string id = fmt::format("{:08x}-7a1e-4c0d-9e5f-{:012x}", n + 1, n * 2654435761u % 0xffffffffffffu);
    Job job{prompt, width, height, seed, Clock::now(), Moderated(prompt), false, 0};
    job.fails = options_.fail_first_job && failed_prompts_.insert(prompt).second;
    jobs_.emplace(id, std::move(job));
    return id;
  }

  // The job `id` after one more poll, or nullopt for an unknown id.
  std::optional<Job> Poll(const std::string& id) {
    std::lock_guard lock(mu_);
    ++polls_;
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return std::nullopt;
    ++it->second.polls;
    return it->second;
  }

  bool Running(const Job& job) const {
    return Clock::now() - job.submitted < std::chrono::milliseconds(options_.job_ms);
  }

  // The token of a finished job's image (rendered now; "" kept for an expired one, as
  // --result-urls expire-first says).
  Result<std::string> ResultToken(const Job& job) {
    VISALIGN_ASSIGN_OR_RETURN(std::string png, hooks_.render(job.prompt, job.width, job.height));
    return StoreResult(job.prompt, std::move(png));
  }

  // Keeps `png` (an image for `prompt`) for download; its token.
  std::string StoreResult(const std::string& prompt, std::string png) {
    hooks_.count_prompt(prompt, true);
    std::lock_guard lock(mu_);
    const std::string token = std::to_string(results_.size());
    const bool expired = options_.result_urls == "expire-first" && expired_prompts_.insert(prompt).second;
    results_.emplace(token, expired ? std::string() : std::move(png));
    return token;
  }

  // The download URL of result `token`, as --result-urls says.
  std::string ResultLink(const std::string& token) const {
    if (options_.result_urls == "file") return "file:///etc/passwd";
    return hooks_.url() + "/results/" + token + ".png";
  }

  // The download URL of a finished job's image.
  Result<std::string> ResultUrl(const Job& job) {
    VISALIGN_ASSIGN_OR_RETURN(const std::string token, ResultToken(job));
    return ResultLink(token);
  }

  // Answers a download of result `token` (403 once expired, 404 if unknown). Downloads count as
  // requests and take rate-limit tokens (a 429 over the limit), as the client paces them, but get
  // no injected failures.
  void ServeResult(const std::string& token, HttpServerResponse& res, int unknown_status = 404) {
    const auto t0 = Clock::now();
    bool no_failure = false;
    if (const std::optional<double> retry_after = hooks_.admit(&no_failure)) {
      res.headers.emplace_back("Retry-After", std::to_string(static_cast<int>(std::ceil(*retry_after))));
      res.Set(429, "rate limit exceeded", "text/plain");
    } else {
      std::lock_guard lock(mu_);
      ++downloads_;
      auto it = results_.find(token);
      if (it == results_.end())
        res.Set(unknown_status, "no such result", "text/plain");
      else if (it->second.empty())
        res.Set(403, kExpiredBody, "application/xml");
      else
        res.Set(200, it->second, "image/png");
    }
    hooks_.count(res.status, t0);
  }

  void InstallResults(backends::HttpServer& http) {
    http.Route("GET", R"(/results/(\d+)\.png)",
               [this](const HttpServerRequest& req, HttpServerResponse& res) { ServeResult(req.matches[1], res); });
  }

  const ReferenceServerOptions options_;
  const ImitationHooks hooks_;

 private:
  mutable std::mutex mu_;
  std::map<std::string, Job> jobs_;
  std::map<std::string, std::string> results_;  // token -> PNG ("" = expired)
  std::set<std::string> failed_prompts_, expired_prompts_;
  uint64_t polls_ = 0, downloads_ = 0;
};

// The bearer token of a request ("" without one).
std::string Bearer(const HttpServerRequest& req);
// The parsed JSON object body, or nullopt.
std::optional<Json> ObjectBody(const HttpServerRequest& req);
// An integer field of `o` within [lo, hi] (`fallback` when absent); nullopt when it is not one.
std::optional<int64_t> IntIn(const Json& o, const char* name, int64_t fallback, int64_t lo, int64_t hi);
// `png` with the provider's visible watermark: a white label over the bottom-right eighth.
Result<std::string> Watermarked(const std::string& png);

std::unique_ptr<ProviderImitation> MakeJobImitation(ApiFlavor api, const ReferenceServerOptions& options,
                                                    ImitationHooks hooks);
std::unique_ptr<ProviderImitation> MakeSyncImitation(ApiFlavor api, const ReferenceServerOptions& options,
                                                     ImitationHooks hooks);
std::unique_ptr<ProviderImitation> MakeLocalImitation(ApiFlavor api, const ReferenceServerOptions& options,
                                                      ImitationHooks hooks);

}  // namespace visalign::violin::internal
