// Rank correlation and bootstrap resampling used by benchmark statistics (ACVA-Bench and others).
//
// Spearman's rho is Pearson's r on average ranks (ties share the mean of the ranks they span); its
// two-sided p-value uses the t approximation t = rho * sqrt((n - 2) / (1 - rho^2)) with n - 2 degrees
// of freedom. Bootstraps resample *units* (e.g. concepts) with replacement from a seeded, platform-
// independent generator, so a given seed gives bit-identical intervals everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "visalign/core/status.h"

namespace visalign::stats {

// 1-based ranks; tied values get the average of the ranks they occupy.
std::vector<double> AverageRanks(const std::vector<double>& values);

struct RankCorrelation {
  double rho = 0;
  double p_value = 1;  // two-sided
  size_t n = 0;
};

// Spearman's rho between paired samples. InvalidArgument if the sizes differ, n < 3, a value is not
// finite, or either sample is constant (rho undefined); `what` names the samples.
Result<RankCorrelation> SpearmanCorrelation(const std::vector<double>& x, const std::vector<double>& y,
                                            const std::string& what = "samples");

// Deterministic pseudo-random source for resampling: std::mt19937_64 (fully specified by the C++
// standard) with its own unbiased bounded draw, so results do not depend on the standard library.
class ResamplingRng {
 public:
  explicit ResamplingRng(uint64_t seed);
  // Uniform integer in [0, n); n > 0.
  size_t Below(size_t n);
  // Fills `indices` with n draws from [0, n) (one bootstrap resample of n units).
  void Resample(size_t n, std::vector<size_t>& indices);

 private:
  std::mt19937_64 engine_;
};

struct Interval {
  double lo = 0;
  double hi = 0;
};

struct BootstrapOptions {
  int resamples = 2000;
  uint64_t seed = 20240501;
  double level = 0.95;  // central percentile interval
};

// A statistic of a resample, given the indices of the units drawn (with repetition).
using UnitStatistic = std::function<double(const std::vector<size_t>& units)>;

// Percentile bootstrap interval of `statistic` over `n_units` units. Resamples whose statistic is
// NaN (e.g. a ratio with an empty denominator) are dropped; if more than half are NaN the interval is
// {NaN, NaN}. n_units == 0 gives {NaN, NaN}.
Interval BootstrapInterval(size_t n_units, const UnitStatistic& statistic, const BootstrapOptions& options);

// Ratio statistic sum(numerators[u]) / sum(denominators[u]) over the drawn units: the usual shape of a
// pooled rate (passes / images) resampled by concept. NaN when the drawn denominators sum to 0.
UnitStatistic RatioOfSums(std::vector<double> numerators, std::vector<double> denominators);

struct PairedDifference {
  double difference = 0;  // statistic_a - statistic_b on all units
  Interval interval;      // bootstrap interval of the difference
  double p_value = 1;     // two-sided: 2 * min(P*(d <= 0), P*(d >= 0)), capped at 1
};

// Paired bootstrap of statistic_a - statistic_b: both are evaluated on the same drawn units each time.
PairedDifference PairedBootstrap(size_t n_units, const UnitStatistic& statistic_a, const UnitStatistic& statistic_b,
                                 const BootstrapOptions& options);

// Percentile of sorted finite values with linear interpolation (type 7, as numpy's default); q in [0, 1].
double Quantile(std::vector<double> values, double q);

}  // namespace visalign::stats
