#include "benchmarks/violin/provider_imitation.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <numeric>
#include <ctime>
#include <set>

#include <fmt/format.h>

#include "visalign/backends/backends.h"
#include "visalign/core/untrusted.h"
#include "visalign/imaging/image.h"

namespace visalign::violin {
namespace {
using Clock = std::chrono::steady_clock;
using backends::HttpServerRequest;
using backends::HttpServerResponse;

constexpr int kMaxSide = 4096;
constexpr int kBflSizeStep = 32;  // BFL's width and height are multiples of 32
constexpr const char* kExpiredBody =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code><Message>Request has expired."
    "</Message></Error>";

// One submitted job.
struct Job {
  std::string prompt;
  int width = 0, height = 0;
  std::optional<int64_t> seed;
  Clock::time_point submitted;
  bool moderated = false, fails = false;
  int polls = 0;
};

// What every imitation shares: admission (rate limit, injected failures), jobs, result URLs, keys.
class Imitation : public ProviderImitation {
 public:
  Imitation(const ReferenceServerOptions& options, ImitationHooks hooks)
      : options_(options), hooks_(std::move(hooks)) {}

  nlohmann::json Stats() const override {
    std::lock_guard lock(mu_);
    return {{"submitted", jobs_.size()}, {"polls", polls_}, {"downloads", downloads_}};
  }

 protected:
  // The provider's error body.
  virtual void Error(HttpServerResponse& res, int status, const std::string& code, const std::string& message) const = 0;

  // Runs `handler` as one counted request: answered 429 (with Retry-After) over the rate limit or
  // 500 for an injected failure, or, when the key is checked, 401 without the right `key`.
  template <typename Handler>
  void Serve(const HttpServerRequest& req, HttpServerResponse& res, const std::string& key, Handler handler) {
    const auto t0 = Clock::now();
    bool fail = false;
    const std::optional<double> retry_after = hooks_.admit(&fail);
    if (retry_after) {
      res.headers.emplace_back("Retry-After", std::to_string(static_cast<int>(std::ceil(*retry_after))));
      Error(res, 429, "rate_limited", fmt::format("rate limit of {} requests/s exceeded", options_.rate_limit));
    } else if (fail) {
      Error(res, 500, "internal", "injected failure (--fail-rate)");
    } else if (!options_.api_key.empty() && key != options_.api_key) {
      Error(res, 401, "unauthenticated", key.empty() ? "no API key sent" : "invalid API key");
    } else if (options_.malformed && req.method == "POST") {
      res.SetJson(200, {{"unexpected", "an answer that is not the API's"}});
    } else {
      handler();
    }
    hooks_.count(res.status, t0);
  }

  bool Moderated(const std::string& prompt) const {
    return !options_.moderate.empty() && prompt.find(options_.moderate) != std::string::npos;
  }

  // A new job for `prompt` (counted as its request); its id.
  std::string Submit(const std::string& prompt, int width, int height, std::optional<int64_t> seed) {
    hooks_.count_prompt(prompt, false);
    std::lock_guard lock(mu_);
    const size_t n = jobs_.size();
    const std::string id = fmt::format("{:08x}-7a1e-4c0d-9e5f-{:012x}", n + 1, n * 2654435761u % 0xffffffffffffu);
    Job job{prompt, width, height, seed, Clock::now(), Moderated(prompt), false, 0};
    job.fails = options_.fail_first_job && failed_prompts_.insert(prompt).second;
    jobs_.emplace(id, std::move(job));
    return id;
  }

  // The job `id` after one more poll, or nullopt for an unknown id.
  std::optional<Job> Poll(const std::string& id) {
    std::lock_guard lock(mu_);
    ++polls_;
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return std::nullopt;
    ++it->second.polls;
    return it->second;
  }

  bool Running(const Job& job) const { return Clock::now() - job.submitted < std::chrono::milliseconds(options_.job_ms); }

  // The token of a finished job's image (rendered now; "" kept for an expired one, as
  // --result-urls expire-first says).
  Result<std::string> ResultToken(const Job& job) {
    VISALIGN_ASSIGN_OR_RETURN(std::string png, hooks_.render(job.prompt, job.width, job.height));
    return StoreResult(job.prompt, std::move(png));
  }

  // Keeps `png` (an image for `prompt`) for download; its token.
  std::string StoreResult(const std::string& prompt, std::string png) {
    hooks_.count_prompt(prompt, true);
    std::lock_guard lock(mu_);
    const std::string token = std::to_string(results_.size());
    const bool expired = options_.result_urls == "expire-first" && expired_prompts_.insert(prompt).second;
    results_.emplace(token, expired ? std::string() : std::move(png));
    return token;
  }

  // The download URL of result `token`, as --result-urls says.
  std::string ResultLink(const std::string& token) const {
    if (options_.result_urls == "file") return "file:///etc/passwd";
    return hooks_.url() + "/results/" + token + ".png";
  }

  // The download URL of a finished job's image.
  Result<std::string> ResultUrl(const Job& job) {
    VISALIGN_ASSIGN_OR_RETURN(const std::string token, ResultToken(job));
    return ResultLink(token);
  }

  // Answers a download of result `token` (403 once expired, 404 if unknown). Downloads count as
  // requests and take rate-limit tokens (a 429 over the limit), as the client paces them, but get
  // no injected failures.
  void ServeResult(const std::string& token, HttpServerResponse& res, int unknown_status = 404) {
    const auto t0 = Clock::now();
    bool no_failure = false;
    if (const std::optional<double> retry_after = hooks_.admit(&no_failure)) {
      res.headers.emplace_back("Retry-After", std::to_string(static_cast<int>(std::ceil(*retry_after))));
      res.Set(429, "rate limit exceeded", "text/plain");
    } else {
      std::lock_guard lock(mu_);
      ++downloads_;
      auto it = results_.find(token);
      if (it == results_.end()) res.Set(unknown_status, "no such result", "text/plain");
      else if (it->second.empty()) res.Set(403, kExpiredBody, "application/xml");
      else res.Set(200, it->second, "image/png");
    }
    hooks_.count(res.status, t0);
  }

  void InstallResults(backends::HttpServer& http) {
    http.Route("GET", R"(/results/(\d+)\.png)", [this](const HttpServerRequest& req, HttpServerResponse& res) {
      ServeResult(req.matches[1], res);
    });
  }

  const ReferenceServerOptions options_;
  const ImitationHooks hooks_;

 private:
  mutable std::mutex mu_;
  std::map<std::string, Job> jobs_;
  std::map<std::string, std::string> results_;  // token -> PNG ("" = expired)
  std::set<std::string> failed_prompts_, expired_prompts_;
  uint64_t polls_ = 0, downloads_ = 0;
};

// The bearer token of a request ("" without one).
std::string Bearer(const HttpServerRequest& req) {
  const std::string h = req.Header("Authorization");
  return h.rfind("Bearer ", 0) == 0 ? h.substr(7) : "";
}

// The parsed JSON object body, or nullopt.
std::optional<nlohmann::json> ObjectBody(const HttpServerRequest& req) {
  auto parsed = ParseJson(req.body);
  if (!parsed.ok() || !parsed->is_object()) return std::nullopt;
  return std::move(*parsed);
}

// ---- Gemini generateContent ---------------------------------------------------------------

const std::set<std::string> kGeminiConfigFields = {"responseModalities", "imageConfig", "temperature", "topP", "topK",
                                                   "seed", "candidateCount", "maxOutputTokens", "stopSequences"};
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
    const char* name = status == 429 ? "RESOURCE_EXHAUSTED" : status == 401 ? "UNAUTHENTICATED"
                     : status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT";
    res.SetJson(status, {{"error", {{"code", status}, {"message", message}, {"status", name}}}});
  }

  void Generate(const HttpServerRequest& req, HttpServerResponse& res) {
    const auto body = ObjectBody(req);
    std::string prompt;
    if (body && body->contains("contents") && (*body)["contents"].is_array())
      for (const auto& content : (*body)["contents"])
        if (content.is_object() && content.contains("parts") && content["parts"].is_array())
          for (const auto& part : content["parts"])
            if (part.is_object() && part.contains("text") && part["text"].is_string()) prompt += part["text"].get<std::string>();
    if (prompt.empty()) return Error(res, 400, "", "* GenerateContentRequest.contents: contents is not specified");
    const nlohmann::json config = body->value("generationConfig", nlohmann::json::object());
    for (const auto& [key, value] : config.items())
      if (!kGeminiConfigFields.count(key))
        return Error(res, 400, "", fmt::format("Invalid JSON payload received. Unknown name \"{}\" at 'generation_config': "
                                               "Cannot find field.", EscapeControlBytes(key, kQuoteLimit)));
    const nlohmann::json modalities = config.value("responseModalities", nlohmann::json::array());
    if (std::find(modalities.begin(), modalities.end(), "IMAGE") == modalities.end())
      return Error(res, 400, "", "this imitation answers images only: generationConfig.responseModalities needs \"IMAGE\"");
    int w = options_.default_size, h = options_.default_size;
    const nlohmann::json image_config = config.value("imageConfig", nlohmann::json::object());
    if (image_config.contains("aspectRatio")) {
      const std::string ratio = image_config["aspectRatio"].is_string() ? image_config["aspectRatio"].get<std::string>() : "";
      int rw = 0, rh = 0;
      if (!kGeminiRatios.count(ratio) || std::sscanf(ratio.c_str(), "%d:%d", &rw, &rh) != 2)
        return Error(res, 400, "", "* GenerateContentRequest.generation_config.image_config.aspect_ratio: unsupported "
                                   "aspect ratio " + QuoteJson(image_config["aspectRatio"]));
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
                           {"parts", {{{"inlineData", {{"mimeType", "image/png"}, {"data", backends::EncodeBase64(*png)}}}}}}}},
                         {"finishReason", "STOP"},
                         {"index", 0}}}},
                      {"modelVersion", req.matches[1]}});
  }
};

// ---- Black Forest Labs --------------------------------------------------------------------

class BflImitation final : public Imitation {
 public:
  using Imitation::Imitation;

  void Install(backends::HttpServer& http) override {
    http.Route("POST", R"(/v1/([A-Za-z0-9._-]+))", [this](const HttpServerRequest& req, HttpServerResponse& res) {
      Serve(req, res, req.Header("x-key"), [&] { SubmitJob(req, res); });
    });
    http.Route("GET", "/v1/get_result", [this](const HttpServerRequest& req, HttpServerResponse& res) {
      Serve(req, res, req.Header("x-key"), [&] { PollJob(req.Query("id"), res); });
    });
    InstallResults(http);
  }

 private:
  void Error(HttpServerResponse& res, int status, const std::string&, const std::string& message) const override {
    res.SetJson(status, {{"detail", message}});
  }

  // A 422 as FastAPI writes it.
  static void Invalid(HttpServerResponse& res, const std::string& field, const std::string& message) {
    res.SetJson(422, {{"detail", {{{"type", "value_error"}, {"loc", {"body", field}}, {"msg", message}}}}});
  }

  void SubmitJob(const HttpServerRequest& req, HttpServerResponse& res) {
    const auto body = ObjectBody(req);
    if (!body || !body->contains("prompt") || !(*body)["prompt"].is_string()) return Invalid(res, "prompt", "Field required");
    int side[2] = {options_.default_size, options_.default_size};
    const char* names[2] = {"width", "height"};
    for (int i = 0; i < 2; ++i) {
      if (!body->contains(names[i])) continue;
      const nlohmann::json& v = (*body)[names[i]];
      if (!v.is_number_integer() || v.get<int64_t>() < kBflSizeStep || v.get<int64_t>() > kMaxSide ||
          v.get<int64_t>() % kBflSizeStep != 0)
        return Invalid(res, names[i], fmt::format("Input should be a multiple of {} between {} and {}", kBflSizeStep,
                                                  kBflSizeStep, kMaxSide));
      side[i] = static_cast<int>(v.get<int64_t>());
    }
    const std::string format = body->value("output_format", std::string("jpeg"));
    if (format != "jpeg" && format != "png") return Invalid(res, "output_format", "Input should be 'jpeg' or 'png'");
    std::optional<int64_t> seed;
    if (body->contains("seed")) {
      if (!(*body)["seed"].is_number_integer()) return Invalid(res, "seed", "Input should be a valid integer");
      seed = (*body)["seed"].get<int64_t>();
    }
    const std::string id = Submit((*body)["prompt"], side[0], side[1], seed);
    res.SetJson(200, {{"id", id}, {"polling_url", hooks_.url() + "/v1/get_result?id=" + id}});
  }

  void PollJob(const std::string& id, HttpServerResponse& res) {
    const std::optional<Job> job = Poll(id);
    if (!job) return res.SetJson(200, {{"id", id}, {"status", "Task not found"}});
    if (Running(*job))
      return res.SetJson(200, {{"id", id}, {"status", "Pending"}, {"result", nullptr}, {"progress", 0.5}});
    if (job->moderated)
      return res.SetJson(200, {{"id", id}, {"status", "Request Moderated"},
                               {"details", {{"Moderation Reasons", {"Derivative Works Filter"}}}}});
    if (job->fails) return res.SetJson(200, {{"id", id}, {"status", "Error"}, {"details", "Task failed: internal error"}});
    auto url = ResultUrl(*job);
    if (!url.ok()) return res.SetJson(200, {{"id", id}, {"status", "Error"}, {"details", url.status().what()}});
    res.SetJson(200, {{"id", id},
                      {"status", "Ready"},
                      {"result", {{"sample", *url}, {"prompt", job->prompt}, {"seed", job->seed ? *job->seed : 0}}}});
  }
};

// ---- DashScope ----------------------------------------------------------------------------

class DashScopeImitation final : public Imitation {
 public:
  using Imitation::Imitation;

  void Install(backends::HttpServer& http) override {
    http.Route("POST", "/api/v1/services/aigc/text2image/image-synthesis",
               [this](const HttpServerRequest& req, HttpServerResponse& res) {
                 Serve(req, res, Bearer(req), [&] { SubmitTask(req, res); });
               });
    http.Route("GET", R"(/api/v1/tasks/([A-Za-z0-9-]+))", [this](const HttpServerRequest& req, HttpServerResponse& res) {
      Serve(req, res, Bearer(req), [&] { PollTask(req.matches[1], res); });
    });
    InstallResults(http);
  }

 private:
  void Error(HttpServerResponse& res, int status, const std::string& code, const std::string& message) const override {
    const std::string name = status == 429 ? "Throttling.RateQuota" : status == 401 ? "InvalidApiKey"
                           : status >= 500 ? "InternalError" : code;
    res.SetJson(status, {{"code", name}, {"message", message}, {"request_id", "imitation"}});
  }

  void SubmitTask(const HttpServerRequest& req, HttpServerResponse& res) {
    if (req.Header("X-DashScope-Async") != "enable")
      return Error(res, 403, "AccessDenied", "current user api does not support synchronous calls");
    const auto body = ObjectBody(req);
    const nlohmann::json input = body ? body->value("input", nlohmann::json::object()) : nlohmann::json::object();
    if (!body || !body->contains("model") || !input.contains("prompt") || !input["prompt"].is_string())
      return Error(res, 400, "InvalidParameter", "Field required: model, input.prompt");
    const nlohmann::json parameters = body->value("parameters", nlohmann::json::object());
    int w = options_.default_size, h = options_.default_size;
    if (parameters.contains("size")) {
      const std::string size = parameters["size"].is_string() ? parameters["size"].get<std::string>() : "";
      if (std::sscanf(size.c_str(), "%d*%d", &w, &h) != 2 || w < 1 || h < 1 || w > kMaxSide || h > kMaxSide)
        return Error(res, 400, "InvalidParameter", "size must be \"W*H\", e.g. \"1024*1024\"");
    }
    if (parameters.value("n", 1) != 1) return Error(res, 400, "InvalidParameter", "this imitation makes n = 1 image");
    const std::string prompt = input["prompt"];
    if (Moderated(prompt)) {
      hooks_.count_prompt(prompt, false);
      return Error(res, 400, "DataInspectionFailed", "Input data may contain inappropriate content.");
    }
    std::optional<int64_t> seed;
    if (parameters.contains("seed") && parameters["seed"].is_number_integer()) seed = parameters["seed"].get<int64_t>();
    const std::string id = Submit(prompt, w, h, seed);
    res.SetJson(200, {{"output", {{"task_status", "PENDING"}, {"task_id", id}}}, {"request_id", "imitation"}});
  }

  void PollTask(const std::string& id, HttpServerResponse& res) {
    const std::optional<Job> job = Poll(id);
    auto answer = [&](nlohmann::json output) {
      output["task_id"] = id;
      res.SetJson(200, {{"request_id", "imitation"}, {"output", std::move(output)}});
    };
    if (!job) return answer({{"task_status", "UNKNOWN"}});
    if (Running(*job)) return answer({{"task_status", job->polls == 1 ? "PENDING" : "RUNNING"}});
    if (job->fails)
      return answer({{"task_status", "FAILED"}, {"code", "InternalError.Algo"}, {"message", "Algorithm process error."}});
    auto url = ResultUrl(*job);
    if (!url.ok())
      return answer({{"task_status", "FAILED"}, {"code", "InvalidParameter"}, {"message", url.status().what()}});
    answer({{"task_status", "SUCCEEDED"},
            {"results", {{{"url", *url}}}},
            {"task_metrics", {{"TOTAL", 1}, {"SUCCEEDED", 1}, {"FAILED", 0}}}});
  }
};

// An integer field of `o` within [lo, hi] (`fallback` when absent); nullopt when it is not one.
std::optional<int64_t> IntIn(const nlohmann::json& o, const char* name, int64_t fallback, int64_t lo, int64_t hi) {
  if (!o.contains(name)) return fallback;
  const nlohmann::json& v = o[name];
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) return std::nullopt;
  return v.get<int64_t>();
}

// `png` with the provider's visible watermark: a white label over the bottom-right eighth.
Result<std::string> Watermarked(const std::string& png) {
  VISALIGN_ASSIGN_OR_RETURN(imaging::Image img, imaging::DecodeImage(png, "rendered image"));
  for (int y = img.height - std::max(1, img.height / 8); y < img.height; ++y)
    for (int x = img.width - std::max(1, img.width / 4); x < img.width; ++x) std::fill_n(img.pixel(x, y), 3, 255);
  return imaging::EncodePng(img);
}

// ---- Replicate ----------------------------------------------------------------------------

constexpr const char* kReplicateNsfw = "NSFW content detected. Try running it again, or try a different prompt.";

class ReplicateImitation final : public Imitation {
 public:
  using Imitation::Imitation;

  void Install(backends::HttpServer& http) override {
    http.Route("POST", R"(/v1/models/[A-Za-z0-9._-]+/[A-Za-z0-9._-]+/predictions|/v1/predictions)",
               [this](const HttpServerRequest& req, HttpServerResponse& res) {
                 Serve(req, res, Bearer(req), [&] { Create(req, res); });
               });
    http.Route("GET", R"(/v1/predictions/([A-Za-z0-9-]+))", [this](const HttpServerRequest& req, HttpServerResponse& res) {
      Serve(req, res, Bearer(req), [&] { Get(req.matches[1], res); });
    });
    InstallResults(http);
  }

 private:
  void Error(HttpServerResponse& res, int status, const std::string&, const std::string& message) const override {
    const char* title = status == 429 ? "Too Many Requests" : status == 401 ? "Unauthenticated"
                      : status == 404 ? "Not found" : status >= 500 ? "Internal Server Error" : "Input validation failed";
    res.SetJson(status, {{"title", title}, {"detail", message}, {"status", status}});
  }

  void Create(const HttpServerRequest& req, HttpServerResponse& res) {
    const auto body = ObjectBody(req);
    if (req.path == "/v1/predictions" && (!body || !body->contains("version") || !(*body)["version"].is_string()))
      return Error(res, 422, "", "- version: version is required");
    const nlohmann::json input = body ? body->value("input", nlohmann::json::object()) : nlohmann::json::object();
    if (!input.is_object() || !input.contains("prompt") || !input["prompt"].is_string())
      return Error(res, 422, "", "- input: prompt is required");
    const auto w = IntIn(input, "width", options_.default_size, 1, kMaxSide);
    const auto h = IntIn(input, "height", options_.default_size, 1, kMaxSide);
    if (!w || !h) return Error(res, 422, "", "- input.width, input.height: must be integers between 1 and 4096");
    std::optional<int64_t> seed;
    if (input.contains("seed") && input["seed"].is_number_integer()) seed = input["seed"].get<int64_t>();
    const std::string id = Submit(input["prompt"], static_cast<int>(*w), static_cast<int>(*h), seed);
    // With `Prefer: wait`, a job that is done within the wait is answered finished at once.
    if (options_.job_ms == 0 && req.Header("Prefer").rfind("wait", 0) == 0) return Get(id, res);
    res.SetJson(201, Prediction(id, "starting", nullptr, nullptr));
  }

  nlohmann::json Prediction(const std::string& id, const std::string& status, nlohmann::json output,
                            nlohmann::json error) const {
    return {{"id", id},         {"status", status},
            {"output", output}, {"error", error},
            {"logs", ""},       {"urls", {{"get", hooks_.url() + "/v1/predictions/" + id},
                                          {"cancel", hooks_.url() + "/v1/predictions/" + id + "/cancel"}}}};
  }

  void Get(const std::string& id, HttpServerResponse& res) {
    const std::optional<Job> job = Poll(id);
    if (!job) return Error(res, 404, "", "Not found.");
    if (Running(*job)) return res.SetJson(200, Prediction(id, job->polls == 1 ? "starting" : "processing", nullptr, nullptr));
    if (job->moderated) return res.SetJson(200, Prediction(id, "failed", nullptr, kReplicateNsfw));
    if (job->fails) return res.SetJson(200, Prediction(id, "failed", nullptr, "CUDA error: out of memory"));
    auto url = ResultUrl(*job);
    if (!url.ok()) return res.SetJson(200, Prediction(id, "failed", nullptr, url.status().what()));
    res.SetJson(200, Prediction(id, "succeeded", nlohmann::json::array({*url}), nullptr));
  }
};

// ---- fal queue ----------------------------------------------------------------------------

const std::map<std::string, std::pair<int, int>> kFalSizes = {
    {"square_hd", {1024, 1024}}, {"square", {512, 512}},        {"portrait_4_3", {768, 1024}},
    {"portrait_16_9", {576, 1024}}, {"landscape_4_3", {1024, 768}}, {"landscape_16_9", {1024, 576}}};

class FalImitation final : public Imitation {
 public:
  using Imitation::Imitation;

  void Install(backends::HttpServer& http) override {
    http.Route("GET", R"((/[A-Za-z0-9._-]+/[A-Za-z0-9._-]+)/requests/([A-Za-z0-9-]+)/status)",
               [this](const HttpServerRequest& req, HttpServerResponse& res) {
                 Serve(req, res, FalKey(req), [&] { Status(req.matches[1], req.matches[2], res); });
               });
    http.Route("GET", R"((/[A-Za-z0-9._-]+/[A-Za-z0-9._-]+)/requests/([A-Za-z0-9-]+))",
               [this](const HttpServerRequest& req, HttpServerResponse& res) {
                 Serve(req, res, FalKey(req), [&] { Response(req.matches[2], res); });
               });
    http.Route("POST", R"(/[A-Za-z0-9._-]+/[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*)",
               [this](const HttpServerRequest& req, HttpServerResponse& res) {
                 Serve(req, res, FalKey(req), [&] { Enqueue(req, res); });
               });
    InstallResults(http);
  }

 private:
  static std::string FalKey(const HttpServerRequest& req) {
    const std::string h = req.Header("Authorization");
    return h.rfind("Key ", 0) == 0 ? h.substr(4) : "";
  }

  void Error(HttpServerResponse& res, int status, const std::string&, const std::string& message) const override {
    res.SetJson(status, {{"detail", message}});
  }

  static void Invalid(HttpServerResponse& res, const std::string& field, const std::string& message) {
    res.SetJson(422, {{"detail", {{{"loc", {"body", field}}, {"msg", message}, {"type", "value_error"}}}}});
  }

  // The app of a model id: its first two path segments ("/fal-ai/flux" of "/fal-ai/flux/dev").
  static std::string App(const std::string& path) {
    const size_t second = path.find('/', path.find('/', 1) + 1);
    return path.substr(0, second);
  }

  void Enqueue(const HttpServerRequest& req, HttpServerResponse& res) {
    const auto body = ObjectBody(req);
    if (!body || !body->contains("prompt") || !(*body)["prompt"].is_string()) return Invalid(res, "prompt", "field required");
    std::pair<int, int> size{options_.default_size, options_.default_size};
    if (body->contains("image_size")) {
      const nlohmann::json& s = (*body)["image_size"];
      if (s.is_string() && kFalSizes.count(s.get<std::string>())) {
        size = kFalSizes.at(s.get<std::string>());
      } else {
        const auto w = s.is_object() ? IntIn(s, "width", -1, 1, kMaxSide) : std::nullopt;
        const auto h = s.is_object() ? IntIn(s, "height", -1, 1, kMaxSide) : std::nullopt;
        if (!w || !h || *w < 0 || *h < 0)
          return Invalid(res, "image_size", "an enum (square_hd, square, portrait_4_3, ...) or {width, height}");
        size = {static_cast<int>(*w), static_cast<int>(*h)};
      }
    }
    if (IntIn(*body, "num_images", 1, 1, 1) == std::nullopt) return Invalid(res, "num_images", "this imitation makes 1 image");
    std::optional<int64_t> seed;
    if (body->contains("seed") && (*body)["seed"].is_number_integer()) seed = (*body)["seed"].get<int64_t>();
    const std::string id = Submit((*body)["prompt"], size.first, size.second, seed);
    const std::string base = hooks_.url() + App(req.path) + "/requests/" + id;
    res.SetJson(200, {{"request_id", id}, {"response_url", base}, {"status_url", base + "/status"},
                      {"cancel_url", base + "/cancel"}, {"status", "IN_QUEUE"}, {"queue_position", 0}});
  }

  void Status(const std::string& app, const std::string& id, HttpServerResponse& res) {
    const std::optional<Job> job = Poll(id);
    if (!job) return Error(res, 404, "", "Request not found");
    const std::string response_url = hooks_.url() + app + "/requests/" + id;
    if (Running(*job))
      return res.SetJson(202, {{"status", job->polls == 1 ? "IN_QUEUE" : "IN_PROGRESS"}, {"request_id", id},
                               {"response_url", response_url}, {"queue_position", 0}, {"logs", nullptr}});
    nlohmann::json done = {{"status", "COMPLETED"}, {"request_id", id}, {"response_url", response_url},
                           {"logs", nullptr}, {"metrics", {{"inference_time", 0.05}}}};
    if (job->fails) {
      done["error"] = "Internal server error during inference";
      done["error_type"] = "internal_error";
    }
    res.SetJson(200, done);
  }

  void Response(const std::string& id, HttpServerResponse& res) {
    std::optional<Job> job = Poll(id);
    if (!job) return Error(res, 404, "", "Request not found");
    if (Running(*job)) return Error(res, 400, "", "Request is still in progress");
    auto url = ResultUrl(*job);
    if (!url.ok()) return Error(res, 500, "", url.status().what());
    res.SetJson(200, {{"images", {{{"url", *url}, {"width", job->width}, {"height", job->height},
                                   {"content_type", "image/png"}}}},
                      {"timings", {{"inference", 0.05}}},
                      {"seed", job->seed ? *job->seed : 0},
                      {"has_nsfw_concepts", {job->moderated}},
                      {"prompt", job->prompt}});
  }
};

// ---- AUTOMATIC1111 / Forge ----------------------------------------------------------------

class A1111Imitation final : public Imitation {
 public:
  using Imitation::Imitation;

  void Install(backends::HttpServer& http) override {
    http.Route("POST", "/sdapi/v1/txt2img", [this](const HttpServerRequest& req, HttpServerResponse& res) {
      Serve(req, res, Bearer(req), [&] { Txt2Img(req, res); });
    });
  }

 private:
  void Error(HttpServerResponse& res, int status, const std::string&, const std::string& message) const override {
    if (status >= 500)
      return res.SetJson(status, {{"error", "RuntimeError"}, {"detail", ""}, {"body", ""}, {"errors", message}});
    res.SetJson(status, {{"detail", message}});
  }

  static void Invalid(HttpServerResponse& res, const std::string& field, const std::string& message, const char* type) {
    res.SetJson(422, {{"detail", {{{"loc", {"body", field}}, {"msg", message}, {"type", type}}}}});
  }

  void Txt2Img(const HttpServerRequest& req, HttpServerResponse& res) {
    const auto body = ObjectBody(req);
    if (!body) return Invalid(res, "body", "value is not a valid dict", "type_error.dict");
    if (!body->contains("prompt") || !(*body)["prompt"].is_string())
      return Invalid(res, "prompt", "str type expected", "type_error.str");
    int side[2];
    const char* names[2] = {"width", "height"};
    for (int i = 0; i < 2; ++i) {
      const auto v = IntIn(*body, names[i], options_.default_size, 1, kMaxSide);
      if (!v) return Invalid(res, names[i], "value is not a valid integer", "type_error.integer");
      side[i] = static_cast<int>(*v);
    }
    for (const char* one : {"batch_size", "n_iter"})
      if (IntIn(*body, one, 1, 1, 1) == std::nullopt) return Invalid(res, one, "this imitation makes 1 image", "value_error");
    if (IntIn(*body, "seed", -1, -1, int64_t{1} << 32) == std::nullopt)
      return Invalid(res, "seed", "value is not a valid integer", "type_error.integer");
    const std::string prompt = (*body)["prompt"];
    hooks_.count_prompt(prompt, false);
    auto png = hooks_.render(prompt, side[0], side[1]);
    if (!png.ok()) return Error(res, 500, "", png.status().what());
    hooks_.count_prompt(prompt, true);
    res.SetJson(200, {{"images", {backends::EncodeBase64(*png)}},
                      {"parameters", *body},
                      {"info", nlohmann::json{{"prompt", prompt}, {"width", side[0]}, {"height", side[1]}}.dump()}});
  }
};

// ---- ComfyUI ------------------------------------------------------------------------------

const std::set<std::string> kComfyNodes = {"CheckpointLoaderSimple", "CLIPTextEncode", "EmptyLatentImage", "KSampler",
                                           "VAEDecode",              "SaveImage",      "PreviewImage"};
const std::set<std::string> kComfyCheckpoints = {"sd_xl_base_1.0.safetensors", "v1-5-pruned-emaonly.safetensors",
                                                 "flux1-dev-fp8.safetensors"};

class ComfyUiImitation final : public Imitation {
 public:
  using Imitation::Imitation;

  void Install(backends::HttpServer& http) override {
    http.Route("POST", "/prompt", [this](const HttpServerRequest& req, HttpServerResponse& res) {
      Serve(req, res, Bearer(req), [&] { Queue(req, res); });
    });
    http.Route("GET", R"(/history/([A-Za-z0-9-]+))", [this](const HttpServerRequest& req, HttpServerResponse& res) {
      Serve(req, res, Bearer(req), [&] { History(req.matches[1], res); });
    });
    http.Route("GET", "/view", [this](const HttpServerRequest& req, HttpServerResponse& res) {
      const std::string name = req.Query("filename");
      const bool ours = name.rfind("ComfyUI_", 0) == 0 && name.size() > 13 && name.ends_with("_.png");
      ServeResult(ours && req.Query("type") == "output" ? name.substr(8, name.size() - 13) : "", res);
    });
  }

 private:
  void Error(HttpServerResponse& res, int status, const std::string& type, const std::string& message) const override {
    res.SetJson(status, {{"error", {{"type", type.empty() ? "error" : type}, {"message", message}, {"details", ""},
                                    {"extra_info", nlohmann::json::object()}}},
                         {"node_errors", nlohmann::json::object()}});
  }

  // A validation failure of `node` as ComfyUI reports it (HTTP 400 with node_errors).
  static void NodeError(HttpServerResponse& res, const std::string& node, const std::string& class_type,
                        const std::string& type, const std::string& message, const std::string& details) {
    res.SetJson(400, {{"error", {{"type", "prompt_outputs_failed_validation"}, {"message", "Prompt outputs failed validation"},
                                 {"details", ""}, {"extra_info", nlohmann::json::object()}}},
                      {"node_errors", {{node, {{"errors", {{{"type", type}, {"message", message}, {"details", details},
                                                            {"extra_info", nlohmann::json::object()}}}},
                                               {"dependent_outputs", nlohmann::json::array()},
                                               {"class_type", class_type}}}}}});
  }

  void Queue(const HttpServerRequest& req, HttpServerResponse& res) {
    const auto body = ObjectBody(req);
    if (!body || !body->contains("prompt") || !(*body)["prompt"].is_object())
      return Error(res, 400, "invalid_prompt", "Invalid prompt: no prompt object");
    const nlohmann::json& graph = (*body)["prompt"];
    std::string prompt, sampler;
    int w = options_.default_size, h = options_.default_size;
    std::optional<int64_t> seed;
    bool output = false;
    for (const auto& [id, node] : graph.items()) {
      const std::string type = node.is_object() ? node.value("class_type", std::string()) : "";
      const nlohmann::json inputs = node.is_object() ? node.value("inputs", nlohmann::json::object()) : nlohmann::json();
      if (!kComfyNodes.count(type))
        return Error(res, 400, "invalid_prompt", "Cannot execute because node " + type + " does not exist.");
      output = output || type == "SaveImage" || type == "PreviewImage";
      if (type == "CheckpointLoaderSimple" && !kComfyCheckpoints.count(inputs.value("ckpt_name", std::string())))
        return NodeError(res, id, type, "value_not_in_list", "Value not in list",
                         "ckpt_name: " + QuoteJson(inputs.value("ckpt_name", nlohmann::json())) + " not in " +
                             nlohmann::json(kComfyCheckpoints).dump());
      if (type == "EmptyLatentImage") {
        const auto iw = IntIn(inputs, "width", w, 16, kMaxSide), ih = IntIn(inputs, "height", h, 16, kMaxSide);
        if (!iw || !ih)
          return NodeError(res, id, type, "invalid_input_type", "Failed to convert an input value to a INT value",
                           "width, height: " + QuoteJson(inputs.value("width", nlohmann::json())));
        w = static_cast<int>(*iw);
        h = static_cast<int>(*ih);
      }
      if (type == "KSampler") {
        if (!inputs.contains("seed") || !inputs["seed"].is_number_integer() || inputs["seed"].get<int64_t>() < 0)
          return NodeError(res, id, type, "invalid_input_type", "Failed to convert an input value to a INT value",
                           "seed, " + QuoteJson(inputs.value("seed", nlohmann::json())));
        seed = inputs["seed"].get<int64_t>();
        if (inputs.contains("positive") && inputs["positive"].is_array() && !inputs["positive"].empty())
          sampler = inputs["positive"][0].is_string() ? inputs["positive"][0].get<std::string>() : "";
      }
    }
    if (!output) return Error(res, 400, "prompt_no_outputs", "Prompt has no outputs");
    if (graph.contains(sampler)) prompt = graph[sampler]["inputs"].value("text", std::string());
    if (prompt.empty()) return Error(res, 400, "invalid_prompt", "no CLIPTextEncode text feeds the KSampler's positive input");
    const std::string id = Submit(prompt, w, h, seed);
    res.SetJson(200, {{"prompt_id", id}, {"number", Stats()["submitted"].get<int>() - 1},
                      {"node_errors", nlohmann::json::object()}});
  }

  void History(const std::string& id, HttpServerResponse& res) {
    const std::optional<Job> job = Poll(id);
    if (!job || Running(*job)) return res.SetJson(200, nlohmann::json::object());
    nlohmann::json entry = {{"prompt", nlohmann::json::array()}, {"outputs", nlohmann::json::object()}, {"meta", nlohmann::json::object()}};
    if (job->fails) {
      entry["status"] = {{"status_str", "error"}, {"completed", false},
                         {"messages", {{"execution_start", {{"prompt_id", id}}},
                                       {"execution_error", {{"prompt_id", id}, {"node_id", "3"}, {"node_type", "KSampler"},
                                                            {"exception_message", "CUDA out of memory."},
                                                            {"exception_type", "torch.OutOfMemoryError"}}}}}};
      return res.SetJson(200, {{id, entry}});
    }
    auto token = ResultToken(*job);
    if (!token.ok()) return res.SetJson(500, {{"error", token.status().what()}});
    entry["outputs"] = {{"9", {{"images", {{{"filename", "ComfyUI_" + *token + "_.png"}, {"subfolder", ""}, {"type", "output"}}}}}}};
    entry["status"] = {{"status_str", "success"}, {"completed", true},
                       {"messages", {{"execution_start", {{"prompt_id", id}}}, {"execution_success", {{"prompt_id", id}}}}}};
    res.SetJson(200, {{id, entry}});
  }
};

// ---- OpenAI-shaped providers: Seedream (BytePlus ModelArk), GLM-Image (Zhipu) ----------------

// What differs between the two OpenAI-shaped imitations.
struct OpenAiShape {
  const char* path;                  // the images route
  std::set<std::string> fields;      // the documented request fields; others are refused
  const char* watermark_field;       // on by default: a visible watermark unless set to false
  const char* default_format;        // response_format when absent ("" if the API has none: URLs)
  const char* refusal_code;          // the content filter's error code
  const char* refusal_message;
  const char* invalid_code;          // an invalid parameter's error code
  const char* rate_code;             // 429's, 401's and 5xx's error codes
  const char* auth_code;
  const char* server_code;
  bool typed_errors;                 // errors carry "param" and "type" (ModelArk)
};

const OpenAiShape kSeedream = {"/api/v3/images/generations",
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
const OpenAiShape kGlmImage = {"/api/paas/v4/images/generations",
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
    const std::string name = status == 429 ? shape_.rate_code : status == 401 ? shape_.auth_code
                           : status >= 500 ? shape_.server_code : code;
    nlohmann::json e = {{"code", name}, {"message", message}};
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
    nlohmann::json image;
    if (format == "b64_json") {
      hooks_.count_prompt(prompt, true);
      image["b64_json"] = backends::EncodeBase64(*png);
    } else {
      image["url"] = ResultLink(StoreResult(prompt, std::move(*png)));
    }
    nlohmann::json answer = {{"created", std::time(nullptr)}, {"data", {image}}};
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

std::unique_ptr<ProviderImitation> MakeProviderImitation(ApiFlavor api, const ReferenceServerOptions& options,
                                                         ImitationHooks hooks) {
  switch (api) {
    case ApiFlavor::kGemini: return std::make_unique<GeminiImitation>(options, std::move(hooks));
    case ApiFlavor::kBfl: return std::make_unique<BflImitation>(options, std::move(hooks));
    case ApiFlavor::kReplicate: return std::make_unique<ReplicateImitation>(options, std::move(hooks));
    case ApiFlavor::kFal: return std::make_unique<FalImitation>(options, std::move(hooks));
    case ApiFlavor::kA1111: return std::make_unique<A1111Imitation>(options, std::move(hooks));
    case ApiFlavor::kComfyUi: return std::make_unique<ComfyUiImitation>(options, std::move(hooks));
    case ApiFlavor::kSeedream: return std::make_unique<OpenAiShapeImitation>(options, std::move(hooks), kSeedream);
    case ApiFlavor::kGlmImage: return std::make_unique<OpenAiShapeImitation>(options, std::move(hooks), kGlmImage);
    default: return std::make_unique<DashScopeImitation>(options, std::move(hooks));
  }
}

}  // namespace visalign::violin
