// Google's Gemini generateContent API for image models (Nano Banana: gemini-2.5-flash-image).
// Synchronous: the image comes back inline in candidates[].content.parts[].inlineData.
#include <numeric>

#include <fmt/format.h>

#include "backends/provider.h"
#include "visalign/core/untrusted.h"

namespace visalign::backends {
namespace {

constexpr const char* kAspectRatios[] = {"1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"};
// Finish reasons that mean the model's safety system withheld the image.
constexpr const char* kSafetyFinishReasons[] = {
    "SAFETY", "IMAGE_SAFETY", "PROHIBITED_CONTENT", "IMAGE_PROHIBITED_CONTENT", "BLOCKLIST", "SPII"};
constexpr size_t kReasonChars = 300;

// The object at answer[key] (camelCase) or answer[snake_key], or nullptr.
const Json* ObjectAt(const Json& j, const char* key, const char* snake_key) {
  for (const char* k : {key, snake_key}) {
    const auto it = j.find(k);
    if (it != j.end() && it->is_object()) return &*it;
  }
  return nullptr;
}

class Gemini final : public Provider {
 public:
  explicit Gemini(const ProviderOptions& o) : options_(o), ratio_(GeminiAspectRatio(o.size).value()) {}

  std::pair<std::string, std::string> KeyHeader(const std::string& key) const override {
    return {"x-goog-api-key", key};
  }

  HttpRequest Submit(const GenerationRequest& request) const override {
    Json config = {{"responseModalities", {"IMAGE"}}};
    if (!ratio_.empty()) config["imageConfig"] = {{"aspectRatio", ratio_}};
    const Json body = {{"contents", {{{"role", "user"}, {"parts", {{{"text", request.prompt}}}}}}},
                       {"generationConfig", WithParams(std::move(config), options_.params, request.seed)}};
    return JsonPost(fmt::format("{}/v1beta/models/{}:generateContent", BaseUrl(options_), options_.model), body);
  }

  Attempt<JobAnswer> ReadSubmitted(const Json& answer) const override {
    if (const Json* feedback = ObjectAt(answer, "promptFeedback", "prompt_feedback")) {
      const std::string reason = StringAt(*feedback, "blockReason");
      if (!reason.empty()) {
        const std::string message = StringAt(*feedback, "blockReasonMessage");
        return Refused("prompt blocked: " + reason + (message.empty() ? "" : " (" + message + ")"));
      }
    }
    const auto candidates = answer.find("candidates");
    if (candidates == answer.end() || !candidates->is_array() || candidates->empty() || !(*candidates)[0].is_object())
      return Malformed("answer without candidates[0]", answer);
    const Json& candidate = (*candidates)[0];
    const std::string finish = StringAt(candidate, "finishReason");
    std::string text;
    if (const Json* content = ObjectAt(candidate, "content", "content")) {
      const auto parts = content->find("parts");
      if (parts != content->end() && parts->is_array())
        for (const Json& part : *parts) {
          if (!part.is_object()) continue;
          if (const Json* inline_data = ObjectAt(part, "inlineData", "inline_data")) {
            const std::string data = StringAt(*inline_data, "data");
            std::string mime = StringAt(*inline_data, "mimeType");
            if (mime.empty()) mime = StringAt(*inline_data, "mime_type");
            if (data.empty()) return Malformed("inlineData without data", part);
            return Attempt<JobAnswer>::Ok({true, "", {"data:" + mime + ";base64," + data}});
          }
          text += StringAt(part, "text");
        }
    }
    for (const char* safety : kSafetyFinishReasons)
      if (finish == safety) {
        const std::string message = StringAt(candidate, "finishMessage");
        return Refused("finishReason " + finish + (message.empty() ? "" : " (" + message + ")"));
      }
    // The model answered in words instead of drawing: its answer is the reason.
    if (!text.empty()) return Refused("answered with text and no image: " + text);
    return Malformed(
        fmt::format("candidates[0] has no inlineData part (finishReason {})", finish.empty() ? "none" : finish),
        answer);
  }

  std::pair<HttpRequest, bool> Poll(const std::string&) const override { return {HttpRequest{}, false}; }
  Attempt<JobAnswer> ReadPolled(const Json& answer) const override {
    return Malformed("gemini answers synchronously; nothing to poll", answer);
  }

 private:
  static Attempt<JobAnswer> Refused(const std::string& reason) {
    return Attempt<JobAnswer>::Fail({ErrorKind::kRefused, EscapeControlBytes(reason, kReasonChars), {}});
  }

  const ProviderOptions options_;
  const std::string ratio_;
};

}  // namespace

Result<std::string> GeminiAspectRatio(const std::string& size) {
  if (size.empty()) return std::string();
  const auto wh = ParseImageSize(size);
  if (!wh) return Status::InvalidArgument("invalid size " + QuoteText(size), "--size", "WxH, e.g. 1024x1024");
  const int g = std::gcd(wh->first, wh->second);
  const std::string ratio = fmt::format("{}:{}", wh->first / g, wh->second / g);
  for (const char* offered : kAspectRatios)
    if (ratio == offered) return ratio;
  return Status::InvalidArgument(fmt::format("size {} has aspect ratio {}, which Gemini does not offer", size, ratio),
                                 "--size",
                                 "a size with aspect ratio 1:1, 2:3, 3:2, 3:4, 4:3, 4:5, 5:4, 9:16, 16:9 or 21:9");
}

std::unique_ptr<Provider> MakeGeminiProvider(const ProviderOptions& options) {
  return std::make_unique<Gemini>(options);
}

}  // namespace visalign::backends
