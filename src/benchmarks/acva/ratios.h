// Means and per-unit ratios with bootstrap intervals over units (internal to the ACVA analysis).
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "visalign/stats/resampling.h"

namespace visalign::acva::internal {

// Mean of the finite values; NaN when there are none.
inline double MeanOf(const std::vector<double>& v) {
  double s = 0;
  size_t n = 0;
  for (double x : v)
    if (std::isfinite(x)) {
      s += x;
      ++n;
    }
  return n ? s / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
}

// Per-unit numerators/denominators restricted to units with data, with their bootstrap interval.
struct UnitRatio {
  std::vector<double> num, den;
  void Add(double n, double d) {
    num.push_back(n);
    den.push_back(d);
  }
  // A per-unit value, counted only where it is defined (finite).
  void AddValue(double x) { std::isfinite(x) ? Add(x, 1) : Add(0, 0); }
  double Value() const {
    double n = 0, d = 0;
    for (size_t i = 0; i < num.size(); ++i) {
      n += num[i];
      d += den[i];
    }
    return d > 0 ? n / d : std::numeric_limits<double>::quiet_NaN();
  }
  stats::Interval Interval(const stats::BootstrapOptions& options) const {
    std::vector<double> n2, d2;
    for (size_t i = 0; i < num.size(); ++i)
      if (den[i] > 0) {
        n2.push_back(num[i]);
        d2.push_back(den[i]);
      }
    return stats::BootstrapInterval(n2.size(), stats::RatioOfSums(n2, d2), options);
  }
};

}  // namespace visalign::acva::internal
