#include "visalign/benchmarks/violin/reference_server.h"

#include "benchmarks/violin/provider_imitation.h"

#include <turbojpeg.h>
#include <webp/encode.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "benchmarks/violin/reference_probes.h"
#include "visalign/backends/backends.h"
#include "visalign/benchmarks/violin/dataset.h"
#include "visalign/benchmarks/violin/probes.h"
#include "visalign/color.h"
#include "visalign/core/base64.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::violin {
namespace {
using Clock = std::chrono::steady_clock;

constexpr int kGradientAmplitude = 32;  // levels added at the image's left/right edges
constexpr int kTextureAmplitude = 16;   // checkerboard levels
constexpr int kTextureCell = 8;         // checkerboard cell, pixels
constexpr int kMaxSide = 4096;
constexpr int kMaxImagesPerRequest = 10;
constexpr int kPngCompression = 1;
constexpr int kJpegQuality = 95;

uint8_t Clamp8(double v) { return static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L)); }

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

color::Srgb8 RotateHue(color::Srgb8 c, double degrees) {
  color::Lch lch = color::LabToLch(color::Srgb8ToLab(c));
  lch.h = std::fmod(lch.h + degrees + 360.0, 360.0);
  return color::ToSrgb8(color::LabToSrgb(color::LchToLab(lch)));
}

void AddToAll(imaging::Image& img, const std::function<double(int x, int y)>& delta) {
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      uint8_t* p = img.pixel(x, y);
      double d = delta(x, y);
      for (int c = 0; c < 3; ++c) p[c] = Clamp8(p[c] + d);
    }
}

// body[name] if it is a string, else `fallback`.
std::string StringField(const Json& body, const char* name, const char* fallback) {
  auto it = body.find(name);
  return it != body.end() && it->is_string() ? it->get<std::string>() : std::string(fallback);
}

// An OpenAI-style error body; `param` and `code` are null unless given.
void SetError(backends::HttpServerResponse& res, int status, const std::string& message, const std::string& param = "",
              const std::string& code = "") {
  auto or_null = [](const std::string& v) { return v.empty() ? Json(nullptr) : Json(v); };
  res.SetJson(status, {{"error",
                        {{"message", message},
                         {"type", "invalid_request_error"},
                         {"param", or_null(param)},
                         {"code", or_null(code)}}}});
}

// A request field a real API accepts, with the values it allows (none listed: any value).
struct FieldRule {
  std::string_view name;
  std::vector<std::string_view> values;
};

// The fields `api` accepts; nullptr: any field.
const std::vector<FieldRule>* AcceptedFields(ApiFlavor api) {
  static const std::vector<FieldRule> kGptImage1 = {{"model", {}},
                                                    {"prompt", {}},
                                                    {"n", {}},
                                                    {"size", {}},
                                                    {"quality", {"low", "medium", "high", "auto"}},
                                                    {"background", {"transparent", "opaque", "auto"}},
                                                    {"output_format", {"png", "jpeg", "webp"}},
                                                    {"output_compression", {}},
                                                    {"moderation", {"low", "auto"}},
                                                    {"user", {}}};
  static const std::vector<FieldRule> kDallE3 = {{"model", {}},
                                                 {"prompt", {}},
                                                 {"n", {}},
                                                 {"size", {}},
                                                 {"quality", {"standard", "hd"}},
                                                 {"style", {"vivid", "natural"}},
                                                 {"response_format", {"url", "b64_json"}},
                                                 {"user", {}}};
  switch (api) {
    case ApiFlavor::kGptImage1:
      return &kGptImage1;
    case ApiFlavor::kDallE3:
      return &kDallE3;
    default:
      break;  // generic, and the providers (their own routes)
  }
  return nullptr;
}

// "'a', 'b', and 'c'", as OpenAI lists supported values.
std::string QuotedList(const std::vector<std::string_view>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += values.size() > 2 ? ", " : " ";
    if (i + 1 == values.size() && i > 0) out += "and ";
    out += fmt::format("'{}'", values[i]);
  }
  return out;
}

// Answers HTTP 400 as the imitated API would when `body` has a field it does not accept or a
// value it does not allow; true if it did.
bool RejectFields(ApiFlavor api, const Json& body, backends::HttpServerResponse& res) {
  const std::vector<FieldRule>* rules = AcceptedFields(api);
  if (!rules) return false;
  for (const auto& [key, value] : body.items()) {
    // Init-capture: clang 14 cannot capture a structured binding.
    auto rule =
        std::find_if(rules->begin(), rules->end(), [&name = key](const FieldRule& r) { return r.name == name; });
    if (rule == rules->end()) {
      SetError(res, 400, fmt::format("Unknown parameter: '{}'.", EscapeControlBytes(key, kQuoteLimit)), key,
               "unknown_parameter");
      return true;
    }
    if (rule->values.empty()) continue;
    const std::string text = value.is_string() ? value.get<std::string>() : QuoteJson(value);
    if (std::find(rule->values.begin(), rule->values.end(), text) == rule->values.end()) {
      SetError(res, 400,
               fmt::format("Invalid value: '{}'. Supported values are: {}.", EscapeControlBytes(text, kQuoteLimit),
                           QuotedList(rule->values)),
               key, "invalid_value");
      return true;
    }
  }
  if (api == ApiFlavor::kDallE3 && body.value("n", Json(1)) != 1) {
    SetError(res, 400, "Invalid 'n': dall-e-3 makes one image per request (n=1).", "n", "invalid_value");
    return true;
  }
  return false;
}

// The image as gpt-image-1's output_format asks: png, jpeg (quality kJpegQuality) or lossless webp.
Result<std::string> EncodeAs(const imaging::Image& img, std::string_view format) {
  if (format == "jpeg") {
    tjhandle tj = tjInitCompress();
    unsigned char* buf = nullptr;
    unsigned long size = 0;
    int rc = tjCompress2(tj, img.rgb.data(), img.width, 0, img.height, TJPF_RGB, &buf, &size, TJSAMP_444, kJpegQuality,
                         TJFLAG_ACCURATEDCT);
    std::string out = rc == 0 ? std::string(reinterpret_cast<const char*>(buf), size) : std::string();
    std::string err = rc == 0 ? std::string() : tjGetErrorStr2(tj);
    tjFree(buf);
    tjDestroy(tj);
    if (rc != 0) return Status::Internal("JPEG encoding failed: " + err);
    return out;
  }
  if (format == "webp") {
    uint8_t* buf = nullptr;
    size_t size = WebPEncodeLosslessRGB(img.rgb.data(), img.width, img.height, img.width * 3, &buf);
    std::string out(reinterpret_cast<const char*>(buf), size);
    WebPFree(buf);
    if (size == 0) return Status::Internal("WebP encoding failed");
    return out;
  }
  return imaging::EncodePng(img, kPngCompression);
}

}  // namespace

Result<ApiFlavor> ParseApiFlavor(std::string_view text) {
  if (text == "generic") return ApiFlavor::kGeneric;
  if (text == "gpt-image-1") return ApiFlavor::kGptImage1;
  if (text == "dall-e-3") return ApiFlavor::kDallE3;
  if (text == "gemini") return ApiFlavor::kGemini;
  if (text == "bfl") return ApiFlavor::kBfl;
  if (text == "dashscope") return ApiFlavor::kDashScope;
  if (text == "replicate") return ApiFlavor::kReplicate;
  if (text == "fal") return ApiFlavor::kFal;
  if (text == "a1111") return ApiFlavor::kA1111;
  if (text == "comfyui") return ApiFlavor::kComfyUi;
  if (text == "seedream") return ApiFlavor::kSeedream;
  if (text == "glm-image") return ApiFlavor::kGlmImage;
  return Status::InvalidArgument("unknown API \"" + std::string(text) + "\"", "API profile",
                                 "generic, gpt-image-1, dall-e-3, gemini, bfl, dashscope, replicate, fal, a1111, "
                                 "comfyui, seedream or glm-image");
}

bool IsProviderFlavor(ApiFlavor api) {
  return api != ApiFlavor::kGeneric && api != ApiFlavor::kGptImage1 && api != ApiFlavor::kDallE3;
}

Result<Profile> ParseProfile(std::string_view text) {
  const std::string expected =
      "exact, noise:SIGMA, gradient, hue-shift:DEG, texture, layout-5050, object, or for probe items split-bias:F, "
      "pull:F, ripples:LEVELS, shape-offset:PX";
  std::string name(text.substr(0, text.find(':')));
  bool has_param = text.find(':') != std::string_view::npos;
  std::string param = has_param ? std::string(text.substr(text.find(':') + 1)) : "";
  Profile p;
  const std::pair<const char*, Profile::Kind> kPlain[] = {{"exact", Profile::Kind::kExact},
                                                          {"gradient", Profile::Kind::kGradient},
                                                          {"texture", Profile::Kind::kTexture},
                                                          {"layout-5050", Profile::Kind::kLayout5050},
                                                          {"object", Profile::Kind::kObject}};
  for (const auto& [n, kind] : kPlain)
    if (name == n) {
      if (has_param)
        return Status::InvalidArgument("profile \"" + std::string(text) + "\" takes no parameter",
                                       "degradation profile", expected);
      p.kind = kind;
      return p;
    }
  if (auto probe = ParseProbeProfile(name); probe) {
    if (!has_param)
      return Status::InvalidArgument("profile \"" + name + "\" needs a parameter", "degradation profile", expected);
    VISALIGN_ASSIGN_OR_RETURN(p.param, ParseDouble(param, "--profile " + std::string(text)));
    p.kind = *probe;
    VISALIGN_RETURN_IF_ERROR(CheckProbeProfile(p, std::string(text)));
    return p;
  }
  if (name == "noise" || name == "hue-shift") {
    if (!has_param)
      return Status::InvalidArgument("profile \"" + name + "\" needs a parameter", "degradation profile", expected);
    VISALIGN_ASSIGN_OR_RETURN(p.param, ParseDouble(param, "--profile " + std::string(text)));
    p.kind = name == "noise" ? Profile::Kind::kNoise : Profile::Kind::kHueShift;
    if (p.kind == Profile::Kind::kNoise && p.param < 0)
      return Status::InvalidArgument("noise sigma " + param + " is negative", "degradation profile",
                                     "noise:SIGMA with SIGMA >= 0");
    return p;
  }
  return Status::InvalidArgument("unknown profile \"" + std::string(text) + "\"", "degradation profile", expected);
}

imaging::Image RenderDegraded(const ManifestItem& item, int width, int height, const Profile& profile, uint64_t seed) {
  if (item.probe && IsProbeProfile(profile)) return RenderProbe(item, width, height, ProbeDistortionOf(profile));
  ManifestItem shown = item;
  if (profile.kind == Profile::Kind::kHueShift)
    for (color::Srgb8& t : shown.targets) t = RotateHue(t, profile.param);
  if (profile.kind == Profile::Kind::kLayout5050) {
    switch (item.layout) {
      case Layout::kSingle:
        break;
      case Layout::kH2:
        shown.layout = Layout::kV2;
        break;
      case Layout::kV2:
        shown.layout = Layout::kH2;
        break;
      case Layout::kQ4:
        shown.layout = Layout::kV2;
        shown.targets.resize(2);
        break;
    }
  }
  imaging::Image img = RenderGroundTruth(shown, width, height);
  switch (profile.kind) {
    case Profile::Kind::kNoise: {
      std::mt19937_64 rng(Fnv1a(item.prompt) ^ seed);
      std::normal_distribution<double> n(0.0, profile.param);
      for (uint8_t& v : img.rgb) v = Clamp8(v + n(rng));
      break;
    }
    case Profile::Kind::kGradient:
      AddToAll(img, [&](int x, int) {
        return width > 1 ? -kGradientAmplitude + 2.0 * kGradientAmplitude * x / (width - 1) : 0.0;
      });
      break;
    case Profile::Kind::kTexture:
      AddToAll(img, [](int x, int y) {
        return ((x / kTextureCell + y / kTextureCell) % 2 == 0) ? kTextureAmplitude : -kTextureAmplitude;
      });
      break;
    case Profile::Kind::kObject: {
      const double r = std::min(width, height) / 4.0, cx = (width - 1) / 2.0, cy = (height - 1) / 2.0;
      const uint8_t* center = img.pixel(width / 2, height / 2);
      const uint8_t fill[3] = {static_cast<uint8_t>(255 - center[0]), static_cast<uint8_t>(255 - center[1]),
                               static_cast<uint8_t>(255 - center[2])};
      for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
          if ((x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r) std::copy(fill, fill + 3, img.pixel(x, y));
      break;
    }
    default:
      break;
  }
  return img;
}

Result<std::unique_ptr<ReferenceServer>> ReferenceServer::Start(const ReferenceServerOptions& options) {
  std::unique_ptr<ReferenceServer> g(new ReferenceServer());
  g->options_ = options;
  VISALIGN_ASSIGN_OR_RETURN(g->profile_, ParseProfile(options.profile));
  VISALIGN_ASSIGN_OR_RETURN(g->api_, ParseApiFlavor(options.api));
  if (options.fail_rate < 0 || options.fail_rate > 1)
    return Status::InvalidArgument(fmt::format("fail rate {}", options.fail_rate), "--fail-rate", "a share in [0, 1]");
  if (options.result_urls != "ok" && options.result_urls != "expire-first" && options.result_urls != "file")
    return Status::InvalidArgument("result URLs " + QuoteText(options.result_urls), "--result-urls",
                                   "ok, expire-first or file");
  if (options.job_ms < 0)
    return Status::InvalidArgument(fmt::format("job time {} ms", options.job_ms), "--job-ms", "a duration >= 0");
  if (options.latency_ms < 0 || options.rate_limit < 0)
    return Status::InvalidArgument("negative latency or rate limit", "--latency-ms/--rate-limit", "values >= 0");
  VISALIGN_ASSIGN_OR_RETURN(std::vector<ManifestItem> items, LoadManifest(options.dataset));
  for (auto& it : items) g->by_prompt_.emplace(it.prompt, std::move(it));
  g->rng_state_ = options.seed;
  g->tokens_ = options.rate_limit;
  g->last_refill_ = Clock::now();
  backends::HttpServerOptions http;
  http.host = options.host;
  http.port = options.port;
  http.port_file = options.port_file;
  http.threads = options.threads;
  g->http_ = std::make_unique<backends::HttpServer>(http);
  g->Install();
  VISALIGN_RETURN_IF_ERROR(g->http_->Start());
  return g;
}

ReferenceServer::~ReferenceServer() { Stop(); }

void ReferenceServer::Stop() {
  if (http_) http_->Stop();
}

Json ReferenceServer::Stats() const {
  Json stats;
  {
    std::lock_guard lock(mu_);
    Json by_status = Json::object();
    for (const auto& [s, n] : by_status_) by_status[std::to_string(s)] = n;
    stats = {{"requests", requests_},
             {"by_status", by_status},
             {"requests_by_prompt", requests_by_prompt_},
             {"images_by_prompt", images_by_prompt_},
             {"handler_ms", handler_ms_}};
  }
  if (imitation_) stats["jobs"] = imitation_->Stats();
  return stats;
}

void ReferenceServer::Install() {
  http_->Route("GET", "/stats", [this](const backends::HttpServerRequest&, backends::HttpServerResponse& res) {
    res.SetJson(200, Stats());
  });
  http_->Route("GET", R"(/images/(\d+)\.png)",
               [this](const backends::HttpServerRequest& req, backends::HttpServerResponse& res) {
                 std::lock_guard lock(mu_);
                 auto it = url_images_.find(req.matches[1]);
                 if (it == url_images_.end()) return SetError(res, 404, "no such image (each URL is served once)");
                 res.Set(200, it->second, "image/png");
                 url_images_.erase(it);
               });
  http_->Route(
      "POST", "/v1/images/generations",
      [this](const backends::HttpServerRequest& req, backends::HttpServerResponse& res) { Generate(req, res); });
  if (IsProviderFlavor(api_)) {
    ImitationHooks hooks;
    hooks.admit = [this](bool* fail) { return Admit(fail); };
    hooks.count = [this](int status, Clock::time_point t0) { Count(status, t0); };
    hooks.count_prompt = [this](const std::string& prompt, bool image) { CountPrompt(prompt, image); };
    hooks.render = [this](const std::string& prompt, int w, int h) { return RenderPng(prompt, w, h); };
    hooks.url = [this] { return url(); };
    imitation_ = MakeProviderImitation(api_, options_, std::move(hooks));
    imitation_->Install(*http_);
  }
}

std::optional<double> ReferenceServer::Admit(bool* fail) {
  std::lock_guard lock(mu_);
  ++requests_;
  std::optional<double> retry_after_s;
  if (options_.rate_limit > 0) {
    auto now = Clock::now();
    tokens_ = std::min(options_.rate_limit,
                       tokens_ + std::chrono::duration<double>(now - last_refill_).count() * options_.rate_limit);
    last_refill_ = now;
    if (tokens_ < 1.0)
      retry_after_s = (1.0 - tokens_) / options_.rate_limit;
    else
      tokens_ -= 1.0;
  }
  rng_state_ = rng_state_ * 6364136223846793005ULL + 1442695040888963407ULL;
  *fail = options_.fail_rate > 0 && static_cast<double>(rng_state_ >> 11) * 0x1.0p-53 < options_.fail_rate;
  return retry_after_s;
}

void ReferenceServer::Count(int status, Clock::time_point t0) {
  std::lock_guard lock(mu_);
  ++by_status_[status];
  handler_ms_ += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void ReferenceServer::CountPrompt(const std::string& prompt, bool image) {
  std::lock_guard lock(mu_);
  ++(image ? images_by_prompt_ : requests_by_prompt_)[prompt];
}

Result<std::string> ReferenceServer::RenderPng(const std::string& prompt, int width, int height) const {
  auto item = by_prompt_.find(prompt);
  if (item == by_prompt_.end())
    return Status::NotFound("unknown prompt (not in the dataset's manifest): " + prompt.substr(0, 200));
  return EncodeAs(RenderDegraded(item->second, width, height, profile_, options_.seed), "png");
}

void ReferenceServer::Generate(const backends::HttpServerRequest& req, backends::HttpServerResponse& res) {
  auto t0 = Clock::now();
  bool fail = false;
  const std::optional<double> retry_after_s = Admit(&fail);
  auto parsed = ParseJson(req.body);
  const Json body = parsed.ok() ? std::move(*parsed) : Json();
  auto finish = [&] { Count(res.status, t0); };
  if (!body.is_object() || !body.contains("prompt") || !body["prompt"].is_string()) {
    SetError(res, 400, "the body must be a JSON object with a string \"prompt\"");
    return finish();
  }
  const std::string prompt = body["prompt"];
  CountPrompt(prompt, false);
  if (RejectFields(api_, body, res)) return finish();
  if (!options_.moderate.empty() && prompt.find(options_.moderate) != std::string::npos) {
    SetError(res, 400, "Your request was rejected by the safety system.", "", "moderation_blocked");
    return finish();
  }
  if (retry_after_s) {
    res.headers.emplace_back("Retry-After", std::to_string(static_cast<int>(std::ceil(*retry_after_s))));
    SetError(res, 429, fmt::format("rate limit of {} requests/s exceeded", options_.rate_limit));
    return finish();
  }
  if (options_.latency_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(options_.latency_ms));
  if (fail) {
    SetError(res, 500, "injected failure (--fail-rate)");
    return finish();
  }
  auto item = by_prompt_.find(prompt);
  if (item == by_prompt_.end()) {
    SetError(res, 400, "unknown prompt (not in the dataset's manifest): " + prompt.substr(0, 200));
    return finish();
  }
  int w = options_.default_size, h = options_.default_size;
  if (body.contains("size") && body["size"].is_string()) {
    const std::string size = body["size"];
    if (std::sscanf(size.c_str(), "%dx%d", &w, &h) != 2 || w < 1 || h < 1 || w > kMaxSide || h > kMaxSide) {
      SetError(res, 400, "invalid size \"" + size + "\": expected WxH up to 4096x4096");
      return finish();
    }
  }
  const Json n_field = body.value("n", Json(1));
  const int64_t n = n_field.is_number_integer() ? n_field.get<int64_t>() : 0;
  if (n < 1 || n > kMaxImagesPerRequest) {
    SetError(res, 400, "n must be between 1 and 10");
    return finish();
  }
  const std::string format = StringField(body, "response_format", api_ == ApiFlavor::kDallE3 ? "url" : "b64_json");
  if (format != "b64_json" && format != "url") {
    SetError(res, 400, "response_format must be b64_json or url", "response_format", "invalid_value");
    return finish();
  }
  auto image =
      EncodeAs(RenderDegraded(item->second, w, h, profile_, options_.seed), StringField(body, "output_format", "png"));
  if (!image.ok()) {
    SetError(res, 500, image.status().ToString());
    return finish();
  }
  Json data = Json::array();
  for (int i = 0; i < n; ++i) {
    if (format == "b64_json") {
      data.push_back({{"b64_json", EncodeBase64(*image)}});
    } else {
      std::lock_guard lock(mu_);
      std::string token = std::to_string(next_token_++);
      url_images_[token] = *image;
      data.push_back({{"url", url() + "/images/" + token + ".png"}});
    }
    if (api_ == ApiFlavor::kDallE3) data.back()["revised_prompt"] = prompt;
  }
  CountPrompt(prompt, true);
  res.SetJson(200, {{"created", 0}, {"data", data}});
  finish();
}

}  // namespace visalign::violin
