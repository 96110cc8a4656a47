// Color differences: RGB Euclidean and redmean, CIE76, CIEDE2000, hue-angle, ab-plane and HyAB.
#include <cmath>

#include "color/angles.h"
#include "visalign/color.h"

namespace visalign::color {
namespace {

using internal::HueDegrees;
using internal::kFullTurn;
using internal::kHalfTurn;
using internal::kRadiansPerDegree;

double Square(double v) { return v * v; }
// sqrt(x² + y²); Lab values never approach overflow, so std::hypot's (slow) scaling is not needed.
double Norm2(double x, double y) { return std::sqrt(x * x + y * y); }
double Pow7(double v) {
  const double v2 = v * v;
  return v2 * v2 * v2 * v;
}
double SinDeg(double deg) { return std::sin(deg * kRadiansPerDegree); }
double CosDeg(double deg) { return std::cos(deg * kRadiansPerDegree); }

}  // namespace

double RgbEuclidean(Rgb255 p_any, Rgb255 q_any) {
  const Rgb255 p = ClipToGamut(p_any), q = ClipToGamut(q_any);
  return std::sqrt(Square(p.r - q.r) + Square(p.g - q.g) + Square(p.b - q.b));
}

// With both colors clipped, r̄ is in [0, 255] and every weight is at least 2.
double RgbRedmean(Rgb255 p_any, Rgb255 q_any) {
  const Rgb255 p = ClipToGamut(p_any), q = ClipToGamut(q_any);
  constexpr double kRedWeightScale = 256.0;
  constexpr double kMaxChannel = 255.0;
  constexpr double kBaseWeight = 2.0;
  constexpr double kGreenWeight = 4.0;
  const double r_mean = (p.r + q.r) / 2.0;
  return std::sqrt((kBaseWeight + r_mean / kRedWeightScale) * Square(p.r - q.r) + kGreenWeight * Square(p.g - q.g) +
                   (kBaseWeight + (kMaxChannel - r_mean) / kRedWeightScale) * Square(p.b - q.b));
}

double DeltaE76(Lab p, Lab q) { return std::sqrt(Square(p.L - q.L) + Square(p.a - q.a) + Square(p.b - q.b)); }

// Sharma, Wu & Dalal (2005), equations (1)-(22), in degrees, kL = kC = kH = 1. Variable names
// follow the paper (primes as `p`, bars as `mean_`).
double DeltaE2000(Lab p, Lab q) {
  constexpr double k25Pow7 = 6103515625.0;  // 25^7
  const double c1 = Norm2(p.a, p.b);
  const double c2 = Norm2(q.a, q.b);
  const double mean_c7 = Pow7((c1 + c2) / 2.0);
  const double g = 0.5 * (1.0 - std::sqrt(mean_c7 / (mean_c7 + k25Pow7)));  // (4)
  const double a1p = (1.0 + g) * p.a;                                       // (5)
  const double a2p = (1.0 + g) * q.a;
  const double c1p = Norm2(a1p, p.b);  // (6)
  const double c2p = Norm2(a2p, q.b);
  const double h1p = HueDegrees(a1p, p.b);  // (7)
  const double h2p = HueDegrees(a2p, q.b);

  const bool achromatic = c1p * c2p == 0;
  const double dLp = q.L - p.L;  // (8)
  const double dCp = c2p - c1p;  // (9)
  double dhp = 0.0;              // (10)
  if (!achromatic) {
    dhp = h2p - h1p;
    if (dhp > kHalfTurn) {
      dhp -= kFullTurn;
    } else if (dhp < -kHalfTurn) {
      dhp += kFullTurn;
    }
  }
  const double dHp = 2.0 * std::sqrt(c1p * c2p) * SinDeg(dhp / 2.0);  // (11)

  const double mean_Lp = (p.L + q.L) / 2.0;  // (12)
  const double mean_Cp = (c1p + c2p) / 2.0;  // (13)
  double mean_hp = h1p + h2p;                // (14)
  if (!achromatic) {
    if (std::fabs(h1p - h2p) <= kHalfTurn) {
      mean_hp /= 2.0;
    } else if (mean_hp < kFullTurn) {
      mean_hp = (mean_hp + kFullTurn) / 2.0;
    } else {
      mean_hp = (mean_hp - kFullTurn) / 2.0;
    }
  }
  const double t = 1.0 - 0.17 * CosDeg(mean_hp - 30.0) + 0.24 * CosDeg(2.0 * mean_hp) +
                   0.32 * CosDeg(3.0 * mean_hp + 6.0) - 0.20 * CosDeg(4.0 * mean_hp - 63.0);  // (15)
  const double d_theta = 30.0 * std::exp(-Square((mean_hp - 275.0) / 25.0));                  // (16)
  const double mean_Cp7 = Pow7(mean_Cp);
  const double rc = 2.0 * std::sqrt(mean_Cp7 / (mean_Cp7 + k25Pow7));  // (17)
  const double l50 = Square(mean_Lp - 50.0);
  const double sl = 1.0 + 0.015 * l50 / std::sqrt(20.0 + l50);  // (18)
  const double sc = 1.0 + 0.045 * mean_Cp;                      // (19)
  const double sh = 1.0 + 0.015 * mean_Cp * t;                  // (20)
  const double rt = -SinDeg(2.0 * d_theta) * rc;                // (21)
  const double tl = dLp / sl;
  const double tc = dCp / sc;
  const double th = dHp / sh;
  return std::sqrt(tl * tl + tc * tc + th * th + rt * tc * th);  // (22)
}

double HueDifference(Lab p, Lab q) {
  const double d = std::fabs(HueDegrees(p.a, p.b) - HueDegrees(q.a, q.b));
  return d > kHalfTurn ? kFullTurn - d : d;
}

double ChromaDistance(Lab p, Lab q) { return Norm2(p.a - q.a, p.b - q.b); }

double HyAB(Lab p, Lab q) { return std::fabs(p.L - q.L) + ChromaDistance(p, q); }

}  // namespace visalign::color
