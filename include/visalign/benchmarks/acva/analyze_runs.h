// `acva analyze` as a library call: the judged images of generation runs, embedded with a CLIP
// model and analysed into the complete summary.json — the analysis (AnalysisJson) plus the keys
// that say what it was made from: "inputs" (AnalysisInputsJson), "judge" (the settings and the
// judging statistics), "generation" (each run's done/failed/pending rows and refusal rate: images
// never generated are reported, not silently missing from n_images) and "embeddings" (the CLIP
// model, how many embeddings were encoded or cached, random weights). The command, a web page or a
// worker call it the same way and print or serve the result.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "visalign/core/json.h"

#include "visalign/backends/refusals.h"
#include "visalign/benchmarks/acva/acva.h"
#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/clip.h"
#include "visalign/core/status.h"
#include "visalign/store.h"

namespace visalign::acva {

// A generation run as the analysis sees it in the store.
struct RunGenerationState {
  std::string run;
  std::optional<store::RunInfo> info;  // nullopt when the store has no such run
  store::RunCounts counts;
  backends::RefusalRate refusals;
  // Rows that were never turned into images: they are not analysed (SummaryWarnings says so).
  bool incomplete() const { return counts.failed + counts.pending > 0; }
};

// The state of each of `runs`, in order; errors are the store's.
Result<std::vector<RunGenerationState>> ReadGenerationStates(store::RunStore& store,
                                                             const std::vector<std::string>& runs);
// summary.json's "generation": {run: {"done", "failed", "pending", "refusals": RefusalJson}}.
Json GenerationJson(const std::vector<RunGenerationState>& states);

// The frozen quadrant medians of an earlier analysis's summary.json (`--thresholds-from`):
// InvalidArgument at the file when it is no JSON, FrozenMediansFromSummary's errors otherwise.
Result<FrozenMedians> FrozenMediansFromFile(const std::filesystem::path& summary_json);

struct AnalyzeRunsOptions {
  AnalysisOptions analysis;
  JudgeSettings judge;               // what the judge's answers were asked with ("inputs", "judge")
  std::filesystem::path clip_model;  // the model's folder as given; summary.json shows it absolute (null if empty)
};

// Embeds `outcome`'s images with `model` (cached in `store`, AttachEmbeddings) and analyses them
// (Analyze); the result's summary is complete as described above. `generation` is
// ReadGenerationStates of the judged runs. Errors: the store's, Analyze's.
Result<AnalysisResult> AnalyzeRuns(store::RunStore& store, const ConceptSet& set,
                                   const std::vector<RunGenerationState>& generation, JudgeOutcome& outcome,
                                   const clip::ClipModel& model, const AnalyzeRunsOptions& options);

}  // namespace visalign::acva
