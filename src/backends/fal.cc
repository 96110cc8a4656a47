// fal.ai's queue: POST {endpoint}/{model-id} (Authorization: Key ...) answers {request_id,
// status_url, response_url}; GET status_url until COMPLETED, then GET response_url, the model's
// output: images[].url (an http(s) URL or a data: URI) and, for models with a safety checker,
// has_nsfw_concepts[] (true: fal blanked the image; a refusal).
#include <fmt/format.h>

#include "backends/provider.h"
#include "visalign/core/untrusted.h"

namespace visalign::backends {
namespace {

constexpr const char* kPendingStates[] = {"IN_QUEUE", "IN_PROGRESS"};
constexpr size_t kReasonChars = 300;

class Fal final : public Provider {
 public:
  explicit Fal(const ProviderOptions& o) : options_(o) {}

  std::pair<std::string, std::string> KeyHeader(const std::string& key) const override {
    return {"Authorization", "Key " + key};
  }

  HttpRequest Submit(const GenerationRequest& request) const override {
    Json body = {{"prompt", request.prompt}, {"num_images", 1}};
    if (request.seed) body["seed"] = *request.seed;
    if (const auto wh = ParseImageSize(options_.size))
      body["image_size"] = {{"width", wh->first}, {"height", wh->second}};
    return JsonPost(BaseUrl(options_) + "/" + options_.model,
                    WithParams(std::move(body), options_.params, request.seed));
  }

  // The job: {"status_url", "response_url", "result": false}; "result": true once COMPLETED.
  Attempt<JobAnswer> ReadSubmitted(const Json& answer) const override {
    const std::string status_url = StringAt(answer, "status_url"), response_url = StringAt(answer, "response_url");
    if (!IsHttpUrl(status_url) || !IsHttpUrl(response_url))
      return Malformed("answer without http(s) status_url and response_url", answer);
    return Attempt<JobAnswer>::Ok({false, Job(status_url, response_url, false), {}});
  }

  std::pair<HttpRequest, bool> Poll(const std::string& job) const override {
    const auto parsed = ParseJson(job);
    HttpRequest req;
    if (parsed.ok() && parsed->is_object())
      req.url = StringAt(*parsed, parsed->value("result", false) ? "response_url" : "status_url");
    return {req, SameSite(req.url, BaseUrl(options_))};
  }

  // A status answer ({"status"}) or, after COMPLETED, the model's output ({"images"}).
  Attempt<JobAnswer> ReadPolled(const Json& answer) const override {
    if (answer.contains("images")) return ReadOutput(answer);
    const std::string status = StringAt(answer, "status");
    for (const char* pending : kPendingStates)
      if (status == pending) return Attempt<JobAnswer>::Ok({false, "", {}});
    if (status == "COMPLETED") {
      if (const auto error = answer.find("error"); error != answer.end() && !error->is_null())
        return Attempt<JobAnswer>::Fail({ErrorKind::kServer, "request failed: " + QuoteJson(*error, kReasonChars), {}});
      const std::string response_url = StringAt(answer, "response_url");
      if (!IsHttpUrl(response_url)) return Malformed("COMPLETED without an http(s) response_url", answer);
      return Attempt<JobAnswer>::Ok({false, Job("", response_url, true), {}});
    }
    return Malformed("unknown status " + QuoteText(status), answer);
  }

 private:
  static std::string Job(const std::string& status_url, const std::string& response_url, bool result) {
    return Json{{"status_url", status_url}, {"response_url", response_url}, {"result", result}}.dump();
  }

  static Attempt<JobAnswer> ReadOutput(const Json& answer) {
    const Json& images = answer["images"];
    if (!images.is_array() || images.empty() || !images[0].is_object() || StringAt(images[0], "url").empty())
      return Malformed("output without images[0].url", answer);
    const auto nsfw = answer.find("has_nsfw_concepts");
    if (nsfw != answer.end() && nsfw->is_array() && !nsfw->empty() && (*nsfw)[0] == true)
      return Attempt<JobAnswer>::Fail(
          {ErrorKind::kRefused, "has_nsfw_concepts: the safety checker flagged the image (fal blanks it)", {}});
    return Attempt<JobAnswer>::Ok({true, "", {StringAt(images[0], "url")}});
  }

  const ProviderOptions options_;
};

}  // namespace

std::unique_ptr<Provider> MakeFalProvider(const ProviderOptions& options) { return std::make_unique<Fal>(options); }

}  // namespace visalign::backends
