// ACVA-Bench: abstract concept visualization. A text-to-image model gets only an abstract word
// (忠诚 "loyalty"); a VLM judge answers dictionary-grounded rubric questions about each image, describes
// its main visual metaphor and makes two-alternative forced choices between near-synonyms; CLIP embeds
// images and metaphor descriptions. From these, per model: semantic adequacy, diversity and
// distinctiveness, each with bootstrap intervals over concepts. Normative definitions: docs/acva.md.
//
// This header holds the data model (concept sets, judged images), the pure metrics, the analysis that
// turns judged images into summary.json, and the judge protocol (prompts, reply parsing, cache keys).
// The pipeline that drives generation, judging and embedding through the run store is acva_pipeline.h.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/stats/resampling.h"

namespace visalign::acva {

// ---------------------------------------------------------------------------------------------
// Concept sets: concepts.jsonl + pairs.jsonl (format in docs/acva.md).

enum class Category { kEmotion, kCommunication, kPhysical, kEpistemic, kMoral, kSocial };
inline constexpr std::array<Category, 6> kCategories = {Category::kEmotion,  Category::kCommunication,
                                                        Category::kPhysical, Category::kEpistemic,
                                                        Category::kMoral,    Category::kSocial};
// "emotion", "communication", "physical", "epistemic", "moral", "social".
std::string_view CategoryName(Category category);
std::optional<Category> CategoryFromName(std::string_view name);

// The semantic framework a rubric question comes from.
enum class Framework { kComponential, kFrame, kImageSchema };
std::string_view FrameworkName(Framework framework);  // "componential", "frame", "image-schema"
std::optional<Framework> FrameworkFromName(std::string_view name);

struct RubricQuestion {
  std::string id;  // unique within its concept
  std::string text_zh;
  std::string text_en;
  double weight = 1;  // > 0
  Framework framework = Framework::kComponential;
};

struct Concept {
  std::string id;        // [a-z0-9_-]+, unique in the set
  std::string word;      // the Chinese word, the default prompt
  std::string gloss_en;  // English gloss
  Category category = Category::kEmotion;
  std::string definition;
  std::map<std::string, double> ratings;  // optional psycholinguistic norms: imageability, concreteness, ...
  std::vector<RubricQuestion> rubric;     // never empty
};

// A near-synonym pair, by concept id.
struct ConceptPair {
  std::string a;
  std::string b;
  std::string note;
};

struct ConceptSet {
  std::vector<Concept> concepts;
  std::vector<ConceptPair> pairs;
  std::string fingerprint;  // SHA-256 of the two files' bytes (identifies the set in runs)

  // Index of a concept id in `concepts`, or nullopt.
  std::optional<size_t> IndexOf(std::string_view id) const;
};

// Parse one file's text; errors name "<source>:<line>" and the field.
Result<std::vector<Concept>> ParseConcepts(std::string_view jsonl, const std::string& source);
Result<std::vector<ConceptPair>> ParsePairs(std::string_view jsonl, const std::string& source,
                                            const std::vector<Concept>& concepts);
Result<ConceptSet> LoadConceptSet(const std::filesystem::path& concepts_file, const std::filesystem::path& pairs_file);
// data/acva/concepts.jsonl and data/acva/pairs.jsonl.
Result<std::filesystem::path> StarterConceptsFile();
Result<std::filesystem::path> StarterPairsFile();

// The concepts a generation selects: those whose id is among filters["ids"] (when that key is
// given) and whose CategoryName is among filters["category"] (when given), the first `limit` of
// them (0 = all), in set order. Pairs and fingerprint are kept as they are. The result may have
// no concept; other filter keys are ignored.
ConceptSet SelectConcepts(const ConceptSet& set, const std::map<std::string, std::set<std::string>>& filters,
                          int limit);

// ---------------------------------------------------------------------------------------------
// Judged images: everything the pipeline knows about one generated image.

// Judge ratings are constrained to these levels.
inline constexpr std::array<double, 5> kRatingLevels = {0.0, 0.25, 0.5, 0.75, 1.0};

struct RubricAnswer {
  std::string question_id;
  std::optional<double> rating;  // nullopt: the judge never gave a parseable answer (invalid, not 0)
  std::string evidence;
  std::string error;  // why it is invalid
};

// One 2AFC trial: the image's concept belongs to pair (pair_a, pair_b); `first` is the word listed first.
struct AfcTrial {
  std::string pair_a, pair_b;         // concept ids as in pairs.jsonl
  std::string first, second;          // concept ids in the order presented
  std::optional<std::string> choice;  // concept id chosen; nullopt when invalid
  std::string error;
};

struct JudgedImage {
  std::string model;  // the generation run's name
  std::string concept_id;
  int k = 0;         // sample index
  std::string path;  // image file
  std::string sha256;
  std::vector<RubricAnswer> answers;  // in rubric order
  std::optional<std::string> metaphor;
  std::string metaphor_error;
  std::vector<AfcTrial> afc;
  std::vector<float> image_embedding;     // empty when not available
  std::vector<float> metaphor_embedding;  // empty when no valid metaphor

  // "<model>/<concept>/<k>": how items.jsonl and human ratings name an image.
  std::string ImageId() const;
};

// ---------------------------------------------------------------------------------------------
// Metrics on hand-built inputs (definitions in docs/acva.md).

using Embedding = std::vector<float>;

// 1 - cos(a, b), computed in double and clamped to [0, 2]; a zero vector is at distance 1 from anything.
double CosineDistance(const Embedding& a, const Embedding& b);
// Mean over the n(n-1)/2 unordered pairs; NaN when fewer than 2 vectors.
double MeanPairwiseCosineDistance(const std::vector<Embedding>& vectors);
// Average-linkage agglomerative clustering with cosine distance: clusters are merged, closest first,
// while their average pairwise distance is <= threshold. Labels 0, 1, ... in order of first member.
std::vector<int> AverageLinkageClusters(const std::vector<Embedding>& vectors, double threshold);
// Shannon entropy in bits of the label distribution (0 for one label or an empty list).
double LabelEntropyBits(const std::vector<int>& labels);
// Leave-one-out nearest-centroid accuracy of two classes with cosine distance (embeddings normalised
// first; a tie counts 1/2). NaN unless both classes have at least 2 members.
double LeaveOneOutCentroidAccuracy(const std::vector<Embedding>& class_a, const std::vector<Embedding>& class_b);
// Quadrant shares of a median split of (D_img, H) over groups (docs/acva.md, "Quadrants"). With the
// split points m_D, m_H, a value x is high with weight h(x, m) = 1 if x > m, 1/2 if x = m, 0 if x < m
// (a value at the median is half high, half low: when every H ties, the H split is even rather than
// all low). Each group adds h_D h_H to genuine, h_D (1 - h_H) to pseudo, (1 - h_D) h_H to metaphor and
// (1 - h_D)(1 - h_H) to low; the shares are these sums over the number of groups (they sum to 1, and
// are NaN without groups).
struct DiversityPoint {
  double d_img = 0;
  double h = 0;
};
struct QuadrantShares {
  double genuine = 0, pseudo = 0, metaphor = 0, low = 0;
};
QuadrantShares MedianSplit(const std::vector<DiversityPoint>& groups, double d_img_median, double h_median);
// Weighted adequacy sum(w_i r_i) / sum(w_i); nullopt when any answer is invalid.
std::optional<double> Adequacy(const Concept& cpt, const std::vector<RubricAnswer>& answers, bool equal_weights);

// ---------------------------------------------------------------------------------------------
// Analysis: judged images of one or more models -> summary.json and items.jsonl rows.

// Where the medians of the quadrant split come from (docs/acva.md, "Quadrants"):
//   kPooled (the default): the groups of every model analysed together, as ACVA §5.2 does (its 112 of
//     150 groups of one model in the low quadrant cannot happen with per-model medians, which put at
//     most half of a model's groups below each median); a model's shares depend on the other models;
//   kFrozen: fixed medians taken from an earlier analysis (`FrozenMediansFromSummary`), so adding a
//     model moves no other model's shares;
//   kModel: each model's own groups (a model's shares never depend on the others).
enum class MedianScope { kPooled, kFrozen, kModel };
std::string_view MedianScopeName(MedianScope scope);  // "pooled", "frozen", "model"
// Fixed split points for kFrozen, one per diversity mode, and where they were read.
struct FrozenMedians {
  DiversityPoint filtered, unfiltered;
  std::string source;  // the summary.json they come from
};
// The split points an analysis used (`pooled.diversity.<mode>.median_split` of its summary.json: the
// pooled medians, or the frozen ones); an error names the file and field when they are missing or
// not finite numbers, or when the document is not an ACVA summary.
Result<FrozenMedians> FrozenMediansFromSummary(const Json& summary, const std::string& source);

struct AnalysisOptions {
  double pass_threshold = 0.6;
  double cluster_threshold = 0.25;  // cosine distance for metaphor clusters
  MedianScope median_scope = MedianScope::kPooled;
  std::optional<FrozenMedians> frozen_medians;  // required by (and only with) kFrozen
  double alpha = 0.05;                          // significance level of the paired tests behind tiers
  stats::BootstrapOptions bootstrap;
  size_t most_missed = 10;  // how many questions (ever rated below 0.5) the diagnostics list per model
};

// The typed result of an analysis; AnalysisJson and ImageAnalysisJson serialise it. Rates, means and
// interval ends are NaN where undefined (null in JSON, empty in CSV). Definitions: docs/acva.md.
struct CategoryAnalysis {
  double pass_rate = 0;
  stats::Interval pass_rate_ci;
  double adequacy_mean = 0;
};
// Ratings of one rubric framework (or one question): how many, their mean, the share below 0.5.
struct RatingTally {
  double n = 0, mean_rating = 0, missing_rate = 0;
};
struct MissedQuestion {
  std::string concept_id, question_id;
  Framework framework = Framework::kFrame;
  std::string text_en;
  RatingTally tally;
};
struct DiversityAnalysis {
  size_t n_groups = 0;  // (model, concept) groups with at least two images
  double d_img_mean = 0, d_met_mean = 0, h_mean = 0;
  stats::Interval d_img_ci, d_met_ci, h_ci;
  QuadrantShares quadrants;
  MedianScope median_scope = MedianScope::kPooled;
  DiversityPoint median;     // where the quadrants are split
  DiversityPoint on_median;  // share of the split groups whose D_img (H) equals its median (NaN without groups)
};
struct PairAnalysis {
  std::string a, b;
  double embedding_loo_acc = 0, afc_acc = 0, afc_first_share = 0;
  size_t afc_trials = 0, afc_invalid = 0;
};
struct DistinctivenessAnalysis {
  double embedding_loo_acc_mean = 0, afc_acc_mean = 0, afc_first_share = 0;
  stats::Interval embedding_loo_acc_ci, afc_acc_ci, afc_first_share_ci;
};
struct ModelAnalysis {
  std::string model;
  size_t tier = 0;  // 1 = best
  size_t n_images = 0, n_invalid = 0;
  double pass_rate = 0, adequacy_mean = 0;
  stats::Interval pass_rate_ci, adequacy_mean_ci;
  std::map<Category, CategoryAnalysis> by_category;
  std::map<Framework, RatingTally> by_framework;
  std::vector<MissedQuestion> most_missed;
  DiversityAnalysis filtered, unfiltered;  // passing images only / every image
  DistinctivenessAnalysis distinctiveness;
  std::vector<PairAnalysis> pairs;  // concept-set pair order
};
// A Spearman correlation; `error` says why rho is undefined (rho and p_value are then NaN).
struct CorrelationAnalysis {
  std::string name;  // "adequacy_vs_d_img", ...
  size_t n = 0;
  double rho = 0, p_value = 0;
  std::string error;
};
// Totals over every analyzed model (docs/acva.md, "Pooled totals").
struct PooledCategory {
  size_t n_images = 0;  // images with a defined adequacy
  double pass_rate = 0, adequacy_mean = 0;
};
struct PooledQuadrants {
  size_t n_groups = 0;  // groups of every model with D_img and H defined
  QuadrantShares quadrants;
  MedianScope median_scope = MedianScope::kPooled;  // kFrozen with frozen medians, else kPooled
  DiversityPoint median, on_median;                 // split at the medians over all these groups (or the frozen ones)
};
struct PooledPair {
  std::string a, b;
  size_t n_models = 0;  // models with a defined 2AFC accuracy on the pair
  double afc_acc_mean = 0;
};
struct PooledAnalysis {
  PooledCategory all;
  std::map<Category, PooledCategory> by_category;
  PooledQuadrants filtered, unfiltered;
  size_t afc_cells = 0;           // (model, pair) cells with a defined 2AFC accuracy
  double afc_acc_mean = 0;        // their mean
  std::vector<PooledPair> pairs;  // concept-set pair order
};
// Equal rubric weights vs the concept set's weights: how much adequacy moves and whether the models' order does.
struct WeightsComparison {
  size_t n_images = 0;
  double mean_change = 0;  // mean over images of A (set weights) - A (equal weights)
  double mean_abs_change = 0;
  CorrelationAnalysis models_rho;  // Spearman over models of adequacy_mean, equal vs set weights
  bool same_order = true;          // the models ranked by adequacy_mean (ties by name) in the same order
};
struct PassRateComparison {
  std::string a, b;
  size_t n_concepts = 0;
  double difference = 0, p_value = 0;
  stats::Interval ci;
  bool significant = false;
};
struct Tier {
  size_t tier = 0;
  std::vector<std::string> models;
};
// What the analysis derived for one image (the image without its embeddings).
struct ImageAnalysis {
  JudgedImage image;
  std::string word;
  Category category = Category::kEmotion;
  std::optional<double> adequacy, adequacy_equal_weights;
  bool pass = false;
  int metaphor_cluster = -1;  // -1 without a valid description
};
struct Analysis {
  std::string concept_set;  // ConceptSet::fingerprint
  size_t n_concepts = 0, n_pairs = 0;
  AnalysisOptions options;
  std::vector<ModelAnalysis> models;  // by tier, then descending pass rate, then name
  std::vector<CorrelationAnalysis> correlations;
  PooledAnalysis pooled;
  WeightsComparison weights;
  std::vector<PassRateComparison> comparisons;
  std::vector<Tier> tiers;
  std::vector<ImageAnalysis> images;  // input order
};

// The summary.json document of an analysis: the results contract's header (benchmark "acva",
// schema_version, visalign_version), "concept_set", "options", "models", "correlations", "pooled",
// "weights_comparison", "comparisons", "tiers" (the command adds "inputs", "judge", "generation" and "embeddings").
Json AnalysisJson(const Analysis& analysis);
// One items.jsonl row.
Json ImageAnalysisJson(const ImageAnalysis& image);

struct AnalysisResult {
  Analysis analysis;
  Json summary;             // AnalysisJson(analysis)
  std::vector<Json> items;  // ImageAnalysisJson of every image
};

// Every image must name a concept of `set` and carry one answer per rubric question (in order).
// Models are listed by tier, then descending pass rate, then name, whatever the order of `images`.
Result<AnalysisResult> Analyze(const ConceptSet& set, const std::vector<JudgedImage>& images,
                               const AnalysisOptions& options);

// summary.csv (one row per model: the headline numbers, each the shortest decimal that reads back as
// the same double; undefined numbers are empty cells) and summary.md (tables rounded for reading,
// p-values by FormatPValue) from summary.json, models in summary.json's order.
// summary.md opens with SummaryWarnings.
std::string SummaryCsv(const Json& summary);
std::string SummaryMarkdown(const Json& summary);
// Conditions that make summary.json's numbers meaningless or partial, one sentence each: a
// random-weight CLIP model (embeddings.random_weights), generation runs with failed or pending
// images, models with images the judge gave no valid answer for (n_invalid). summary.md opens with
// them (MarkdownWarning) and `visalign report` shows them at the top of the ACVA section.
std::vector<std::string> SummaryWarnings(const Json& summary);

// A p-value with two significant digits ("0.035", "1.2e-05", "1"), never rounded to zero. `floor` is
// the smallest nonzero p the test can give (2/B for a paired bootstrap with B resamples, 0 for an
// exact test); a p below it prints as the bound, "< 0.001". NaN prints "–".
std::string FormatPValue(double p, double floor);

// ---------------------------------------------------------------------------------------------
// Human validation: ratings.csv with columns image, rater, score (score in [0, 1]; `image` is an
// items.jsonl image_id or an image SHA-256).

struct AgreementResult {
  size_t n_images = 0;                 // images with both a human and an automatic score
  size_t n_ratings = 0;                // human ratings used
  stats::RankCorrelation spearman;     // mean human score vs automatic adequacy, over images
  std::string spearman_error;          // set when rho is undefined (too few images, constant scores)
  double exact_agreement = 0;          // share of ratings in the same of 5 equal-width bins
  double within_one_bin = 0;           // share of ratings at most one bin apart
  std::vector<std::string> unmatched;  // image names in the CSV that no item has
};

// Bin of a score in [0, 1] among 5 equal bins [0, .2), [.2, .4), ..., [.8, 1].
int ScoreBin(double score);
Result<AgreementResult> HumanAgreement(const std::vector<Json>& items, const std::filesystem::path& ratings_csv);
Json AgreementJson(const AgreementResult& result);

}  // namespace visalign::acva
