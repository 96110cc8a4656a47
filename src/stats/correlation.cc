#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <numeric>

#include "visalign/stats/resampling.h"

namespace visalign::stats {

std::vector<double> AverageRanks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  size_t i = 0;
  while (i < order.size()) {
    size_t j = i + 1;
    while (j < order.size() && values[order[j]] == values[order[i]]) ++j;
    // Positions i..j-1 (0-based) hold ranks i+1..j; their mean is (i + 1 + j) / 2.
    const double rank = (static_cast<double>(i) + 1.0 + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k) ranks[order[k]] = rank;
    i = j;
  }
  return ranks;
}

namespace {

double Pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

bool IsConstant(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [&](double x) { return x == v.front(); });
}

constexpr size_t kMinSpearmanN = 3;

}  // namespace

Result<RankCorrelation> SpearmanCorrelation(const std::vector<double>& x, const std::vector<double>& y,
                                            const std::string& what) {
  if (x.size() != y.size())
    return Status::InvalidArgument(
        "samples of different sizes (" + std::to_string(x.size()) + " and " + std::to_string(y.size()) + ")", what,
        "paired samples");
  if (x.size() < kMinSpearmanN)
    return Status::InvalidArgument("only " + std::to_string(x.size()) + " pairs", what,
                                   "at least 3 pairs for a rank correlation");
  for (size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]) || !std::isfinite(y[i]))
      return Status::InvalidArgument("non-finite value at pair " + std::to_string(i + 1), what, "finite numbers");
  if (IsConstant(x) || IsConstant(y))
    return Status::InvalidArgument("a constant sample (every value equal)", what,
                                   "samples with at least two distinct values");
  RankCorrelation r;
  r.n = x.size();
  r.rho = std::clamp(Pearson(AverageRanks(x), AverageRanks(y)), -1.0, 1.0);
  const double df = static_cast<double>(r.n - 2);
  const double one_minus = 1.0 - r.rho * r.rho;
  if (one_minus <= 0) {
    r.p_value = 0;
  } else {
    const double t = r.rho * std::sqrt(df / one_minus);
    boost::math::students_t dist(df);
    r.p_value = std::min(1.0, 2.0 * boost::math::cdf(boost::math::complement(dist, std::fabs(t))));
  }
  return r;
}

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const double h = (static_cast<double>(values.size()) - 1.0) * q;
  const auto lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (h - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

}  // namespace visalign::stats
