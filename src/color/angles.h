// Angle helpers shared by the color module's conversions and differences (internal).
#pragma once

#include <cmath>
#include <numbers>

namespace visalign::color::internal {

inline constexpr double kDegreesPerRadian = 180.0 / std::numbers::pi;
inline constexpr double kRadiansPerDegree = std::numbers::pi / 180.0;
inline constexpr double kFullTurn = 360.0;
inline constexpr double kHalfTurn = 180.0;

// h in degrees wrapped into [0, 360).
inline double WrapDegrees(double h) {
  h = std::fmod(h, kFullTurn);
  if (h < 0) h += kFullTurn;
  // A tiny negative h plus 360 can round to 360; `+ 0.0` turns -0 into +0.
  return h >= kFullTurn ? 0.0 : h + 0.0;
}

// The hue angle atan2(b, a) in degrees, [0, 360); 0 for a = b = 0 (including signed zeros).
inline double HueDegrees(double a, double b) {
  if (a == 0 && b == 0) return 0.0;
  return WrapDegrees(std::atan2(b, a) * kDegreesPerRadian);
}

}  // namespace visalign::color::internal
