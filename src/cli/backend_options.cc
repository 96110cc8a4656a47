#include "cli/backend_options.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <unordered_map>

#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/core/untrusted.h"

namespace visalign::cli {

namespace {

constexpr double kMillisPerSecond = 1000.0;

// --param key=value list -> JSON object; values that parse as JSON (numbers, booleans, objects,
// null: remove the field) keep their type, anything else is a string.
Result<Json> ParseParams(const std::vector<std::string>& params) {
  Json out = Json::object();
  for (const std::string& p : params) {
    const size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0)
      return Status::InvalidArgument("parameter \"" + p + "\" is not key=value", "--param",
                                     "e.g. quality=high, seed={seed}, response_format=null");
    const std::string value = p.substr(eq + 1);
    auto v = ParseJson(value);
    out[p.substr(0, eq)] = (!v.ok() || v->is_string()) ? Json(value) : std::move(*v);
  }
  return out;
}

Status RequireOption(const BackendArgs& backend, const std::string& value, const char* option,
                     std::string_view help_command) {
  if (value.empty())
    return Status::InvalidArgument(std::string(option) + " is required with --backend " + backend.name, option,
                                   "see `" + std::string(help_command) + "`");
  return Status::Ok();
}

}  // namespace

backends::Millis MillisFromSeconds(double seconds) {
  return backends::Millis(static_cast<int64_t>(seconds * kMillisPerSecond));
}

const std::vector<std::string>& BackendKinds() {
  static const std::vector<std::string> kKinds = {"openai",    "command",   "directory", "worker", "gemini", "bfl",
                                                  "dashscope", "replicate", "fal",       "a1111",  "comfyui"};
  return kKinds;
}

std::string BackendKindsText() {
  std::string out;
  const auto& kinds = BackendKinds();
  for (size_t i = 0; i < kinds.size(); ++i) out += (i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ") + kinds[i];
  return out;
}

void AddBackendOptions(CLI::App* app, BackendArgs& backend) {
  app->add_option("--endpoint", backend.endpoint,
                  "openai: base URL of an OpenAI-compatible images API; POSTs {endpoint}/v1/images/generations "
                  "(no /v1 added after a version such as /api/v3). Providers: their base URL (default: the public "
                  "one; a1111 http://127.0.0.1:7860, comfyui http://127.0.0.1:8188; docs/backends.md)");
  app->add_option("--model", backend.model,
                  "openai and providers: model name (replicate owner/name[:version], fal e.g. fal-ai/flux/dev; "
                  "a1111, comfyui: a label for the run)");
  app->add_option("--api-key-env", backend.api_key_env,
                  "Environment variable holding the API key (sent in the provider's header, never stored)");
  app->add_option("--size", backend.size, "Image size WxH (default: the provider's)");
  app->add_option("--param", backend.params,
                  "Extra request field key=value (JSON values allowed; {seed} = item seed; KEY=null removes "
                  "a field visalign sends by default, e.g. response_format; providers: merged into their parameters)");
  app->add_option("--job-timeout", backend.job_timeout_s,
                  "Asynchronous providers (bfl, dashscope, replicate, fal, comfyui): seconds a submitted job may take "
                  "before a new one is submitted")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--poll-interval", backend.poll_s,
                  "Asynchronous providers: first wait between polls in seconds (growing 1.5x with jitter)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--max-poll-interval", backend.max_poll_s,
                  "Asynchronous providers: longest wait between polls in seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--cmd", backend.cmd,
                  "command: argv template with {prompt} {out} {out_stem} {seed} {id} {k}; no shell. {out} ends in "
                  ".png; {out_stem} is the same path without extension (write {out_stem}.jpg, .webp ...). worker: "
                  "the program started once per --workers instance, speaking JSON Lines (docs/backends.md)");
  app->add_option("--workflow", backend.workflow,
                  "comfyui: workflow file in ComfyUI's API format with \"{prompt}\" (and \"{seed}\", \"{width}\", "
                  "\"{height}\") string values; its content hash is part of the run's identity");
  app->add_option("--workers", backend.workers,
                  "worker: processes to start (default: one per --gpus entry, else 1); each gets VISALIGN_WORKER_INDEX")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--gpus", backend.gpus, "worker: GPU ids, e.g. 0,1: worker i gets CUDA_VISIBLE_DEVICES=<i-th id>");
  app->add_option("--startup-timeout", backend.startup_timeout_s,
                  "worker: seconds a worker may take to load its model and print its ready line")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

void AddRunControlOptions(CLI::App* app, RunControlArgs& run, BackendArgs& backend, const std::string& limit_what) {
  app->add_option("--concurrency", run.concurrency, "Requests in flight")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--shard", run.shard,
                  "I/N: only the I-th of N static parts of the " + limit_what +
                      " (0-based; for schedulers that split work themselves; workers without it share a run anyway)");
  app->add_option("--rate", run.rate, "Requests per second (token bucket; 0 = unlimited)")->capture_default_str();
  app->add_option("--max-attempts", run.max_attempts, "Attempts per image in this invocation")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--backoff", run.backoff_s, "First retry delay in seconds (doubles per retry, with jitter)")
      ->capture_default_str();
  app->add_option("--max-backoff", run.max_backoff_s, "Longest retry delay in seconds")->capture_default_str();
  app->add_option("--timeout", backend.timeout_s, "Per-request (or per-command) timeout in seconds")
      ->capture_default_str();
  app->add_option("--connect-timeout", backend.connect_timeout_s, "HTTP connect timeout in seconds")
      ->capture_default_str();
  app->add_option("--grace", run.grace_s, "After Ctrl-C, seconds in-flight requests may finish")->capture_default_str();
  app->add_option("--lease", run.lease_s,
                  "Seconds a claimed row stays this worker's between renewals (workers sharing a run take over a "
                  "dead worker's rows after it)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_flag("--retry-failed", run.retry_failed, "Also retry images that failed in earlier invocations");
  app->add_option("--limit", run.limit, "At most N " + limit_what + " (after filtering; 0 = all)")
      ->capture_default_str();
}

void AddViolinFilterOption(CLI::App* app, std::vector<std::string>& filters) {
  app->add_option("--filter", filters,
                  "Subset: key=value[,value...] with keys variation, split, language, ids, notation, layout, "
                  "prompt_split, hue_split1, hue_split2 (repeatable; several keys in one: variation=1,2,split=test)");
}

Result<Filters> ParseFilters(const std::vector<std::string>& filters, const std::vector<std::string>& keys) {
  std::string names;
  for (const std::string& k : keys) names += (names.empty() ? "" : ", ") + k;
  Filters out;
  for (const std::string& f : filters) {
    std::string key;
    size_t start = 0;
    while (start <= f.size()) {
      size_t comma = f.find(',', start);
      std::string tok = f.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      start = comma == std::string::npos ? f.size() + 1 : comma + 1;
      if (tok.empty()) continue;
      size_t eq = tok.find('=');
      if (eq != std::string::npos) {
        key = tok.substr(0, eq);
        tok = tok.substr(eq + 1);
        if (std::find(keys.begin(), keys.end(), key) == keys.end())
          return Status::InvalidArgument("unknown filter key \"" + key + "\"", "--filter " + f, names);
      } else if (key.empty()) {
        return Status::InvalidArgument("filter value \"" + tok + "\" has no key", "--filter " + f, "key=value[,value]");
      }
      out[key].insert(tok);
    }
  }
  return out;
}

Result<std::vector<backends::WorkItem>> ShardOf(std::vector<backends::WorkItem> items, const RunControlArgs& run) {
  if (run.shard.empty()) return items;
  const Status bad = Status::InvalidArgument("--shard " + run.shard, "--shard", "I/N with 0 <= I < N, e.g. 0/4");
  const size_t slash = run.shard.find('/');
  if (slash == std::string::npos) return bad;
  size_t index = 0, count = 0;
  const std::string i_text = run.shard.substr(0, slash), n_text = run.shard.substr(slash + 1);
  auto parse = [](const std::string& text, size_t& value) {
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    return !text.empty() && ec == std::errc() && ptr == end;
  };
  if (!parse(i_text, index) || !parse(n_text, count) || count == 0 || index >= count) return bad;
  std::unordered_map<std::string, size_t> ordinal;
  std::vector<backends::WorkItem> kept;
  for (backends::WorkItem& it : items) {
    const size_t n = ordinal.emplace(it.id, ordinal.size()).first->second;
    if (n % count == index) kept.push_back(std::move(it));
  }
  return kept;
}

backends::RunnerOptions RunnerOptionsFrom(const RunControlArgs& run, bool progress, std::string label) {
  backends::RunnerOptions options;
  options.concurrency = run.concurrency;
  options.rate = run.rate;
  options.retry.max_attempts = run.max_attempts;
  options.retry.initial_backoff = MillisFromSeconds(run.backoff_s);
  options.retry.max_backoff = std::max(MillisFromSeconds(run.max_backoff_s), options.retry.initial_backoff);
  options.retry_failed = run.retry_failed;
  options.grace = MillisFromSeconds(run.grace_s);
  options.lease = MillisFromSeconds(run.lease_s);
  options.progress = progress;
  options.label = std::move(label);
  return options;
}

Result<backends::OpenAiImagesOptions> OpenAiImagesOptionsFrom(const BackendArgs& backend,
                                                              std::string_view help_command) {
  VISALIGN_RETURN_IF_ERROR(RequireOption(backend, backend.endpoint, "--endpoint", help_command));
  VISALIGN_RETURN_IF_ERROR(RequireOption(backend, backend.model, "--model", help_command));
  backends::OpenAiImagesOptions o;
  o.endpoint.base_url = backend.endpoint;
  VISALIGN_ASSIGN_OR_RETURN(o.endpoint.api_key, backends::ApiKeyFromEnv(backend.api_key_env));
  o.endpoint.timeouts = {MillisFromSeconds(backend.connect_timeout_s), MillisFromSeconds(backend.timeout_s)};
  o.model = backend.model;
  o.api_key_env = backend.api_key_env;
  o.size = backend.size;
  VISALIGN_ASSIGN_OR_RETURN(o.params, ParseParams(backend.params));
  return o;
}

Result<backends::ProviderOptions> ProviderOptionsFrom(const BackendArgs& backend) {
  backends::ProviderOptions o;
  o.kind = backend.name;
  o.endpoint = backend.endpoint;
  o.model = backend.model;
  VISALIGN_ASSIGN_OR_RETURN(o.api_key, backends::ApiKeyFromEnv(backend.api_key_env));
  o.api_key_env = backend.api_key_env;
  o.size = backend.size;
  VISALIGN_ASSIGN_OR_RETURN(o.params, ParseParams(backend.params));
  o.timeouts = {MillisFromSeconds(backend.connect_timeout_s), MillisFromSeconds(backend.timeout_s)};
  o.poll.initial = MillisFromSeconds(backend.poll_s);
  o.poll.max = std::max(MillisFromSeconds(backend.max_poll_s), o.poll.initial);
  o.poll.job_timeout = MillisFromSeconds(backend.job_timeout_s);
  if (!backend.workflow.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(backend.workflow));
    auto workflow = ParseJson(text);
    if (!workflow.ok())
      return Status::InvalidArgument(workflow.status().what(), "--workflow " + backend.workflow,
                                     "a JSON workflow in ComfyUI's API format");
    o.workflow = std::move(*workflow);
    o.workflow_sha256 = Sha256Hex(text);
  }
  return o;
}

Result<backends::WorkerOptions> WorkerOptionsFrom(const BackendArgs& backend, std::string_view help_command) {
  VISALIGN_RETURN_IF_ERROR(RequireOption(backend, backend.cmd, "--cmd", help_command));
  backends::WorkerOptions o;
  o.command_template = backend.cmd;
  VISALIGN_ASSIGN_OR_RETURN(o.gpus, backends::ParseGpuList(backend.gpus));
  o.workers = backend.workers > 0 ? backend.workers : std::max<int>(1, static_cast<int>(o.gpus.size()));
  o.size = backend.size;
  VISALIGN_ASSIGN_OR_RETURN(o.params, ParseParams(backend.params));
  o.startup_timeout = MillisFromSeconds(backend.startup_timeout_s);
  o.request_timeout = MillisFromSeconds(backend.timeout_s);
  return o;
}

Result<Json> FirstRequest(const BackendArgs& backend, const backends::WorkItem& item, std::string_view help_command) {
  const backends::GenerationRequest request{item.id, item.prompt, item.k, item.seed};
  if (backends::IsProviderKind(backend.name)) {
    VISALIGN_ASSIGN_OR_RETURN(backends::ProviderOptions o, ProviderOptionsFrom(backend));
    return backends::ProviderFirstRequest(o, request);
  }
  if (backend.name == "worker") {
    VISALIGN_ASSIGN_OR_RETURN(backends::WorkerOptions o, WorkerOptionsFrom(backend, ""));
    return Json{{"method", "JSONL"},
                {"url", "stdin of " + o.command_template},
                {"body", backends::WorkerRequestLine(o, request, item.id + "#" + std::to_string(item.k) + "/0",
                                                     "<store>/tmp/worker-PID-N.png")}};
  }
  if (backend.name != "openai") return Json(nullptr);
  VISALIGN_ASSIGN_OR_RETURN(backends::OpenAiImagesOptions o, OpenAiImagesOptionsFrom(backend, help_command));
  return Json{{"method", "POST"},
              {"url", backends::OpenAiClient(o.endpoint, nullptr).Url("images/generations")},
              {"family", backends::ImagesApiFamilyName(backends::ImagesApiFamilyOf(o.model))},
              {"body", backends::ImagesRequestBody(o, request)}};
}

Result<std::unique_ptr<backends::GenerationBackend>> MakeBackend(const BackendArgs& backend, store::RunStore& store,
                                                                 std::string_view help_command) {
  return MakeBackend(backend, store::ScratchDir(store.root()), help_command);
}

Result<std::unique_ptr<backends::GenerationBackend>> MakeBackend(const BackendArgs& backend,
                                                                 const std::filesystem::path& scratch_dir,
                                                                 std::string_view help_command) {
  if (backend.name == "openai") {
    VISALIGN_ASSIGN_OR_RETURN(backends::OpenAiImagesOptions o, OpenAiImagesOptionsFrom(backend, help_command));
    return backends::MakeOpenAiImagesBackend(std::move(o), backends::MakeCurlTransport());
  }
  if (backends::IsProviderKind(backend.name)) {
    VISALIGN_RETURN_IF_ERROR(RequireOption(backend, backend.model, "--model", help_command));
    VISALIGN_ASSIGN_OR_RETURN(backends::ProviderOptions o, ProviderOptionsFrom(backend));
    return backends::MakeProviderBackend(std::move(o), backends::MakeCurlTransport());
  }
  if (backend.name == "worker") {
    VISALIGN_ASSIGN_OR_RETURN(backends::WorkerOptions o, WorkerOptionsFrom(backend, help_command));
    o.scratch_dir = scratch_dir;
    return backends::MakeWorkerBackend(std::move(o));
  }
  if (backend.name == "command") {
    VISALIGN_RETURN_IF_ERROR(RequireOption(backend, backend.cmd, "--cmd", help_command));
    backends::CommandOptions o;
    o.command_template = backend.cmd;
    o.timeout = MillisFromSeconds(backend.timeout_s);
    o.scratch_dir = scratch_dir;
    return backends::MakeCommandBackend(std::move(o));
  }
  VISALIGN_RETURN_IF_ERROR(RequireOption(backend, backend.path, "--path", help_command));
  return backends::MakeDirectoryBackend(backend.path);
}

}  // namespace visalign::cli
