// The ACVA analysis's diversity (docs/acva.md, "Metrics"): metaphor clusters, D_img, D_met and H per
// (model, concept) group, the quadrant split at the medians, and the figures pooled over models.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "benchmarks/acva/analyzer.h"
#include "benchmarks/acva/ratios.h"

namespace visalign::acva::internal {

void Analyzer::ClusterMetaphors() {
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

std::vector<GroupDiversity> Analyzer::Diversity(const ModelData& m, Mode mode) const {
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

std::vector<DiversityPoint> Analyzer::SplitPoints(const ModelData& m, Mode mode) {
  std::vector<DiversityPoint> points;
  for (const GroupDiversity& g : m.groups.at(mode))
    if (std::isfinite(g.d_img) && std::isfinite(g.h)) points.push_back({g.d_img, g.h});
  return points;
}

DiversityPoint Analyzer::Medians(const std::vector<DiversityPoint>& points) {
  std::vector<double> d, h;
  for (const DiversityPoint& p : points) {
    d.push_back(p.d_img);
    h.push_back(p.h);
  }
  return {stats::Quantile(d, 0.5), stats::Quantile(h, 0.5)};
}

DiversityPoint Analyzer::SplitMedians(Mode mode) const {
  if (options_.median_scope == MedianScope::kFrozen && options_.frozen_medians)
    return mode == Mode::kFiltered ? options_.frozen_medians->filtered : options_.frozen_medians->unfiltered;
  return Medians(AllSplitPoints(mode));
}

std::vector<DiversityPoint> Analyzer::AllSplitPoints(Mode mode) const {
  std::vector<DiversityPoint> all;
  for (const ModelData& m : models_) {
    const std::vector<DiversityPoint> points = SplitPoints(m, mode);
    all.insert(all.end(), points.begin(), points.end());
  }
  return all;
}

DiversityAnalysis Analyzer::DiversitySummary(const ModelData& m, Mode mode) const {
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

DiversityPoint Analyzer::OnMedian(const std::vector<DiversityPoint>& points, const DiversityPoint& median) {
  if (points.empty()) return {kNaN, kNaN};
  double d = 0, h = 0;
  for (const DiversityPoint& p : points) {
    d += p.d_img == median.d_img ? 1 : 0;
    h += p.h == median.h ? 1 : 0;
  }
  return {d / static_cast<double>(points.size()), h / static_cast<double>(points.size())};
}

PooledQuadrants Analyzer::PooledSplit(Mode mode) const {
  const std::vector<DiversityPoint> all = AllSplitPoints(mode);
  PooledQuadrants out;
  out.n_groups = all.size();
  out.median_scope = options_.median_scope == MedianScope::kFrozen ? MedianScope::kFrozen : MedianScope::kPooled;
  out.median = split_medians_.at(mode);
  out.quadrants = MedianSplit(all, out.median.d_img, out.median.h);
  out.on_median = OnMedian(all, out.median);
  return out;
}

PooledAnalysis Analyzer::Pooled() const {
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

}  // namespace visalign::acva::internal
