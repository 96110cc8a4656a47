#include "visalign/stats/statistics.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/fisher_f.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>

namespace visalign::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kDimensions = 2;

bool AllFinite(const Mat2& m) {
  for (const auto& row : m)
    for (double v : row)
      if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

double Mean(std::span<const double> values) {
  if (values.empty()) return kNaN;
  return std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
}

Vec2 Mean(std::span<const Vec2> points) {
  if (points.empty()) return {kNaN, kNaN};
  Vec2 sum{0, 0};
  for (const Vec2& p : points) {
    sum[0] += p[0];
    sum[1] += p[1];
  }
  return {sum[0] / double(points.size()), sum[1] / double(points.size())};
}

Result<Mat2> Covariance(std::span<const Vec2> points) {
  if (points.size() < 2)
    return Status::InvalidArgument(fmt::format("covariance of {} point(s)", points.size()), "", "at least 2 points");
  const Vec2 mean = Mean(points);
  Mat2 cov{};
  for (const Vec2& p : points) {
    const double dx = p[0] - mean[0], dy = p[1] - mean[1];
    cov[0][0] += dx * dx;
    cov[0][1] += dx * dy;
    cov[1][1] += dy * dy;
  }
  const double denominator = double(points.size()) - 1.0;
  cov[0][0] /= denominator;
  cov[0][1] /= denominator;
  cov[1][1] /= denominator;
  cov[1][0] = cov[0][1];
  return cov;
}

Result<Moments> WeightedCovariance(std::span<const Vec2> points, std::span<const double> weights) {
  if (points.size() != weights.size())
    return Status::InvalidArgument(fmt::format("{} points but {} weights", points.size(), weights.size()), "",
                                   "one weight per point");
  double sum_w = 0, sum_w2 = 0;
  Vec2 weighted{0, 0};
  for (size_t i = 0; i < points.size(); ++i) {
    const double w = weights[i];
    if (!std::isfinite(w) || w < 0)
      return Status::InvalidArgument(fmt::format("weight {} at index {}", w, i), "", "finite, non-negative weights");
    sum_w += w;
    sum_w2 += w * w;
    weighted[0] += w * points[i][0];
    weighted[1] += w * points[i][1];
  }
  const double denominator = sum_w > 0 ? sum_w - sum_w2 / sum_w : 0.0;
  if (!(denominator > 0))
    return Status::InvalidArgument(fmt::format("weights with sum {} and sum of squares {}", sum_w, sum_w2), "",
                                   "at least two points with positive weight (sum(w) - sum(w^2)/sum(w) > 0)");
  Moments m;
  m.mean = {weighted[0] / sum_w, weighted[1] / sum_w};
  for (size_t i = 0; i < points.size(); ++i) {
    const double dx = points[i][0] - m.mean[0], dy = points[i][1] - m.mean[1];
    m.cov[0][0] += weights[i] * dx * dx;
    m.cov[0][1] += weights[i] * dx * dy;
    m.cov[1][1] += weights[i] * dy * dy;
  }
  m.cov[0][0] /= denominator;
  m.cov[0][1] /= denominator;
  m.cov[1][1] /= denominator;
  m.cov[1][0] = m.cov[0][1];
  return m;
}

double Determinant(const Mat2& m) { return m[0][0] * m[1][1] - m[0][1] * m[1][0]; }

bool IsNearSingular(const Mat2& m) {
  if (!AllFinite(m)) return true;
  const double scale = std::abs(m[0][0] * m[1][1]) + std::abs(m[0][1] * m[1][0]);
  return !(std::abs(Determinant(m)) > kSingularTolerance * scale);
}

std::optional<Mat2> Inverse(const Mat2& m) {
  if (IsNearSingular(m)) return std::nullopt;
  const double det = Determinant(m);
  return Mat2{{{m[1][1] / det, -m[0][1] / det}, {-m[1][0] / det, m[0][0] / det}}};
}

std::vector<Vec2> MahalanobisEllipse(const Vec2& mean, const Mat2& cov, double d2, int segments) {
  const double l11 = std::sqrt(cov[0][0]), l21 = cov[1][0] / l11;
  const double l22 = std::sqrt(std::max(0.0, cov[1][1] - l21 * l21)), r = std::sqrt(d2);
  std::vector<Vec2> points;
  for (int k = 0; k <= segments; ++k) {
    const double t = 2 * std::numbers::pi * k / segments;
    points.push_back({mean[0] + r * l11 * std::cos(t), mean[1] + r * (l21 * std::cos(t) + l22 * std::sin(t))});
  }
  return points;
}

double MahalanobisSquared(const Vec2& point, const Vec2& mean, const Mat2& inverse_cov) {
  const double d0 = point[0] - mean[0], d1 = point[1] - mean[1];
  return d0 * (inverse_cov[0][0] * d0 + inverse_cov[0][1] * d1) +
         d1 * (inverse_cov[1][0] * d0 + inverse_cov[1][1] * d1);
}

std::vector<double> LeaveOneOutMahalanobis(std::span<const Vec2> points) {
  std::vector<double> d2(points.size(), kNaN);
  std::vector<Vec2> others;
  others.reserve(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    others.clear();
    for (size_t j = 0; j < points.size(); ++j)
      if (j != i) others.push_back(points[j]);
    auto cov = Covariance(others);
    if (!cov.ok()) continue;
    if (auto inverse = Inverse(*cov)) d2[i] = MahalanobisSquared(points[i], Mean(others), *inverse);
  }
  return d2;
}

Result<HotellingResult> HotellingTwoSample(const Vec2& mean_x, const Mat2& cov_x, double n_x, const Vec2& mean_y,
                                           const Mat2& cov_y, double n_y) {
  if (!(n_x >= 2) || !(n_y >= 2))
    return Status::InvalidArgument(fmt::format("Hotelling test with sample sizes {} and {}", n_x, n_y), "",
                                   "at least 2 observations in each sample");
  HotellingResult r;
  r.df1 = kDimensions;
  r.df2 = n_x + n_y - kDimensions - 1;
  const double pooled_denominator = n_x + n_y - 2;
  Mat2 pooled{};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) pooled[i][j] = ((n_x - 1) * cov_x[i][j] + (n_y - 1) * cov_y[i][j]) / pooled_denominator;
  const std::optional<Mat2> inverse = Inverse(pooled);
  if (!inverse) {
    r.singular = true;
    r.t2 = r.f = r.p_value = r.p_cdf = kNaN;
    return r;
  }
  r.t2 = n_x * n_y / (n_x + n_y) * MahalanobisSquared(mean_x, mean_y, *inverse);
  r.f = r.t2 * r.df2 / (kDimensions * pooled_denominator);
  r.p_value = FisherFSurvival(r.f, r.df1, r.df2);
  r.p_cdf = 1.0 - FisherFCdf(r.f, r.df1, r.df2);
  return r;
}

double FisherFSurvival(double f, double df1, double df2) {
  if (!std::isfinite(f) || !(df1 > 0) || !(df2 > 0)) return kNaN;
  if (f <= 0) return 1.0;
  return boost::math::cdf(boost::math::complement(boost::math::fisher_f_distribution<double>(df1, df2), f));
}

double FisherFCdf(double f, double df1, double df2) {
  if (!std::isfinite(f) || !(df1 > 0) || !(df2 > 0)) return kNaN;
  if (f <= 0) return 0.0;
  return boost::math::cdf(boost::math::fisher_f_distribution<double>(df1, df2), f);
}

Result<double> ChiSquareQuantile(double probability, double dof) {
  if (!(probability > 0 && probability < 1) || !(dof > 0))
    return Status::InvalidArgument(
        fmt::format("chi-square quantile at probability {} with {} degrees of freedom", probability, dof), "",
        "0 < probability < 1 and dof > 0");
  return boost::math::quantile(boost::math::chi_squared_distribution<double>(dof), probability);
}

std::vector<double> BenjaminiHochberg(std::span<const double> p_values) {
  std::vector<double> q(p_values.size(), kNaN);
  std::vector<size_t> order;
  for (size_t i = 0; i < p_values.size(); ++i)
    if (!std::isnan(p_values[i])) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p_values[a] < p_values[b]; });
  const double m = double(order.size());
  double running_min = 1.0;
  for (size_t rank = order.size(); rank-- > 0;) {
    const size_t i = order[rank];
    running_min = std::min(running_min, p_values[i] * m / double(rank + 1));
    q[i] = running_min;
  }
  return q;
}

double EntropyBits(std::span<const double> counts) {
  double total = 0;
  for (double c : counts)
    if (c > 0) total += c;
  if (!(total > 0)) return 0.0;
  double h = 0;
  for (double c : counts) {
    if (!(c > 0)) continue;
    const double p = c / total;
    h -= p * std::log2(p);
  }
  return h;
}

Proportion WilsonInterval(uint64_t k, uint64_t n, double z) {
  if (n == 0 || k > n) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan, nan};
  }
  const double nn = static_cast<double>(n), kk = static_cast<double>(k), z2 = z * z;
  const double centre = (kk + z2 / 2) / (nn + z2);
  const double half = z * std::sqrt(kk * (nn - kk) / nn + z2 / 4) / (nn + z2);
  return {kk / nn, std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

}  // namespace visalign::stats
