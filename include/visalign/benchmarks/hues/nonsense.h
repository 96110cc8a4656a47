// Hues and Cues: The nonsense baseline. Part of the Hues and Cues module; the
// benchmark as a whole is described in visalign/benchmarks/hues/hues.h.
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include "visalign/core/json.h"
#include "visalign/core/status.h"

#include "visalign/benchmarks/hues/evaluate.h"

namespace visalign::hues {

// ---- Nonsense baseline --------------------------------------------------------------------------

enum class CollapseClass { kNeutral, kSpecificColor, kSelective, kHighEntropy };
std::string_view CollapseClassName(CollapseClass c);  // neutral_collapse, specific_color_collapse, ...

struct NonsenseGroupResult {
  std::string group;
  std::vector<int> top1;         // one cell per word of the group, vocabulary order
  bool collapsed = false;        // ≥ 3/4 of the group's top-1 cells share a macro class (groups of ≥ 2 words)
  Macro onto = Macro::kNeutral;  // the shared macro class when collapsed
};

struct NonsenseResult {
  std::string model;
  std::vector<NonsenseGroupResult> groups;
  CollapseClass collapse = CollapseClass::kHighEntropy;
  std::optional<Macro> collapse_onto;  // for neutral / specific-color collapse
  double entropy_bits = 0;             // of the nonsense top-1 macro classes (9 classes incl. Neutral)
  std::optional<int> prior_cell;       // modal nonsense top-1 cell, if it occurs ≥ 2 times
  int prior_count = 0;
  std::vector<int> false_positive_words;  // valid words whose top-1 is the prior cell
};

// Needs predictions for every nonsense word (error naming the missing ones).
Result<NonsenseResult> ClassifyNonsense(const ModelPredictions& model, const std::vector<NonsenseWord>& vocabulary,
                                        const MacroMap& macro);

// `hues nonsense --json`'s object for one model: model, class, onto (null without a collapse),
// entropy_bits, groups [{group, top1 (cell names), collapsed, onto}], prior_cell (null without a
// prior), prior_count, false_positive_words (English spellings of `vocabulary`'s words).
Json NonsenseResultJson(const NonsenseResult& result, const Vocabulary& vocabulary);
// The same as text: a headline, one line per group and, with a prior, the words it catches.
// `nonsense_words` is the size of the nonsense vocabulary the result was classified with.
std::string NonsenseResultText(const NonsenseResult& result, const Vocabulary& vocabulary, size_t nonsense_words);

// What `hues nonsense --out` writes: each model's result, the file its predictions came from, and
// the nonsense vocabulary and macro map it was classified with.
struct NonsenseRun {
  std::vector<NonsenseResult> results;
  std::vector<std::string> prediction_sources;  // per result: ModelPredictions::source
  std::vector<NonsenseWord> words;              // the nonsense vocabulary, in its order
  std::string vocabulary_source;                // its file
};

// The results folder of the nonsense baseline (docs/architecture.md, "Results contract"; benchmark
// "hues-nonsense"): summary.json (the header, "settings", "classes" {class: models}, "models" as
// NonsenseResultJson, "inputs" {predictions [{model, path, sha256}], vocabulary, macro_map}),
// summary.csv (one row per model), items.jsonl (one line per model and nonsense word: model, word,
// group, top1, top1_macro) and summary.md.
Status WriteNonsense(const NonsenseRun& run, const MacroMap& macro, const Vocabulary& vocabulary,
                     const std::filesystem::path& dir);

}  // namespace visalign::hues
