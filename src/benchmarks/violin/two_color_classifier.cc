#include "benchmarks/violin/two_color_classifier.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include <emmintrin.h>  // SSE2, in every x86-64 build

namespace visalign::violin {
namespace {

constexpr double kL = 116, kL0 = 16, kA = 500, kB = 200;
// CIELAB's f as color.h defines it: cbrt(t) for t > ε, else 7.787 t + 16/116.
constexpr double kEpsilon = 0.008856, kSlope = 7.787, kOffset = 16.0 / 116.0;
constexpr int kCodes = 256;
// Cells are bounded after at least this many pixels, once more than 1 / kCellsShare of them were
// undecided by cubes (bounding them costs about what pass 2 costs for ~250 pixels).
constexpr size_t kCellsAfter = 1024, kCellsShare = 32;

// A table of n answers and kTwoColorCellPad zero bytes after them (the gathers read past the last).
std::unique_ptr<uint8_t[]> AnswerTable(size_t n) {
  auto table = std::make_unique_for_overwrite<uint8_t[]>(n + kTwoColorCellPad);
  std::fill_n(table.get() + n, kTwoColorCellPad, 0);
  return table;
}

// The parameters of the kernels' g for A, B (in single precision); the tables are computed once.
TwoColorG Params(const std::array<double, 3>& alpha2, double constant) {
  static const TwoColorG tables = [] {
    TwoColorG p{};
    for (int i = 0; i < kCodes; ++i) p.lin[i] = static_cast<float>(color::SrgbToLinear(i / double{kCodes - 1}));
    const double white[3] = {color::kD65White.x, color::kD65White.y, color::kD65White.z};
    for (int j = 0; j < 3; ++j) {
      const color::Xyz unit = color::LinearToXyz({j == 0 ? 1.0 : 0.0, j == 1 ? 1.0 : 0.0, j == 2 ? 1.0 : 0.0});
      const double xyz[3] = {unit.x, unit.y, unit.z};
      for (int k = 0; k < 3; ++k) p.xyz[k][j] = static_cast<float>(xyz[k] / white[k]);
    }
    p.epsilon = static_cast<float>(kEpsilon), p.slope = static_cast<float>(kSlope),
    p.offset = static_cast<float>(kOffset);
    return p;
  }();
  TwoColorG p = tables;
  for (int k = 0; k < 3; ++k) p.alpha2[k] = static_cast<float>(alpha2[k]);
  p.constant = static_cast<float>(constant);
  return p;
}

}  // namespace

TwoColorClassifier::TwoColorClassifier(color::Lab a, color::Lab b, const TwoColorKernels& kernels, TwoColorCells cells)
    : a_(a), b_(b), kernels_(kernels), when_cells_(cells), cubes_(AnswerTable(kTwoColorCubes)) {
  const double wl = b.L - a.L, wa = b.a - a.a, wb = b.b - a.b;
  const std::array<double, 3> alpha2 = {2 * kA * wa, 2 * (kL * wl - kA * wa + kB * wb), -2 * kB * wb};
  const double constant = -2.0 * kL0 * wl + (a.L * a.L + a.a * a.a + a.b * a.b) - (b.L * b.L + b.a * b.a + b.b * b.b);
  g_params_ = Params(alpha2, constant);
  const double scale = std::abs(alpha2[0]) + std::abs(alpha2[1]) + std::abs(alpha2[2]);
  // The kernels' error (two_color_kernels.h), f's jump at ε, and the rounding of sums of terms up
  // to ~1e5 in the exact conversion.
  const double jump = std::abs(kSlope * kEpsilon + kOffset - std::cbrt(kEpsilon));
  const double margin = scale * (kTwoColorFError + jump) + kTwoColorSumError * (std::abs(constant) + 1.1 * scale) +
                        1e-9 * (1 + std::abs(constant) + scale);
  margin_ = std::nextafter(static_cast<float>(margin), INFINITY);  // not below `margin`
  kernels_.decide_cubes(g_params_, kernels_.corners(g_params_), margin_, cubes_.get());
  if (when_cells_ == TwoColorCells::kAlways) BoundCells();
}

void TwoColorClassifier::BoundCells() {
  cells_ = AnswerTable(kTwoColorCells);
  kernels_.decide_cells(g_params_, kernels_.corners(g_params_), margin_, cubes_.get(), cells_.get());
}

size_t TwoColorClassifier::Row(const uint8_t* rgb, size_t n, uint8_t* out) {
  if (pending_.size() < n + kTwoColorListPad)
    pending_.resize(n + kTwoColorListPad), packed_.resize(n + kTwoColorListPad), g_.resize(n + kTwoColorListPad),
        near_.resize(n);
  // Pass 1, without branches (SIMD): each pixel's cube (or cell) answer.
  size_t ones = kernels_.lookup(rgb, n, cells_ ? cells_.get() : cubes_.get(), cells_ != nullptr, out);
  // The undecided pixels listed with their colours: answers compared 16 at a time (SSE2), then a step
  // per listed pixel (on noise a sixth of them by cubes, half that by cells; on flat images none).
  uint32_t* pending = pending_.data();
  uint32_t* packed = packed_.data();
  size_t kept = 0;
  const auto list = [&](size_t x) {
    const uint8_t* p = rgb + 3 * x;
    uint32_t colour;  // r | g << 8 | b << 16: four bytes read but the row's last pixel's (three)
    if (x + 1 < n) {
      std::memcpy(&colour, p, sizeof colour);
      colour &= 0xFFFFFF;
    } else {
      colour = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16;
    }
    pending[kept] = static_cast<uint32_t>(x);
    packed[kept++] = colour;
  };
  constexpr size_t kStep = 16;
  size_t x = 0;
  for (; x + kStep <= n; x += kStep) {
    const __m128i answers = _mm_loadu_si128(reinterpret_cast<const __m128i*>(out + x));
    for (unsigned m = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpgt_epi8(answers, _mm_set1_epi8(1)))); m != 0;
         m &= m - 1)
      list(x + static_cast<size_t>(std::countr_zero(m)));
  }
  for (; x < n; ++x)
    if (out[x] > 1) list(x);
  // Pass 2: g of those in single precision (SIMD) and their classes; an exact conversion only
  // within the margin.
  uint32_t* near = near_.data();
  const size_t close = kernels_.classify_listed(g_params_, margin_, packed, pending, kept, g_.data(), out, near, &ones);
  for (size_t i = 0; i < close; ++i) {
    out[near[i]] = Exact(rgb + 3 * size_t{near[i]});
    ones += out[near[i]];
  }
  // The cells are bounded for the rows to come once the cubes leave many pixels undecided.
  seen_ += n, undecided_ += kept;
  if (!cells_ && when_cells_ == TwoColorCells::kWhenUndecided && seen_ >= kCellsAfter &&
      undecided_ * kCellsShare > seen_)
    BoundCells();
  return ones;
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
