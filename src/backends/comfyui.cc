// ComfyUI: the user's workflow in API format ("Save (API Format)"), with {prompt} {seed} {width}
// {height} substituted, is queued with POST {endpoint}/prompt {prompt, client_id}; GET
// /history/{prompt_id} is {} until it ran, then holds its status and outputs; the first output
// image is downloaded with GET /view?filename=&subfolder=&type=. Validation failures
// (node_errors) and execution errors name the node.
#include <fmt/format.h>

#include "backends/provider.h"
#include "visalign/core/untrusted.h"

namespace visalign::backends {
namespace {

constexpr size_t kReasonChars = 400;
constexpr std::string_view kPrompt = "{prompt}";
constexpr const char* kClientId = "visalign";

// Replaces every occurrence of `from` in `s` by `to`.
std::string ReplaceAll(std::string s, std::string_view from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

bool UsesPlaceholder(const Json& v, std::string_view placeholder, bool exact) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return exact ? s == placeholder : s.find(placeholder) != std::string::npos;
  }
  if (v.is_structured())
    for (const auto& child : v)
      if (UsesPlaceholder(child, placeholder, exact)) return true;
  return false;
}

// "node 6 (CLIPTextEncode): message; ..." of ComfyUI's node_errors object.
std::string NodeErrors(const Json& node_errors) {
  std::string out;
  for (const auto& [node, e] : node_errors.items()) {
    std::string what;
    if (e.is_object() && e.contains("errors") && e["errors"].is_array())
      for (const auto& err : e["errors"]) {
        if (!err.is_object()) continue;
        const std::string details = StringAt(err, "details");
        what += (what.empty() ? "" : "; ") + StringAt(err, "message") + (details.empty() ? "" : ": " + details);
      }
    const std::string type = e.is_object() ? StringAt(e, "class_type") : "";
    out += fmt::format("{}node {}{}: {}", out.empty() ? "" : "; ", node, type.empty() ? "" : " (" + type + ")",
                       what.empty() ? QuoteJson(e, kReasonChars) : what);
  }
  return EscapeControlBytes(out, kReasonChars);
}

class ComfyUi final : public Provider {
 public:
  explicit ComfyUi(const ProviderOptions& o) : options_(o) {}

  std::pair<std::string, std::string> KeyHeader(const std::string& key) const override {
    return {"Authorization", "Bearer " + key};
  }

  HttpRequest Submit(const GenerationRequest& request) const override {
    Json workflow = SubstituteComfyWorkflow(options_.workflow, request.prompt, request.seed, options_.size);
    return JsonPost(
        BaseUrl(options_) + "/prompt",
        {{"prompt", WithParams(std::move(workflow), options_.params, request.seed)}, {"client_id", kClientId}});
  }

  Attempt<JobAnswer> ReadSubmitted(const Json& answer) const override {
    if (const auto e = answer.find("node_errors"); e != answer.end() && e->is_object() && !e->empty())
      return Attempt<JobAnswer>::Fail({ErrorKind::kClient, "ComfyUI rejected the workflow: " + NodeErrors(*e), {}});
    const std::string id = StringAt(answer, "prompt_id");
    if (id.empty()) return Malformed("answer without prompt_id", answer);
    return Attempt<JobAnswer>::Ok({false, id, {}});
  }

  std::pair<HttpRequest, bool> Poll(const std::string& job) const override {
    HttpRequest req;
    req.url = BaseUrl(options_) + "/history/" + UrlEncode(job);
    return {req, true};
  }

  // {} while queued or running; then {prompt_id: {"status": {"status_str", "completed",
  // "messages"}, "outputs": {node: {"images": [{"filename", "subfolder", "type"}]}}}}.
  Attempt<JobAnswer> ReadPolled(const Json& answer) const override {
    if (answer.empty()) return Attempt<JobAnswer>::Ok({false, "", {}});
    const Json& entry = answer.begin().value();
    if (!entry.is_object()) return Malformed("a history entry that is not an object", answer);
    const Json status = entry.value("status", Json::object());
    if (status.is_object() && StringAt(status, "status_str") == "error")
      return Attempt<JobAnswer>::Fail({ErrorKind::kServer, ExecutionError(status), {}});
    if (status.is_object() && status.contains("completed") && status["completed"] == false)
      return Attempt<JobAnswer>::Ok({false, "", {}});
    JobAnswer ready{true, "", {}};
    const Json outputs = entry.value("outputs", Json::object());
    for (const bool saved : {true, false})  // SaveImage's "output" images before previews' "temp" ones
      for (const auto& [node, out] : outputs.items()) {
        if (!out.is_object() || !out.contains("images") || !out["images"].is_array()) continue;
        for (const auto& image : out["images"]) {
          if (!image.is_object() || StringAt(image, "filename").empty() ||
              (StringAt(image, "type") == "output") != saved)
            continue;
          ready.images.push_back(fmt::format(
              "{}/view?filename={}&subfolder={}&type={}", BaseUrl(options_), UrlEncode(StringAt(image, "filename")),
              UrlEncode(StringAt(image, "subfolder")), UrlEncode(StringAt(image, "type"))));
        }
      }
    if (ready.images.empty())
      return Malformed("the workflow finished without an output image (does it end in a SaveImage node?)", answer);
    return Attempt<JobAnswer>::Ok(std::move(ready));
  }

  // A 400 of POST /prompt: {"error": {"type", "message"}, "node_errors": {...}}.
  void ExplainError(const std::string& body, AttemptError& error) const override {
    const auto j = ParseJson(body);
    if (!j.ok() || !j->is_object()) return;
    if (const auto e = j->find("node_errors"); e != j->end() && e->is_object() && !e->empty())
      error.message = "ComfyUI rejected the workflow: " + NodeErrors(*e);
  }

 private:
  // "node 3 (KSampler) failed: RuntimeError: ..." from the execution_error message.
  static std::string ExecutionError(const Json& status) {
    const auto messages = status.find("messages");
    if (messages != status.end() && messages->is_array())
      for (const auto& m : *messages)
        if (m.is_array() && m.size() == 2 && m[0] == "execution_error" && m[1].is_object()) {
          const Json& e = m[1];
          const std::string node =
              e.contains("node_id") ? (e["node_id"].is_string() ? e["node_id"].get<std::string>() : e["node_id"].dump())
                                    : "?";
          return EscapeControlBytes(fmt::format("node {} ({}) failed: {}: {}", node, StringAt(e, "node_type"),
                                                StringAt(e, "exception_type"), StringAt(e, "exception_message")),
                                    kReasonChars);
        }
    return "the workflow failed (status_str \"error\"): " + QuoteJson(status, kReasonChars);
  }

  const ProviderOptions options_;
};

}  // namespace

Status CheckComfyWorkflow(const Json& workflow, const std::string& size) {
  const std::string where = "--workflow";
  if (workflow.is_null())
    return Status::InvalidArgument("--workflow is required with --backend comfyui", where,
                                   "a workflow exported with ComfyUI's \"Save (API Format)\"");
  if (workflow.is_object() && workflow.contains("nodes") && workflow.contains("links"))
    return Status::InvalidArgument("the workflow is in ComfyUI's UI format", where,
                                   "the API format: enable dev mode options and use \"Save (API Format)\"");
  if (!workflow.is_object() || workflow.empty())
    return Status::InvalidArgument("the workflow is not a JSON object of nodes", where,
                                   "{\"3\": {\"class_type\": \"KSampler\", \"inputs\": {...}}, ...}");
  for (const auto& [id, node] : workflow.items())
    if (!node.is_object() || StringAt(node, "class_type").empty() || !node.contains("inputs"))
      return Status::InvalidArgument("node " + QuoteText(id) + " has no class_type and inputs", where,
                                     "a workflow in ComfyUI's API format");
  if (!UsesPlaceholder(workflow, kPrompt, false))
    return Status::InvalidArgument("the workflow has no \"{prompt}\"", where,
                                   "the positive prompt's text input set to \"{prompt}\" (e.g. CLIPTextEncode's text)");
  if (!ParseImageSize(size) &&
      (UsesPlaceholder(workflow, "{width}", false) || UsesPlaceholder(workflow, "{height}", false)))
    return Status::InvalidArgument("the workflow uses {width}/{height} but no --size is given", "--size",
                                   "WxH, e.g. 1024x1024");
  return Status::Ok();
}

Json SubstituteComfyWorkflow(const Json& workflow, const std::string& prompt, std::optional<int64_t> seed,
                             const std::string& size) {
  const auto wh = ParseImageSize(size).value_or(std::pair<int, int>{0, 0});
  const std::pair<std::string_view, Json> numbers[] = {
      {"{seed}", seed.value_or(0)}, {"{width}", wh.first}, {"{height}", wh.second}};
  if (workflow.is_string()) {
    const std::string& s = workflow.get_ref<const std::string&>();
    for (const auto& [placeholder, value] : numbers)
      if (s == placeholder) return value;
    std::string out = s;  // numbers first, so a prompt's own braces stay as they are
    for (const auto& [placeholder, value] : numbers) out = ReplaceAll(std::move(out), placeholder, value.dump());
    return ReplaceAll(std::move(out), kPrompt, prompt);
  }
  Json out = workflow;
  if (out.is_structured())
    for (auto& child : out) child = SubstituteComfyWorkflow(child, prompt, seed, size);
  return out;
}

std::unique_ptr<Provider> MakeComfyUiProvider(const ProviderOptions& options) {
  return std::make_unique<ComfyUi>(options);
}

}  // namespace visalign::backends
