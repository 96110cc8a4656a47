// Image-generation backend options shared by `visalign generate` and `visalign acva generate`:
// the openai / command / directory settings, --param parsing, and building the backend from them,
// so both commands accept and check the same options the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/backends/backends.h"
#include "visalign/backends/providers.h"
#include "visalign/backends/runner.h"
#include "visalign/backends/worker.h"
#include "visalign/core/status.h"
#include "visalign/store.h"

namespace visalign::cli {

struct BackendArgs {
  std::string name;  // --backend: one of BackendKinds()
  std::string endpoint, model, api_key_env, size;
  std::vector<std::string> params;  // key=value
  std::string cmd, path;
  double timeout_s = 300;
  double connect_timeout_s = 10;
  double job_timeout_s = 600, poll_s = 1, max_poll_s = 10;  // asynchronous providers
  std::string workflow;                                     // comfyui: API-format workflow file
  int workers = 0;                                          // worker: processes (0: one per --gpus entry, or 1)
  std::string gpus;                                         // worker: "0,1,..." -> CUDA_VISIBLE_DEVICES
  double startup_timeout_s = 900;                           // worker: until its ready line
};

// Every --backend kind: openai, command, directory, worker and the providers (providers.h).
const std::vector<std::string>& BackendKinds();
// "openai, command, directory, worker, gemini, ... or comfyui" for help and messages.
std::string BackendKindsText();

backends::Millis MillisFromSeconds(double seconds);

// How a generation command runs its requests, the same options with the same defaults in
// `generate` and `acva generate`/`acva run`.
struct RunControlArgs {
  int concurrency = 4, max_attempts = 5, limit = 0;
  double rate = 0, backoff_s = 1, max_backoff_s = 60, grace_s = 30, lease_s = 60;
  bool retry_failed = false;
  std::string shard;  // "I/N": only the I-th of N static parts of the items; empty = all
};
// Registers --concurrency, --rate, --max-attempts, --backoff, --max-backoff, --timeout,
// --connect-timeout, --grace, --lease, --shard, --retry-failed and --limit (`limit_what` names the unit: items,
// concepts).
void AddRunControlOptions(CLI::App* app, RunControlArgs& run, BackendArgs& backend, const std::string& limit_what);
// --filter key=v1,v2[,key2=v3...] (repeatable): tokens without '=' add a value to the previous
// key; a key outside `keys` is an error naming them.
using Filters = std::map<std::string, std::set<std::string>>;
Result<Filters> ParseFilters(const std::vector<std::string>& filters, const std::vector<std::string>& keys);
// --filter of the VIOLIN commands that select dataset items (generate, evaluate): one help text.
void AddViolinFilterOption(CLI::App* app, std::vector<std::string>& filters);

// The items of `run.shard` ("I/N", 0 <= I < N): the items whose id is the I-th, I+N-th, ... distinct
// id in order (all samples of an item stay in one part); all items without a shard. An invalid
// shard is InvalidArgument at --shard.
Result<std::vector<backends::WorkItem>> ShardOf(std::vector<backends::WorkItem> items, const RunControlArgs& run);

// The runner options these describe, with progress and its label.
backends::RunnerOptions RunnerOptionsFrom(const RunControlArgs& run, bool progress, std::string label);

// Registers --endpoint, --model, --api-key-env, --size, --param (openai) and --cmd (command).
// --backend, --path and --timeout are left to the command: their defaults and wording differ.
void AddBackendOptions(CLI::App* app, BackendArgs& backend);

// The provider options --backend gemini|bfl|dashscope describes (the API key read from its variable).
Result<backends::ProviderOptions> ProviderOptionsFrom(const BackendArgs& backend);

// The worker options --backend worker describes (scratch_dir left to the caller).
Result<backends::WorkerOptions> WorkerOptionsFrom(const BackendArgs& backend, std::string_view help_command);

// The first request `item` would make with `backend` (openai and the providers; null for the
// others), for --dry-run: {"method", "url", "body", ...}; the key shown as its variable's name.
Result<Json> FirstRequest(const BackendArgs& backend, const backends::WorkItem& item, std::string_view help_command);

// The images API options --backend openai describes (the API key read from its variable).
Result<backends::OpenAiImagesOptions> OpenAiImagesOptionsFrom(const BackendArgs& backend,
                                                              std::string_view help_command);

// The backend `backend.name` names; nothing is written or requested until it generates (command
// backends then create `scratch_dir`). A missing required option is an error pointing at
// `help_command` (e.g. "visalign generate --help").
Result<std::unique_ptr<backends::GenerationBackend>> MakeBackend(const BackendArgs& backend,
                                                                 const std::filesystem::path& scratch_dir,
                                                                 std::string_view help_command);
// The same with the store's scratch folder.
Result<std::unique_ptr<backends::GenerationBackend>> MakeBackend(const BackendArgs& backend, store::RunStore& store,
                                                                 std::string_view help_command);

}  // namespace visalign::cli
