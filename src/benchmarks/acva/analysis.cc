// From judged images to the typed Analysis: adequacy, diversity, distinctiveness, bootstrap
// intervals, correlations and tiers (serialised in analysis_json.cc). Definitions: docs/acva.md
// ("Metrics" and "Statistics").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "benchmarks/acva/ratios.h"
#include "benchmarks/acva/tiers.h"
#include "visalign/benchmarks/acva/acva.h"

namespace visalign::acva {
namespace {

using internal::MeanOf;
using internal::UnitRatio;

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

CorrelationAnalysis Correlation(const std::string& name, const std::vector<double>& x, const std::vector<double>& y,
                                const std::string& what) {
  auto r = stats::SpearmanCorrelation(x, y, what);
  if (!r.ok()) return {name, x.size(), kNaN, kNaN, r.status().what()};
  return {name, r->n, r->rho, r->p_value, {}};
}

class Analyzer {
 public:
  Analyzer(const ConceptSet& set, const std::vector<JudgedImage>& images, const AnalysisOptions& options)
      : set_(set), images_(images), options_(options) {}

  Result<Analysis> Run() {
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

 private:
  Status IndexImages() {
    std::map<std::string, size_t> model_index;
    for (const JudgedImage& img : images_) {
      auto c = set_.IndexOf(img.concept_id);
      if (!c) return Status::InvalidArgument("image of unknown concept \"" + img.concept_id + "\"", img.ImageId(),
                                             "a concept of the concept set");
      const Concept& cpt = set_.concepts[*c];
      if (img.answers.size() != cpt.rubric.size())
        return Status::InvalidArgument(std::to_string(img.answers.size()) + " rubric answers", img.ImageId(),
                                       std::to_string(cpt.rubric.size()) + " (one per rubric question)");
      for (size_t q = 0; q < img.answers.size(); ++q)
        if (img.answers[q].question_id != cpt.rubric[q].id)
          return Status::InvalidArgument("answer " + std::to_string(q + 1) + " is for question \"" +
                                             img.answers[q].question_id + "\"",
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

  // A model's descriptions of a concept are clustered among themselves, so its H does not depend on
  // the other models analyzed.
  void ClusterMetaphors() {
    for (const ModelData& m : models_)
      for (const std::vector<size_t>& group : m.by_concept) {
        std::vector<size_t> described;
        std::vector<Embedding> vectors;
        for (size_t i : group)
          if (facts_[i].image->metaphor && !facts_[i].image->metaphor_embedding.empty()) {
            described.push_back(i);
            vectors.push_back(facts_[i].image->metaphor_embedding);
          }
        const std::vector<int> labels = AverageLinkageClusters(vectors, options_.cluster_threshold);
        for (size_t j = 0; j < described.size(); ++j) facts_[described[j]].cluster = labels[j];
      }
  }

  std::vector<GroupDiversity> Diversity(const ModelData& m, Mode mode) const {
    std::vector<GroupDiversity> groups;
    for (size_t c = 0; c < m.by_concept.size(); ++c) {
      std::vector<size_t> selected;
      for (size_t i : m.by_concept[c])
        if (mode == Mode::kUnfiltered || facts_[i].pass) selected.push_back(i);
      if (selected.size() < kMinGroupImages) continue;
      GroupDiversity g;
      g.concept_index = c;
      std::vector<Embedding> img, met;
      std::vector<int> labels;
      std::vector<double> adequacy;
      for (size_t i : selected) {
        const JudgedImage& im = *facts_[i].image;
        if (!im.image_embedding.empty()) img.push_back(im.image_embedding);
        if (facts_[i].cluster >= 0) {
          met.push_back(im.metaphor_embedding);
          labels.push_back(facts_[i].cluster);
        }
        adequacy.push_back(facts_[i].adequacy.value_or(kNaN));
      }
      g.d_img = MeanPairwiseCosineDistance(img);
      g.d_met = MeanPairwiseCosineDistance(met);
      g.h = labels.size() >= kMinGroupImages ? LabelEntropyBits(labels) : kNaN;
      g.adequacy_mean = MeanOf(adequacy);
      groups.push_back(g);
    }
    return groups;
  }

  // The groups of `mode` with both D_img and H defined.
  static std::vector<DiversityPoint> SplitPoints(const ModelData& m, Mode mode) {
    std::vector<DiversityPoint> points;
    for (const GroupDiversity& g : m.groups.at(mode))
      if (std::isfinite(g.d_img) && std::isfinite(g.h)) points.push_back({g.d_img, g.h});
    return points;
  }

  static DiversityPoint Medians(const std::vector<DiversityPoint>& points) {
    std::vector<double> d, h;
    for (const DiversityPoint& p : points) {
      d.push_back(p.d_img);
      h.push_back(p.h);
    }
    return {stats::Quantile(d, 0.5), stats::Quantile(h, 0.5)};
  }

  // The medians every model is split at unless each uses its own: the frozen ones, or those over the
  // split points of every model.
  DiversityPoint SplitMedians(Mode mode) const {
    if (options_.median_scope == MedianScope::kFrozen && options_.frozen_medians)
      return mode == Mode::kFiltered ? options_.frozen_medians->filtered : options_.frozen_medians->unfiltered;
    return Medians(AllSplitPoints(mode));
  }
  std::vector<DiversityPoint> AllSplitPoints(Mode mode) const {
    std::vector<DiversityPoint> all;
    for (const ModelData& m : models_) {
      const std::vector<DiversityPoint> points = SplitPoints(m, mode);
      all.insert(all.end(), points.begin(), points.end());
    }
    return all;
  }

  DiversityAnalysis DiversitySummary(const ModelData& m, Mode mode) const {
    const auto& groups = m.groups.at(mode);
    const std::vector<DiversityPoint> points = SplitPoints(m, mode);
    const DiversityPoint median =
        options_.median_scope == MedianScope::kModel ? Medians(points) : split_medians_.at(mode);
    const QuadrantShares q = MedianSplit(points, median.d_img, median.h);
    UnitRatio d_img, d_met, h;
    for (const GroupDiversity& g : groups) {
      d_img.AddValue(g.d_img);
      d_met.AddValue(g.d_met);
      h.AddValue(g.h);
    }
    DiversityAnalysis out;
    out.n_groups = groups.size();
    out.d_img_mean = d_img.Value();
    out.d_img_ci = d_img.Interval(options_.bootstrap);
    out.d_met_mean = d_met.Value();
    out.d_met_ci = d_met.Interval(options_.bootstrap);
    out.h_mean = h.Value();
    out.h_ci = h.Interval(options_.bootstrap);
    out.quadrants = q;
    out.median_scope = options_.median_scope;
    out.median = median;
    out.on_median = OnMedian(points, median);
    return out;
  }

  // Share of `points` whose D_img (H) equals the median: the groups the tie rule splits half and half.
  static DiversityPoint OnMedian(const std::vector<DiversityPoint>& points, const DiversityPoint& median) {
    if (points.empty()) return {kNaN, kNaN};
    double d = 0, h = 0;
    for (const DiversityPoint& p : points) {
      d += p.d_img == median.d_img ? 1 : 0;
      h += p.h == median.h ? 1 : 0;
    }
    return {d / static_cast<double>(points.size()), h / static_cast<double>(points.size())};
  }

  PooledQuadrants PooledSplit(Mode mode) const {
    const std::vector<DiversityPoint> all = AllSplitPoints(mode);
    PooledQuadrants out;
    out.n_groups = all.size();
    out.median_scope = options_.median_scope == MedianScope::kFrozen ? MedianScope::kFrozen : MedianScope::kPooled;
    out.median = split_medians_.at(mode);
    out.quadrants = MedianSplit(all, out.median.d_img, out.median.h);
    out.on_median = OnMedian(all, out.median);
    return out;
  }

  // Every model's images, groups and (model, pair) cells together.
  PooledAnalysis Pooled() const {
    PooledAnalysis out;
    std::map<Category, std::array<double, 3>> sums;  // passes, adequacy sum, images
    std::array<double, 3> all{};
    for (const ImageFacts& f : facts_) {
      if (!f.adequacy) continue;
      for (std::array<double, 3>* t : {&all, &sums[set_.concepts[f.concept_index].category]}) {
        (*t)[0] += f.pass ? 1 : 0;
        (*t)[1] += *f.adequacy;
        (*t)[2] += 1;
      }
    }
    const auto totals = [](const std::array<double, 3>& t) {
      return PooledCategory{static_cast<size_t>(t[2]), t[2] > 0 ? t[0] / t[2] : kNaN, t[2] > 0 ? t[1] / t[2] : kNaN};
    };
    out.all = totals(all);
    for (const auto& [category, t] : sums) out.by_category[category] = totals(t);
    out.filtered = PooledSplit(Mode::kFiltered);
    out.unfiltered = PooledSplit(Mode::kUnfiltered);
    std::vector<double> cells;
    for (const ConceptPair& p : set_.pairs) {
      std::vector<double> per_model;
      for (const ModelData& m : models_) {
        const double afc = Pair(m, p).afc;
        if (std::isfinite(afc)) per_model.push_back(afc);
      }
      cells.insert(cells.end(), per_model.begin(), per_model.end());
      out.pairs.push_back({p.a, p.b, per_model.size(), MeanOf(per_model)});
    }
    out.afc_cells = cells.size();
    out.afc_acc_mean = MeanOf(cells);
    return out;
  }

  // Spearman over models of their means: adequacy vs D_img, H (unfiltered) and 2AFC accuracy.
  static std::vector<CorrelationAnalysis> ModelMeanCorrelations(const std::vector<ModelAnalysis>& models) {
    struct Relation {
      const char* name;
      double (*value)(const ModelAnalysis&);
    };
    static constexpr Relation kRelations[] = {
        {"d_img", [](const ModelAnalysis& m) { return m.unfiltered.d_img_mean; }},
        {"h", [](const ModelAnalysis& m) { return m.unfiltered.h_mean; }},
        {"afc", [](const ModelAnalysis& m) { return m.distinctiveness.afc_acc_mean; }}};
    std::vector<CorrelationAnalysis> out;
    for (const Relation& r : kRelations) {
      std::vector<double> adequacy, other;
      for (const ModelAnalysis& m : models)
        if (std::isfinite(m.adequacy_mean) && std::isfinite(r.value(m))) {
          adequacy.push_back(m.adequacy_mean);
          other.push_back(r.value(m));
        }
      const std::string name = std::string("models_adequacy_vs_") + r.name;
      out.push_back(Correlation(name, adequacy, other, "adequacy vs " + std::string(r.name) + " (model means)"));
    }
    return out;
  }

  WeightsComparison CompareWeights(const std::vector<ModelAnalysis>& models) const {
    WeightsComparison out;
    std::vector<double> change;
    std::map<std::string, std::pair<double, double>> equal_sums;  // model -> (sum, images)
    for (const ImageFacts& f : facts_) {
      if (!f.adequacy) continue;
      change.push_back(*f.adequacy - *f.adequacy_equal);
      auto& [sum, n] = equal_sums[f.image->model];
      sum += *f.adequacy_equal;
      n += 1;
    }
    out.n_images = change.size();
    out.mean_change = MeanOf(change);
    for (double& c : change) c = std::abs(c);
    out.mean_abs_change = MeanOf(change);
    std::vector<std::pair<std::string, std::pair<double, double>>> ranked;  // model -> (set weights, equal)
    for (const ModelAnalysis& m : models) {
      auto it = equal_sums.find(m.model);
      if (it == equal_sums.end() || !std::isfinite(m.adequacy_mean)) continue;
      ranked.push_back({m.model, {m.adequacy_mean, it->second.first / it->second.second}});
    }
    std::vector<double> custom, equal;
    for (const auto& [model, values] : ranked) {
      custom.push_back(values.first);
      equal.push_back(values.second);
    }
    out.models_rho = Correlation("models_equal_vs_custom_weights", equal, custom,
                                 "adequacy_mean with equal vs custom weights (models)");
    const auto order = [&](bool use_equal) {
      std::vector<std::pair<std::string, std::pair<double, double>>> sorted = ranked;
      std::sort(sorted.begin(), sorted.end(), [&](const auto& x, const auto& y) {
        const double vx = use_equal ? x.second.second : x.second.first;
        const double vy = use_equal ? y.second.second : y.second.first;
        return vx != vy ? vx > vy : x.first < y.first;
      });
      std::vector<std::string> names;
      for (const auto& entry : sorted) names.push_back(entry.first);
      return names;
    };
    out.same_order = order(false) == order(true);
    return out;
  }

  struct PairFacts {
    double loo = kNaN, afc = kNaN, first_share = kNaN, adequacy_mean = kNaN;
    size_t trials = 0, invalid = 0;
  };

  PairFacts Pair(const ModelData& m, const ConceptPair& p) const {
    PairFacts out;
    const size_t ca = *set_.IndexOf(p.a), cb = *set_.IndexOf(p.b);
    std::vector<Embedding> ea, eb;
    std::vector<double> adequacy;
    // Per order (a first / b first): correct and valid trial counts.
    std::array<double, 2> correct{}, valid{};
    double firsts = 0;
    for (size_t c : {ca, cb})
      for (size_t i : m.by_concept[c]) {
        const JudgedImage& im = *facts_[i].image;
        if (!im.image_embedding.empty()) (c == ca ? ea : eb).push_back(im.image_embedding);
        adequacy.push_back(facts_[i].adequacy.value_or(kNaN));
        for (const AfcTrial& t : im.afc) {
          if (t.pair_a != p.a || t.pair_b != p.b) continue;
          ++out.trials;
          if (!t.choice) {
            ++out.invalid;
            continue;
          }
          const size_t order = t.first == p.a ? 0 : 1;
          valid[order] += 1;
          if (*t.choice == im.concept_id) correct[order] += 1;
          if (*t.choice == t.first) firsts += 1;
        }
      }
    out.loo = LeaveOneOutCentroidAccuracy(ea, eb);
    std::vector<double> per_order;
    for (size_t o = 0; o < 2; ++o)
      if (valid[o] > 0) per_order.push_back(correct[o] / valid[o]);
    out.afc = MeanOf(per_order);
    const double all_valid = valid[0] + valid[1];
    out.first_share = all_valid > 0 ? firsts / all_valid : kNaN;
    out.adequacy_mean = MeanOf(adequacy);
    return out;
  }

  ModelAnalysis Model(const ModelData& m, size_t tier) const {
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

  std::vector<CorrelationAnalysis> Correlations() const {
    std::vector<CorrelationAnalysis> out;
    // Concept level: mean adequacy over every model's images of the concept.
    std::vector<double> concept_adequacy(set_.concepts.size()), concept_adequacy_equal(set_.concepts.size());
    {
      std::vector<std::vector<double>> custom(set_.concepts.size()), equal(set_.concepts.size());
      for (const ImageFacts& f : facts_) {
        if (!f.adequacy) continue;
        custom[f.concept_index].push_back(*f.adequacy);
        equal[f.concept_index].push_back(*f.adequacy_equal);
      }
      for (size_t c = 0; c < set_.concepts.size(); ++c) {
        concept_adequacy[c] = MeanOf(custom[c]);
        concept_adequacy_equal[c] = MeanOf(equal[c]);
      }
    }
    std::set<std::string> rating_names;
    for (const Concept& c : set_.concepts)
      for (const auto& [name, value] : c.ratings) rating_names.insert(name);
    for (const std::string& name : rating_names) {
      std::vector<double> x, y;
      for (size_t c = 0; c < set_.concepts.size(); ++c) {
        auto it = set_.concepts[c].ratings.find(name);
        if (it == set_.concepts[c].ratings.end() || !std::isfinite(concept_adequacy[c])) continue;
        x.push_back(concept_adequacy[c]);
        y.push_back(it->second);
      }
      out.push_back(Correlation("adequacy_vs_" + name, x, y, "adequacy vs " + name + " (concepts)"));
      for (Category category : kCategories) {
        std::vector<double> cx, cy;
        for (size_t c = 0; c < set_.concepts.size(); ++c) {
          auto it = set_.concepts[c].ratings.find(name);
          if (set_.concepts[c].category != category || it == set_.concepts[c].ratings.end() ||
              !std::isfinite(concept_adequacy[c]))
            continue;
          cx.push_back(concept_adequacy[c]);
          cy.push_back(it->second);
        }
        if (cx.empty()) continue;
        const std::string suffix = std::string(CategoryName(category));
        out.push_back(Correlation("adequacy_vs_" + name + "_" + suffix, cx, cy,
                                  "adequacy vs " + name + " (" + suffix + " concepts)"));
      }
    }
    std::vector<double> g_adequacy, g_d, h_adequacy, g_h;
    for (const ModelData& m : models_)
      for (const GroupDiversity& g : m.groups.at(Mode::kUnfiltered)) {
        if (!std::isfinite(g.adequacy_mean)) continue;
        if (std::isfinite(g.d_img)) {
          g_adequacy.push_back(g.adequacy_mean);
          g_d.push_back(g.d_img);
        }
        if (std::isfinite(g.h)) {
          h_adequacy.push_back(g.adequacy_mean);
          g_h.push_back(g.h);
        }
      }
    out.push_back(Correlation("adequacy_vs_d_img", g_adequacy, g_d, "adequacy vs D_img (model x concept groups)"));
    out.push_back(Correlation("adequacy_vs_h", h_adequacy, g_h, "adequacy vs H (model x concept groups)"));
    std::vector<double> p_adequacy, p_afc;
    for (const ModelData& m : models_)
      for (const ConceptPair& p : set_.pairs) {
        const PairFacts pf = Pair(m, p);
        if (!std::isfinite(pf.adequacy_mean) || !std::isfinite(pf.afc)) continue;
        p_adequacy.push_back(pf.adequacy_mean);
        p_afc.push_back(pf.afc);
      }
    out.push_back(Correlation("adequacy_vs_afc", p_adequacy, p_afc, "adequacy vs 2AFC accuracy (model x pair)"));
    std::vector<double> equal_images, custom_images;
    for (const ImageFacts& f : facts_)
      if (f.adequacy) {
        custom_images.push_back(*f.adequacy);
        equal_images.push_back(*f.adequacy_equal);
      }
    out.push_back(Correlation("equal_vs_custom_weights_images", equal_images, custom_images,
                              "equal vs custom weights (images)"));
    std::vector<double> equal_concepts, custom_concepts;
    for (size_t c = 0; c < set_.concepts.size(); ++c)
      if (std::isfinite(concept_adequacy[c])) {
        custom_concepts.push_back(concept_adequacy[c]);
        equal_concepts.push_back(concept_adequacy_equal[c]);
      }
    out.push_back(Correlation("equal_vs_custom_weights_concepts", equal_concepts, custom_concepts,
                              "equal vs custom weights (concepts)"));
    return out;
  }

  // Each model's (passes, judged images) per concept.
  std::vector<internal::ModelTally> Tallies() const {
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

  ImageAnalysis Image(const ImageFacts& f) const {
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

  const ConceptSet& set_;
  const std::vector<JudgedImage>& images_;
  const AnalysisOptions& options_;
  std::vector<ImageFacts> facts_;
  std::vector<ModelData> models_;
  std::map<Mode, DiversityPoint> split_medians_;  // SplitMedians
};

}  // namespace

std::string_view MedianScopeName(MedianScope scope) {
  switch (scope) {
    case MedianScope::kPooled: return "pooled";
    case MedianScope::kFrozen: return "frozen";
    case MedianScope::kModel: return "model";
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
    return Status::InvalidArgument("frozen medians without the frozen median scope, or the reverse",
                                   "quadrant medians", "frozen medians exactly when the scope is frozen");
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
        "judge answers", "a judge that answers the rubric (see `judge.errors` and docs/acva.md; --rejudge-invalid asks again)");
  VISALIGN_ASSIGN_OR_RETURN(Analysis analysis, Analyzer(set, images, options).Run());
  AnalysisResult result;
  result.summary = AnalysisJson(analysis);
  for (const ImageAnalysis& image : analysis.images) result.items.push_back(ImageAnalysisJson(image));
  result.analysis = std::move(analysis);
  return result;
}

}  // namespace visalign::acva
