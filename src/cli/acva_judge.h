// `visalign acva judge`'s flags, shared by `acva judge`, `acva analyze` and `acva run`: the judge
// options, the JudgeConfig and transport they make, and the `acva judge` command itself.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "visalign/backends/backends.h"
#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/store.h"

namespace visalign::cli {

struct JudgeArgs {
  std::vector<std::string> runs;
  std::string endpoint, model, api_key_env, language = "en";
  double temperature = 0, rate = 0, timeout_s = 120, lease_s = 60;
  int concurrency = 4, max_reply_attempts = 3, max_attempts = 5;
  int stop_after_invalid = acva::JudgeConfig{}.stop_after_invalid;
  bool rejudge_invalid = false;
};

// --judge-* options; --judge-endpoint is required where `endpoint_required` (judge, run).
void AddJudgeOptions(CLI::App* app, JudgeArgs& a, bool endpoint_required);
acva::JudgeConfig JudgeConfigFrom(const Cli& cli, const JudgeArgs& a);
// The judge's HTTP transport; null (answers from the cache only) without --judge-endpoint.
std::shared_ptr<backends::HttpTransport> JudgeTransport(const JudgeArgs& a);
// `acva judge`: acva::JudgeRuns, its statistics printed, its outcome returned (interrupted = 130); with
// `dry_run`, acva::PlanJudging printed instead (the cost at `price` USD per request): nothing asked.
Status JudgeCommand(const Cli& cli, const JudgeArgs& a, bool dry_run, std::optional<double> price,
                    const acva::ConceptSet& set, store::RunStore& store, const std::atomic<bool>& stop);

}  // namespace visalign::cli
