// Imitations of the local image runners: AUTOMATIC1111 / Forge's txt2img and ComfyUI's prompt
// queue and history (provider_imitation_base.h).
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
      if (IntIn(*body, one, 1, 1, 1) == std::nullopt)
        return Invalid(res, one, "this imitation makes 1 image", "value_error");
    if (IntIn(*body, "seed", -1, -1, int64_t{1} << 32) == std::nullopt)
      return Invalid(res, "seed", "value is not a valid integer", "type_error.integer");
    const std::string prompt = (*body)["prompt"];
    hooks_.count_prompt(prompt, false);
    auto png = hooks_.render(prompt, side[0], side[1]);
    if (!png.ok()) return Error(res, 500, "", png.status().what());
    hooks_.count_prompt(prompt, true);
    res.SetJson(200, {{"images", {EncodeBase64(*png)}},
                      {"parameters", *body},
                      {"info", Json{{"prompt", prompt}, {"width", side[0]}, {"height", side[1]}}.dump()}});
  }
};

// ---- ComfyUI ------------------------------------------------------------------------------

const std::set<std::string> kComfyNodes = {"CheckpointLoaderSimple",
                                           "CLIPTextEncode",
                                           "EmptyLatentImage",
                                           "KSampler",
                                           "VAEDecode",
                                           "SaveImage",
                                           "PreviewImage"};
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
    res.SetJson(status, {{"error",
                          {{"type", type.empty() ? "error" : type},
                           {"message", message},
                           {"details", ""},
                           {"extra_info", Json::object()}}},
                         {"node_errors", Json::object()}});
  }

  // A validation failure of `node` as ComfyUI reports it (HTTP 400 with node_errors).
  static void NodeError(HttpServerResponse& res, const std::string& node, const std::string& class_type,
                        const std::string& type, const std::string& message, const std::string& details) {
    res.SetJson(
        400,
        {{"error",
          {{"type", "prompt_outputs_failed_validation"},
           {"message", "Prompt outputs failed validation"},
           {"details", ""},
           {"extra_info", Json::object()}}},
         {"node_errors",
          {{node,
            {{"errors", {{{"type", type}, {"message", message}, {"details", details}, {"extra_info", Json::object()}}}},
             {"dependent_outputs", Json::array()},
             {"class_type", class_type}}}}}});
  }

  void Queue(const HttpServerRequest& req, HttpServerResponse& res) {
    const auto body = ObjectBody(req);
    if (!body || !body->contains("prompt") || !(*body)["prompt"].is_object())
      return Error(res, 400, "invalid_prompt", "Invalid prompt: no prompt object");
    const Json& graph = (*body)["prompt"];
    std::string prompt, sampler;
    int w = options_.default_size, h = options_.default_size;
    std::optional<int64_t> seed;
    bool output = false;
    for (const auto& [id, node] : graph.items()) {
      const std::string type = node.is_object() ? node.value("class_type", std::string()) : "";
      const Json inputs = node.is_object() ? node.value("inputs", Json::object()) : Json();
      if (!kComfyNodes.count(type))
        return Error(res, 400, "invalid_prompt", "Cannot execute because node " + type + " does not exist.");
      output = output || type == "SaveImage" || type == "PreviewImage";
      if (type == "CheckpointLoaderSimple" && !kComfyCheckpoints.count(inputs.value("ckpt_name", std::string())))
        return NodeError(
            res, id, type, "value_not_in_list", "Value not in list",
            "ckpt_name: " + QuoteJson(inputs.value("ckpt_name", Json())) + " not in " + Json(kComfyCheckpoints).dump());
      if (type == "EmptyLatentImage") {
        const auto iw = IntIn(inputs, "width", w, 16, kMaxSide), ih = IntIn(inputs, "height", h, 16, kMaxSide);
        if (!iw || !ih)
          return NodeError(res, id, type, "invalid_input_type", "Failed to convert an input value to a INT value",
                           "width, height: " + QuoteJson(inputs.value("width", Json())));
        w = static_cast<int>(*iw);
        h = static_cast<int>(*ih);
      }
      if (type == "KSampler") {
        if (!inputs.contains("seed") || !inputs["seed"].is_number_integer() || inputs["seed"].get<int64_t>() < 0)
          return NodeError(res, id, type, "invalid_input_type", "Failed to convert an input value to a INT value",
                           "seed, " + QuoteJson(inputs.value("seed", Json())));
        seed = inputs["seed"].get<int64_t>();
        if (inputs.contains("positive") && inputs["positive"].is_array() && !inputs["positive"].empty())
          sampler = inputs["positive"][0].is_string() ? inputs["positive"][0].get<std::string>() : "";
      }
    }
    if (!output) return Error(res, 400, "prompt_no_outputs", "Prompt has no outputs");
    if (graph.contains(sampler)) prompt = graph[sampler]["inputs"].value("text", std::string());
    if (prompt.empty())
      return Error(res, 400, "invalid_prompt", "no CLIPTextEncode text feeds the KSampler's positive input");
    const std::string id = Submit(prompt, w, h, seed);
    res.SetJson(200,
                {{"prompt_id", id}, {"number", Stats()["submitted"].get<int>() - 1}, {"node_errors", Json::object()}});
  }

  void History(const std::string& id, HttpServerResponse& res) {
    const std::optional<Job> job = Poll(id);
    if (!job || Running(*job)) return res.SetJson(200, Json::object());
    Json entry = {{"prompt", Json::array()}, {"outputs", Json::object()}, {"meta", Json::object()}};
    if (job->fails) {
      entry["status"] = {{"status_str", "error"},
                         {"completed", false},
                         {"messages",
                          {{"execution_start", {{"prompt_id", id}}},
                           {"execution_error",
                            {{"prompt_id", id},
                             {"node_id", "3"},
                             {"node_type", "KSampler"},
                             {"exception_message", "CUDA out of memory."},
                             {"exception_type", "torch.OutOfMemoryError"}}}}}};
      return res.SetJson(200, {{id, entry}});
    }
    auto token = ResultToken(*job);
    if (!token.ok()) return res.SetJson(500, {{"error", token.status().what()}});
    entry["outputs"] = {
        {"9", {{"images", {{{"filename", "ComfyUI_" + *token + "_.png"}, {"subfolder", ""}, {"type", "output"}}}}}}};
    entry["status"] = {
        {"status_str", "success"},
        {"completed", true},
        {"messages", {{"execution_start", {{"prompt_id", id}}}, {"execution_success", {{"prompt_id", id}}}}}};
    res.SetJson(200, {{id, entry}});
  }
};

}  // namespace

std::unique_ptr<ProviderImitation> MakeLocalImitation(ApiFlavor api, const ReferenceServerOptions& options,
                                                      ImitationHooks hooks) {
  if (api == ApiFlavor::kComfyUi) return std::make_unique<ComfyUiImitation>(options, std::move(hooks));
  return std::make_unique<A1111Imitation>(options, std::move(hooks));
}

}  // namespace visalign::violin::internal
