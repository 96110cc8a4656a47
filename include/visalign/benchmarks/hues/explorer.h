// Hues and Cues: the result explorer's numbers, per word — the human answers on the board (counts per
// cell), their mean and covariance in CIE xy with the outlier ellipse, for any subset of the players
// (colour-blind or not, gender, age group, language), and the top-5 cells of the models a `hues
// evaluate` output folder evaluated. Part of the Hues and Cues module; the benchmark as a whole is
// described in visalign/benchmarks/hues/hues.h.
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "visalign/benchmarks/hues/humans.h"
#include "visalign/benchmarks/hues/predictions.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::hues {

// Which answers of colour-blind players (HumanAnswer::colorblind) count.
enum class ColorblindFilter { kExclude, kInclude, kOnly };

// The players whose answers count: colour-blind ones as `colorblind` says; gender, age and language
// groups as GroupsOf names them ("female", "<30", "spanish", "unknown"), empty for any.
struct HumanFilter {
  ColorblindFilter colorblind = ColorblindFilter::kExclude;
  std::string gender, age, language;
  bool Accepts(const HumanAnswer& answer) const;
};

// A filter from untrusted text: colorblind "exclude" (or empty), "include" or "only"; each group
// empty or one that `humans` has. InvalidArgument at "human filter <field>" otherwise.
Result<HumanFilter> ParseHumanFilter(const std::string& colorblind, const std::string& gender, const std::string& age,
                                     const std::string& language, const HumanData& humans);

// The groups a filter can choose from: {"colorblind": ["exclude", "include", "only"], "gender": [...],
// "age": [...], "language": [...]}, each sorted.
Json HumanFilterChoicesJson(const HumanData& humans);

// Points of the ellipse curve (segments + 1, closed).
inline constexpr int kEllipseSegments = 72;

// The answers to one word that pass a filter.
struct WordView {
  int word = 0;
  int n = 0;                         // answers
  std::array<int, kCells> counts{};  // answers per cell
  stats::Vec2 mean{};                // CIE xy under the board's chromaticity; NaN without answers
  std::optional<stats::Mat2> cov;    // n − 1 denominator; nullopt when n < 2 or near-singular
  double d2 = 0;                     // the ellipse's squared Mahalanobis distance
  std::vector<stats::Vec2> ellipse;  // MahalanobisEllipse(mean, cov, d2); empty without cov
};
WordView ViewWord(const HumanData& humans, const Board& board, int word, const HumanFilter& filter, double d2);
// {"word", "category", "n", "counts": [480 ints, board order], "mean": [x, y] | null, "cov": [[..],[..]] | null,
//  "d2", "ellipse": [[x, y], ...]}.
Json WordViewJson(const WordView& view, const Vocabulary& vocabulary);

// The models a `hues evaluate` output folder evaluated, with their predictions: the files its
// summary.json lists in inputs.predictions (a relative path as it is when it exists, else relative to
// `results_dir`), each only while its SHA-256 is still the recorded one, so the explorer shows what
// was evaluated. InvalidArgument at "results folder <dir>" when summary.json is not a Hues summary, a
// file is missing or changed, or holds no model of the recorded name.
Result<std::vector<ModelPredictions>> LoadEvaluatedModels(const std::filesystem::path& results_dir,
                                                          const Vocabulary& vocabulary, const Board& board);
// {"model", "word", "top": [{"cell", "rank", "similarity"}]} of one model's predictions for a word; "top" is
// empty when the model has none for it.
Json ModelTopJson(const ModelPredictions& model, int word, const Vocabulary& vocabulary);

}  // namespace visalign::hues
