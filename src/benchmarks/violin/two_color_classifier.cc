#include "benchmarks/violin/two_color_classifier.h"

#include <cmath>

namespace visalign::violin {
namespace {

constexpr int kShift = 4;  // cubes of 16 levels per channel
constexpr int kCellBits = 8 - kShift;
constexpr size_t kCells = size_t{1} << (3 * kCellBits);
constexpr uint8_t kUnknown = 255, kUndecided = 254;
constexpr double kL = 116, kL0 = 16, kA = 500, kB = 200;
// CIELAB's f as color.h defines it: cbrt(t) for t > ε, else 7.787 t + 16/116.
constexpr double kEpsilon = 0.008856, kSlope = 7.787, kOffset = 16.0 / 116.0;
// Cube roots at t = i h, i = 0 .. kNodes - 1, h = 2^-12, covering t in [0, 1.0625) (sRGB's X/Xn,
// Y/Yn, Z/Zn are at most 1 + 1e-4); linear interpolation of cbrt between nodes is off by at most
// h²/8 · max|cbrt''| = h²/8 · (2/9) t^(-5/3), largest on the first interval used, [ε - h, ε]:
// 4.4e-6. kFError is that bound with a quarter for safety and the rounding of X/Xn and the table.
constexpr double kStep = 1.0 / 4096;
constexpr size_t kNodes = 4352;
const double kFError = 1.25 * kStep * kStep / 8 * (2.0 / 9) * std::pow(kEpsilon - kStep, -5.0 / 3) + 1e-12;

}  // namespace

struct ClassifierTables {
  std::array<double, 256> lin{};             // linear value of each 8-bit code
  std::array<std::array<double, 3>, 3> t{};  // (X/Xn, Y/Yn, Z/Zn) per unit of linear R, G, B
  std::vector<double> cbrt;                  // kNodes + 1 cube roots
};

namespace {
using Tables = ClassifierTables;

const Tables& Shared() {
  static const Tables tables = [] {
    Tables out;
    for (int i = 0; i < 256; ++i) out.lin[i] = color::SrgbToLinear(i / 255.0);
    const double white[3] = {color::kD65White.x, color::kD65White.y, color::kD65White.z};
    for (int j = 0; j < 3; ++j) {
      const color::Xyz unit = color::LinearToXyz({j == 0 ? 1.0 : 0.0, j == 1 ? 1.0 : 0.0, j == 2 ? 1.0 : 0.0});
      out.t[0][j] = unit.x / white[0], out.t[1][j] = unit.y / white[1], out.t[2][j] = unit.z / white[2];
    }
    out.cbrt.resize(kNodes + 1);
    for (size_t i = 0; i <= kNodes; ++i) out.cbrt[i] = std::cbrt(static_cast<double>(i) * kStep);
    return out;
  }();
  return tables;
}

// f(t) within kFError (exact on the linear branch).
inline double ApproximateF(const Tables& tables, double t) {
  if (t <= kEpsilon) return kSlope * t + kOffset;
  const double x = t * (1.0 / kStep);
  const size_t i = static_cast<size_t>(x);
  if (i >= kNodes) return std::cbrt(t);
  const double lo = tables.cbrt[i];
  return lo + (tables.cbrt[i + 1] - lo) * (x - static_cast<double>(i));
}

// (X/Xn, Y/Yn, Z/Zn) of an 8-bit colour.
inline std::array<double, 3> Normalised(const Tables& tables, int r, int g, int b) {
  const double lr = tables.lin[r], lg = tables.lin[g], lb = tables.lin[b];
  std::array<double, 3> t;
  for (int k = 0; k < 3; ++k) t[k] = tables.t[k][0] * lr + tables.t[k][1] * lg + tables.t[k][2] * lb;
  return t;
}

size_t CellOf(const uint8_t* p) {
  return (size_t{p[0]} >> kShift << (2 * kCellBits)) | (size_t{p[1]} >> kShift << kCellBits) | (p[2] >> kShift);
}

}  // namespace

TwoColorClassifier::TwoColorClassifier(color::Lab a, color::Lab b)
    : tables_(Shared()), a_(a), b_(b), cells_(kCells, kUnknown) {
  const double wl = b.L - a.L, wa = b.a - a.a, wb = b.b - a.b;
  alpha2_ = {2 * kA * wa, 2 * (kL * wl - kA * wa + kB * wb), -2 * kB * wb};
  constant_ = -2.0 * kL0 * wl + (a.L * a.L + a.a * a.a + a.b * a.b) - (b.L * b.L + b.a * b.a + b.b * b.b);
  const double scale = std::abs(alpha2_[0]) + std::abs(alpha2_[1]) + std::abs(alpha2_[2]);
  // The interpolation error of each f, and the rounding of sums of terms up to ~1e5.
  margin_ = scale * kFError + 1e-9 * (1 + std::abs(constant_) + scale);
}

size_t TwoColorClassifier::Row(const uint8_t* rgb, size_t n, uint8_t* out) {
  if (pending_.size() < n) pending_.resize(n), g_.resize(n);
  // Pass 1, without branches: each pixel's cube answer; the pixels of cubes not decided are listed.
  const uint8_t* cells = cells_.data();
  uint32_t* pending = pending_.data();
  size_t listed = 0, ones = 0;
  for (size_t x = 0; x < n; ++x) {
    const uint8_t c = cells[CellOf(rgb + 3 * x)];
    out[x] = c;
    pending[listed] = static_cast<uint32_t>(x);
    listed += c > 1;
    ones += c == 1;
  }
  // Pass 2: cubes met for the first time are decided; the pixels of undecided cubes stay listed.
  size_t kept = 0;
  for (size_t i = 0; i < listed; ++i) {
    const uint32_t x = pending[i];
    const size_t cell = CellOf(rgb + 3 * size_t{x});
    if (cells_[cell] == kUnknown) cells_[cell] = DecideCell(cell);
    out[x] = cells_[cell];
    pending[kept] = x;
    kept += out[x] > 1;
    ones += out[x] == 1;
  }
  // Pass 3: g from interpolated f for those, in one tight loop; an exact conversion only within the margin.
  double* g = g_.data();
  for (size_t i = 0; i < kept; ++i) g[i] = ApproximateG(rgb + 3 * size_t{pending[i]});
  for (size_t i = 0; i < kept; ++i) {
    const uint8_t* p = rgb + 3 * size_t{pending[i]};
    out[pending[i]] = g[i] > margin_ ? 1 : g[i] < -margin_ ? 0 : Exact(p);
    ones += out[pending[i]];
  }
  return ones;
}

uint8_t TwoColorClassifier::DecideCell(size_t cell) const {
  const Tables& tables = tables_;
  const int top = (1 << kShift) - 1, mask = (1 << kCellBits) - 1;
  const int r = static_cast<int>(cell >> (2 * kCellBits)) << kShift,
            g = static_cast<int>((cell >> kCellBits) & mask) << kShift, b = static_cast<int>(cell & mask) << kShift;
  const std::array<double, 3> lo = Normalised(tables, r, g, b), hi = Normalised(tables, r + top, g + top, b + top);
  double g_min = constant_, g_max = constant_;
  for (int k = 0; k < 3; ++k) {
    const double f_lo = ApproximateF(tables, lo[k]), f_hi = ApproximateF(tables, hi[k]);
    g_min += alpha2_[k] * (alpha2_[k] >= 0 ? f_lo : f_hi);
    g_max += alpha2_[k] * (alpha2_[k] >= 0 ? f_hi : f_lo);
  }
  if (g_max < -margin_) return 0;
  if (g_min > margin_) return 1;
  return kUndecided;
}

inline double TwoColorClassifier::ApproximateG(const uint8_t* p) const {
  const std::array<double, 3> t = Normalised(tables_, p[0], p[1], p[2]);
  return constant_ + alpha2_[0] * ApproximateF(tables_, t[0]) + alpha2_[1] * ApproximateF(tables_, t[1]) +
         alpha2_[2] * ApproximateF(tables_, t[2]);
}

uint8_t TwoColorClassifier::Exact(const uint8_t* p) const {
  double lab[3];
  color::Srgb8ToLabBatch(p, 1, lab);
  auto d2 = [&](const color::Lab& t) {
    const double dl = lab[0] - t.L, da = lab[1] - t.a, db = lab[2] - t.b;
    return dl * dl + da * da + db * db;
  };
  return d2(a_) <= d2(b_) ? 0 : 1;
}

}  // namespace visalign::violin
