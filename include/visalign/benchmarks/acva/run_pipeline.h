// `acva run` and `acva analyze` as one library call: generate each new run (resuming), judge the
// images of every run in one pass (byte-identical images are asked once), then embed and analyse
// them together (AnalyzeRuns). Every stage resumes from the run store, so after any error the same
// call continues where it stopped; a stage that ends short (interrupted, failed images or questions,
// answers missing from the cache) ends the pipeline with that stage's Status (RunSummary::Outcome,
// JudgeStats::Outcome), and nothing later runs. The CLIP model is loaded by the caller before
// the call, so a wrong model path fails before any image is paid for.
// Also the judge stage's dry run (PlanJudging): what it would ask, from the cache alone.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "visalign/backends/backends.h"
#include "visalign/backends/runner.h"
#include "visalign/benchmarks/acva/acva.h"
#include "visalign/benchmarks/acva/analyze_runs.h"
#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/clip.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/store.h"

namespace visalign::acva {

// A run to generate and the backend that makes its images.
struct PipelineGeneration {
  std::string run;
  std::unique_ptr<backends::GenerationBackend> backend;
};

struct PipelineOptions {
  // Generated first, in this order; none for `acva analyze`.
  std::vector<PipelineGeneration> generations;
  GenerationConfig generation;            // the prompts: part of each generated run's fingerprint
  std::vector<backends::WorkItem> items;  // what each generated run makes (GenerationItems, maybe a shard)
  backends::RunnerOptions runner;         // its label becomes "generate <run>" for each run
  // Runs already in the store, judged and analysed after the generated ones.
  std::vector<std::string> runs;
  JudgeConfig judge;
  std::shared_ptr<backends::HttpTransport> judge_transport;  // null: answers from the cache only
  AnalyzeRunsOptions analyze;
};

// Told as each stage ends, so a command can print it before the next stage starts.
struct PipelineObserver {
  std::function<void(const std::string& run, const backends::RunSummary&)> generated;
  std::function<void(const JudgeStats&)> judged;
  // A judged run with failed or pending rows: those images are not analysed.
  std::function<void(const RunGenerationState&)> incomplete;
};

struct PipelineResult {
  std::vector<RunGenerationState> generation;  // every analysed run, in order (refusal rates, counts)
  AnalysisResult analysis;                     // summary complete (AnalyzeRuns)
};

// The pipeline over `set` (the whole concept set: the fingerprint of generated runs and what is
// judged). InvalidArgument when no run is named, a run name is invalid or named twice (generated
// and existing alike); the first failing stage's Status otherwise.
Result<PipelineResult> RunPipeline(store::RunStore& store, const ConceptSet& set, const clip::ClipModel& model,
                                   PipelineOptions options, const std::atomic<bool>& stop,
                                   const PipelineObserver& observer = {});

// What judging `runs` with `config` would do, from the cache alone (nothing asked or written).
struct JudgePlan {
  JudgeStats stats;             // cached / missing counted over the distinct questions
  size_t to_ask = 0;            // questions without a usable cached answer (invalid ones too with rejudge_invalid)
  size_t max_requests = 0;      // to_ask × max_reply_attempts × retry.max_attempts: the most it can cost
  std::string request;          // "POST <endpoint>/v1/chat/completions"
  std::optional<double> price;  // USD per request, when given
  std::optional<double> cost;   // price × to_ask (re-asks and retries not counted)
  // {"images", "questions", "distinct", "cached", "to_ask", "max_requests", "request", "cost"}
  Json ToJson() const;
  std::string ToText(const JudgeConfig& config) const;  // two or three lines
};
Result<JudgePlan> PlanJudging(store::RunStore& store, const ConceptSet& set, const std::vector<std::string>& runs,
                              JudgeConfig config, std::optional<double> price_per_request,
                              const std::atomic<bool>& stop);

}  // namespace visalign::acva
