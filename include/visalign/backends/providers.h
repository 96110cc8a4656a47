// Hosted image providers with their own API shapes (docs/backends.md has each request):
//   gemini     POST {endpoint}/v1beta/models/{model}:generateContent (x-goog-api-key), the image
//              inline in the answer
//   bfl        Black Forest Labs: POST {endpoint}/v1/{model} (x-key), poll the answer's
//              polling_url until Ready, download result.sample
//   dashscope  Alibaba DashScope: POST {endpoint}/api/v1/services/aigc/text2image/image-synthesis
//              (Bearer, X-DashScope-Async: enable), poll {endpoint}/api/v1/tasks/{id} until
//              SUCCEEDED, download output.results[].url
//   replicate  POST {endpoint}/v1/models/{owner}/{name}/predictions (Bearer, Prefer: wait), body
//              {input}; poll urls.get until succeeded; output is a URL or a list of them
//   fal        POST {endpoint}/{model-id} on fal's queue (Authorization: Key ...); poll status_url
//              until COMPLETED, read response_url; images[].url (http(s) or data:)
//   a1111      AUTOMATIC1111 / Forge: POST {endpoint}/sdapi/v1/txt2img, base64 images[] (sync)
//   comfyui    a ComfyUI server and the user's API-format workflow: POST {endpoint}/prompt, poll
//              GET /history/{prompt_id}, download the output image with GET /view
// One GenerationBackend runs them all; a provider only builds its requests and reads its answers.
// The asynchronous ones share the polling here: an interval growing with jitter up to a maximum,
// a per-item job timeout, transient poll failures (connection, 5xx, 429 with Retry-After) polled
// through, and the job handle stored in the row (GenerationRequest::record_job) as soon as it is
// known, so an interrupted or crashed run resumes by polling the jobs it paid for. Results are
// downloaded only from http(s) URLs or read from data: URIs, bounded in size. A content filter's
// answer (Gemini blockReason / safety finish reasons / text without an image, BFL "Content
// Moderated" / "Request Moderated", DashScope DataInspectionFailed, fal has_nsfw_concepts,
// Replicate's "NSFW content detected") is a kRefused error.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "visalign/backends/backends.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::backends {

// How asynchronous jobs are polled. The n-th wait is min(max, initial * multiplier^(n-1)), drawn
// uniformly from [(1 - jitter)·d, d].
struct PollPolicy {
  Millis initial{1000};
  Millis max{10'000};
  double multiplier = 1.5;
  double jitter = 0.25;
  Millis job_timeout{600'000};   // per item and attempt, from the submission (or the first poll of a stored job)
  Millis Wait(int polls) const;  // polls >= 1
};

struct ProviderOptions {
  std::string kind;      // gemini, bfl, dashscope, replicate, fal, a1111 or comfyui
  std::string endpoint;  // empty: DefaultProviderEndpoint(kind)
  // e.g. gemini-2.5-flash-image, flux-pro-1.1, qwen-image, black-forest-labs/flux-dev (replicate),
  // fal-ai/flux/dev (fal); a1111 and comfyui: a label (the checkpoint is the server's or the workflow's)
  std::string model;
  std::string api_key;      // sent in the provider's header; never in a message or the store
  std::string api_key_env;  // recorded in the connection (the name only)
  std::string size;         // "WxH" or empty (the provider's default)
  // Merged into the provider's parameter object (gemini: generationConfig; bfl: the body;
  // dashscope: parameters; replicate: input; fal, a1111: the body; comfyui: the workflow's nodes) as a JSON merge
  // patch: null removes a field visalign sends, objects merge; a string "{seed}" anywhere becomes the item's seed
  // (removed when it has none).
  Json params = Json::object();
  HttpTimeouts timeouts;
  PollPolicy poll;
  size_t max_download_bytes = size_t{64} << 20;
  // comfyui: the API-format workflow (CheckComfyWorkflow) and the SHA-256 of its file's bytes,
  // which is part of the run's identity (the file's path is not).
  Json workflow;
  std::string workflow_sha256;
};

// Whether `kind` is one of the providers above.
bool IsProviderKind(std::string_view kind);
// The provider's public base URL ("" for an unknown kind).
std::string_view DefaultProviderEndpoint(std::string_view kind);

// Checks the options (kind, endpoint, model, size, params, poll policy); InvalidArgument naming
// the option otherwise.
Result<std::unique_ptr<GenerationBackend>> MakeProviderBackend(ProviderOptions options,
                                                               std::shared_ptr<HttpTransport> transport);

// The first request an item makes (for --dry-run): {"method", "url", "headers", "body"}, the key's
// header shown as "$VARIABLE" instead of its value.
Result<Json> ProviderFirstRequest(const ProviderOptions& options, const GenerationRequest& request);

// The bytes of a result: an http(s) URL is fetched (no credentials, at most `max_bytes`, redirects
// only to http(s)); a data:...;base64, URI is decoded. Anything else is kProtocol naming it. An
// HTTP 403/404/410 is an expired link: kServer (retryable), the message saying so.
Attempt<std::string> FetchResult(HttpTransport& transport, const std::string& url, const HttpTimeouts& timeouts,
                                 size_t max_bytes, const std::atomic<bool>* cancel);

// ComfyUI: `workflow` (API format) with the string values "{prompt}" (also inside longer strings),
// "{seed}", "{width}" and "{height}" substituted: a seed, width or height becomes a JSON number
// (0 without a seed; --size's sides). InvalidArgument (at --workflow) for a workflow that is not
// a JSON object of nodes, has no "{prompt}", or uses {width}/{height} without `size`.
Status CheckComfyWorkflow(const Json& workflow, const std::string& size);
Json SubstituteComfyWorkflow(const Json& workflow, const std::string& prompt, std::optional<int64_t> seed,
                             const std::string& size);

// Whether `url` is http:// or https:// with no byte a request line would cut or split at.
bool IsHttpUrl(std::string_view url);

}  // namespace visalign::backends
