#include <cmath>
#include <limits>

#include "visalign/stats/resampling.h"

namespace visalign::stats {

ResamplingRng::ResamplingRng(uint64_t seed) : engine_(seed) {}

size_t ResamplingRng::Below(size_t n) {
  // Rejection sampling: accept draws below the largest multiple of n, so every residue is equally likely.
  const uint64_t bound = static_cast<uint64_t>(n);
  const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % bound;
  uint64_t draw = engine_();
  while (draw >= limit) draw = engine_();
  return static_cast<size_t>(draw % bound);
}

void ResamplingRng::Resample(size_t n, std::vector<size_t>& indices) {
  indices.resize(n);
  for (size_t i = 0; i < n; ++i) indices[i] = Below(n);
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Percentile interval of the finite replicates, or NaNs when fewer than half of them are finite.
Interval PercentileInterval(const std::vector<double>& replicates, double level) {
  std::vector<double> finite;
  finite.reserve(replicates.size());
  for (double v : replicates)
    if (std::isfinite(v)) finite.push_back(v);
  if (finite.empty() || 2 * finite.size() < replicates.size()) return {kNaN, kNaN};
  const double tail = (1.0 - level) / 2.0;
  return {Quantile(finite, tail), Quantile(finite, 1.0 - tail)};
}

}  // namespace

Interval BootstrapInterval(size_t n_units, const UnitStatistic& statistic, const BootstrapOptions& options) {
  if (n_units == 0 || options.resamples <= 0) return {kNaN, kNaN};
  ResamplingRng rng(options.seed);
  std::vector<size_t> units;
  std::vector<double> replicates(static_cast<size_t>(options.resamples));
  for (double& r : replicates) {
    rng.Resample(n_units, units);
    r = statistic(units);
  }
  return PercentileInterval(replicates, options.level);
}

UnitStatistic RatioOfSums(std::vector<double> numerators, std::vector<double> denominators) {
  return [num = std::move(numerators), den = std::move(denominators)](const std::vector<size_t>& units) {
    double n = 0, d = 0;
    for (size_t u : units) {
      n += num[u];
      d += den[u];
    }
    return d > 0 ? n / d : kNaN;
  };
}

PairedDifference PairedBootstrap(size_t n_units, const UnitStatistic& statistic_a, const UnitStatistic& statistic_b,
                                 const BootstrapOptions& options) {
  PairedDifference result;
  std::vector<size_t> all(n_units);
  for (size_t i = 0; i < n_units; ++i) all[i] = i;
  result.difference = n_units == 0 ? kNaN : statistic_a(all) - statistic_b(all);
  if (n_units == 0 || options.resamples <= 0) {
    result.interval = {kNaN, kNaN};
    return result;
  }
  ResamplingRng rng(options.seed);
  std::vector<size_t> units;
  std::vector<double> diffs(static_cast<size_t>(options.resamples));
  size_t at_most_zero = 0, at_least_zero = 0, finite = 0;
  for (double& d : diffs) {
    rng.Resample(n_units, units);
    d = statistic_a(units) - statistic_b(units);
    if (!std::isfinite(d)) continue;
    ++finite;
    if (d <= 0) ++at_most_zero;
    if (d >= 0) ++at_least_zero;
  }
  result.interval = PercentileInterval(diffs, options.level);
  if (finite == 0) {
    result.p_value = kNaN;
  } else {
    const double tail = static_cast<double>(std::min(at_most_zero, at_least_zero)) / static_cast<double>(finite);
    result.p_value = std::min(1.0, 2.0 * tail);
  }
  return result;
}

}  // namespace visalign::stats
