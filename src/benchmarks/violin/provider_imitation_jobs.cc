// Imitations of the asynchronous job APIs (submit, poll, download): Black Forest Labs, DashScope,
// Replicate's predictions and fal's queue (provider_imitation_base.h).
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
    if (!body || !body->contains("prompt") || !(*body)["prompt"].is_string())
      return Invalid(res, "prompt", "Field required");
    int side[2] = {options_.default_size, options_.default_size};
    const char* names[2] = {"width", "height"};
    for (int i = 0; i < 2; ++i) {
      if (!body->contains(names[i])) continue;
      const Json& v = (*body)[names[i]];
      if (!v.is_number_integer() || v.get<int64_t>() < kBflSizeStep || v.get<int64_t>() > kMaxSide ||
          v.get<int64_t>() % kBflSizeStep != 0)
        return Invalid(
            res, names[i],
            fmt::format("Input should be a multiple of {} between {} and {}", kBflSizeStep, kBflSizeStep, kMaxSide));
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
      return res.SetJson(200, {{"id", id},
                               {"status", "Request Moderated"},
                               {"details", {{"Moderation Reasons", {"Derivative Works Filter"}}}}});
    if (job->fails)
      return res.SetJson(200, {{"id", id}, {"status", "Error"}, {"details", "Task failed: internal error"}});
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
    http.Route("GET", R"(/api/v1/tasks/([A-Za-z0-9-]+))",
               [this](const HttpServerRequest& req, HttpServerResponse& res) {
                 Serve(req, res, Bearer(req), [&] { PollTask(req.matches[1], res); });
               });
    InstallResults(http);
  }

 private:
  void Error(HttpServerResponse& res, int status, const std::string& code, const std::string& message) const override {
    const std::string name = status == 429   ? "Throttling.RateQuota"
                             : status == 401 ? "InvalidApiKey"
                             : status >= 500 ? "InternalError"
                                             : code;
    res.SetJson(status, {{"code", name}, {"message", message}, {"request_id", "imitation"}});
  }

  void SubmitTask(const HttpServerRequest& req, HttpServerResponse& res) {
    if (req.Header("X-DashScope-Async") != "enable")
      return Error(res, 403, "AccessDenied", "current user api does not support synchronous calls");
    const auto body = ObjectBody(req);
    const Json input = body ? body->value("input", Json::object()) : Json::object();
    if (!body || !body->contains("model") || !input.contains("prompt") || !input["prompt"].is_string())
      return Error(res, 400, "InvalidParameter", "Field required: model, input.prompt");
    const Json parameters = body->value("parameters", Json::object());
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
    auto answer = [&](Json output) {
      output["task_id"] = id;
      res.SetJson(200, {{"request_id", "imitation"}, {"output", std::move(output)}});
    };
    if (!job) return answer({{"task_status", "UNKNOWN"}});
    if (Running(*job)) return answer({{"task_status", job->polls == 1 ? "PENDING" : "RUNNING"}});
    if (job->fails)
      return answer(
          {{"task_status", "FAILED"}, {"code", "InternalError.Algo"}, {"message", "Algorithm process error."}});
    auto url = ResultUrl(*job);
    if (!url.ok())
      return answer({{"task_status", "FAILED"}, {"code", "InvalidParameter"}, {"message", url.status().what()}});
    answer({{"task_status", "SUCCEEDED"},
            {"results", {{{"url", *url}}}},
            {"task_metrics", {{"TOTAL", 1}, {"SUCCEEDED", 1}, {"FAILED", 0}}}});
  }
};

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
    http.Route("GET", R"(/v1/predictions/([A-Za-z0-9-]+))",
               [this](const HttpServerRequest& req, HttpServerResponse& res) {
                 Serve(req, res, Bearer(req), [&] { Get(req.matches[1], res); });
               });
    InstallResults(http);
  }

 private:
  void Error(HttpServerResponse& res, int status, const std::string&, const std::string& message) const override {
    const char* title = status == 429   ? "Too Many Requests"
                        : status == 401 ? "Unauthenticated"
                        : status == 404 ? "Not found"
                        : status >= 500 ? "Internal Server Error"
                                        : "Input validation failed";
    res.SetJson(status, {{"title", title}, {"detail", message}, {"status", status}});
  }

  void Create(const HttpServerRequest& req, HttpServerResponse& res) {
    const auto body = ObjectBody(req);
    if (req.path == "/v1/predictions" && (!body || !body->contains("version") || !(*body)["version"].is_string()))
      return Error(res, 422, "", "- version: version is required");
    const Json input = body ? body->value("input", Json::object()) : Json::object();
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

  Json Prediction(const std::string& id, const std::string& status, Json output, Json error) const {
    return {{"id", id},
            {"status", status},
            {"output", output},
            {"error", error},
            {"logs", ""},
            {"urls",
             {{"get", hooks_.url() + "/v1/predictions/" + id},
              {"cancel", hooks_.url() + "/v1/predictions/" + id + "/cancel"}}}};
  }

  void Get(const std::string& id, HttpServerResponse& res) {
    const std::optional<Job> job = Poll(id);
    if (!job) return Error(res, 404, "", "Not found.");
    if (Running(*job))
      return res.SetJson(200, Prediction(id, job->polls == 1 ? "starting" : "processing", nullptr, nullptr));
    if (job->moderated) return res.SetJson(200, Prediction(id, "failed", nullptr, kReplicateNsfw));
    if (job->fails) return res.SetJson(200, Prediction(id, "failed", nullptr, "CUDA error: out of memory"));
    auto url = ResultUrl(*job);
    if (!url.ok()) return res.SetJson(200, Prediction(id, "failed", nullptr, url.status().what()));
    res.SetJson(200, Prediction(id, "succeeded", Json::array({*url}), nullptr));
  }
};

// ---- fal queue ----------------------------------------------------------------------------

const std::map<std::string, std::pair<int, int>> kFalSizes = {
    {"square_hd", {1024, 1024}},    {"square", {512, 512}},         {"portrait_4_3", {768, 1024}},
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
    if (!body || !body->contains("prompt") || !(*body)["prompt"].is_string())
      return Invalid(res, "prompt", "field required");
    std::pair<int, int> size{options_.default_size, options_.default_size};
    if (body->contains("image_size")) {
      const Json& s = (*body)["image_size"];
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
    if (IntIn(*body, "num_images", 1, 1, 1) == std::nullopt)
      return Invalid(res, "num_images", "this imitation makes 1 image");
    std::optional<int64_t> seed;
    if (body->contains("seed") && (*body)["seed"].is_number_integer()) seed = (*body)["seed"].get<int64_t>();
    const std::string id = Submit((*body)["prompt"], size.first, size.second, seed);
    const std::string base = hooks_.url() + App(req.path) + "/requests/" + id;
    res.SetJson(200, {{"request_id", id},
                      {"response_url", base},
                      {"status_url", base + "/status"},
                      {"cancel_url", base + "/cancel"},
                      {"status", "IN_QUEUE"},
                      {"queue_position", 0}});
  }

  void Status(const std::string& app, const std::string& id, HttpServerResponse& res) {
    const std::optional<Job> job = Poll(id);
    if (!job) return Error(res, 404, "", "Request not found");
    const std::string response_url = hooks_.url() + app + "/requests/" + id;
    if (Running(*job))
      return res.SetJson(202, {{"status", job->polls == 1 ? "IN_QUEUE" : "IN_PROGRESS"},
                               {"request_id", id},
                               {"response_url", response_url},
                               {"queue_position", 0},
                               {"logs", nullptr}});
    Json done = {{"status", "COMPLETED"},
                 {"request_id", id},
                 {"response_url", response_url},
                 {"logs", nullptr},
                 {"metrics", {{"inference_time", 0.05}}}};
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
    res.SetJson(
        200,
        {{"images", {{{"url", *url}, {"width", job->width}, {"height", job->height}, {"content_type", "image/png"}}}},
         {"timings", {{"inference", 0.05}}},
         {"seed", job->seed ? *job->seed : 0},
         {"has_nsfw_concepts", {job->moderated}},
         {"prompt", job->prompt}});
  }
};

}  // namespace

std::unique_ptr<ProviderImitation> MakeJobImitation(ApiFlavor api, const ReferenceServerOptions& options,
                                                    ImitationHooks hooks) {
  switch (api) {
    case ApiFlavor::kBfl:
      return std::make_unique<BflImitation>(options, std::move(hooks));
    case ApiFlavor::kReplicate:
      return std::make_unique<ReplicateImitation>(options, std::move(hooks));
    case ApiFlavor::kFal:
      return std::make_unique<FalImitation>(options, std::move(hooks));
    default:
      return std::make_unique<DashScopeImitation>(options, std::move(hooks));
  }
}

}  // namespace visalign::violin::internal
