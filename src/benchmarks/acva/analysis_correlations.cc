// The ACVA analysis's relations (docs/acva.md, "Metrics" and "Statistics"): 2AFC and leave-one-out
// facts per (model, pair), Spearman correlations over concepts, groups, pairs and models, and how
// much the rubric weights move adequacy.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "benchmarks/acva/analyzer.h"
#include "benchmarks/acva/ratios.h"

namespace visalign::acva::internal {

CorrelationAnalysis Correlation(const std::string& name, const std::vector<double>& x, const std::vector<double>& y,
                                const std::string& what) {
  auto r = stats::SpearmanCorrelation(x, y, what);
  if (!r.ok()) return {name, x.size(), kNaN, kNaN, r.status().what()};
  return {name, r->n, r->rho, r->p_value, {}};
}

std::vector<CorrelationAnalysis> Analyzer::ModelMeanCorrelations(const std::vector<ModelAnalysis>& models) {
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

WeightsComparison Analyzer::CompareWeights(const std::vector<ModelAnalysis>& models) const {
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

PairFacts Analyzer::Pair(const ModelData& m, const ConceptPair& p) const {
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

std::vector<CorrelationAnalysis> Analyzer::Correlations() const {
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
  out.push_back(
      Correlation("equal_vs_custom_weights_images", equal_images, custom_images, "equal vs custom weights (images)"));
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

}  // namespace visalign::acva::internal
