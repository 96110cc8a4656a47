// AUTOMATIC1111's (and Forge's) web UI API: POST {endpoint}/sdapi/v1/txt2img {prompt, seed, width,
// height, override_settings: {sd_model_checkpoint: MODEL}, ...}; synchronous, the images base64 in
// images[] (the first is used).
#include <fmt/format.h>

#include "backends/provider.h"

namespace visalign::backends {
namespace {

constexpr int64_t kRandomSeed = -1;  // A1111's "pick a seed"

class A1111 final : public Provider {
 public:
  explicit A1111(const ProviderOptions& o) : options_(o) {}

  // Behind --api-auth or a gateway: a bearer key.
  std::pair<std::string, std::string> KeyHeader(const std::string& key) const override {
    return {"Authorization", "Bearer " + key};
  }

  HttpRequest Submit(const GenerationRequest& request) const override {
    Json body = {{"prompt", request.prompt}, {"seed", request.seed.value_or(kRandomSeed)},
                 {"batch_size", 1},          {"n_iter", 1},
                 {"send_images", true},      {"save_images", false}};
    if (const auto wh = ParseImageSize(options_.size)) {
      body["width"] = wh->first;
      body["height"] = wh->second;
    }
    body["override_settings"] = {{"sd_model_checkpoint", options_.model}};
    return JsonPost(BaseUrl(options_) + "/sdapi/v1/txt2img",
                    WithParams(std::move(body), options_.params, request.seed));
  }

  Attempt<JobAnswer> ReadSubmitted(const Json& answer) const override {
    const auto images = answer.find("images");
    if (images == answer.end() || !images->is_array() || images->empty() || !(*images)[0].is_string() ||
        (*images)[0].get_ref<const std::string&>().empty())
      return Malformed("answer without images[0] (base64)", answer);
    std::string image = (*images)[0];
    if (image.rfind("data:", 0) != 0) image = "data:image/png;base64," + image;
    return Attempt<JobAnswer>::Ok({true, "", {std::move(image)}});
  }

  std::pair<HttpRequest, bool> Poll(const std::string&) const override { return {HttpRequest{}, false}; }
  Attempt<JobAnswer> ReadPolled(const Json& answer) const override {
    return Malformed("a1111 answers synchronously; nothing to poll", answer);
  }

 private:
  const ProviderOptions options_;
};

}  // namespace

std::unique_ptr<Provider> MakeA1111Provider(const ProviderOptions& options) { return std::make_unique<A1111>(options); }

}  // namespace visalign::backends
