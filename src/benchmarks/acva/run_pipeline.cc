// The ACVA pipeline (generate -> judge -> analyze) and the judge stage's dry run.
#include "visalign/benchmarks/acva/run_pipeline.h"

#include <set>

#include <fmt/format.h>

#include "visalign/core/benchmarks.h"

namespace visalign::acva {
namespace {

// Every run once, each a valid name; generated runs first.
Result<std::vector<std::string>> PipelineRuns(const PipelineOptions& options) {
  std::vector<std::string> runs;
  for (const PipelineGeneration& g : options.generations) runs.push_back(g.run);
  runs.insert(runs.end(), options.runs.begin(), options.runs.end());
  if (runs.empty()) return Status::InvalidArgument("no run", "runs", "at least one run to generate or analyse");
  std::set<std::string> seen;
  for (const std::string& run : runs) {
    VISALIGN_RETURN_IF_ERROR(store::ValidateRunName(run));
    if (!seen.insert(run).second)
      return Status::InvalidArgument("run \"" + run + "\" is named twice", "runs", "each run once");
  }
  return runs;
}

}  // namespace

Result<PipelineResult> RunPipeline(store::RunStore& store, const ConceptSet& set, const clip::ClipModel& model,
                                   PipelineOptions options, const std::atomic<bool>& stop,
                                   const PipelineObserver& observer) {
  VISALIGN_ASSIGN_OR_RETURN(std::vector<std::string> runs, PipelineRuns(options));
  const std::string fingerprint = GenerationFingerprint(set, options.generation);
  for (PipelineGeneration& g : options.generations) {
    if (!g.backend) return Status::Internal("run \"" + g.run + "\" has no backend");
    backends::RunnerOptions runner = options.runner;
    runner.label = "generate " + g.run;
    store::RunInfo info{g.run, std::string(benchmarks::kAcva), fingerprint, {}, ""};
    VISALIGN_ASSIGN_OR_RETURN(backends::RunSummary summary,
                              backends::RunGeneration(store, info, options.items, *g.backend, runner, stop));
    if (observer.generated) observer.generated(g.run, summary);
    VISALIGN_RETURN_IF_ERROR(summary.Outcome("run " + g.run));
  }

  VISALIGN_ASSIGN_OR_RETURN(JudgeOutcome outcome,
                            JudgeRuns(store, set, runs, options.judge, options.judge_transport, stop));
  if (observer.judged) observer.judged(outcome.stats);
  VISALIGN_RETURN_IF_ERROR(outcome.stats.Outcome(options.judge));

  PipelineResult result;
  VISALIGN_ASSIGN_OR_RETURN(result.generation, ReadGenerationStates(store, runs));
  for (const RunGenerationState& g : result.generation)
    if (g.incomplete() && observer.incomplete) observer.incomplete(g);
  options.analyze.judge = options.judge.settings;
  VISALIGN_ASSIGN_OR_RETURN(result.analysis,
                            AnalyzeRuns(store, set, result.generation, outcome, model, options.analyze));
  return result;
}

Result<JudgePlan> PlanJudging(store::RunStore& store, const ConceptSet& set, const std::vector<std::string>& runs,
                              JudgeConfig config, std::optional<double> price_per_request,
                              const std::atomic<bool>& stop) {
  config.progress = false;
  VISALIGN_ASSIGN_OR_RETURN(JudgeOutcome outcome, JudgeRuns(store, set, runs, config, nullptr, stop));
  JudgePlan plan;
  plan.stats = outcome.stats;
  plan.to_ask = plan.stats.missing;  // with rejudge_invalid, cached invalid answers count here
  plan.max_requests =
      plan.to_ask * static_cast<size_t>(config.max_reply_attempts) * static_cast<size_t>(config.retry.max_attempts);
  plan.request = "POST " + backends::OpenAiClient({config.endpoint, "", {}}, nullptr).Url("chat/completions");
  plan.price = price_per_request;
  if (plan.price) plan.cost = *plan.price * static_cast<double>(plan.to_ask);
  return plan;
}

Json JudgePlan::ToJson() const {
  return {{"images", stats.images},     {"questions", stats.questions},
          {"distinct", stats.distinct}, {"cached", stats.cached},
          {"to_ask", to_ask},           {"max_requests", max_requests},
          {"request", request},         {"cost", cost ? Json(*cost) : Json(nullptr)}};
}

std::string JudgePlan::ToText(const JudgeConfig& config) const {
  std::string text = fmt::format("judge {} at {}: {} images, {} questions ({} distinct)\n", config.settings.model,
                                 request.substr(request.find(' ') + 1), stats.images, stats.questions, stats.distinct);
  text += fmt::format(
      "cached: {}; to ask: {} (at most {} requests with --judge-reply-attempts {} and --judge-max-attempts {})\n",
      stats.cached, to_ask, max_requests, config.max_reply_attempts, config.retry.max_attempts);
  if (price && cost)
    text +=
        fmt::format("cost: {} requests x ${:g} = ${:.2f} (re-asks and retries not counted)\n", to_ask, *price, *cost);
  return text;
}

}  // namespace visalign::acva
