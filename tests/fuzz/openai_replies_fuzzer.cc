// Replies of OpenAI-compatible servers (an image API, a chat judge), as any server on the path may
// send them. A transport in this process answers every request with the input, so the real
// client code parses it (fuzz/canned_transport.h). The first byte picks what is asked (modulo 3):
//   0 chat/completions (HTTP 200)   1 images/generations (HTTP 200; a data[0].url is "fetched" to
//   the same bytes)   2 an HTTP error status (byte / 3 picks it) with the input as its body.
// Every failure is one line; an accepted image decodes and has a known extension.
#include <array>
#include <atomic>
#include <memory>
#include <string>

#include "fuzz/canned_transport.h"
#include "fuzz/fuzz_support.h"
#include "visalign/backends/backends.h"

namespace backends = visalign::backends;
using visalign::fuzz::CannedTransport;
using visalign::fuzz::CheckErrorLine;
using visalign::fuzz::kCannedEndpoint;

namespace {

constexpr std::array<int, 8> kErrorStatuses = {400, 401, 403, 404, 408, 429, 500, 503};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [selector, body] = visalign::fuzz::Select(data, size);
  backends::HttpResponse response;
  response.status = 200;
  response.headers = {{"content-type", "application/json"}};
  response.body = std::string(body);
  switch (selector % 3) {
    case 0: {
      const backends::OpenAiClient client({kCannedEndpoint, "", {}}, std::make_shared<CannedTransport>(response));
      const auto content = client.ChatCompletion({{"model", "judge"}, {"messages", visalign::Json::array()}});
      if (!content.ok()) CheckErrorLine(content.error.message);
      break;
    }
    case 1: {
      backends::OpenAiImagesOptions options;
      options.endpoint = {kCannedEndpoint, "", {}};
      options.model = "generic-model";
      auto backend = backends::MakeOpenAiImagesBackend(options, std::make_shared<CannedTransport>(response));
      VISALIGN_FUZZ_CHECK(backend.ok(), backend.status().ToString());
      const std::atomic<bool> cancel{false};
      const auto image = (*backend)->Generate({"item", "a red square", 0, 7}, cancel);
      if (!image.ok()) {
        CheckErrorLine(image.error.message);
      } else {
        const std::string& ext = image.value->extension;
        VISALIGN_FUZZ_CHECK(ext == "png" || ext == "jpg" || ext == "webp", ext);
      }
      break;
    }
    default: {
      response.status = kErrorStatuses[selector / 3 % kErrorStatuses.size()];
      response.headers.emplace_back("retry-after", std::string(body.substr(0, 40)));
      const backends::AttemptError error = backends::HttpStatusError(response);
      CheckErrorLine(error.message);
      VISALIGN_FUZZ_CHECK(error.kind != backends::ErrorKind::kProtocol);
      if (error.retry_after) VISALIGN_FUZZ_CHECK(error.retry_after->count() >= 0);
    }
  }
  return 0;
}
