// Hues and Cues: The comparison of a model's top-5 cells with the human answers. Part of the Hues and Cues module; the
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
#include "visalign/stats/statistics.h"

#include "visalign/benchmarks/hues/predictions.h"

namespace visalign::hues {

// ---- Evaluation ---------------------------------------------------------------------------------

enum class ModelWeights { kAbsSimilarity, kUniform };
Result<ModelWeights> ParseModelWeights(std::string_view text);  // "similarity" | "uniform"
std::string_view ModelWeightsName(ModelWeights w);

struct EvaluateOptions {
  double alpha = 0.05;
  ModelWeights weights = ModelWeights::kAbsSimilarity;
};

struct WordEvaluation {
  int word = 0;
  int n_humans = 0;
  int top1 = 0;
  Macro top1_macro = Macro::kBrown;
  Macro human_macro = Macro::kBrown;
  double mahalanobis_d2 = 0;  // NaN when the human covariance is singular
  bool mahalanobis_outlier = false;
  stats::HotellingResult hotelling;  // singular → NaN statistics
  double q_value = 0;                // BH over the model's words (NaN when p is NaN)
  bool reject = false;               // q_value ≤ alpha
};

struct RateCount {
  int tested = 0;
  int failed = 0;
  double rate() const;  // failed / tested, NaN when nothing was tested
};

struct ModelEvaluation {
  std::string name;
  std::string source;
  std::vector<WordEvaluation> words;  // the words the model has predictions for, vocabulary order
  std::vector<std::string> missing_words;
  bool negative_similarities = false;
  RateCount mahalanobis;            // outliers among words with a non-singular human covariance
  RateCount hotelling;              // rejections (q ≤ alpha) among non-singular tests
  RateCount hotelling_uncorrected;  // p ≤ alpha, as the published analysis counted
  double human_fail_rate = 0;       // mean human LOO rate over the same words
  struct Category {
    std::string category;
    int n_words = 0;
    RateCount mahalanobis, hotelling, hotelling_uncorrected;
    double human_fail_rate = 0;
  };
  std::vector<Category> categories;
};

ModelEvaluation EvaluateModel(const ModelPredictions& model, const HumanBaseline& baseline,
                              const Vocabulary& vocabulary, const Board& board, const MacroMap& macro,
                              const EvaluateOptions& options);

// model → architecture family, dataset family (catalog CSV: model,architecture,dataset, optional
// open_clip_model,pretrained: open_clip's (model, pretrained tag) pair; other columns ignored).
struct CatalogEntry {
  std::string architecture, dataset;
  std::string open_clip_model, pretrained;  // "" when the CSV has no such column
};
using Catalog = std::map<std::string, CatalogEntry>;
Result<Catalog> LoadCatalog(const std::filesystem::path& csv);

// The catalog `hues evaluate` uses: the shipped data/hues/model_catalog.csv (the 162 published models, derivation in
// docs/hues.md), with the rows of `override_csv` (when not empty) replacing the shipped rows of the same model and
// adding new models (a replacing row without open_clip_model keeps the shipped open_clip_model and pretrained).
// `sources` receives the files read, shipped first.
Result<Catalog> LoadModelCatalog(const std::filesystem::path& override_csv, std::vector<std::string>& sources);

// Median, quartiles (type 7, numpy's default) and range of the finite values; all NaN without any.
struct Spread {
  double median, q1, q3, min, max;
};
Spread SpreadOf(const std::vector<double>& values);

struct EvaluationReport {
  std::string humans_source;
  std::string humans_exclusions_source;               // HumanData::exclusions_source (empty: none applied)
  AnswerPairing pairing = AnswerPairing::kCharacter;  // HumanData::pairing
  int repaired_answers = 0;                           // HumanData::repaired_answers
  Threshold threshold;
  EvaluateOptions options;
  Chromaticity chromaticity = Chromaticity::kDisplay;
  std::string macro_source;
  std::vector<ModelEvaluation> models;
  std::optional<Catalog> catalog;
  std::vector<std::string> catalog_sources;  // the catalog files read (LoadModelCatalog), for summary.json inputs
};

// Writes words.csv, models.csv, categories.csv, hotelling.csv, (families.csv with a catalog),
// summary.json and summary.md into `dir` (created if needed), and for the results contract
// (docs/architecture.md) items.jsonl (one line per (model, word) result, null where words.csv has
// an empty cell) and summary.csv (the rows of models.csv). summary.json opens with benchmark "hues",
// schema_version and visalign_version and has "inputs": {"humans": {"path", "sha256"}, ["humans_exclusions": {"path",
// "sha256"},] "macro_map":
// {"path", "sha256"} or {"source"} when derived, "predictions": [{"model", "path", "sha256"}]}.
// summary.md opens with EvaluationWarnings.
Status WriteEvaluation(const EvaluationReport& report, const HumanBaseline& baseline, const Vocabulary& vocabulary,
                       const std::filesystem::path& dir);

// Conditions that make an evaluation's numbers partial, one sentence each, from its summary.json: a
// model without predictions for some words (models[].missing_words). summary.md opens with them
// (MarkdownWarning) and `visalign report` shows them at the top of the Hues and Cues section.
std::vector<std::string> EvaluationWarnings(const Json& summary);

}  // namespace visalign::hues
