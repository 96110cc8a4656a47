// OpenAI-compatible JSON APIs: the client, the images backend and image validation.
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "visalign/backends/backends.h"
#include "visalign/backends/providers.h"
#include "visalign/core/base64.h"
#include "visalign/core/untrusted.h"
#include "visalign/imaging/image.h"

namespace visalign::backends {
namespace {

constexpr std::string_view kPngMagic = "\x89PNG\r\n\x1a\n";
constexpr std::string_view kPngEnd = "IEND\xae\x42\x60\x82";
constexpr std::string_view kSeedPlaceholder = "{seed}";

}  // namespace

Attempt<std::string> ValidateImageBytes(std::string_view bytes, const std::string& source) {
  std::string ext;
  if (bytes.substr(0, kPngMagic.size()) == kPngMagic) {
    ext = "png";
    // A PNG cut short can still decode partially; a complete one ends with its IEND chunk.
    if (bytes.size() < kPngEnd.size() || bytes.substr(bytes.size() - kPngEnd.size()) != kPngEnd)
      return Attempt<std::string>::Fail(
          {ErrorKind::kProtocol,
           fmt::format("{}: truncated PNG ({} bytes, no IEND chunk at the end)", source, bytes.size()),
           {}});
  } else if (bytes.size() >= 3 && static_cast<uint8_t>(bytes[0]) == 0xFF && static_cast<uint8_t>(bytes[1]) == 0xD8 &&
             static_cast<uint8_t>(bytes[2]) == 0xFF) {
    ext = "jpg";
  } else if (bytes.size() >= 12 && bytes.substr(0, 4) == "RIFF" && bytes.substr(8, 4) == "WEBP") {
    ext = "webp";
  } else {
    return Attempt<std::string>::Fail({ErrorKind::kProtocol,
                                       fmt::format("{}: not a PNG, JPEG or WebP image ({} bytes starting {})", source,
                                                   bytes.size(), QuoteText(bytes.substr(0, 16))),
                                       {}});
  }
  auto decoded = imaging::DecodeImage(bytes, source);
  if (!decoded.ok())
    return Attempt<std::string>::Fail({ErrorKind::kProtocol, "undecodable image: " + decoded.status().ToString(), {}});
  return Attempt<std::string>::Ok(ext);
}

Result<std::string> ApiKeyFromEnv(const std::string& var) {
  if (var.empty()) return std::string();
  const char* v = std::getenv(var.c_str());
  if (!v || !*v)
    return Status::InvalidArgument("environment variable " + var + " is not set or empty", "API key variable",
                                   "export " + var + "=<your API key>, or name no variable for servers without keys");
  return std::string(v);
}

OpenAiClient::OpenAiClient(OpenAiEndpoint endpoint, std::shared_ptr<HttpTransport> transport)
    : endpoint_(std::move(endpoint)), transport_(std::move(transport)) {
  while (!endpoint_.base_url.empty() && endpoint_.base_url.back() == '/') endpoint_.base_url.pop_back();
}

std::string OpenAiClient::Url(std::string_view path) const {
  // A base ending in a version segment (/v1, /api/v3, /api/paas/v4) is used as it is.
  const std::string& b = endpoint_.base_url;
  const size_t slash = b.rfind('/');
  const std::string_view last = slash == std::string::npos ? std::string_view() : std::string_view(b).substr(slash + 1);
  const bool has_version =
      last.size() >= 2 && last[0] == 'v' && last.find_first_not_of("0123456789", 1) == std::string_view::npos;
  return b + (has_version ? "/" : "/v1/") + std::string(path);
}

Attempt<Json> OpenAiClient::PostJson(std::string_view path, const Json& body, const std::atomic<bool>* cancel) const {
  HttpRequest req;
  req.method = "POST";
  req.url = Url(path);
  req.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
  if (!endpoint_.api_key.empty()) req.headers.emplace_back("Authorization", "Bearer " + endpoint_.api_key);
  req.body = body.dump();
  auto sent = transport_->Send(req, endpoint_.timeouts, cancel);
  if (!sent.ok()) return Attempt<Json>::Fail(sent.error);
  const HttpResponse& r = *sent.value;
  if (r.status < 200 || r.status >= 300) return Attempt<Json>::Fail(HttpStatusError(r));
  auto j = ParseJson(r.body);
  if (!j.ok() || !j->is_object())
    return Attempt<Json>::Fail(
        {ErrorKind::kProtocol,
         fmt::format("HTTP {} from {} with a malformed JSON body ({}; {} bytes starting {})", r.status, req.url,
                     j.ok() ? "not an object" : j.status().what(), r.body.size(), QuoteText(r.body)),
         {}});
  return Attempt<Json>::Ok(std::move(*j));
}

Attempt<std::string> OpenAiClient::ChatCompletion(const Json& body, const std::atomic<bool>* cancel) const {
  auto j = PostJson("chat/completions", body, cancel);
  if (!j.ok()) return Attempt<std::string>::Fail(j.error);
  const Json& v = *j.value;
  const auto choices = v.find("choices");
  if (choices != v.end() && choices->is_array() && !choices->empty() && (*choices)[0].is_object()) {
    const auto message = (*choices)[0].find("message");
    if (message != (*choices)[0].end() && message->is_object()) {
      const auto content = message->find("content");
      if (content != message->end() && content->is_string())
        return Attempt<std::string>::Ok(content->get<std::string>());
    }
  }
  return Attempt<std::string>::Fail(
      {ErrorKind::kProtocol, "chat completion without choices[0].message.content: " + QuoteJson(v), {}});
}

Attempt<std::string> OpenAiClient::Fetch(const std::string& url, const std::atomic<bool>* cancel) const {
  HttpRequest req;
  req.url = url;
  auto sent = transport_->Send(req, endpoint_.timeouts, cancel);
  if (!sent.ok()) return Attempt<std::string>::Fail(sent.error);
  HttpResponse& r = *sent.value;
  if (r.status < 200 || r.status >= 300) {
    AttemptError e = HttpStatusError(r);
    e.message = "fetching " + QuoteText(url) + ": " + e.message;
    return Attempt<std::string>::Fail(std::move(e));
  }
  return Attempt<std::string>::Ok(std::move(r.body));
}

ImagesApiFamily ImagesApiFamilyOf(std::string_view model) {
  const size_t slash = model.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? model : model.substr(slash + 1);
  if (name.starts_with("gpt-image")) return ImagesApiFamily::kGptImage;
  if (name.starts_with("dall-e")) return ImagesApiFamily::kDallE;
  return ImagesApiFamily::kGeneric;
}

std::string_view ImagesApiFamilyName(ImagesApiFamily family) {
  switch (family) {
    case ImagesApiFamily::kGptImage:
      return "gpt-image";
    case ImagesApiFamily::kDallE:
      return "dall-e";
    case ImagesApiFamily::kGeneric:
      break;
  }
  return "generic";
}

Json ImagesRequestBody(const OpenAiImagesOptions& options, const GenerationRequest& request) {
  Json body = {{"model", options.model}, {"prompt", request.prompt}, {"n", 1}};
  if (!options.size.empty()) body["size"] = options.size;
  if (ImagesApiFamilyOf(options.model) != ImagesApiFamily::kGptImage) body["response_format"] = "b64_json";
  for (const auto& [key, value] : options.params.items()) {
    const bool is_seed = value.is_string() && value.get_ref<const std::string&>() == kSeedPlaceholder;
    if (value.is_null() || (is_seed && !request.seed))
      body.erase(key);
    else if (is_seed)
      body[key] = *request.seed;
    else
      body[key] = value;
  }
  return body;
}

namespace {

class OpenAiImagesBackend final : public GenerationBackend {
 public:
  OpenAiImagesBackend(OpenAiImagesOptions options, std::shared_ptr<HttpTransport> transport)
      : options_(std::move(options)), client_(options_.endpoint, std::move(transport)) {}

  Json Identity() const override {
    Json c = {{"backend", "openai"}, {"model", options_.model}, {"params", options_.params}};
    if (!options_.size.empty()) c["size"] = options_.size;
    return c;
  }

  Json Connection() const override {
    Json c = {{"endpoint", options_.endpoint.base_url},
              {"connect_timeout_ms", options_.endpoint.timeouts.connect.count()},
              {"timeout_ms", options_.endpoint.timeouts.total.count()}};
    if (!options_.api_key_env.empty()) c["api_key_env"] = options_.api_key_env;
    return c;
  }

  Attempt<GeneratedImage> Generate(const GenerationRequest& request, const std::atomic<bool>& cancel) override {
    const Json body = ImagesRequestBody(options_, request);
    auto answer = client_.PostJson("images/generations", body, &cancel);
    if (!answer.ok()) return Attempt<GeneratedImage>::Fail(answer.error);
    const Json& j = *answer.value;
    auto fail = [&](std::string what) {
      return Attempt<GeneratedImage>::Fail({ErrorKind::kProtocol, std::move(what), {}});
    };
    if (!j.contains("data") || !j["data"].is_array() || j["data"].empty() || !j["data"][0].is_object())
      return fail("response has no data[0] (expected {\"data\": [{\"b64_json\": ...}]}): " + QuoteJson(j));
    const Json& d = j["data"][0];
    std::string bytes;
    std::string source;
    if (d.contains("b64_json") && d["b64_json"].is_string()) {
      const std::string& b64 = d["b64_json"].get_ref<const std::string&>();
      auto decoded = DecodeBase64(b64);
      if (!decoded)
        return fail(fmt::format("data[0].b64_json is not valid base64 ({} characters; truncated?)", b64.size()));
      bytes = std::move(*decoded);
      source = "data[0].b64_json";
    } else if (d.contains("url") && d["url"].is_string()) {
      const std::string& url = d["url"].get_ref<const std::string&>();
      source = "data[0].url " + QuoteText(url);
      if (!IsHttpUrl(url)) return fail(source + " is not an http:// or https:// URL");
      auto fetched = client_.Fetch(url, &cancel);
      if (!fetched.ok()) return Attempt<GeneratedImage>::Fail(fetched.error);
      bytes = std::move(*fetched.value);
    } else {
      return fail("data[0] has neither a b64_json nor a url string: " + QuoteJson(d));
    }
    auto ext = ValidateImageBytes(bytes, source);
    if (!ext.ok()) return Attempt<GeneratedImage>::Fail(ext.error);
    return Attempt<GeneratedImage>::Ok({std::move(bytes), *ext.value});
  }

 private:
  OpenAiImagesOptions options_;
  OpenAiClient client_;
};

}  // namespace

Result<std::unique_ptr<GenerationBackend>> MakeOpenAiImagesBackend(OpenAiImagesOptions options,
                                                                   std::shared_ptr<HttpTransport> transport) {
  const std::string& url = options.endpoint.base_url;
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
    return Status::InvalidArgument("endpoint \"" + url + "\" is not an http(s) URL", "endpoint",
                                   "e.g. https://api.openai.com or http://127.0.0.1:8080");
  if (options.model.empty())
    return Status::InvalidArgument("no model name", "model name", "the model to ask, e.g. gpt-image-1");
  if (!options.size.empty()) {
    size_t x = options.size.find('x');
    bool ok = x != std::string::npos && x > 0 && x + 1 < options.size.size() &&
              options.size.find_first_not_of("0123456789x") == std::string::npos &&
              options.size.find('x', x + 1) == std::string::npos;
    if (!ok)
      return Status::InvalidArgument("invalid size \"" + options.size + "\"", "requested image size",
                                     "WxH, e.g. 1024x1024");
  }
  if (!options.params.is_object())
    return Status::InvalidArgument("params must be a JSON object", "request parameters", "key=value pairs");
  for (const char* reserved : {"prompt", "n"})
    if (options.params.contains(reserved))
      return Status::InvalidArgument(std::string("parameter \"") + reserved + "\" is set by visalign",
                                     "request parameters", "other request fields (quality, style, seed, ...)");
  return std::unique_ptr<GenerationBackend>(
      std::make_unique<OpenAiImagesBackend>(std::move(options), std::move(transport)));
}

}  // namespace visalign::backends
