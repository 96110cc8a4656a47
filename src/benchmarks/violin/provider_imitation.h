// Imitations of the image providers' APIs for the reference server (internal to the violin
// module): Gemini generateContent, BFL's submit/poll, DashScope's asynchronous tasks, Replicate's
// predictions, fal's queue, AUTOMATIC1111's txt2img, ComfyUI's prompt queue and history, and the
// OpenAI-shaped Seedream (BytePlus ModelArk) and GLM-Image (Zhipu) images APIs, following
// their public documentation (field names, status values, error bodies, 429s with Retry-After),
// with the failures tests need on purpose (ReferenceServerOptions: moderate, job_ms,
// fail_first_job, result_urls, api_key). Images are the reference server's (hooks.render).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "visalign/backends/http_server.h"
#include "visalign/benchmarks/violin/reference_server.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::violin {

// What an imitation uses of the reference server.
struct ImitationHooks {
  std::function<std::optional<double>(bool* fail)> admit;  // ReferenceServer::Admit
  std::function<void(int status, std::chrono::steady_clock::time_point t0)> count;
  std::function<void(const std::string& prompt, bool image)> count_prompt;
  std::function<Result<std::string>(const std::string& prompt, int width, int height)> render;  // PNG
  std::function<std::string()> url;                                                             // the server's base URL
};

class ProviderImitation {
 public:
  virtual ~ProviderImitation() = default;
  virtual void Install(backends::HttpServer& http) = 0;  // before Start()
  // {"submitted": n, "polls": n, "downloads": n}
  virtual Json Stats() const = 0;
};

std::unique_ptr<ProviderImitation> MakeProviderImitation(ApiFlavor api, const ReferenceServerOptions& options,
                                                         ImitationHooks hooks);

}  // namespace visalign::violin
