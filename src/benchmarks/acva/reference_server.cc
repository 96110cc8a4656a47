// Reference image generator and deterministic judge for tests and demos (see acva_pipeline.h).
#include <array>
#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "visalign/backends/http_server.h"
#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/core/base64.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"
#include "visalign/imaging/image.h"

namespace visalign::acva {
namespace {

constexpr int kImageSize = 64;
constexpr int kCodeStep = 50;       // code pixel channel value per unit
constexpr uint8_t kBiasFlag = 200;  // code pixel blue channel: the judge always picks the first word
constexpr int kVariants = 3;
constexpr size_t kPromptHashBytes = 6;  // drawn into pixels (1, 0) and (2, 0)

// What an image says about itself (drawn into its first pixels).
struct ImageCode {
  int quality = 0;  // index into kRatingLevels
  int variant = 0;  // visual and metaphor variant
  bool bias = false;
  std::array<uint8_t, kPromptHashBytes> prompt_hash{};
};

struct Profile {
  const char* name;
  int quality_even, quality_odd;  // ratings index for even / odd samples
  bool varies;
  bool bias;
};
constexpr std::array<Profile, 3> kProfiles = {Profile{"varied", 4, 4, true, false}, Profile{"mono", 1, 1, false, true},
                                              Profile{"mixed", 3, 1, true, false}};

constexpr std::array<const char*, kVariants> kMetaphors = {"A single solid square sits in the middle of a plain field.",
                                                           "Horizontal stripes repeat evenly across the whole frame.",
                                                           "A round disc floats alone in the centre of the picture."};

std::array<uint8_t, 32> HashBytes(const std::string& text) {
  const std::string hex = Sha256Hex(text);
  std::array<uint8_t, 32> out{};
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

imaging::Image Render(const std::string& prompt, const ImageCode& code) {
  const auto h = HashBytes(prompt);
  imaging::Image img(kImageSize, kImageSize);
  const int c = kImageSize / 2, r = kImageSize / 4;
  for (int y = 0; y < kImageSize; ++y)
    for (int x = 0; x < kImageSize; ++x) {
      bool fg = false;
      switch (code.variant) {
        case 0:
          fg = std::abs(x - c) < r && std::abs(y - c) < r;
          break;
        case 1:
          fg = (y / 8) % 2 == 1;
          break;
        default:
          fg = (x - c) * (x - c) + (y - c) * (y - c) < r * r;
          break;
      }
      uint8_t* p = img.pixel(x, y);
      for (int ch = 0; ch < 3; ++ch) p[ch] = fg ? static_cast<uint8_t>(255 - h[9 + ch]) : h[6 + ch];
    }
  uint8_t* p0 = img.pixel(0, 0);
  p0[0] = static_cast<uint8_t>(code.quality * kCodeStep);
  p0[1] = static_cast<uint8_t>(code.variant * kCodeStep);
  p0[2] = code.bias ? kBiasFlag : 0;
  for (size_t i = 0; i < kPromptHashBytes; ++i) img.pixel(1 + static_cast<int>(i / 3), 0)[i % 3] = h[i];
  return img;
}

ImageCode ReadCode(const imaging::Image& img) {
  ImageCode code;
  const uint8_t* p0 = img.pixel(0, 0);
  code.quality = std::clamp(static_cast<int>(std::lround(p0[0] / double(kCodeStep))), 0, 4);
  code.variant = std::clamp(static_cast<int>(std::lround(p0[1] / double(kCodeStep))), 0, kVariants - 1);
  code.bias = p0[2] >= kBiasFlag / 2;
  for (size_t i = 0; i < kPromptHashBytes; ++i) code.prompt_hash[i] = img.pixel(1 + static_cast<int>(i / 3), 0)[i % 3];
  return code;
}

bool PromptHashMatches(const ImageCode& code, const std::string& word) {
  const auto h = HashBytes(word);
  return std::equal(code.prompt_hash.begin(), code.prompt_hash.end(), h.begin());
}

// Request bodies are untrusted: an object (null when the body is not a JSON object) read only
// through Member and StringMember, which never throw or index what is missing.
Json ParsedObject(std::string_view body) {
  auto parsed = ParseJson(body);
  return parsed.ok() && parsed->is_object() ? std::move(*parsed) : Json();
}

const Json& Member(const Json& obj, const char* key) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  const auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

void ErrorReply(backends::HttpServerResponse& res, int status, const std::string& message) {
  res.SetJson(status, {{"error", {{"message", message}}}});
}

class Server final : public ReferenceServer {
 public:
  explicit Server(const ReferenceServerOptions& options) : options_(options), http_(HttpOptions(options)) {
    http_.Route(
        "POST", "/v1/images/generations",
        [this](const backends::HttpServerRequest& req, backends::HttpServerResponse& res) { Generate(req, res); });
    http_.Route("POST", "/v1/chat/completions",
                [this](const backends::HttpServerRequest& req, backends::HttpServerResponse& res) { Chat(req, res); });
  }
  ~Server() override { Stop(); }

  Status Listen() { return http_.Start(); }

  int port() const override { return http_.port(); }
  std::string url() const override { return http_.url(); }
  size_t chat_requests() const override { return chat_requests_.load(); }
  size_t image_requests() const override { return image_requests_.load(); }
  void Stop() override { http_.Stop(); }
  void ServeUntil(const std::atomic<bool>& stop) override { http_.ServeUntil(stop); }

 private:
  static backends::HttpServerOptions HttpOptions(const ReferenceServerOptions& options) {
    backends::HttpServerOptions http;
    http.host = options.host;
    http.port = options.port;
    http.port_file = options.port_file;
    return http;
  }

  void Generate(const backends::HttpServerRequest& req, backends::HttpServerResponse& res) {
    ++image_requests_;
    const Json body = ParsedObject(req.body);
    if (!Member(body, "prompt").is_string()) return ErrorReply(res, 400, "body must be JSON with a string \"prompt\"");
    const std::string model = StringMember(body, "model");
    const Profile* profile = nullptr;
    for (const Profile& p : kProfiles)
      if (model == p.name) profile = &p;
    if (!profile) return ErrorReply(res, 400, "unknown model " + QuoteText(model) + ": use varied, mono or mixed");
    const std::string prompt = body["prompt"].get<std::string>();
    int64_t sample = 0;
    if (body.contains("seed") && body["seed"].is_number_integer()) {
      sample = body["seed"].get<int64_t>();
    } else {
      std::lock_guard<std::mutex> lock(mu_);
      sample = counters_[model + "\n" + prompt]++;
    }
    ImageCode code;
    code.quality = sample % 2 == 0 ? profile->quality_even : profile->quality_odd;
    code.variant = profile->varies ? static_cast<int>(sample % kVariants) : 0;
    code.bias = profile->bias;
    auto png = imaging::EncodePng(Render(prompt, code));
    if (!png.ok()) return ErrorReply(res, 500, png.status().ToString());
    res.SetJson(200, {{"created", 0}, {"data", Json::array({{{"b64_json", EncodeBase64(*png)}}})}});
  }

  void Chat(const backends::HttpServerRequest& req, backends::HttpServerResponse& res) {
    ++chat_requests_;
    const Json body = ParsedObject(req.body);
    if (!Member(body, "messages").is_array())
      return ErrorReply(res, 400, "body must be JSON with a \"messages\" array");
    const std::string model = StringMember(body, "model");
    auto has = [&](const char* fault) { return model.find(fault) != std::string::npos; };
    if (has("+slow")) std::this_thread::sleep_for(std::chrono::milliseconds(options_.slow_ms));
    std::string system, text, data_url;
    for (const Json& m : Member(body, "messages")) {
      const std::string role = StringMember(m, "role");
      const Json& content = Member(m, "content");
      if (role == "system" && content.is_string()) system = content.get<std::string>();
      if (role != "user" || !content.is_array()) continue;
      for (const Json& part : content) {
        const std::string type = StringMember(part, "type");
        if (type == "text") text = StringMember(part, "text");
        if (type == "image_url") data_url = StringMember(Member(part, "image_url"), "url");
      }
    }
    const size_t comma = data_url.find(";base64,");
    if (comma == std::string::npos) return ErrorReply(res, 400, "user message needs an image_url data URL");
    auto bytes = DecodeBase64(std::string_view(data_url).substr(comma + 8));
    if (!bytes) return ErrorReply(res, 400, "image data URL is not valid base64");
    auto image = imaging::DecodeImage(*bytes, "image_url");
    if (!image.ok()) return ErrorReply(res, 400, image.status().what());
    const ImageCode code = ReadCode(*image);

    Json answer;
    const bool metaphor = system.find("\"description\"") != std::string::npos;
    if (system.find("\"rating\"") != std::string::npos) {
      answer = {{"rating", kRatingLevels[static_cast<size_t>(code.quality)]},
                {"evidence", "quality code " + std::to_string(code.quality) + " in the corner pixel"}};
    } else if (metaphor) {
      answer = {{"description", kMetaphors[static_cast<size_t>(code.variant)]}};
    } else if (system.find("\"choice\"") != std::string::npos) {
      const size_t one = text.find("\n1. "), two = text.find("\n2. ");
      if (one == std::string::npos || two == std::string::npos)
        return ErrorReply(res, 400, "2AFC text needs lines \"1. <word>\" and \"2. <word>\"");
      const std::string first = text.substr(one + 4, two - one - 4), second = text.substr(two + 4);
      answer = {{"choice", !code.bias && PromptHashMatches(code, second) ? second : first}};
    } else {
      return ErrorReply(res, 400, "system message names none of rating, description, choice");
    }
    std::string content = answer.dump();
    if (has("+refuse") && (!has("+refuse-metaphor") || metaphor))
      content = "I'm sorry, but I can't help with evaluating this image.";
    if (has("+garbage-once")) {
      std::lock_guard<std::mutex> lock(mu_);
      if (seen_.insert(Sha256Hex(req.body)).second) content = "rating: maybe {not json";
    }
    if (has("+fenced"))
      content = "Here is my assessment:\n```json\n" + content + "\n```\nLet me know if you need more.";
    res.SetJson(200, {{"id", "ref"},
                      {"object", "chat.completion"},
                      {"model", model},
                      {"choices", Json::array({{{"index", 0},
                                                {"finish_reason", "stop"},
                                                {"message", {{"role", "assistant"}, {"content", content}}}}})}});
  }

  ReferenceServerOptions options_;
  backends::HttpServer http_;
  std::atomic<size_t> chat_requests_{0}, image_requests_{0};
  std::mutex mu_;
  std::map<std::string, int64_t> counters_;
  std::set<std::string> seen_;
};

}  // namespace

Result<std::unique_ptr<ReferenceServer>> ReferenceServer::Start(const ReferenceServerOptions& options) {
  auto server = std::make_unique<Server>(options);
  VISALIGN_RETURN_IF_ERROR(server->Listen());
  return std::unique_ptr<ReferenceServer>(std::move(server));
}

}  // namespace visalign::acva
