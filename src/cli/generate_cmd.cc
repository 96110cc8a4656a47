// `visalign violin generate` (formerly `visalign generate`, still accepted with a warning): generate
// VIOLIN's images through a model backend into the run store,
// concurrently, rate-limited, with retries; re-running the same command resumes.
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "cli/backend_options.h"
#include "cli/cli.h"
#include "visalign/backends/backends.h"
#include "visalign/backends/generation_plan.h"
#include "visalign/backends/runner.h"
#include "visalign/benchmarks/violin/generation.h"
#include "visalign/benchmarks/violin/manifest.h"
#include "visalign/core/benchmarks.h"
#include "visalign/core/io.h"
#include "visalign/store.h"

namespace visalign::cli {
namespace {
namespace fs = std::filesystem;

constexpr const char* kHelp = "visalign violin generate --help";

struct GenerateArgs {
  std::string dataset, run;
  StoreFlags store;
  BackendArgs backend;
  std::vector<std::string> filters;
  RunControlArgs control;
  int samples = 1;
  int64_t seed = 0;
  bool dry_run = false;
  std::optional<double> price_per_image;  // USD
};

Status CheckRanges(const GenerateArgs& a) {
  auto positive = [](bool ok, const char* option, const std::string& value) -> Status {
    if (!ok) return Status::InvalidArgument(std::string(option) + " " + value, option, "a positive value");
    return Status::Ok();
  };
  VISALIGN_RETURN_IF_ERROR(positive(a.samples >= 1, "--samples", std::to_string(a.samples)));
  VISALIGN_RETURN_IF_ERROR(
      positive(a.control.concurrency >= 1, "--concurrency", std::to_string(a.control.concurrency)));
  VISALIGN_RETURN_IF_ERROR(
      positive(a.control.max_attempts >= 1, "--max-attempts", std::to_string(a.control.max_attempts)));
  VISALIGN_RETURN_IF_ERROR(positive(a.backend.timeout_s > 0, "--timeout", fmt::format("{}", a.backend.timeout_s)));
  VISALIGN_RETURN_IF_ERROR(
      positive(a.backend.connect_timeout_s > 0, "--connect-timeout", fmt::format("{}", a.backend.connect_timeout_s)));
  VISALIGN_RETURN_IF_ERROR(positive(a.control.backoff_s > 0, "--backoff", fmt::format("{}", a.control.backoff_s)));
  if (a.control.rate < 0 || a.control.limit < 0 || a.control.grace_s < 0)
    return Status::InvalidArgument("negative --rate, --limit or --grace", "command line", "values >= 0");
  if (a.price_per_image && !(*a.price_per_image >= 0))
    return Status::InvalidArgument(fmt::format("--price-per-image {}", *a.price_per_image), "--price-per-image",
                                   "a price in USD >= 0");
  return Status::Ok();
}

// "$0.48" for `images` at the --price-per-image, or nullopt without one.
std::optional<double> Cost(const GenerateArgs& a, size_t images) {
  if (!a.price_per_image) return std::nullopt;
  return *a.price_per_image * static_cast<double>(images);
}

// --dry-run: prints backends::PlanGeneration's plan (an existing store is only read).
Status DryRun(const Cli& cli, const GenerateArgs& a, const std::vector<backends::WorkItem>& work,
              const store::RunInfo& wanted, const backends::RunnerOptions& options) {
  std::unique_ptr<store::RunStore> st;
  if (store::StoreExists(a.store.location)) {
    VISALIGN_ASSIGN_OR_RETURN(st, OpenStore(a.store));
  }
  VISALIGN_ASSIGN_OR_RETURN(backends::GenerationPlan plan,
                            backends::PlanGeneration(st.get(), wanted, work,
                                                     {a.control.retry_failed, options.retry.max_attempts,
                                                      a.price_per_image, a.store.Display()}));
  const store::RunCounts& counts = plan.counts;
  Json request = nullptr;
  if (!plan.to_request.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(request, FirstRequest(a.backend, *plan.to_request.front(), kHelp));
  }
  if (cli.global().json) {
    PrintJson({{"dry_run", true},
               {"run", a.run},
               {"store", a.store.ForJson()},
               {"status", backends::PlannedRunName(plan.run)},
               {"run_totals", {{"done", counts.done}, {"failed", counts.failed}, {"pending", counts.pending}}},
               {"identity", wanted.identity},
               {"connection", wanted.connection},
               {"first_request", request},
               {"selected", plan.selection.selected},
               {"already_done", plan.selection.already_done},
               {"skipped_failed", plan.selection.skipped_failed},
               {"to_request", plan.to_request.size()},
               {"max_requests", plan.max_requests},
               {"price_per_image", a.price_per_image ? Json(*a.price_per_image) : Json(nullptr)},
               {"cost", plan.cost ? Json(*plan.cost) : Json(nullptr)}});
    return Status::Ok();
  }
  const std::string status_text =
      plan.run == backends::PlannedRun::kNew ? "new"
      : plan.run == backends::PlannedRun::kTakeOver
          ? fmt::format(
                "has no done image yet ({} failed, {} pending): these settings would "
                "replace its own and its failed images be asked again",
                counts.failed, counts.pending)
          : fmt::format("resumes ({} done, {} failed, {} pending)", counts.done, counts.failed, counts.pending);
  const size_t todo = plan.to_request.size();
  std::printf("dry run: nothing is requested or written\n");
  std::printf("run %s in %s: %s\n", a.run.c_str(), a.store.Display().c_str(), status_text.c_str());
  std::printf("identity:   %s\nconnection: %s\n", wanted.identity.dump().c_str(), wanted.connection.dump().c_str());
  if (!request.is_null())
    std::printf("first request%s: %s %s%s %s\n",
                request.contains("family") ? (" (" + request["family"].get<std::string>() + " family)").c_str() : "",
                request["method"].get<std::string>().c_str(), request["url"].get<std::string>().c_str(),
                request.contains("headers") ? (" " + request["headers"].dump()).c_str() : "",
                request["body"].dump().c_str());
  std::printf(
      "images to request: %zu of %zu selected (%zu done, %zu failed before and not retried); "
      "%zu requests if each succeeds at once, at most %zu with --max-attempts %d\n",
      todo, plan.selection.selected, plan.selection.already_done, plan.selection.skipped_failed, todo,
      plan.max_requests, options.retry.max_attempts);
  if (plan.cost)
    std::printf("cost: %zu images x $%g = $%.2f (failed requests not counted)\n", todo, *a.price_per_image, *plan.cost);
  std::fflush(stdout);
  return Status::Ok();
}

Status RunGenerate(const Cli& cli, const GenerateArgs& a) {
  VISALIGN_RETURN_IF_ERROR(CheckRanges(a));
  VISALIGN_RETURN_IF_ERROR(store::ValidateRunName(a.run));
  VISALIGN_ASSIGN_OR_RETURN(Filters filters, ParseFilters(a.filters, violin::GenerationFilterKeys()));
  VISALIGN_ASSIGN_OR_RETURN(std::vector<violin::ManifestItem> manifest, violin::LoadManifest(a.dataset));
  VISALIGN_ASSIGN_OR_RETURN(std::string fingerprint, violin::ManifestFingerprint(a.dataset));
  std::vector<backends::WorkItem> work;
  for (violin::GenerationItem& g : violin::GenerationItems(manifest, filters, a.samples, a.seed, a.control.limit))
    work.push_back({std::move(g.id), std::move(g.prompt), g.k, g.seed});
  VISALIGN_ASSIGN_OR_RETURN(work, ShardOf(std::move(work), a.control));
  if (work.empty())
    return Status::InvalidArgument("no dataset item matches the filters", "--filter/--limit",
                                   "filters that select at least one item of " + a.dataset);

  const backends::RunnerOptions options = RunnerOptionsFrom(a.control, !cli.global().json, "generate " + a.run);
  if (a.dry_run) {
    VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<backends::GenerationBackend> backend,
                              MakeBackend(a.backend, store::ScratchDir(a.store.location), kHelp));
    return DryRun(cli, a, work,
                  {a.run, std::string(benchmarks::kViolin), fingerprint, backend->Identity(), "",
                   backends::RunConnection(*backend, options)},
                  options);
  }
  VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<store::RunStore> store, OpenStore(a.store));
  VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<backends::GenerationBackend> backend,
                            MakeBackend(a.backend, *store, kHelp));
  backends::InterruptHandler interrupt;
  VISALIGN_ASSIGN_OR_RETURN(
      backends::RunSummary summary,
      backends::RunGeneration(*store, {a.run, std::string(benchmarks::kViolin), fingerprint, {}, ""}, work, *backend,
                              options, interrupt.stop()));
  VISALIGN_ASSIGN_OR_RETURN(store::RunCounts counts, store->Counts(a.run));
  const std::optional<double> cost = Cost(a, summary.done);
  if (cli.global().json) {
    Json j = summary.ToJson();
    j["run"] = a.run;
    j["store"] = a.store.ForJson();
    j["run_totals"] = {
        {"done", counts.done}, {"refused", counts.refused}, {"failed", counts.failed}, {"pending", counts.pending}};
    if (cost) j["cost"] = *cost;
    PrintJson(j);
  } else {
    const std::string refused = counts.refused > 0 ? fmt::format("{} refused, ", counts.refused) : std::string();
    std::printf("run %s in %s: %s\nrun totals: %zu done, %s%zu failed, %zu pending\n", a.run.c_str(),
                a.store.Display().c_str(), summary.ToText().c_str(), counts.done, refused.c_str(), counts.failed,
                counts.pending);
    if (cost) std::printf("cost of the %zu images made now: $%.2f\n", summary.done, *cost);
    std::fflush(stdout);
  }
  return summary.Outcome("run " + a.run);
}

// The options and action of the generation command `g` (the current name or the old one).
void AddGenerate(Cli& cli, CLI::App* g) {
  auto a = std::make_shared<GenerateArgs>();
  g->add_option("--dataset", a->dataset, "VIOLIN dataset folder (with manifest.jsonl)")->required();
  g->add_option("--run", a->run, "Run name ([A-Za-z0-9._-]); the same name resumes")->required();
  g->add_option("--backend", a->backend.name,
                "openai (images API), command (a program per image), worker (persistent local processes, JSON "
                "Lines), directory (import), or a provider's own API: gemini, bfl, dashscope, replicate, fal, a1111, "
                "comfyui (docs/backends.md)")
      ->required()
      ->check(CLI::IsMember(BackendKinds()));
  AddStoreOptions(g, &a->store, "Run store");
  AddBackendOptions(g, a->backend);
  g->add_option("--path", a->backend.path, "directory: folder of <id>.png or <id>__<k>.png images");
  g->add_option("--samples", a->samples, "Images per item (k = 0..K-1)")->capture_default_str();
  g->add_option("--seed", a->seed,
                "Base seed: sample k of item i gets (h(i) + k + seed) mod 2^31, h = FNV-1a 64-bit from offset basis "
                "1469598103934665603 (not FNV's 14695981039346656037; docs/backends.md)")
      ->capture_default_str();
  AddRunControlOptions(g, a->control, a->backend, "items");
  AddViolinFilterOption(g, a->filters);
  g->add_flag("--dry-run", a->dry_run,
              "Print the run's identity and connection, the first request and how many images would be requested; "
              "request and write nothing");
  g->add_option("--price-per-image", a->price_per_image, "USD per image: the cost in --dry-run and in the summary");
  g->footer(fmt::format(
      "Every (item, sample) is a row in the run store: pending, done (image written atomically first, with\n"
      "its SHA-256) or failed (with the last error). Re-running the same command skips done rows; the first\n"
      "Ctrl-C stops new requests and waits up to --grace for those in flight (exit 130), a second exits at once.\n"
      "A run's identity is what its images depend on: backend, --model, --size, --param, --cmd (and each row's\n"
      "prompt and seed); resuming needs the same identity. --endpoint, --api-key-env, --timeout, --concurrency\n"
      "and --rate may change between invocations (`visalign store show` prints both).\n"
      "openai request body: model, prompt, n = 1, size, then response_format b64_json, except for gpt-image-*\n"
      "models (they always answer base64 and reject the field); --param KEY=VALUE adds or replaces a field\n"
      "(output_format=webp, background=transparent, quality=high), --param KEY=null removes one.\n"
      "command: {{out}} is a .png path to write; with {{out_stem}} the program writes <stem>.png, .jpg or .webp.\n"
      "worker: --cmd starts once per --workers (VISALIGN_WORKER_INDEX, --gpus -> CUDA_VISIBLE_DEVICES), prints\n"
      "{{\"ready\": true}}, then answers each {{\"id\", \"prompt\", \"seed\", \"width\", \"height\", \"out\", "
      "\"params\"}} line with\n"
      "{{\"id\", \"ok\": true}} once `out` is written (scripts/workers/diffusers_worker.py). comfyui: --workflow in "
      "API format\n"
      "with \"{{prompt}}\" (\"{{seed}}\", \"{{width}}\", \"{{height}}\" become numbers); its hash is part of the "
      "identity.\n"
      "Refusals (a provider's content filter) are refused rows: final, not retried, counted by `store show`.\n"
      "Retries: timeouts, connection errors, HTTP 408/429/5xx (Retry-After honoured) and failed commands; other\n"
      "4xx fail at once. When {0} different items in a row fail with the same such error (or a command fails the\n"
      "same way on the first {0} items) the run stops with that message instead of trying every item.\n"
      "Exit codes: 0 all done, 2 some images failed, the run stopped early or bad arguments, 130 interrupted.\n"
      "Examples:\n"
      "  visalign violin generate --dataset violin-demo --run gpt-image --backend openai \\\n"
      "      --endpoint https://api.openai.com --model gpt-image-1 --api-key-env OPENAI_API_KEY --size 1024x1024 \\\n"
      "      --param quality=low --concurrency 8 --rate 2 --filter variation=1,split=test \\\n"
      "      --dry-run --price-per-image 0.011     # what it would cost; then the same without --dry-run:\n"
      "  visalign violin generate --dataset violin-demo --run gpt-image --backend openai \\\n"
      "      --endpoint https://api.openai.com --model gpt-image-1 --api-key-env OPENAI_API_KEY --size 1024x1024 \\\n"
      "      --param quality=low --concurrency 8 --rate 2 --filter variation=1,split=test\n"
      "  visalign violin generate --dataset violin-demo --run sdxl --backend command \\\n"
      "      --cmd 'python gen.py --prompt {{prompt}} --out {{out}} --seed {{seed}}' --samples 3 --timeout 600\n"
      "  visalign violin generate --dataset violin-demo --run imported --backend directory --path ./my-images\n"
      "  visalign violin evaluate --dataset violin-demo --store ./visalign-store --run gpt-image --out gpt-image-eval\n"
      "  visalign violin generate --dataset violin-demo --run flux-local --backend worker --gpus 0 --size 1024x1024 "
      "\\\n"
      "      --cmd 'python3 scripts/workers/diffusers_worker.py --model black-forest-labs/FLUX.1-dev'\n"
      "  visalign violin generate --dataset violin-demo --run sdxl-comfy --backend comfyui --model sdxl \\\n"
      "      --workflow scripts/workflows/comfyui_sdxl_api.json --size 1024x1024",
      backends::RunnerOptions{}.stop_after_same_failures));
  cli.Bind(g, [&cli, a]() -> Status { return RunGenerate(cli, *a); });
}

constexpr const char* kDescription = "Generate VIOLIN's images with a model backend into the run store (resumable)";

// `visalign violin generate`, and the old top-level `visalign generate`.
const CommandGroup kGenerate(30, {"violin", "generate"}, [](Cli& cli) {
  cli.AddRenamedCommand(cli.Group("violin", "VIOLIN: pure-color obedience benchmark"), "generate", "generate",
                        kDescription, [&cli](CLI::App* g) { AddGenerate(cli, g); });
});

}  // namespace
}  // namespace visalign::cli
