// From judged images to the typed Analysis: indexing the images, each model's adequacy, pass rate
// and distinctiveness, the tiers, and the entry point Analyze (serialised in analysis_json.cc).
// Diversity is analysis_diversity.cc's, correlations analysis_correlations.cc's (the Analyzer is
// declared in analyzer.h). Definitions: docs/acva.md ("Metrics" and "Statistics").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "benchmarks/acva/analyzer.h"
#include "benchmarks/acva/ratios.h"
#include "benchmarks/acva/tiers.h"
#include "visalign/benchmarks/acva/acva.h"

namespace visalign::acva::internal {

Result<Analysis> Analyzer::Run() {
  VISALIGN_RETURN_IF_ERROR(IndexImages());
  ClusterMetaphors();
  for (ModelData& m : models_)
    for (Mode mode : kModes) m.groups[mode] = Diversity(m, mode);
  for (Mode mode : kModes) split_medians_[mode] = SplitMedians(mode);

  Analysis result;
  result.concept_set = set_.fingerprint;
  result.n_concepts = set_.concepts.size();
  result.n_pairs = set_.pairs.size();
  result.options = options_;
  const std::vector<internal::ModelTally> tallies = Tallies();
  const std::vector<size_t> order = internal::RankByPassRate(tallies);
  internal::TierResult tiers = internal::Tiers(tallies, order, options_.alpha, options_.bootstrap);
  for (size_t mi : order) result.models.push_back(Model(models_[mi], tiers.tier_of[mi]));
  result.correlations = Correlations();
  for (CorrelationAnalysis& c : ModelMeanCorrelations(result.models)) result.correlations.push_back(std::move(c));
  result.pooled = Pooled();
  result.weights = CompareWeights(result.models);
  result.comparisons = std::move(tiers.comparisons);
  result.tiers = std::move(tiers.tiers);
  for (const ImageFacts& f : facts_) result.images.push_back(Image(f));
  return result;
}

Status Analyzer::IndexImages() {
  std::map<std::string, size_t> model_index;
  for (const JudgedImage& img : images_) {
    auto c = set_.IndexOf(img.concept_id);
    if (!c)
      return Status::InvalidArgument("image of unknown concept \"" + img.concept_id + "\"", img.ImageId(),
                                     "a concept of the concept set");
    const Concept& cpt = set_.concepts[*c];
    if (img.answers.size() != cpt.rubric.size())
      return Status::InvalidArgument(std::to_string(img.answers.size()) + " rubric answers", img.ImageId(),
                                     std::to_string(cpt.rubric.size()) + " (one per rubric question)");
    for (size_t q = 0; q < img.answers.size(); ++q)
      if (img.answers[q].question_id != cpt.rubric[q].id)
        return Status::InvalidArgument(
            "answer " + std::to_string(q + 1) + " is for question \"" + img.answers[q].question_id + "\"",
            img.ImageId(), "question \"" + cpt.rubric[q].id + "\" (rubric order)");
    auto [it, inserted] = model_index.emplace(img.model, models_.size());
    if (inserted) {
      models_.push_back({img.model, std::vector<std::vector<size_t>>(set_.concepts.size()), {}});
    }
    ImageFacts f;
    f.image = &img;
    f.concept_index = *c;
    f.adequacy = Adequacy(cpt, img.answers, /*equal_weights=*/false);
    f.adequacy_equal = Adequacy(cpt, img.answers, /*equal_weights=*/true);
    f.pass = f.adequacy && *f.adequacy >= options_.pass_threshold;
    models_[it->second].by_concept[*c].push_back(facts_.size());
    facts_.push_back(f);
  }
  return Status::Ok();
}

ModelAnalysis Analyzer::Model(const ModelData& m, size_t tier) const {
  UnitRatio pass, adequacy;
  size_t n_images = 0, n_invalid = 0;
  std::map<Category, std::pair<UnitRatio, UnitRatio>> by_category;
  struct QuestionTally {
    double sum = 0, missing = 0, n = 0;
  };
  std::map<std::pair<size_t, size_t>, QuestionTally> questions;
  std::map<Framework, QuestionTally> frameworks;
  for (size_t c = 0; c < m.by_concept.size(); ++c) {
    double passes = 0, valid = 0, adequacy_sum = 0;
    for (size_t i : m.by_concept[c]) {
      const ImageFacts& f = facts_[i];
      ++n_images;
      if (!f.adequacy) ++n_invalid;
      for (size_t q = 0; q < f.image->answers.size(); ++q) {
        const auto& rating = f.image->answers[q].rating;
        if (!rating) continue;
        for (QuestionTally* t : {&questions[{c, q}], &frameworks[set_.concepts[c].rubric[q].framework]}) {
          t->sum += *rating;
          t->missing += *rating < kMissingBelow ? 1 : 0;
          t->n += 1;
        }
      }
      if (!f.adequacy) continue;
      valid += 1;
      passes += f.pass ? 1 : 0;
      adequacy_sum += *f.adequacy;
    }
    if (m.by_concept[c].empty()) continue;
    pass.Add(passes, valid);
    adequacy.Add(adequacy_sum, valid);
    auto& [cat_pass, cat_adequacy] = by_category[set_.concepts[c].category];
    cat_pass.Add(passes, valid);
    cat_adequacy.Add(adequacy_sum, valid);
  }
  ModelAnalysis out;
  out.model = m.name;
  out.tier = tier;
  for (const auto& [cat, ratios] : by_category)
    out.by_category[cat] = {ratios.first.Value(), ratios.first.Interval(options_.bootstrap), ratios.second.Value()};
  for (const auto& [fw, t] : frameworks) out.by_framework[fw] = {t.n, t.sum / t.n, t.missing / t.n};
  std::vector<std::pair<std::pair<size_t, size_t>, QuestionTally>> ranked(questions.begin(), questions.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) {
    const double mx = x.second.missing / x.second.n, my = y.second.missing / y.second.n;
    if (mx != my) return mx > my;
    return x.second.sum / x.second.n < y.second.sum / y.second.n;
  });
  for (size_t r = 0; r < ranked.size() && out.most_missed.size() < options_.most_missed; ++r) {
    const auto& [key, t] = ranked[r];
    if (t.missing == 0) break;  // ranked by missing rate: the rest are never missing
    const Concept& cpt = set_.concepts[key.first];
    const RubricQuestion& q = cpt.rubric[key.second];
    out.most_missed.push_back({cpt.id, q.id, q.framework, q.text_en, {t.n, t.sum / t.n, t.missing / t.n}});
  }

  UnitRatio loo, afc, first_share;
  for (const ConceptPair& p : set_.pairs) {
    const PairFacts pf = Pair(m, p);
    out.pairs.push_back({p.a, p.b, pf.loo, pf.afc, pf.first_share, pf.trials, pf.invalid});
    loo.AddValue(pf.loo);
    afc.AddValue(pf.afc);
    first_share.AddValue(pf.first_share);
  }
  out.filtered = DiversitySummary(m, Mode::kFiltered);
  out.unfiltered = DiversitySummary(m, Mode::kUnfiltered);
  out.n_images = n_images;
  out.n_invalid = n_invalid;
  out.pass_rate = pass.Value();
  out.pass_rate_ci = pass.Interval(options_.bootstrap);
  out.adequacy_mean = adequacy.Value();
  out.adequacy_mean_ci = adequacy.Interval(options_.bootstrap);
  out.distinctiveness = {loo.Value(),
                         afc.Value(),
                         first_share.Value(),
                         loo.Interval(options_.bootstrap),
                         afc.Interval(options_.bootstrap),
                         first_share.Interval(options_.bootstrap)};
  return out;
}

std::vector<ModelTally> Analyzer::Tallies() const {
  std::vector<internal::ModelTally> tallies;
  for (const ModelData& m : models_) {
    internal::ModelTally& t = tallies.emplace_back();
    t.name = m.name;
    for (const std::vector<size_t>& images : m.by_concept) {
      double p = 0, v = 0;
      for (size_t i : images)
        if (facts_[i].adequacy) {
          v += 1;
          p += facts_[i].pass ? 1 : 0;
        }
      t.per_concept.push_back({p, v});
    }
  }
  return tallies;
}

ImageAnalysis Analyzer::Image(const ImageFacts& f) const {
  const Concept& cpt = set_.concepts[f.concept_index];
  ImageAnalysis out;
  out.image = *f.image;
  out.image.image_embedding.clear();
  out.image.metaphor_embedding.clear();
  out.word = cpt.word;
  out.category = cpt.category;
  out.adequacy = f.adequacy;
  out.adequacy_equal_weights = f.adequacy_equal;
  out.pass = f.pass;
  out.metaphor_cluster = f.cluster;
  return out;
}

}  // namespace visalign::acva::internal

namespace visalign::acva {

std::string_view MedianScopeName(MedianScope scope) {
  switch (scope) {
    case MedianScope::kPooled:
      return "pooled";
    case MedianScope::kFrozen:
      return "frozen";
    case MedianScope::kModel:
      return "model";
  }
  return "pooled";
}

Result<AnalysisResult> Analyze(const ConceptSet& set, const std::vector<JudgedImage>& images,
                               const AnalysisOptions& options) {
  if (!(options.pass_threshold >= 0 && options.pass_threshold <= 1))
    return Status::InvalidArgument("pass threshold " + std::to_string(options.pass_threshold), "--pass-threshold",
                                   "a number in [0, 1]");
  if (!(options.cluster_threshold >= 0 && options.cluster_threshold <= 2))
    return Status::InvalidArgument("cluster threshold " + std::to_string(options.cluster_threshold),
                                   "--cluster-threshold", "a cosine distance in [0, 2]");
  if ((options.median_scope == MedianScope::kFrozen) != options.frozen_medians.has_value())
    return Status::InvalidArgument("frozen medians without the frozen median scope, or the reverse", "quadrant medians",
                                   "frozen medians exactly when the scope is frozen");
  for (const ConceptPair& p : set.pairs)
    for (const std::string& id : {p.a, p.b})
      if (!set.IndexOf(id))
        return Status::InvalidArgument("pair (" + p.a + ", " + p.b + ") names concept \"" + id + "\"",
                                       "concept set " + set.fingerprint,
                                       "pairs of the set's own concepts (acva::SelectConcepts keeps every pair: "
                                       "analyse the whole set)");
  size_t answers = 0, rated = 0;
  for (const JudgedImage& image : images)
    for (const RubricAnswer& a : image.answers) {
      ++answers;
      rated += a.rating.has_value();
    }
  if (answers > 0 && rated == 0)
    return Status::InvalidArgument(
        fmt::format("none of the {} rubric answers of {} images is valid (the judge refused or broke the format)",
                    answers, images.size()),
        "judge answers",
        "a judge that answers the rubric (see `judge.errors` and docs/acva.md; --rejudge-invalid asks again)");
  VISALIGN_ASSIGN_OR_RETURN(Analysis analysis, internal::Analyzer(set, images, options).Run());
  AnalysisResult result;
  result.summary = AnalysisJson(analysis);
  for (const ImageAnalysis& image : analysis.images) result.items.push_back(ImageAnalysisJson(image));
  result.analysis = std::move(analysis);
  return result;
}

}  // namespace visalign::acva
