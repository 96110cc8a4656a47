// Replicate's predictions API: POST {endpoint}/v1/models/{owner}/{name}/predictions (or
// /v1/predictions with a version for owner/name:VERSION) with `Prefer: wait`, body {input}; an
// answer still starting or processing is polled at urls.get until succeeded; `output` is a URL or
// a list of URLs (data: URIs when the model answers inline).
#include <fmt/format.h>

#include "backends/provider.h"
#include "visalign/core/untrusted.h"

namespace visalign::backends {
namespace {

constexpr const char* kPendingStates[] = {"starting", "processing"};
// Replicate's safety checkers fail the prediction with an error naming NSFW content.
constexpr const char* kRefusalMarker = "NSFW";
constexpr size_t kReasonChars = 300;

class Replicate final : public Provider {
 public:
  explicit Replicate(const ProviderOptions& o) : options_(o) {}

  std::pair<std::string, std::string> KeyHeader(const std::string& key) const override {
    return {"Authorization", "Bearer " + key};
  }

  HttpRequest Submit(const GenerationRequest& request) const override {
    Json input = {{"prompt", request.prompt}};
    if (request.seed) input["seed"] = *request.seed;
    if (const auto wh = ParseImageSize(options_.size)) {
      input["width"] = wh->first;
      input["height"] = wh->second;
    }
    Json body = {{"input", WithParams(std::move(input), options_.params, request.seed)}};
    const size_t colon = options_.model.find(':');
    std::string url = fmt::format("{}/v1/models/{}/predictions", BaseUrl(options_), options_.model);
    if (colon != std::string::npos) {
      url = BaseUrl(options_) + "/v1/predictions";
      body["version"] = options_.model.substr(colon + 1);
    }
    HttpRequest req = JsonPost(std::move(url), body);
    req.headers.emplace_back("Prefer", "wait");
    return req;
  }

  Attempt<JobAnswer> ReadSubmitted(const Json& answer) const override { return ReadPrediction(answer); }

  std::pair<HttpRequest, bool> Poll(const std::string& job) const override {
    HttpRequest req;
    req.url = job;
    return {req, SameSite(job, BaseUrl(options_))};
  }

  Attempt<JobAnswer> ReadPolled(const Json& answer) const override { return ReadPrediction(answer); }

 private:
  Attempt<JobAnswer> ReadPrediction(const Json& answer) const {
    const std::string status = StringAt(answer, "status");
    if (status.empty()) return Malformed("answer without a prediction status", answer);
    for (const char* pending : kPendingStates)
      if (status == pending) {
        std::string get;
        if (const auto urls = answer.find("urls"); urls != answer.end() && urls->is_object())
          get = StringAt(*urls, "get");
        if (get.empty() && !StringAt(answer, "id").empty())
          get = BaseUrl(options_) + "/v1/predictions/" + UrlEncode(StringAt(answer, "id"));
        if (!IsHttpUrl(get)) return Malformed("a prediction without urls.get", answer);
        return Attempt<JobAnswer>::Ok({false, get, {}});
      }
    if (status == "succeeded") {
      JobAnswer ready{true, "", {}};
      const auto output = answer.find("output");
      if (output != answer.end() && output->is_string()) ready.images.push_back(output->get<std::string>());
      if (output != answer.end() && output->is_array())
        for (const Json& o : *output)
          if (o.is_string()) ready.images.push_back(o.get<std::string>());
      if (ready.images.empty()) return Malformed("succeeded without an output URL", answer);
      return Attempt<JobAnswer>::Ok(std::move(ready));
    }
    if (status == "failed" || status == "canceled" || status == "aborted") {
      const auto error = answer.find("error");
      const std::string reason = error == answer.end() || error->is_null() ? std::string("no error given")
                                 : error->is_string() ? EscapeControlBytes(error->get<std::string>(), kReasonChars)
                                                      : QuoteJson(*error, kReasonChars);
      if (reason.find(kRefusalMarker) != std::string::npos)
        return Attempt<JobAnswer>::Fail({ErrorKind::kRefused, reason, {}});
      return Attempt<JobAnswer>::Fail({ErrorKind::kServer, "prediction " + status + ": " + reason, {}});
    }
    return Malformed("unknown prediction status " + QuoteText(status), answer);
  }

  const ProviderOptions options_;
};

}  // namespace

std::unique_ptr<Provider> MakeReplicateProvider(const ProviderOptions& options) {
  return std::make_unique<Replicate>(options);
}

}  // namespace visalign::backends
