#include "benchmarks/acva/tiers.h"

#include <algorithm>
#include <cmath>

namespace visalign::acva::internal {

std::vector<size_t> RankByPassRate(const std::vector<ModelTally>& models) {
  std::vector<double> pass_rate;
  std::vector<size_t> order;
  for (const ModelTally& m : models) {
    double passes = 0, valid = 0;
    for (const auto& [p, v] : m.per_concept) {
      passes += p;
      valid += v;
    }
    pass_rate.push_back(valid > 0 ? passes / valid : std::nan(""));
    order.push_back(order.size());
  }
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const double px = pass_rate[x], py = pass_rate[y];
    if (std::isnan(px) != std::isnan(py)) return std::isnan(py);
    if (px != py && !std::isnan(px)) return px > py;
    return models[x].name < models[y].name;
  });
  return order;
}

TierResult Tiers(const std::vector<ModelTally>& models, const std::vector<size_t>& order, double alpha,
                 const stats::BootstrapOptions& bootstrap) {
  auto compare = [&](size_t a, size_t b) {
    const auto& ca = models[a].per_concept;
    const auto& cb = models[b].per_concept;
    std::vector<double> na, da, nb, db;
    for (size_t c = 0; c < ca.size() && c < cb.size(); ++c) {
      if (ca[c].second == 0 || cb[c].second == 0) continue;
      na.push_back(ca[c].first);
      da.push_back(ca[c].second);
      nb.push_back(cb[c].first);
      db.push_back(cb[c].second);
    }
    return std::pair{na.size(), stats::PairedBootstrap(na.size(), stats::RatioOfSums(na, da),
                                                       stats::RatioOfSums(nb, db), bootstrap)};
  };
  TierResult out{{}, {}, std::vector<size_t>(models.size(), 0)};
  for (size_t x = 0; x < order.size(); ++x)
    for (size_t y = x + 1; y < order.size(); ++y) {
      const auto [n, d] = compare(order[x], order[y]);
      out.comparisons.push_back({models[order[x]].name, models[order[y]].name, n, d.difference, d.p_value, d.interval,
                                 std::isfinite(d.p_value) && d.p_value < alpha});
    }
  size_t leader = 0;
  for (size_t x = 0; x < order.size(); ++x) {
    bool new_tier = x == 0;
    if (x > 0) {
      const auto [n, d] = compare(order[leader], order[x]);
      new_tier = std::isfinite(d.p_value) && d.p_value < alpha;
    }
    if (new_tier) {
      leader = x;
      out.tiers.push_back({out.tiers.size() + 1, {}});
    }
    out.tiers.back().models.push_back(models[order[x]].name);
    out.tier_of[order[x]] = out.tiers.size();
  }
  return out;
}

}  // namespace visalign::acva::internal
