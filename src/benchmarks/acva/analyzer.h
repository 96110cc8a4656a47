// The ACVA analysis's working state (internal to the acva module): the facts derived per image,
// the (model, concept) groups and the Analyzer that turns judged images into the typed Analysis.
// Its members are defined by topic: analysis.cc (images, models, the run), analysis_diversity.cc
// (D_img, D_met, H, quadrant medians, pooled figures), analysis_correlations.cc (2AFC pair facts,
// Spearman correlations, rubric-weight sensitivity). Definitions: docs/acva.md ("Metrics").
#pragma once

#include <array>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "benchmarks/acva/tiers.h"
#include "visalign/benchmarks/acva/acva.h"

namespace visalign::acva::internal {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// A rubric component counts as "missing" from an image when its rating is below this level.
constexpr double kMissingBelow = 0.5;
constexpr size_t kMinGroupImages = 2;

enum class Mode { kFiltered, kUnfiltered };
constexpr std::array<Mode, 2> kModes = {Mode::kFiltered, Mode::kUnfiltered};

// What the analysis derives for one image.
struct ImageFacts {
  const JudgedImage* image = nullptr;
  size_t concept_index = 0;
  std::optional<double> adequacy, adequacy_equal;
  bool pass = false;
  int cluster = -1;  // metaphor cluster within the concept; -1 without a valid description
};

// Diversity of one (model, concept) group under one mode.
struct GroupDiversity {
  size_t concept_index = 0;
  double d_img = kNaN, d_met = kNaN, h = kNaN;
  double adequacy_mean = kNaN;
};

struct ModelData {
  std::string name;
  std::vector<std::vector<size_t>> by_concept;  // image indices per concept
  std::map<Mode, std::vector<GroupDiversity>> groups;
};

// The 2AFC and distinctiveness facts of one model on one concept pair.
struct PairFacts {
  double loo = kNaN, afc = kNaN, first_share = kNaN, adequacy_mean = kNaN;
  size_t trials = 0, invalid = 0;
};

// Spearman's rho of x and y as a CorrelationAnalysis named `name`; NaN with the reason when undefined.
CorrelationAnalysis Correlation(const std::string& name, const std::vector<double>& x, const std::vector<double>& y,
                                const std::string& what);

class Analyzer {
 public:
  Analyzer(const ConceptSet& set, const std::vector<JudgedImage>& images, const AnalysisOptions& options)
      : set_(set), images_(images), options_(options) {}
  Result<Analysis> Run();

 private:
  // analysis.cc
  Status IndexImages();
  ModelAnalysis Model(const ModelData& m, size_t tier) const;
  // Each model's (passes, judged images) per concept.
  std::vector<ModelTally> Tallies() const;
  ImageAnalysis Image(const ImageFacts& f) const;

  // analysis_diversity.cc
  // A model's descriptions of a concept are clustered among themselves, so its H does not depend on
  // the other models analyzed.
  void ClusterMetaphors();
  std::vector<GroupDiversity> Diversity(const ModelData& m, Mode mode) const;
  // The groups of `mode` with both D_img and H defined.
  static std::vector<DiversityPoint> SplitPoints(const ModelData& m, Mode mode);
  static DiversityPoint Medians(const std::vector<DiversityPoint>& points);
  // The medians every model is split at unless each uses its own: the frozen ones, or those over the
  // split points of every model.
  DiversityPoint SplitMedians(Mode mode) const;
  std::vector<DiversityPoint> AllSplitPoints(Mode mode) const;
  DiversityAnalysis DiversitySummary(const ModelData& m, Mode mode) const;
  // Share of `points` whose D_img (H) equals the median: the groups the tie rule splits half and half.
  static DiversityPoint OnMedian(const std::vector<DiversityPoint>& points, const DiversityPoint& median);
  PooledQuadrants PooledSplit(Mode mode) const;
  // Every model's images, groups and (model, pair) cells together.
  PooledAnalysis Pooled() const;

  // analysis_correlations.cc
  // Spearman over models of their means: adequacy vs D_img, H (unfiltered) and 2AFC accuracy.
  static std::vector<CorrelationAnalysis> ModelMeanCorrelations(const std::vector<ModelAnalysis>& models);
  WeightsComparison CompareWeights(const std::vector<ModelAnalysis>& models) const;
  PairFacts Pair(const ModelData& m, const ConceptPair& p) const;
  std::vector<CorrelationAnalysis> Correlations() const;

  const ConceptSet& set_;
  const std::vector<JudgedImage>& images_;
  const AnalysisOptions& options_;
  std::vector<ImageFacts> facts_;
  std::vector<ModelData> models_;
  std::map<Mode, DiversityPoint> split_medians_;  // SplitMedians
};

}  // namespace visalign::acva::internal
