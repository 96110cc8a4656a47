// ACVA's per-group metrics: cosine geometry of embeddings, metaphor clustering, entropy,
// leave-one-out separability and weighted adequacy. Definitions: docs/acva.md.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "visalign/benchmarks/acva/acva.h"
#include "visalign/stats/statistics.h"

namespace visalign::acva {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMaxCosineDistance = 2.0;

double Dot(const Embedding& a, const Embedding& b) {
  double s = 0;
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return s;
}

std::vector<double> Normalized(const Embedding& v) {
  const double norm = std::sqrt(Dot(v, v));
  std::vector<double> out(v.size(), 0.0);
  if (norm > 0)
    for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<double>(v[i]) / norm;
  return out;
}

double CosineDistanceToCentroid(const std::vector<double>& x, const std::vector<double>& centroid) {
  double dot = 0, xx = 0, cc = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    dot += x[i] * centroid[i];
    xx += x[i] * x[i];
    cc += centroid[i] * centroid[i];
  }
  const double denom = std::sqrt(xx * cc);
  return denom > 0 ? std::clamp(1.0 - dot / denom, 0.0, kMaxCosineDistance) : 1.0;
}

}  // namespace

std::string JudgedImage::ImageId() const { return model + "/" + concept_id + "/" + std::to_string(k); }

double CosineDistance(const Embedding& a, const Embedding& b) {
  // sqrt(aa * bb) rather than sqrt(aa) * sqrt(bb): for a == b it equals aa exactly, so identical
  // vectors are at distance exactly 0.
  const double denom = std::sqrt(Dot(a, a) * Dot(b, b));
  if (!(denom > 0)) return 1.0;
  return std::clamp(1.0 - Dot(a, b) / denom, 0.0, kMaxCosineDistance);
}

double MeanPairwiseCosineDistance(const std::vector<Embedding>& vectors) {
  if (vectors.size() < 2) return kNaN;
  double sum = 0;
  size_t pairs = 0;
  for (size_t i = 0; i < vectors.size(); ++i)
    for (size_t j = i + 1; j < vectors.size(); ++j) {
      sum += CosineDistance(vectors[i], vectors[j]);
      ++pairs;
    }
  return sum / static_cast<double>(pairs);
}

std::vector<int> AverageLinkageClusters(const std::vector<Embedding>& vectors, double threshold) {
  const size_t n = vectors.size();
  // Active clusters with their members; distances between clusters updated by Lance-Williams
  // (average linkage: d(k, i+j) = (n_i d(k, i) + n_j d(k, j)) / (n_i + n_j)).
  std::vector<std::vector<size_t>> members(n);
  std::vector<bool> active(n, true);
  std::vector<std::vector<double>> d(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < n; ++i) {
    members[i] = {i};
    for (size_t j = i + 1; j < n; ++j) d[i][j] = d[j][i] = CosineDistance(vectors[i], vectors[j]);
  }
  while (true) {
    double best = std::numeric_limits<double>::infinity();
    size_t bi = 0, bj = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!active[i]) continue;
      for (size_t j = i + 1; j < n; ++j)
        if (active[j] && d[i][j] < best) {
          best = d[i][j];
          bi = i;
          bj = j;
        }
    }
    if (!(best <= threshold)) break;
    const double ni = static_cast<double>(members[bi].size()), nj = static_cast<double>(members[bj].size());
    for (size_t k = 0; k < n; ++k) {
      if (!active[k] || k == bi || k == bj) continue;
      d[bi][k] = d[k][bi] = (ni * d[bi][k] + nj * d[bj][k]) / (ni + nj);
    }
    members[bi].insert(members[bi].end(), members[bj].begin(), members[bj].end());
    members[bj].clear();
    active[bj] = false;
  }
  // Number clusters by their smallest member, so labels follow the input order.
  std::vector<int> labels(n, -1);
  int next = 0;
  for (size_t i = 0; i < n; ++i) {
    if (labels[i] >= 0) continue;
    for (size_t c = 0; c < n; ++c) {
      if (!active[c] || std::find(members[c].begin(), members[c].end(), i) == members[c].end()) continue;
      for (size_t m : members[c]) labels[m] = next;
    }
    ++next;
  }
  return labels;
}

double LabelEntropyBits(const std::vector<int>& labels) {
  std::map<int, double> counts;
  for (int l : labels) counts[l] += 1;
  std::vector<double> c;
  for (const auto& [label, count] : counts) c.push_back(count);
  return stats::EntropyBits(c);
}

double LeaveOneOutCentroidAccuracy(const std::vector<Embedding>& class_a, const std::vector<Embedding>& class_b) {
  if (class_a.size() < 2 || class_b.size() < 2) return kNaN;
  const size_t dim = class_a.front().size();
  std::vector<std::vector<double>> a, b;
  for (const auto& v : class_a) a.push_back(Normalized(v));
  for (const auto& v : class_b) b.push_back(Normalized(v));
  auto sum_of = [dim](const std::vector<std::vector<double>>& xs) {
    std::vector<double> s(dim, 0.0);
    for (const auto& x : xs)
      for (size_t i = 0; i < dim && i < x.size(); ++i) s[i] += x[i];
    return s;
  };
  const std::vector<double> sum_a = sum_of(a), sum_b = sum_of(b);
  double correct = 0;
  // Centroid of a class without one member: (sum - x) / (n - 1); the scale does not change cosine.
  auto classify = [&](const std::vector<double>& x, const std::vector<double>& own_sum,
                      const std::vector<double>& other_sum) {
    std::vector<double> own(dim);
    for (size_t i = 0; i < dim; ++i) own[i] = own_sum[i] - (i < x.size() ? x[i] : 0.0);
    const double d_own = CosineDistanceToCentroid(x, own), d_other = CosineDistanceToCentroid(x, other_sum);
    if (d_own < d_other) return 1.0;
    if (d_own == d_other) return 0.5;
    return 0.0;
  };
  for (const auto& x : a) correct += classify(x, sum_a, sum_b);
  for (const auto& x : b) correct += classify(x, sum_b, sum_a);
  return correct / static_cast<double>(a.size() + b.size());
}

QuadrantShares MedianSplit(const std::vector<DiversityPoint>& groups, double d_img_median, double h_median) {
  if (groups.empty()) return {kNaN, kNaN, kNaN, kNaN};
  constexpr double kAtMedian = 0.5;
  auto high = [](double x, double median) { return x > median ? 1.0 : x == median ? kAtMedian : 0.0; };
  QuadrantShares sums;
  for (const DiversityPoint& g : groups) {
    const double d = high(g.d_img, d_img_median), h = high(g.h, h_median);
    sums.genuine += d * h;
    sums.pseudo += d * (1 - h);
    sums.metaphor += (1 - d) * h;
    sums.low += (1 - d) * (1 - h);
  }
  const double n = static_cast<double>(groups.size());
  return {sums.genuine / n, sums.pseudo / n, sums.metaphor / n, sums.low / n};
}

std::optional<double> Adequacy(const Concept& cpt, const std::vector<RubricAnswer>& answers, bool equal_weights) {
  if (answers.size() != cpt.rubric.size()) return std::nullopt;
  double weighted = 0, total = 0;
  for (size_t i = 0; i < answers.size(); ++i) {
    if (!answers[i].rating) return std::nullopt;
    const double w = equal_weights ? 1.0 : cpt.rubric[i].weight;
    weighted += w * *answers[i].rating;
    total += w;
  }
  return weighted / total;
}

}  // namespace visalign::acva
