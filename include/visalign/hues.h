// Hues and Cues benchmark: the 480-cell board (16 rows A–P × 30 columns) mapped to CIE xy, the
// 100 clue words, ~300 human players' answers, and the published statistical comparison of a
// model's top-5 board cells with the human answers:
//   - Mahalanobis d² of the model's top-1 cell against the word's human mean and covariance;
//   - Hotelling two-sample T² between the human answers and the model's similarity-weighted
//     top-5 "confidence cloud" (the published recipe, reproduced exactly; see docs/hues.md),
//     plus survival-function p-values and Benjamini–Hochberg q-values over the words;
//   - the human leave-one-out baseline (how often a human is an outlier to the other humans);
//   - the nonsense baseline: does a model collapse to a default color on meaningless words.
// Data comes from data/hues/ (see data/hues/NOTICE.md). Every loader validates its input and
// returns errors naming the file, line and offending value.
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "visalign/clip.h"
#include "visalign/color.h"
#include "visalign/stats.h"
#include "visalign/status.h"

namespace visalign::hues {

inline constexpr int kRows = 16;   // A..P
inline constexpr int kCols = 30;   // 1..30
inline constexpr int kCells = kRows * kCols;
inline constexpr int kTopK = 5;    // predictions per word

// ---- Board ------------------------------------------------------------------------------------

// How a cell's 8-bit RGB becomes CIE xy.
//   kDisplay: the study's calibrated display, XYZ = M·(R², G², B²) with R, G, B in 0..255 and
//             M = [[69.1661, 52.4902, 46.6052], [39.0454, 115.8404, 16.3118],
//                  [3.3467, 12.6700, 170.1090]] (gamma 2). The default: published numbers use it.
//   kSrgb:    standard sRGB (IEC 61966-2-1) → linear → XYZ (D65).
enum class Chromaticity { kDisplay, kSrgb };
std::string_view ChromaticityName(Chromaticity c);  // "display", "srgb"
Result<Chromaticity> ParseChromaticity(std::string_view text);
stats::Vec2 CellChromaticity(color::Srgb8 rgb, Chromaticity c);

// Cell index = row · 30 + (column − 1), row A = 0. Names are "A1".."P30" (case-insensitive).
Result<int> ParseCell(std::string_view name);
std::string CellName(int index);

struct Cell {
  std::string name;   // "I18"
  char row = 'A';
  int col = 1;
  color::Srgb8 rgb;
  stats::Vec2 xy{};   // under the board's Chromaticity
  color::Lab lab;     // CIELAB of the sRGB color (D65), whatever the chromaticity mode
};

class Board {
 public:
  // board.csv: cell,row,col,R,G,B with all 480 cells exactly once, consistent names.
  static Result<Board> Load(const std::filesystem::path& board_csv, Chromaticity c);
  static Result<Board> Default(Chromaticity c);  // data/hues/board.csv
  const std::vector<Cell>& cells() const { return cells_; }
  const Cell& cell(int index) const { return cells_[static_cast<size_t>(index)]; }
  Chromaticity chromaticity() const { return chromaticity_; }

 private:
  std::vector<Cell> cells_;
  Chromaticity chromaticity_ = Chromaticity::kDisplay;
};

// ---- Macro color categories -------------------------------------------------------------------

// The 8 basic chromatic categories, plus kNeutral used only as a "macro class" (see MacroClass).
enum class Macro { kBrown, kRed, kOrange, kYellow, kGreen, kBlue, kPurple, kPink, kNeutral };
inline constexpr int kMacroCategories = 8;      // kBrown..kPink
inline constexpr int kMacroClasses = 9;         // with kNeutral
std::string_view MacroName(Macro m);            // "Brown", ..., "Pink", "Neutral"
Result<Macro> ParseMacro(std::string_view name);  // one of the 8 categories, case-insensitive

struct MacroCell {
  Macro category = Macro::kBrown;  // never kNeutral
  double confidence = 0;           // in [0, 1]
  bool neutral = false;            // near-achromatic cell
};

// Every cell's category, confidence and neutral flag. The shipped map (data/hues/macro_regions.csv)
// is produced by Derive() through `visalign hues macro-map`; any CSV with the same columns
// (cell,category,confidence,neutral) — e.g. a human consensus map — can replace it.
class MacroMap {
 public:
  static Result<MacroMap> Load(const std::filesystem::path& csv);
  static Result<MacroMap> Default();  // data/hues/macro_regions.csv
  // The documented rule (docs/hues.md): CIELAB of each cell; the category of the nearest chromatic
  // ISCC-NBS centroid (CIEDE2000; white/gray/black centroids skipped, so near-achromatic cells are
  // assigned by their hue) through the level-2 → 8-category table; confidence = share of the
  // kConfidenceNeighbours nearest chromatic centroids in that category; neutral when the cell's
  // chroma C*ab < kNeutralChroma.
  static MacroMap Derive(const Board& board, const color::IsccNbs& iscc);
  static constexpr int kConfidenceNeighbours = 5;
  static constexpr double kNeutralChroma = 10.0;

  const MacroCell& at(int cell) const { return cells_[static_cast<size_t>(cell)]; }
  // Category, or kNeutral for neutral cells: what nonsense collapse and entropy count.
  Macro MacroClass(int cell) const { return at(cell).neutral ? Macro::kNeutral : at(cell).category; }
  std::string ToCsv() const;
  const std::string& source() const { return source_; }

 private:
  std::array<MacroCell, kCells> cells_{};
  std::string source_;
};

// The 8-category name for an ISCC-NBS level-2 name ("reddish brown" → Brown), or nullopt for
// white, gray and black.
std::optional<Macro> MacroForIsccLevel2(std::string_view level2);

// ---- Words --------------------------------------------------------------------------------------

struct Word {
  std::string en;        // as in published result files ("HAPINESS", "BERT (AND ERNIE)")
  std::string es;
  std::string category;  // Animal, Food, Mineral, Plant, Environment, Subjective, Pop Culture
  int clue_id = 0;
};

class Vocabulary {
 public:
  static Result<Vocabulary> Load(const std::filesystem::path& words_csv);  // word_en,word_es,category,clue_id
  static Result<Vocabulary> Default();                                     // data/hues/words.csv
  const std::vector<Word>& words() const { return words_; }
  std::optional<int> IndexOfClue(int clue_id) const;
  // Index of the word whose English or Spanish spelling equals `text` (ASCII case-insensitive).
  std::optional<int> IndexOfName(std::string_view text) const;
  const std::vector<std::string>& categories() const { return categories_; }  // first-seen order

 private:
  std::vector<Word> words_;
  std::vector<std::string> categories_;
  std::map<int, int> by_clue_;
  std::map<std::string, int> by_name_;
};

struct NonsenseWord {
  std::string word;
  std::string group;   // number, stop_word, pseudoword, random_string
};
inline constexpr int kNonsenseGroups = 4;
inline constexpr int kNonsenseGroupSize = 4;
// nonsense16.csv (word,group,source): exactly 4 groups of 4 distinct words (case-insensitive).
Result<std::vector<NonsenseWord>> LoadNonsenseVocabulary(const std::filesystem::path& csv);
Result<std::vector<NonsenseWord>> DefaultNonsenseVocabulary();  // data/hues/nonsense16.csv

// ---- Humans -------------------------------------------------------------------------------------

struct HumanAnswer {
  int word = 0;          // index into the Vocabulary
  int cell = 0;
  std::string user, gender, age_range, language;  // empty when the column is absent
};

struct HumanData {
  std::string source;
  std::vector<HumanAnswer> answers;
  int users = 0;
  int excluded_answers = 0;       // colour-blind players' answers left out
  int excluded_users = 0;
  bool include_colorblind = false;
  int word_mismatches = 0;        // rows whose `word` is neither spelling of their clue (kept; clueId rules)
};

struct HumanLoadOptions {
  bool include_colorblind = false;
  // Players to exclude by userId (one per line); empty path = data/hues/colorblind_ids.txt.
  // Rows with a `colorblind` column equal to YES are excluded too.
  std::filesystem::path colorblind_ids;
};

// The published answer format: columns userId,timestamp,clueCategory,clueId,word,coordinate
// (+ optional language,gender,ageRange,colorblind,...), LF or CRLF. Words are matched by clueId.
Result<HumanData> LoadHumans(const std::filesystem::path& csv, const Vocabulary& vocabulary,
                             const HumanLoadOptions& options = {});
Result<HumanData> DefaultHumans(const Vocabulary& vocabulary, const HumanLoadOptions& options = {});

// Outlier threshold on d²: "chi2:P" → χ²₂ quantile at P (default chi2:0.95 = 5.991), "sigma:K" → K².
struct Threshold {
  std::string spec;
  double d2 = 0;
};
Result<Threshold> ParseThreshold(std::string_view spec);

struct WordBaseline {
  int word = 0;
  int n = 0;
  stats::Vec2 mean{};
  stats::Mat2 cov{};              // n − 1 denominator (zeros when n < 2)
  bool singular = true;           // covariance near-singular or n < 2: no Mahalanobis possible
  stats::Mat2 inverse{};          // valid when !singular
  int loo_tested = 0;             // answers whose leave-one-out covariance was invertible
  int loo_failed = 0;
  int loo_singular = 0;           // answers whose leave-one-out covariance was singular (not tested)
  double loo_fail_rate = 0;       // loo_failed / loo_tested (NaN when nothing was tested)
  std::array<int, kMacroCategories> macro_counts{};
  Macro modal_macro = Macro::kBrown;  // most frequent category of the answers (ties: lower enum)
};

struct CategoryRate {
  std::string category;
  int n_words = 0;
  double fail_rate = 0;  // mean of the words' LOO fail rates (words without a rate are skipped and counted)
  int words_without_rate = 0;
};

struct GroupRate {
  std::string dimension;  // gender, age, language
  std::string group;      // e.g. "female", "<30", "spanish"
  int answers = 0;
  int tested = 0;
  int failed = 0;
  double fail_rate = 0;   // failed / tested over all LOO tests of this group's answers
};

struct HumanBaseline {
  Threshold threshold;
  std::vector<WordBaseline> words;  // one per vocabulary word, vocabulary order
  std::vector<CategoryRate> categories;
  std::vector<GroupRate> demographics;
  double fail_rate = 0;             // mean of word rates
  int singular_words = 0;
};

HumanBaseline ComputeHumanBaseline(const HumanData& humans, const Vocabulary& vocabulary, const Board& board,
                                   const MacroMap& macro, const Threshold& threshold);
nlohmann::json HumanBaselineJson(const HumanBaseline& baseline, const HumanData& humans,
                                 const Vocabulary& vocabulary);

// ---- Model predictions --------------------------------------------------------------------------

struct Prediction {
  int cell = 0;
  double similarity = 0;
};

struct ModelPredictions {
  std::string name;
  std::string source;                              // file the predictions came from
  std::vector<std::vector<Prediction>> words;      // per vocabulary word, best first (empty = missing)
  std::map<std::string, std::vector<Prediction>> nonsense;  // nonsense words, keyed upper-case
};

enum class PredictionFormat { kAuto, kPeer, kJsonl };
Result<PredictionFormat> ParsePredictionFormat(std::string_view text);

// Loads predictions from `path`:
//   - a folder of `<model>/results.csv` (published format; the folder name is the model's name;
//     sub-folders without results.csv are skipped with a warning), or a folder holding
//     results.csv itself;
//   - a published-format CSV file: word,coordenada_x,coordenada_y,R,G,B,distance, 5 rows per word
//     best first (model name: the parent folder for results.csv, else the file stem);
//   - JSONL: one object per line {"model": NAME, "word": WORD, "top": [{"cell": "G10",
//     "similarity": 0.21}, ...5]}; "model" may be omitted (then the file stem is the name).
// Words are matched to the vocabulary (English or Spanish) or the nonsense vocabulary, ASCII
// case-insensitive. Errors name the file, line and value: unknown cells or words, RGB that is not
// the board's, non-numeric similarities, a word without exactly 5 predictions, an empty file.
Result<std::vector<ModelPredictions>> LoadPredictions(const std::filesystem::path& path, PredictionFormat format,
                                                      const Vocabulary& vocabulary, const Board& board,
                                                      const std::vector<NonsenseWord>& nonsense);

// One word's top predictions under its own spelling (any word, not only the benchmark's).
struct WordPredictions {
  std::string word;
  std::vector<Prediction> top;
};

// Writers for the two formats (used by `hues run` and the benchmark). The ModelPredictions forms
// write the clue words (English) in vocabulary order, then the nonsense words.
std::string PeerCsv(const std::vector<WordPredictions>& words, const Board& board);
std::string PredictionsJsonl(const std::string& model, const std::vector<WordPredictions>& words);
std::string PeerCsv(const ModelPredictions& model, const Vocabulary& vocabulary, const Board& board,
                    const std::vector<NonsenseWord>& nonsense);
std::string PredictionsJsonl(const ModelPredictions& model, const Vocabulary& vocabulary,
                             const std::vector<NonsenseWord>& nonsense);

// ---- Predictions from a native CLIP model (`hues run`) ------------------------------------------

struct ClipRunOptions {
  std::string prompt_template = "{}";  // "{}" is replaced by the word ("a photo of the color {}")
  // Folder for cached board image embeddings; empty = no cache. The cache file is keyed by the
  // model fingerprint (weights + preprocessing), the board file's SHA-256 and the patch size.
  std::filesystem::path cache_dir;
};

struct ClipRunResult {
  std::vector<WordPredictions> words;  // in input order, top-5 by cosine similarity, best first
  bool cache_hit = false;
  std::filesystem::path cache_file;    // empty without a cache
};

// Ranks the 480 cells for each word: board patches are solid images of the model's input size
// run through the model's own preprocessing and image tower; words go through the template and
// the text tower; similarity = cosine. Ties rank the lower cell index first.
Result<ClipRunResult> PredictWithClip(const clip::ClipModel& model, const Board& board,
                                      const std::vector<std::string>& words, const ClipRunOptions& options);

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
  double mahalanobis_d2 = 0;     // NaN when the human covariance is singular
  bool mahalanobis_outlier = false;
  stats::HotellingResult hotelling;  // singular → NaN statistics
  double q_value = 0;            // BH over the model's words (NaN when p is NaN)
  bool reject = false;           // q_value ≤ alpha
};

struct RateCount {
  int tested = 0;
  int failed = 0;
  double rate() const;  // failed / tested, NaN when nothing was tested
};

struct ModelEvaluation {
  std::string name;
  std::string source;
  std::vector<WordEvaluation> words;   // the words the model has predictions for, vocabulary order
  std::vector<std::string> missing_words;
  bool negative_similarities = false;
  RateCount mahalanobis;               // outliers among words with a non-singular human covariance
  RateCount hotelling;                 // rejections (q ≤ alpha) among non-singular tests
  RateCount hotelling_uncorrected;     // p ≤ alpha, as the published analysis counted
  double human_fail_rate = 0;          // mean human LOO rate over the same words
  struct Category {
    std::string category;
    int n_words = 0;
    RateCount mahalanobis, hotelling;
    double human_fail_rate = 0;
  };
  std::vector<Category> categories;
};

ModelEvaluation EvaluateModel(const ModelPredictions& model, const HumanBaseline& baseline,
                              const Vocabulary& vocabulary, const Board& board, const MacroMap& macro,
                              const EvaluateOptions& options);

// model → architecture family, dataset family (catalog CSV: model,architecture,dataset).
struct CatalogEntry {
  std::string architecture, dataset;
};
Result<std::map<std::string, CatalogEntry>> LoadCatalog(const std::filesystem::path& csv);

struct EvaluationReport {
  std::string humans_source;
  Threshold threshold;
  EvaluateOptions options;
  Chromaticity chromaticity = Chromaticity::kDisplay;
  std::string macro_source;
  std::vector<ModelEvaluation> models;
  std::optional<std::map<std::string, CatalogEntry>> catalog;
};

// Writes words.csv, models.csv, categories.csv, hotelling.csv, (families.csv with a catalog),
// summary.json and summary.md into `dir` (created if needed).
Status WriteEvaluation(const EvaluationReport& report, const HumanBaseline& baseline, const Vocabulary& vocabulary,
                       const std::filesystem::path& dir);

// ---- Nonsense baseline --------------------------------------------------------------------------

enum class CollapseClass { kNeutral, kSpecificColor, kSelective, kHighEntropy };
std::string_view CollapseClassName(CollapseClass c);  // neutral_collapse, specific_color_collapse, ...

struct NonsenseGroupResult {
  std::string group;
  std::vector<int> top1;          // one cell per word of the group, vocabulary order
  bool collapsed = false;         // ≥ 3 of the 4 top-1 cells share a macro class
  Macro onto = Macro::kNeutral;   // the shared macro class when collapsed
};

struct NonsenseResult {
  std::string model;
  std::vector<NonsenseGroupResult> groups;
  CollapseClass collapse = CollapseClass::kHighEntropy;
  std::optional<Macro> collapse_onto;     // for neutral / specific-color collapse
  double entropy_bits = 0;               // of the 16 top-1 macro classes (9 classes incl. Neutral)
  std::optional<int> prior_cell;         // modal nonsense top-1 cell, if it occurs ≥ 2 times
  int prior_count = 0;
  std::vector<int> false_positive_words; // valid words whose top-1 is the prior cell
};

// Needs predictions for every nonsense word (error naming the missing ones).
Result<NonsenseResult> ClassifyNonsense(const ModelPredictions& model, const std::vector<NonsenseWord>& vocabulary,
                                        const MacroMap& macro);

}  // namespace visalign::hues
