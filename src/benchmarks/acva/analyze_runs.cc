#include "visalign/benchmarks/acva/analyze_runs.h"

#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::acva {
namespace fs = std::filesystem;

Result<std::vector<RunGenerationState>> ReadGenerationStates(store::RunStore& store,
                                                             const std::vector<std::string>& runs) {
  std::vector<RunGenerationState> states;
  for (const std::string& run : runs) {
    RunGenerationState s;
    s.run = run;
    VISALIGN_ASSIGN_OR_RETURN(s.info, store.FindRun(run));
    VISALIGN_ASSIGN_OR_RETURN(s.counts, store.Counts(run));
    s.refusals = backends::RefusalRateOf(run, s.counts);
    states.push_back(std::move(s));
  }
  return states;
}

Json GenerationJson(const std::vector<RunGenerationState>& states) {
  Json generation = Json::object();
  for (const RunGenerationState& s : states)
    generation[s.run] = {{"done", s.counts.done},
                         {"failed", s.counts.failed},
                         {"pending", s.counts.pending},
                         {"refusals", backends::RefusalJson(s.refusals)}};
  return generation;
}

Result<FrozenMedians> FrozenMediansFromFile(const fs::path& summary_json) {
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(summary_json));
  Result<Json> earlier = ParseJson(text);
  if (!earlier.ok())
    return Status::InvalidArgument(earlier.status().what(), summary_json.string(),
                                   "the summary.json of `visalign acva analyze`");
  return FrozenMediansFromSummary(*earlier, summary_json.string());
}

Result<AnalysisResult> AnalyzeRuns(store::RunStore& store, const ConceptSet& set,
                                   const std::vector<RunGenerationState>& generation, JudgeOutcome& outcome,
                                   const clip::ClipModel& model, const AnalyzeRunsOptions& options) {
  std::vector<store::RunInfo> runs;
  for (const RunGenerationState& s : generation)
    if (s.info) runs.push_back(*s.info);
  VISALIGN_ASSIGN_OR_RETURN(EmbeddingStats es, AttachEmbeddings(store, model, outcome.images));
  VISALIGN_ASSIGN_OR_RETURN(std::string clip_fingerprint, model.Fingerprint());
  VISALIGN_ASSIGN_OR_RETURN(AnalysisResult result, Analyze(set, outcome.images, options.analysis));
  result.summary["inputs"] = AnalysisInputsJson(set, runs, options.judge, clip_fingerprint);
  result.summary["judge"] = JudgeSettingsJson(options.judge);
  result.summary["judge"].update(outcome.stats.ToJson());
  result.summary["generation"] = GenerationJson(generation);
  result.summary["embeddings"] = {
      {"clip_model", options.clip_model.empty() ? Json(nullptr) : Json(fs::absolute(options.clip_model).string())},
      {"clip_fingerprint", clip_fingerprint},
      {"images_encoded", es.images_encoded},
      {"images_cached", es.images_cached},
      {"texts_encoded", es.texts_encoded},
      {"texts_cached", es.texts_cached},
      {"random_weights", clip::RandomWeightsJson(model.config())}};
  return result;
}

}  // namespace visalign::acva
