// A client for OpenAI-compatible embedding servers (POST /v1/embeddings), as common embedding
// servers expose them for CLIP/SigLIP models: texts are plain strings and images are data URLs
// ("data:image/png;base64,..."), both in the request's "input" array. Request and response shapes
// are documented in docs/hues.md ("Embeddings from anywhere").
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/backends/backends.h"
#include "visalign/core/status.h"

namespace visalign::backends {

struct EmbeddingsOptions {
  OpenAiEndpoint endpoint;
  std::string model;  // the request's "model" (the server's name for it); "" = field omitted
  int batch = 32;     // inputs per request
  RetryPolicy retry;  // retryable failures (timeouts, 429, 5xx) are retried per request
};

// "data:image/png;base64,<base64 of png>".
std::string PngDataUrl(std::string_view png);

// Embeds `inputs` in order: one request {"model", "input": [...], "encoding_format": "float"} per
// batch of options.batch inputs; each answer must hold one data[k] {"index", "embedding": [numbers]}
// per input of its batch (placed by "index"), all of the same length. Errors: kUnavailable after
// the retries (naming the endpoint and the HTTP/transport error), kCorrupt for an answer that
// breaks this contract, kInterrupted when `stop` is set.
Result<std::vector<std::vector<float>>> FetchEmbeddings(const EmbeddingsOptions& options,
                                                        std::shared_ptr<HttpTransport> transport,
                                                        const std::vector<std::string>& inputs,
                                                        const std::atomic<bool>& stop);

}  // namespace visalign::backends
