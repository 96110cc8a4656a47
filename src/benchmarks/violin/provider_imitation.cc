#include "benchmarks/violin/provider_imitation.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "visalign/backends/backends.h"
#include "visalign/core/untrusted.h"

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

  // The download URL of a finished job's image (rendered now), as --result-urls says.
  Result<std::string> ResultUrl(const Job& job) {
    VISALIGN_ASSIGN_OR_RETURN(std::string png, hooks_.render(job.prompt, job.width, job.height));
    hooks_.count_prompt(job.prompt, true);
    std::lock_guard lock(mu_);
    const std::string token = std::to_string(results_.size());
    const bool expired = options_.result_urls == "expire-first" && expired_prompts_.insert(job.prompt).second;
    results_.emplace(token, expired ? std::string() : std::move(png));
    if (options_.result_urls == "file") return std::string("file:///etc/passwd");
    return std::string(hooks_.url() + "/results/" + token + ".png");
  }

  void InstallResults(backends::HttpServer& http) {
    http.Route("GET", R"(/results/(\d+)\.png)", [this](const HttpServerRequest& req, HttpServerResponse& res) {
      const auto t0 = Clock::now();
      {
        std::lock_guard lock(mu_);
        ++downloads_;
        auto it = results_.find(req.matches[1]);
        if (it == results_.end()) res.Set(404, "no such result", "text/plain");
        else if (it->second.empty()) res.Set(403, kExpiredBody, "application/xml");
        else res.Set(200, it->second, "image/png");
      }
      hooks_.count(res.status, t0);
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
  static std::string Bearer(const HttpServerRequest& req) {
    const std::string h = req.Header("Authorization");
    return h.rfind("Bearer ", 0) == 0 ? h.substr(7) : "";
  }

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

}  // namespace

std::unique_ptr<ProviderImitation> MakeProviderImitation(ApiFlavor api, const ReferenceServerOptions& options,
                                                         ImitationHooks hooks) {
  switch (api) {
    case ApiFlavor::kGemini: return std::make_unique<GeminiImitation>(options, std::move(hooks));
    case ApiFlavor::kBfl: return std::make_unique<BflImitation>(options, std::move(hooks));
    default: return std::make_unique<DashScopeImitation>(options, std::move(hooks));
  }
}

}  // namespace visalign::violin
