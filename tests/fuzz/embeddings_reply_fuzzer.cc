// Replies of an OpenAI-compatible /v1/embeddings server (`hues run --embeddings-endpoint`), as any
// server on the path may send them: a transport in this process answers every request with the
// input (fuzz/canned_transport.h), so FetchEmbeddings parses it. The first byte picks how many
// inputs are embedded (1 + byte % 4) and in batches of how many (1 + byte / 4 % 4), so one reply
// may have to serve several requests. Accepted embeddings: one per input, all of one non-zero
// length, every value finite; a failure is one line.
#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/canned_transport.h"
#include "fuzz/fuzz_support.h"
#include "visalign/backends/embeddings.h"

namespace backends = visalign::backends;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [selector, body] = visalign::fuzz::Select(data, size);
  backends::HttpResponse response;
  response.status = 200;
  response.headers = {{"content-type", "application/json"}};
  response.body = std::string(body);
  backends::EmbeddingsOptions options;
  options.endpoint = {visalign::fuzz::kCannedEndpoint, "", {}};
  options.model = "embedder";
  options.batch = 1 + selector / 4 % 4;
  options.retry.max_attempts = 1;  // nothing the canned transport answers changes on a retry
  const std::vector<std::string> inputs(1 + selector % 4, "a red square");
  const std::atomic<bool> stop{false};
  const auto rows =
      backends::FetchEmbeddings(options, std::make_shared<visalign::fuzz::CannedTransport>(response), inputs, stop);
  visalign::fuzz::CheckErrorLine(rows.status());
  if (!rows.ok()) return 0;
  VISALIGN_FUZZ_CHECK(rows->size() == inputs.size());
  for (const std::vector<float>& row : *rows) {
    VISALIGN_FUZZ_CHECK(!row.empty() && row.size() == rows->front().size());
    for (float v : row) VISALIGN_FUZZ_CHECK(std::isfinite(v));
  }
  return 0;
}
