// What one hosted provider contributes to the provider backend (internal to the backends module):
// its requests and how to read its answers. Everything else (keys, pacing, polling, timeouts, job
// records, downloads, validation) is provider_backend.cc's, the same for every provider.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "visalign/backends/backends.h"
#include "visalign/backends/providers.h"
#include "visalign/core/json.h"

namespace visalign::backends {

// What an answer says about the image.
struct JobAnswer {
  bool ready = false;  // false: the job is still running (poll `job`)
  // After a submission to an asynchronous provider: its handle. After a poll (not ready): the job
  // moved on to a new handle (fal: from its status to its result), recorded and polled at once.
  std::string job;
  std::vector<std::string> images;  // when ready: http(s) URLs or data: URIs, the first is used
};

class Provider {
 public:
  virtual ~Provider() = default;
  // The header carrying the API key, e.g. {"x-key", key}; its value is filled in by the caller.
  virtual std::pair<std::string, std::string> KeyHeader(const std::string& key) const = 0;
  // The submission of `request` without the key header.
  virtual HttpRequest Submit(const GenerationRequest& request) const = 0;
  // Reads a 2xx answer to Submit: ready images (synchronous providers), a job to poll, or an error
  // (kRefused for a content filter's answer, kProtocol for an answer that is not the API's).
  virtual Attempt<JobAnswer> ReadSubmitted(const Json& answer) const = 0;
  // The poll of `job` without the key header, and whether the key is to be sent with it.
  virtual std::pair<HttpRequest, bool> Poll(const std::string& job) const = 0;
  // Reads a 2xx answer to Poll. An error means the job is over and unusable (a new one may be
  // submitted): kServer for a provider-side failure, kRefused for moderation.
  virtual Attempt<JobAnswer> ReadPolled(const Json& answer) const = 0;
  // A non-2xx answer's error (HttpStatusError's) with what the provider's body says more, e.g.
  // ComfyUI's node_errors naming the node. `body` is the raw answer.
  virtual void ExplainError(const std::string& body, AttemptError& error) const {
    (void)body;
    (void)error;
  }
};

// The provider of `options.kind` (options already checked), and the parts providers share.
std::unique_ptr<Provider> MakeGeminiProvider(const ProviderOptions& options);
std::unique_ptr<Provider> MakeBflProvider(const ProviderOptions& options);
std::unique_ptr<Provider> MakeDashScopeProvider(const ProviderOptions& options);
std::unique_ptr<Provider> MakeReplicateProvider(const ProviderOptions& options);
std::unique_ptr<Provider> MakeFalProvider(const ProviderOptions& options);
std::unique_ptr<Provider> MakeA1111Provider(const ProviderOptions& options);
std::unique_ptr<Provider> MakeComfyUiProvider(const ProviderOptions& options);

// Gemini's imageConfig.aspectRatio for `size` ("" without one): W:H reduced, one of the ratios
// Gemini offers; InvalidArgument at --size otherwise.
Result<std::string> GeminiAspectRatio(const std::string& size);

// `base` with `params` merged in (ProviderOptions::params: "{seed}" strings become `seed` or are
// removed without one, then a JSON merge patch).
Json WithParams(Json base, const Json& params, std::optional<int64_t> seed);
// "WxH" as {W, H}; nullopt for an empty or malformed size.
std::optional<std::pair<int, int>> ParseImageSize(const std::string& size);
// A POST of `body` as JSON to `url`.
HttpRequest JsonPost(std::string url, const Json& body);
// The endpoint without trailing slashes.
std::string BaseUrl(const ProviderOptions& options);
// A kProtocol failure: `what` and the answer (quoted, cut).
Attempt<JobAnswer> Malformed(const std::string& what, const Json& answer);
// answer[key] as a string, or "".
std::string StringAt(const Json& answer, const char* key);
// Whether http(s) `url` is on the same site (last two DNS labels, or the same IP address) as
// `base`: where a provider's polling URLs may receive its key.
bool SameSite(std::string_view url, std::string_view base);
// `text` percent-encoded for a URL query value (RFC 3986 unreserved characters kept).
std::string UrlEncode(std::string_view text);

}  // namespace visalign::backends
