// `visalign acva judge`'s flags and steps, shared by `acva judge`, `acva analyze` and `acva run`:
// the judge options, the JudgeConfig they make, judging (asking what the cache lacks) and its dry run.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"
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
// Judges (asks what is not cached when an endpoint is given) and returns the judged images; prints the
// statistics line. Interrupted (130), failed questions, missing answers (cache-only) and no images are errors.
Result<acva::JudgeOutcome> Judge(const Cli& cli, const JudgeArgs& a, const acva::ConceptSet& set,
                                 store::RunStore& store, const std::atomic<bool>& stop);
// `acva judge --dry-run`: what the cache holds and what would be asked (and cost at `price` USD per
// request), from the cache alone; nothing asked or written.
Status JudgeDryRun(const Cli& cli, const JudgeArgs& a, std::optional<double> price, const acva::ConceptSet& set,
                   store::RunStore& store, const std::atomic<bool>& stop);

}  // namespace visalign::cli
