// Black Forest Labs' FLUX API: POST {endpoint}/v1/{model} answers {id, polling_url}; GET the
// polling_url until its status is Ready, then download result.sample (a signed URL, short-lived).
#include <fmt/format.h>

#include "backends/provider.h"
#include "visalign/core/untrusted.h"

namespace visalign::backends {
namespace {

constexpr const char* kPendingStates[] = {"Pending", "Queued", "Processing"};
constexpr const char* kModeratedStates[] = {"Content Moderated", "Request Moderated"};
constexpr size_t kReasonChars = 300;

class Bfl final : public Provider {
 public:
  explicit Bfl(const ProviderOptions& o) : options_(o) {}

  std::pair<std::string, std::string> KeyHeader(const std::string& key) const override { return {"x-key", key}; }

  HttpRequest Submit(const GenerationRequest& request) const override {
    Json body = {{"prompt", request.prompt}, {"output_format", "png"}};
    if (const auto wh = ParseImageSize(options_.size)) {
      body["width"] = wh->first;
      body["height"] = wh->second;
    }
    if (request.seed) body["seed"] = *request.seed;
    return JsonPost(fmt::format("{}/v1/{}", BaseUrl(options_), options_.model),
                    WithParams(std::move(body), options_.params, request.seed));
  }

  Attempt<JobAnswer> ReadSubmitted(const Json& answer) const override {
    const std::string id = StringAt(answer, "id");
    if (id.empty()) return Malformed("answer without a job id", answer);
    std::string polling_url = StringAt(answer, "polling_url");
    if (polling_url.empty()) polling_url = fmt::format("{}/v1/get_result?id={}", BaseUrl(options_), id);
    if (!IsHttpUrl(polling_url)) return Malformed("polling_url is not an http(s) URL", answer);
    return Attempt<JobAnswer>::Ok({false, Json{{"id", id}, {"polling_url", polling_url}}.dump(), {}});
  }

  std::pair<HttpRequest, bool> Poll(const std::string& job) const override {
    const auto parsed = ParseJson(job);
    HttpRequest req;
    if (parsed.ok() && parsed->is_object()) req.url = StringAt(*parsed, "polling_url");
    // The key goes only to the endpoint's own site (BFL polls on regional hosts such as api.us1.bfl.ai).
    return {req, SameSite(req.url, BaseUrl(options_))};
  }

  Attempt<JobAnswer> ReadPolled(const Json& answer) const override {
    const std::string status = StringAt(answer, "status");
    if (status == "Ready") {
      const auto result = answer.find("result");
      const std::string sample = result != answer.end() && result->is_object() ? StringAt(*result, "sample") : "";
      if (sample.empty()) return Malformed("Ready without result.sample", answer);
      return Attempt<JobAnswer>::Ok({true, "", {sample}});
    }
    for (const char* pending : kPendingStates)
      if (status == pending) return Attempt<JobAnswer>::Ok({false, "", {}});
    const auto details = answer.find("details");
    const std::string detail =
        details == answer.end() || details->is_null() ? "" : " " + QuoteJson(*details, kReasonChars);
    for (const char* moderated : kModeratedStates)
      if (status == moderated) return Attempt<JobAnswer>::Fail({ErrorKind::kRefused, status + detail, {}});
    if (status == "Error" || status == "Failed" || status == "Task not found")
      return Attempt<JobAnswer>::Fail({ErrorKind::kServer, "status " + status + detail, {}});
    return Malformed("unknown status " + QuoteText(status), answer);
  }

 private:
  const ProviderOptions options_;
};

}  // namespace

std::unique_ptr<Provider> MakeBflProvider(const ProviderOptions& options) { return std::make_unique<Bfl>(options); }

}  // namespace visalign::backends
