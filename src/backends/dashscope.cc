// Alibaba Cloud DashScope's asynchronous text-to-image tasks (Qwen-Image, Wanx): POST the task with
// X-DashScope-Async: enable, GET {endpoint}/api/v1/tasks/{task_id} until SUCCEEDED, download
// output.results[].url (valid for 24 hours).
#include <fmt/format.h>

#include "backends/provider.h"
#include "visalign/core/untrusted.h"

namespace visalign::backends {
namespace {

constexpr const char* kPendingStates[] = {"PENDING", "RUNNING", "SUSPENDED"};
constexpr const char* kRefusalCode = "DataInspectionFailed";
constexpr size_t kReasonChars = 300;

// "code: message" of an object with those fields.
std::string CodeMessage(const Json& o) {
  const std::string code = StringAt(o, "code"), message = StringAt(o, "message");
  return EscapeControlBytes(code + (code.empty() || message.empty() ? "" : ": ") + message, kReasonChars);
}

class DashScope final : public Provider {
 public:
  explicit DashScope(const ProviderOptions& o) : options_(o) {}

  std::pair<std::string, std::string> KeyHeader(const std::string& key) const override {
    return {"Authorization", "Bearer " + key};
  }

  HttpRequest Submit(const GenerationRequest& request) const override {
    Json parameters = {{"n", 1}, {"prompt_extend", false}, {"watermark", false}};
    if (const auto wh = ParseImageSize(options_.size)) parameters["size"] = fmt::format("{}*{}", wh->first, wh->second);
    if (request.seed) parameters["seed"] = *request.seed;
    const Json body = {{"model", options_.model},
                       {"input", {{"prompt", request.prompt}}},
                       {"parameters", WithParams(std::move(parameters), options_.params, request.seed)}};
    HttpRequest req = JsonPost(BaseUrl(options_) + "/api/v1/services/aigc/text2image/image-synthesis", body);
    req.headers.emplace_back("X-DashScope-Async", "enable");
    return req;
  }

  Attempt<JobAnswer> ReadSubmitted(const Json& answer) const override {
    const auto output = answer.find("output");
    const std::string id = output != answer.end() && output->is_object() ? StringAt(*output, "task_id") : "";
    if (id.empty()) return Malformed("answer without output.task_id", answer);
    return Attempt<JobAnswer>::Ok({false, id, {}});
  }

  std::pair<HttpRequest, bool> Poll(const std::string& job) const override {
    HttpRequest req;
    req.url = BaseUrl(options_) + "/api/v1/tasks/" + job;
    return {req, true};
  }

  Attempt<JobAnswer> ReadPolled(const Json& answer) const override {
    const auto output = answer.find("output");
    if (output == answer.end() || !output->is_object()) return Malformed("answer without output", answer);
    const std::string status = StringAt(*output, "task_status");
    for (const char* pending : kPendingStates)
      if (status == pending) return Attempt<JobAnswer>::Ok({false, "", {}});
    if (status == "SUCCEEDED") {
      JobAnswer ready{true, "", {}};
      std::string refusal;
      const auto results = output->find("results");
      if (results != output->end() && results->is_array())
        for (const Json& r : *results) {
          if (!r.is_object()) continue;
          if (const std::string url = StringAt(r, "url"); !url.empty())
            ready.images.push_back(url);
          else if (StringAt(r, "code") == kRefusalCode)
            refusal = CodeMessage(r);
        }
      if (ready.images.empty() && !refusal.empty()) return Attempt<JobAnswer>::Fail({ErrorKind::kRefused, refusal, {}});
      if (ready.images.empty()) return Malformed("SUCCEEDED without output.results[].url", answer);
      return Attempt<JobAnswer>::Ok(std::move(ready));
    }
    if (StringAt(*output, "code") == kRefusalCode)
      return Attempt<JobAnswer>::Fail({ErrorKind::kRefused, CodeMessage(*output), {}});
    if (status == "FAILED" || status == "CANCELED" || status == "UNKNOWN")
      return Attempt<JobAnswer>::Fail({ErrorKind::kServer, "task " + status + ": " + CodeMessage(*output), {}});
    return Malformed("unknown task_status " + QuoteText(status), answer);
  }

 private:
  const ProviderOptions options_;
};

}  // namespace

std::unique_ptr<Provider> MakeDashScopeProvider(const ProviderOptions& options) {
  return std::make_unique<DashScope>(options);
}

}  // namespace visalign::backends
