// Imitations of the synchronous hosted image APIs, which answer in the request: Gemini
// generateContent and the OpenAI-shaped Seedream (BytePlus ModelArk) and GLM-Image (Zhipu)
// (provider_imitation_base.h).
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <mutex>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "benchmarks/violin/provider_imitation_base.h"
#include "visalign/backends/backends.h"
#include "visalign/core/base64.h"
#include "visalign/core/untrusted.h"
#include "visalign/imaging/image.h"

namespace visalign::violin::internal {
namespace {

// ---- Gemini generateContent ---------------------------------------------------------------

const std::set<std::string> kGeminiConfigFields = {
    "responseModalities", "imageConfig",     "temperature",  "topP", "topK", "seed",
    "candidateCount",     "maxOutputTokens", "stopSequences"};
const std::set<std::string> kGeminiRatios = {"1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"};

class GeminiImitation final : public Imitation {
 public:
  using Imitation::Imitation;

  void Install(backends::HttpServer& http) override {
    http.Route("POST", R"(/v1beta/models/([^/:]+):generateContent)",
               [this](const HttpServerRequest& req, HttpServerResponse& res) {
                 Serve(req, res, req.Header("x-goog-api-key"), [&] { Generate(req, res); });
               });
  }

 private:
  void Error(HttpServerResponse& res, int status, const std::string&, const std::string& message) const override {
    const char* name = status == 429   ? "RESOURCE_EXHAUSTED"
                       : status == 401 ? "UNAUTHENTICATED"
                       : status >= 500 ? "INTERNAL"
                                       : "INVALID_ARGUMENT";
    res.SetJson(status, {{"error", {{"code", status}, {"message", message}, {"status", name}}}});
  }

  void Generate(const HttpServerRequest& req, HttpServerResponse& res) {
    const auto body = ObjectBody(req);
    std::string prompt;
    if (body && body->contains("contents") && (*body)["contents"].is_array())
      for (const auto& content : (*body)["contents"])
        if (content.is_object() && content.contains("parts") && content["parts"].is_array())
          for (const auto& part : content["parts"])
            if (part.is_object() && part.contains("text") && part["text"].is_string())
              prompt += part["text"].get<std::string>();
    if (prompt.empty()) return Error(res, 400, "", "* GenerateContentRequest.contents: contents is not specified");
    const Json config = body->value("generationConfig", Json::object());
    for (const auto& [key, value] : config.items())
      if (!kGeminiConfigFields.count(key))
        return Error(res, 400, "",
                     fmt::format("Invalid JSON payload received. Unknown name \"{}\" at 'generation_config': "
                                 "Cannot find field.",
                                 EscapeControlBytes(key, kQuoteLimit)));
    const Json modalities = config.value("responseModalities", Json::array());
    if (std::find(modalities.begin(), modalities.end(), "IMAGE") == modalities.end())
      return Error(res, 400, "",
                   "this imitation answers images only: generationConfig.responseModalities needs \"IMAGE\"");
    int w = options_.default_size, h = options_.default_size;
    const Json image_config = config.value("imageConfig", Json::object());
    if (image_config.contains("aspectRatio")) {
      const std::string ratio =
          image_config["aspectRatio"].is_string() ? image_config["aspectRatio"].get<std::string>() : "";
      int rw = 0, rh = 0;
      if (!kGeminiRatios.count(ratio) || std::sscanf(ratio.c_str(), "%d:%d", &rw, &rh) != 2)
        return Error(res, 400, "",
                     "* GenerateContentRequest.generation_config.image_config.aspect_ratio: unsupported "
                     "aspect ratio " +
                         QuoteJson(image_config["aspectRatio"]));
      h = std::max(1, static_cast<int>(std::lround(static_cast<double>(w) * rh / rw)));
    }
    if (Moderated(prompt)) {
      hooks_.count_prompt(prompt, false);
      return res.SetJson(200, {{"promptFeedback", {{"blockReason", "PROHIBITED_CONTENT"}}},
                               {"usageMetadata", {{"promptTokenCount", 8}, {"totalTokenCount", 8}}}});
    }
    hooks_.count_prompt(prompt, false);
    auto png = hooks_.render(prompt, w, h);
    if (!png.ok()) return Error(res, 400, "", png.status().what());
    hooks_.count_prompt(prompt, true);
    res.SetJson(200, {{"candidates",
                       {{{"content",
                          {{"role", "model"},
                           {"parts", {{{"inlineData", {{"mimeType", "image/png"}, {"data", EncodeBase64(*png)}}}}}}}},
                         {"finishReason", "STOP"},
                         {"index", 0}}}},
                      {"modelVersion", req.matches[1]}});
  }
};

// ---- OpenAI-shaped providers: Seedream (BytePlus ModelArk), GLM-Image (Zhipu) ----------------

// What differs between the two OpenAI-shaped imitations.
struct OpenAiShape {
  const char* path;              // the images route
  std::set<std::string> fields;  // the documented request fields; others are refused
  const char* watermark_field;   // on by default: a visible watermark unless set to false
  const char* default_format;    // response_format when absent ("" if the API has none: URLs)
  const char* refusal_code;      // the content filter's error code
  const char* refusal_message;
  const char* invalid_code;  // an invalid parameter's error code
  const char* rate_code;     // 429's, 401's and 5xx's error codes
  const char* auth_code;
  const char* server_code;
  bool typed_errors;  // errors carry "param" and "type" (ModelArk)
};

const OpenAiShape kSeedream = {
    "/api/v3/images/generations",
    {"model", "prompt", "n", "size", "seed", "response_format", "watermark", "guidance_scale",
     "sequential_image_generation", "stream", "optimize_prompt_options", "image"},
    "watermark",
    "url",
    "InputTextSensitiveContentDetected",
    "The request failed because the input text may contain sensitive information.",
    "InvalidParameter",
    "RateLimitExceeded.EndpointRPMExceeded",
    "AuthenticationError",
    "InternalServiceError",
    true};
const OpenAiShape kGlmImage = {
    "/api/paas/v4/images/generations",
    {"model", "prompt", "n", "size", "quality", "user_id", "watermark_enabled"},
    "watermark_enabled",
    "",
    "1301",
    "系统检测到输入或生成内容可能包含不安全或敏感内容，请您避免输入易产生敏感内容的提示语，感谢您的配合。",
    "1214",
    "1302",
    "1000",
    "500",
    false};

class OpenAiShapeImitation final : public Imitation {
 public:
  OpenAiShapeImitation(const ReferenceServerOptions& options, ImitationHooks hooks, const OpenAiShape& shape)
      : Imitation(options, std::move(hooks)), shape_(shape) {}

  void Install(backends::HttpServer& http) override {
    http.Route("POST", shape_.path, [this](const HttpServerRequest& req, HttpServerResponse& res) {
      Serve(req, res, Bearer(req), [&] { Generate(req, res); });
    });
    InstallResults(http);
  }

 private:
  void Error(HttpServerResponse& res, int status, const std::string& code, const std::string& message) const override {
    const std::string name = status == 429   ? shape_.rate_code
                             : status == 401 ? shape_.auth_code
                             : status >= 500 ? shape_.server_code
                                             : code;
    Json e = {{"code", name}, {"message", message}};
    if (shape_.typed_errors) {
      e["param"] = "";
      e["type"] = status >= 500 ? "InternalServerError" : "BadRequest";
    }
    res.SetJson(status, {{"error", e}});
  }

  void Generate(const HttpServerRequest& req, HttpServerResponse& res) {
    const auto body = ObjectBody(req);
    if (!body || !body->contains("prompt") || !(*body)["prompt"].is_string())
      return Error(res, 400, shape_.invalid_code, "prompt is required");
    for (const auto& [key, value] : body->items())
      if (!shape_.fields.count(key))
        return Error(res, 400, shape_.invalid_code,
                     fmt::format("The parameter `{}` specified in the request is not valid: unknown field.",
                                 EscapeControlBytes(key, kQuoteLimit)));
    if (IntIn(*body, "n", 1, 1, 1) == std::nullopt) return Error(res, 400, shape_.invalid_code, "n must be 1");
    int w = options_.default_size, h = options_.default_size;
    if (body->contains("size")) {
      const std::string size = (*body)["size"].is_string() ? (*body)["size"].get<std::string>() : "";
      if (std::sscanf(size.c_str(), "%dx%d", &w, &h) != 2 || w < 1 || h < 1 || w > kMaxSide || h > kMaxSide)
        return Error(res, 400, shape_.invalid_code, "size must be \"WxH\"");
    }
    const std::string format = body->value("response_format", std::string(shape_.default_format));
    if (format != "" && format != "url" && format != "b64_json")
      return Error(res, 400, shape_.invalid_code, "response_format must be url or b64_json");
    const std::string prompt = (*body)["prompt"];
    hooks_.count_prompt(prompt, false);
    if (Moderated(prompt)) return Error(res, 400, shape_.refusal_code, shape_.refusal_message);
    auto png = hooks_.render(prompt, w, h);
    if (!png.ok()) return Error(res, 400, shape_.invalid_code, png.status().what());
    if (body->value(shape_.watermark_field, true) != false) {
      auto marked = Watermarked(*png);
      if (!marked.ok()) return Error(res, 500, "", marked.status().what());
      png = std::move(marked);
    }
    Json image;
    if (format == "b64_json") {
      hooks_.count_prompt(prompt, true);
      image["b64_json"] = EncodeBase64(*png);
    } else {
      image["url"] = ResultLink(StoreResult(prompt, std::move(*png)));
    }
    Json answer = {{"created", std::time(nullptr)}, {"data", {image}}};
    if (shape_.typed_errors) {
      answer["model"] = body->value("model", "");
      answer["data"][0]["size"] = fmt::format("{}x{}", w, h);
      answer["usage"] = {{"generated_images", 1}, {"output_tokens", w * h / 256}, {"total_tokens", w * h / 256}};
    } else {
      answer["content_filter"] = {{{"role", "assistant"}, {"level", 3}}};
    }
    res.SetJson(200, answer);
  }

  const OpenAiShape& shape_;
};

}  // namespace

std::unique_ptr<ProviderImitation> MakeSyncImitation(ApiFlavor api, const ReferenceServerOptions& options,
                                                     ImitationHooks hooks) {
  switch (api) {
    case ApiFlavor::kSeedream:
      return std::make_unique<OpenAiShapeImitation>(options, std::move(hooks), kSeedream);
    case ApiFlavor::kGlmImage:
      return std::make_unique<OpenAiShapeImitation>(options, std::move(hooks), kGlmImage);
    default:
      return std::make_unique<GeminiImitation>(options, std::move(hooks));
  }
}

}  // namespace visalign::violin::internal
