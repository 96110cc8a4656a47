// Statistics used by the benchmarks: moments, (weighted) covariance, Mahalanobis distance,
// Hotelling's two-sample T² test, distribution tails, multiple-testing correction and entropy.
// Definitions follow the references the published analyses used, so numbers can be compared:
//   - Covariance: unbiased, n − 1 denominator (numpy.cov default).
//   - WeightedCovariance: numpy.cov(aweights=w): mean = Σwᵢxᵢ/Σw,
//     S = Σwᵢ(xᵢ−x̄)(xᵢ−x̄)ᵀ / (Σw − Σw²/Σw).
//   - Hotelling two-sample T² with a pooled covariance and the F transform
//     F = T²(n_x+n_y−p−1) / (p(n_x+n_y−2)) on (p, n_x+n_y−p−1) degrees of freedom.
//   - p-values come from the survival function (upper tail computed directly), which keeps
//     tiny p-values exact; p_cdf = 1 − CDF is provided too because published analyses used it
//     (it saturates near 1e-16).
//   - Benjamini–Hochberg (1995) step-up q-values.
// The multivariate part is two-dimensional (chromaticity xy), with explicit singularity
// detection instead of silently inverting ill-conditioned matrices.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "visalign/core/status.h"

namespace visalign::stats {

using Vec2 = std::array<double, 2>;
using Mat2 = std::array<std::array<double, 2>, 2>;  // row-major: m[row][col]

// |det| ≤ kSingularTolerance · (|m00·m11| + |m01·m10|) counts as singular: the determinant is
// lost in cancellation (for a covariance this means |correlation| ≈ 1 or a zero variance).
inline constexpr double kSingularTolerance = 1e-10;

// Arithmetic mean; NaN for an empty span.
double Mean(std::span<const double> values);
Vec2 Mean(std::span<const Vec2> points);

// Sample covariance with the n − 1 denominator. Needs at least 2 points (InvalidArgument).
Result<Mat2> Covariance(std::span<const Vec2> points);

struct Moments {
  Vec2 mean{};
  Mat2 cov{};
};
// numpy.cov(points.T, aweights=weights) and the matching weighted mean. Weights must be finite,
// ≥ 0, with Σw − Σw²/Σw > 0 (at least two points with positive weight).
Result<Moments> WeightedCovariance(std::span<const Vec2> points, std::span<const double> weights);

double Determinant(const Mat2& m);
// Whether `m` is singular or nearly so by the kSingularTolerance rule above (also true for
// non-finite entries).
bool IsNearSingular(const Mat2& m);
// The inverse, or nullopt when IsNearSingular(m).
std::optional<Mat2> Inverse(const Mat2& m);

// Squared Mahalanobis distance (p − μ)ᵀ Σ⁻¹ (p − μ), given the inverse covariance.
double MahalanobisSquared(const Vec2& point, const Vec2& mean, const Mat2& inverse_cov);

// The closed curve of points at squared Mahalanobis distance d2 from `mean` under `cov` (positive
// definite): mean + sqrt(d2)·L·(cos t, sin t), L the Cholesky factor of cov, for t = 2πk/segments,
// k = 0..segments (the last point repeats the first). With d2 the χ²₂ quantile at P it is the P
// ellipse of a normal distribution (5.991: 95 %).
std::vector<Vec2> MahalanobisEllipse(const Vec2& mean, const Mat2& cov, double d2, int segments);

// Leave-one-out squared Mahalanobis distances: element i is point i's d² against the mean and
// covariance (n − 1) of the other points; NaN where those others have fewer than 2 points or a
// near-singular covariance (so the caller can count untestable points instead of hiding them).
std::vector<double> LeaveOneOutMahalanobis(std::span<const Vec2> points);

struct HotellingResult {
  double t2 = 0;          // Hotelling's T²
  double f = 0;           // the F statistic
  double df1 = 0;         // p
  double df2 = 0;         // n_x + n_y − p − 1
  double p_value = 0;     // survival function P(F' ≥ f)
  double p_cdf = 0;       // 1 − CDF(f), as published analyses computed it
  bool singular = false;  // pooled covariance near-singular: t2, f and p-values are NaN
};
// Two-sample test of equal means for samples summarised by mean, covariance and size.
// InvalidArgument if a size is < 2. A near-singular pooled covariance is not an error: the
// result says `singular` so callers can report it.
Result<HotellingResult> HotellingTwoSample(const Vec2& mean_x, const Mat2& cov_x, double n_x, const Vec2& mean_y,
                                           const Mat2& cov_y, double n_y);

// Fisher–Snedecor F distribution (Boost.Math): upper tail P(X ≥ f) and CDF P(X ≤ f).
double FisherFSurvival(double f, double df1, double df2);
double FisherFCdf(double f, double df1, double df2);
// Chi-square quantile: the x with P(X ≤ x) = probability (0 < probability < 1).
Result<double> ChiSquareQuantile(double probability, double dof);

// Benjamini–Hochberg adjusted p-values (q-values), same order as the input. NaN inputs stay NaN
// and are not counted in the number of tests m.
std::vector<double> BenjaminiHochberg(std::span<const double> p_values);

// Shannon entropy in bits of a distribution given by non-negative counts (or weights);
// zero entries contribute nothing. 0 for an empty or all-zero input.
double EntropyBits(std::span<const double> counts);

// A proportion k/n with its Wilson score interval (Wilson 1927) at normal quantile z (1.959964:
// 95 %): centre (k + z²/2)/(n + z²), half-width z·sqrt(k(n−k)/n + z²/4)/(n + z²). Unlike the
// normal approximation it stays inside [0, 1] and is sensible at k = 0 or k = n (refusal rates of
// a few per hundred). n = 0 gives NaN everywhere.
struct Proportion {
  double rate = 0, lo = 0, hi = 0;
};
Proportion WilsonInterval(uint64_t k, uint64_t n, double z = 1.959963984540054);

}  // namespace visalign::stats
