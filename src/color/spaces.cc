// Color-space conversions: sRGB <-> linear sRGB <-> XYZ <-> xyY / CIELAB <-> LCh, sRGB <-> HSL,
// scalar and batch. Constants follow scikit-image's rgb2lab (see include/visalign/color.h).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

#include "color/angles.h"
#include "visalign/color.h"

namespace visalign::color {
namespace {

using internal::kDegreesPerRadian;
using internal::WrapDegrees;

// IEC 61966-2-1 transfer function.
constexpr double kSrgbEncodedThreshold = 0.04045;
constexpr double kSrgbLinearThreshold = 0.0031308;
constexpr double kSrgbLinearSlope = 12.92;
constexpr double kSrgbOffset = 0.055;
constexpr double kSrgbGamma = 2.4;

constexpr double kMax8 = 255.0;

using Matrix3 = std::array<std::array<double, 3>, 3>;

// Linear sRGB -> XYZ (D65, 2°), scikit-image's `xyz_from_rgb`.
constexpr Matrix3 kXyzFromRgb{
    {{0.412453, 0.357580, 0.180423}, {0.212671, 0.715160, 0.072169}, {0.019334, 0.119193, 0.950227}}};

// The exact inverse of a 3×3 matrix by cofactors, evaluated in double at compile time.
constexpr Matrix3 Inverse(const Matrix3& m) {
  const double c00 = m[1][1] * m[2][2] - m[1][2] * m[2][1];
  const double c01 = m[1][2] * m[2][0] - m[1][0] * m[2][2];
  const double c02 = m[1][0] * m[2][1] - m[1][1] * m[2][0];
  const double det = m[0][0] * c00 + m[0][1] * c01 + m[0][2] * c02;
  return {{{c00 / det, (m[0][2] * m[2][1] - m[0][1] * m[2][2]) / det, (m[0][1] * m[1][2] - m[0][2] * m[1][1]) / det},
           {c01 / det, (m[0][0] * m[2][2] - m[0][2] * m[2][0]) / det, (m[0][2] * m[1][0] - m[0][0] * m[1][2]) / det},
           {c02 / det, (m[0][1] * m[2][0] - m[0][0] * m[2][1]) / det, (m[0][0] * m[1][1] - m[0][1] * m[1][0]) / det}}};
}
constexpr Matrix3 kRgbFromXyz = Inverse(kXyzFromRgb);

// CIELAB (scikit-image form): f(t) = cbrt(t) for t > ε, else 7.787·t + 16/116.
constexpr double kLabEpsilon = 0.008856;
constexpr double kLabSlope = 7.787;
constexpr double kLabOffset = 16.0 / 116.0;
// Largest f produced by the linear branch. The cube-root branch only produces values above
// cbrt(ε) = 0.2068930..., which is larger, so splitting the inverse here inverts f exactly.
// (scikit-image's lab2xyz splits at 0.2068966 instead, which is not an exact inverse.)
constexpr double kLabFLinearMax = kLabSlope * kLabEpsilon + kLabOffset;
constexpr double kLabLScale = 116.0;
constexpr double kLabLOffset = 16.0;
constexpr double kLabAScale = 500.0;
constexpr double kLabBScale = 200.0;

constexpr double kHueSector = 60.0;

// Cube root for t > 0 without std::pow/std::cbrt (fallback of TableCbrt below): an
// exponent-dividing bit trick gives a first guess within 3.2%; two Halley steps (cubic
// convergence) bring that to ~6e-15 and a final Newton step to full double precision.
inline double FastCbrt(double t) {
  constexpr uint64_t kCbrtMagic = uint64_t{0x2A9F7893} << 32;  // fdlibm's cbrt bias B1, in the high word
  double y = std::bit_cast<double>(std::bit_cast<uint64_t>(t) / 3 + kCbrtMagic);
  for (int step = 0; step < 2; ++step) {
    const double y3 = y * y * y;
    y *= (y3 + 2.0 * t) / (2.0 * y3 + t);
  }
  return y - (y * y * y - t) / (3.0 * y * y);
}

// Cube root for the batch paths, t > ε: an 8192-entry table (64 KiB) of t^(-1/3) at the midpoints
// of [2^-7, 2) split by exponent and the top 10 mantissa bits (relative error <= 1.7e-4), then
// one division-free step for the inverse cube root, r <- r·(1-e)^(-1/3) with e = 1 − t·r³ and
// the series (1-e)^(-1/3) = 1 + e/3 + 2e²/9 + 14e³/81 + 35e⁴/243 + O(e⁵) (|e| <= 5e-4, so the
// remainder is ~1e-17); cbrt(t) = t·r². Within a few ulps of std::cbrt. t outside the table
// (only from out-of-range float input) uses FastCbrt.
class TableCbrt {
 public:
  TableCbrt() : table_(Table()) {}
  double operator()(double t) const {
    const uint64_t bits = std::bit_cast<uint64_t>(t);
    const uint64_t index = (bits >> kIndexShift) - kFirstIndex;
    if (index >= kEntries) return FastCbrt(t);  // also catches t < 2^-7 via unsigned wrap-around
    double r = table_[index];
    const double e = 1.0 - t * r * r * r;
    r += r * e * (1.0 / 3.0 + e * (2.0 / 9.0 + e * (14.0 / 81.0 + e * (35.0 / 243.0))));
    return t * r * r;
  }

 private:
  static constexpr int kMantissaBits = 52;
  static constexpr int kIndexMantissaBits = 10;
  static constexpr int kIndexShift = kMantissaBits - kIndexMantissaBits;
  static constexpr uint64_t kExponentBias = 1023;
  static constexpr uint64_t kLowestExponent = 7;  // table starts at 2^-7 = 0.0078125 < ε
  static constexpr uint64_t kExponentCount = 8;   // ... and ends below 2^1
  static constexpr uint64_t kFirstIndex = (kExponentBias - kLowestExponent) << kIndexMantissaBits;
  static constexpr uint64_t kEntries = kExponentCount << kIndexMantissaBits;

  static const std::array<double, kEntries>& Table() {
    static const std::array<double, kEntries> table = [] {
      std::array<double, kEntries> t{};
      for (uint64_t i = 0; i < kEntries; ++i) {
        const double lo = std::bit_cast<double>((kFirstIndex + i) << kIndexShift);
        const double hi = std::bit_cast<double>((kFirstIndex + i + 1) << kIndexShift);
        t[i] = 1.0 / std::cbrt((lo + hi) / 2.0);
      }
      return t;
    }();
    return table;
  }

  const std::array<double, kEntries>& table_;
};

struct StdCbrt {
  double operator()(double t) const { return std::cbrt(t); }
};

template <typename Cbrt>
inline double LabF(double t, const Cbrt& cbrt) {
  return t > kLabEpsilon ? cbrt(t) : kLabSlope * t + kLabOffset;
}

inline double LabFInverse(double f) { return f > kLabFLinearMax ? f * f * f : (f - kLabOffset) / kLabSlope; }

template <typename Cbrt>
inline Lab XyzToLabWith(Xyz c, const Cbrt& cbrt) {
  const double fx = LabF(c.x / kD65White.x, cbrt);
  const double fy = LabF(c.y / kD65White.y, cbrt);
  const double fz = LabF(c.z / kD65White.z, cbrt);
  return {kLabLScale * fy - kLabLOffset, kLabAScale * (fx - fy), kLabBScale * (fy - fz)};
}

// The 256 linear values of 8-bit sRGB codes, computed with the scalar SrgbToLinear so that batch
// and scalar paths agree bit for bit up to the cube root.
const std::array<double, 256>& LinearTable() {
  static const std::array<double, 256> table = [] {
    std::array<double, 256> t{};
    for (int i = 0; i < 256; ++i) t[i] = SrgbToLinear(i / kMax8);
    return t;
  }();
  return table;
}

}  // namespace

// Both transfer directions are odd functions: the IEC formula applies to |c| and the sign is put
// back with copysign, which leaves c >= 0 (every in-gamut value) bit-identical to the standard.
double SrgbToLinear(double c) {
  const double m = std::fabs(c);
  return std::copysign(
      m > kSrgbEncodedThreshold ? std::pow((m + kSrgbOffset) / (1.0 + kSrgbOffset), kSrgbGamma) : m / kSrgbLinearSlope,
      c);
}

double LinearToSrgb(double v) {
  const double m = std::fabs(v);
  return std::copysign(m > kSrgbLinearThreshold ? (1.0 + kSrgbOffset) * std::pow(m, 1.0 / kSrgbGamma) - kSrgbOffset
                                                : m * kSrgbLinearSlope,
                       v);
}

namespace {
// v clamped to [0, max]; NaN -> 0.
double ClampChannel(double v, double max) {
  if (!(v > 0)) return 0.0;
  return v < max ? v : max;
}

uint8_t ToByte(double c) {
  // Clamped to [0, 255], so truncation after +0.5 rounds half away from zero.
  return static_cast<uint8_t>(ClampChannel(c * kMax8, kMax8) + 0.5);
}
}  // namespace

bool InGamut(Rgb c) {
  return std::min({c.r, c.g, c.b}) >= -kGamutTolerance && std::max({c.r, c.g, c.b}) <= 1.0 + kGamutTolerance;
}

Rgb ClipToGamut(Rgb c) { return {ClampChannel(c.r, 1.0), ClampChannel(c.g, 1.0), ClampChannel(c.b, 1.0)}; }

Rgb255 ClipToGamut(Rgb255 c) { return {ClampChannel(c.r, kMax8), ClampChannel(c.g, kMax8), ClampChannel(c.b, kMax8)}; }

Rgb FromSrgb8(Srgb8 c) { return {c.r / kMax8, c.g / kMax8, c.b / kMax8}; }

Srgb8 ToSrgb8(Rgb c) { return {ToByte(c.r), ToByte(c.g), ToByte(c.b)}; }

LinearRgb ToLinear(Rgb c) { return {SrgbToLinear(c.r), SrgbToLinear(c.g), SrgbToLinear(c.b)}; }
Rgb FromLinear(LinearRgb c) { return {LinearToSrgb(c.r), LinearToSrgb(c.g), LinearToSrgb(c.b)}; }

Xyz LinearToXyz(LinearRgb c) {
  const Matrix3& m = kXyzFromRgb;
  return {m[0][0] * c.r + m[0][1] * c.g + m[0][2] * c.b, m[1][0] * c.r + m[1][1] * c.g + m[1][2] * c.b,
          m[2][0] * c.r + m[2][1] * c.g + m[2][2] * c.b};
}

LinearRgb XyzToLinear(Xyz c) {
  const Matrix3& m = kRgbFromXyz;
  return {m[0][0] * c.x + m[0][1] * c.y + m[0][2] * c.z, m[1][0] * c.x + m[1][1] * c.y + m[1][2] * c.z,
          m[2][0] * c.x + m[2][1] * c.y + m[2][2] * c.z};
}

Xyy XyzToXyy(Xyz c) {
  const double sum = c.x + c.y + c.z;
  if (sum == 0) {
    const double white_sum = kD65White.x + kD65White.y + kD65White.z;
    return {kD65White.x / white_sum, kD65White.y / white_sum, 0.0};
  }
  return {c.x / sum, c.y / sum, c.y};
}

Xyz XyyToXyz(Xyy c) {
  if (c.y == 0) return {0.0, 0.0, 0.0};
  return {c.x * c.Y / c.y, c.Y, (1.0 - c.x - c.y) * c.Y / c.y};
}

Lab XyzToLab(Xyz c) { return XyzToLabWith(c, StdCbrt{}); }

Xyz LabToXyz(Lab c) {
  const double fy = (c.L + kLabLOffset) / kLabLScale;
  const double fx = fy + c.a / kLabAScale;
  const double fz = fy - c.b / kLabBScale;
  return {LabFInverse(fx) * kD65White.x, LabFInverse(fy) * kD65White.y, LabFInverse(fz) * kD65White.z};
}

Lch LabToLch(Lab c) { return {c.L, std::hypot(c.a, c.b), internal::HueDegrees(c.a, c.b)}; }

Lab LchToLab(Lch c) {
  const double h = c.h / kDegreesPerRadian;
  return {c.L, c.C * std::cos(h), c.C * std::sin(h)};
}

// CSS Color 4 (§ "Converting sRGB Colors to HSL") on the clipped color. On the cube l is in
// [0, 1] and max >= l, so s = (max − l) / min(l, 1 − l) lies in [0, 1].
Hsl RgbToHsl(Rgb rgb) {
  const Rgb c = ClipToGamut(rgb);
  const double max = std::max({c.r, c.g, c.b});
  const double min = std::min({c.r, c.g, c.b});
  const double l = (max + min) / 2.0;
  const double d = max - min;
  if (d == 0) return {0.0, 0.0, l};
  const double denom = std::min(l, 1.0 - l);
  const double s = denom == 0 ? 0.0 : (max - l) / denom;
  double h;
  if (max == c.r) {
    h = (c.g - c.b) / d + (c.g < c.b ? 6.0 : 0.0);
  } else if (max == c.g) {
    h = (c.b - c.r) / d + 2.0;
  } else {
    h = (c.r - c.g) / d + 4.0;
  }
  return {WrapDegrees(h * kHueSector), s, l};
}

// CSS Color 4 hslToRgb: channel(n) = l − a·max(−1, min(k − 3, 9 − k, 1)), k = (n + h/30) mod 12.
Rgb HslToRgb(Hsl c) {
  constexpr double kHoursPerDegree = 1.0 / 30.0;
  constexpr double kHours = 12.0;
  const double h = WrapDegrees(c.h);
  const double a = c.s * std::min(c.l, 1.0 - c.l);
  auto channel = [&](double n) {
    const double k = std::fmod(n + h * kHoursPerDegree, kHours);
    return c.l - a * std::max(-1.0, std::min({k - 3.0, 9.0 - k, 1.0}));
  };
  return {channel(0.0), channel(8.0), channel(4.0)};
}

Lab SrgbToLab(Rgb c) { return XyzToLab(LinearToXyz(ToLinear(c))); }
Rgb LabToSrgb(Lab c) { return FromLinear(XyzToLinear(LabToXyz(c))); }
Lab Srgb8ToLab(Srgb8 c) { return SrgbToLab(FromSrgb8(c)); }

void Srgb8ToLabBatch(const uint8_t* rgb, size_t n, double* lab) {
  const std::array<double, 256>& lin = LinearTable();
  const TableCbrt cbrt;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = rgb + 3 * i;
    const Lab out = XyzToLabWith(LinearToXyz({lin[p[0]], lin[p[1]], lin[p[2]]}), cbrt);
    lab[3 * i] = out.L;
    lab[3 * i + 1] = out.a;
    lab[3 * i + 2] = out.b;
  }
}

void SrgbToLabBatch(const double* rgb, size_t n, double* lab) {
  const TableCbrt cbrt;
  for (size_t i = 0; i < n; ++i) {
    const double* p = rgb + 3 * i;
    const Lab out = XyzToLabWith(LinearToXyz(ToLinear({p[0], p[1], p[2]})), cbrt);
    lab[3 * i] = out.L;
    lab[3 * i + 1] = out.a;
    lab[3 * i + 2] = out.b;
  }
}

std::string ToHex(Srgb8 c) {
  constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out = "#";
  for (uint8_t v : {c.r, c.g, c.b}) {
    out += kDigits[v >> 4];
    out += kDigits[v & 0xF];
  }
  return out;
}

}  // namespace visalign::color
