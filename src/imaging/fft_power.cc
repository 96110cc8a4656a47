#include "imaging/fft_power.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>

namespace visalign::imaging {
namespace {

// kLanes complex numbers side by side: one "element" of kLanes independent transforms.
constexpr int kLanes = 2;
using Vd = double __attribute__((vector_size(sizeof(double) * kLanes)));
struct Lanes {
  Vd re, im;
};
// Column groups gathered from the staging matrix at once: 8 groups of 2 columns are 256 bytes
// of each staged row, and their transforms (8 x h elements) stay in L2.
constexpr int kGatherGroups = 8;
constexpr int kDoublesPerLine = 64 / sizeof(double);
constexpr int kGatherLines = kGatherGroups * kLanes * 2 / kDoublesPerLine;  // cache lines per staged row
constexpr int kPrefetchRows = 8;

// Bit-reversal permutation and twiddles e^(-2 pi i k / n), k < n/2, for one power-of-two n. The
// twiddles are stored already broadcast to all lanes (GCC otherwise splats them through memory).
struct Radix2Plan {
  int n = 0;
  std::vector<uint32_t> reverse;
  std::vector<Vd> cos, minus_sin;

  void Prepare(int size) {
    if (n == size) return;
    n = size;
    const int bits = std::countr_zero(static_cast<unsigned>(n));
    reverse.assign(n, 0);
    for (int i = 0; i < n; ++i)
      for (int b = 0; b < bits; ++b) reverse[i] |= ((static_cast<uint32_t>(i) >> b) & 1u) << (bits - 1 - b);
    cos.resize(n / 2);
    minus_sin.resize(n / 2);
    for (int k = 0; k < n / 2; ++k) {
      const double angle = 2.0 * std::numbers::pi * k / n;
      for (int l = 0; l < kLanes; ++l) {
        cos[k][l] = std::cos(angle);
        minus_sin[k][l] = -std::sin(angle);
      }
    }
  }
};

Lanes Times(const Lanes& v, Vd wr, Vd wi) { return {v.re * wr - v.im * wi, v.re * wi + v.im * wr}; }
Lanes operator+(const Lanes& a, const Lanes& b) { return {a.re + b.re, a.im + b.im}; }
Lanes operator-(const Lanes& a, const Lanes& b) { return {a.re - b.re, a.im - b.im}; }
Lanes TimesMinusI(const Lanes& v) { return {v.im, -v.re}; }

// One radix-2 decimation-in-frequency pass of span `half`: (u, v) -> (u + v, (u - v) w^j) with
// w = e^(-2 pi i / (2 half)).
void Radix2Pass(Lanes* a, const Radix2Plan& plan, int half) {
  const int stride = plan.n / (2 * half);
  for (int i = 0; i < plan.n; i += 2 * half)
    for (int j = 0; j < half; ++j) {
      const Lanes u = a[i + j], v = a[i + j + half];
      a[i + j] = u + v;
      a[i + j + half] = Times(u - v, plan.cos[j * stride], plan.minus_sin[j * stride]);
    }
}

// Two radix-2 passes (spans 2q and q) fused, so the data is read and written once; in the first
// pass the odd quarter's twiddle is the even one's times e^(-i pi / 2) = -i.
void Radix4Pass(Lanes* a, const Radix2Plan& plan, int q) {
  const int stride4 = plan.n / (4 * q), stride2 = plan.n / (2 * q);
  for (int i = 0; i < plan.n; i += 4 * q)
    for (int j = 0; j < q; ++j) {
      Lanes* p = a + i + j;
      const Vd w4r = plan.cos[j * stride4], w4i = plan.minus_sin[j * stride4];
      const Vd w2r = plan.cos[j * stride2], w2i = plan.minus_sin[j * stride2];
      const Lanes b0 = p[0] + p[2 * q], b1 = p[q] + p[3 * q];
      const Lanes b2 = Times(p[0] - p[2 * q], w4r, w4i), b3 = TimesMinusI(Times(p[q] - p[3 * q], w4r, w4i));
      p[0] = b0 + b1;
      p[q] = Times(b0 - b1, w2r, w2i);
      p[2 * q] = b2 + b3;
      p[3 * q] = Times(b2 - b3, w2r, w2i);
    }
}

// In-place forward DFT, X[k] = sum_j a[j] e^(-2 pi i jk / n), of elements in natural order;
// X[k] ends up at a[reverse[k]] (decimation in frequency: radix 4, then one radix-2 pass if
// log2 n is odd). Natural-order input keeps the gathers sequential; the scattered reads of the
// result hit a transform that fits in L1/L2.
void Fft(Lanes* a, const Radix2Plan& plan) {
  int q = plan.n / 4;
  for (; q >= 1; q /= 4) Radix4Pass(a, plan, q);
  if (std::countr_zero(static_cast<unsigned>(plan.n)) % 2 == 1) Radix2Pass(a, plan, 1);
}

double LaneSum(Vd v) {
  double s = 0.0;
  for (int l = 0; l < kLanes; ++l) s += v[l];
  return s;
}

}  // namespace

bool IsRadix2Size(int width, int height) {
  return width >= kMinRadix2Side && height >= kMinRadix2Side && std::has_single_bit(static_cast<unsigned>(width)) &&
         std::has_single_bit(static_cast<unsigned>(height));
}

// Rows go 2 * kLanes at a time: rows r0 + l and r0 + kLanes + l are the real and imaginary parts
// of lane l of one complex transform, whose spectrum Z splits into the two real rows' spectra
// A[k] = (Z[k] + conj Z[-k]) / 2 and B[k] = (Z[k] - conj Z[-k]) / 2i. Columns kx >= whole_begin
// count whole: h * sum_y |R[y][kx]|^2 (Parseval along the column), weight 2 for the pair kx,
// w - kx and 1 for the Nyquist column. The others are written row by row to a staging matrix,
// then gathered kGatherGroups groups of kLanes columns at a time (whole cache lines per row) and
// transformed along y, kLanes columns per transform.
double HighPowerRadix2(const GrayImage& gray, const std::vector<int>& first_row) {
  const int w = gray.width, h = gray.height, half_w = w / 2;
  int whole_begin = 0;
  while (whole_begin <= half_w && first_row[whole_begin] > 0) ++whole_begin;
  const int groups = (whole_begin + kLanes - 1) / kLanes;
  const size_t staged = static_cast<size_t>(groups) * kLanes;  // columns per staging row

  thread_local Radix2Plan row_plan, column_plan;
  thread_local std::vector<Lanes> work, columns;
  thread_local std::vector<double> staging;  // h rows of `staged` (re, im) pairs
  row_plan.Prepare(w);
  column_plan.Prepare(h);
  work.resize(w);
  columns.resize(static_cast<size_t>(kGatherGroups) * h);
  // Not cleared: every column below whole_begin is written; a padding column (odd whole_begin)
  // holds finite leftovers and only feeds a lane that is never summed.
  staging.resize(2 * staged * h);

  Vd whole{};
  for (int r0 = 0; r0 < h; r0 += 2 * kLanes) {
    for (int x = 0; x < w; ++x) {
      Lanes& e = work[x];
      for (int l = 0; l < kLanes; ++l) {
        e.re[l] = gray.pixels[static_cast<size_t>(r0 + l) * w + x];
        e.im[l] = gray.pixels[static_cast<size_t>(r0 + kLanes + l) * w + x];
      }
    }
    Fft(work.data(), row_plan);
    for (int k = 0; k <= half_w; ++k) {
      const Lanes& z = work[row_plan.reverse[k]];
      const Lanes& mirror = work[row_plan.reverse[(w - k) & (w - 1)]];
      const Vd a_re = (z.re + mirror.re) * 0.5, a_im = (z.im - mirror.im) * 0.5;
      const Vd b_re = (z.im + mirror.im) * 0.5, b_im = (mirror.re - z.re) * 0.5;
      if (k >= whole_begin) {
        const Vd power = a_re * a_re + a_im * a_im + b_re * b_re + b_im * b_im;
        whole += k == half_w ? power : power + power;
        continue;
      }
      for (int l = 0; l < kLanes; ++l) {
        double* top = &staging[2 * (static_cast<size_t>(r0 + l) * staged + k)];
        top[0] = a_re[l], top[1] = a_im[l];
        double* bottom = &staging[2 * (static_cast<size_t>(r0 + kLanes + l) * staged + k)];
        bottom[0] = b_re[l], bottom[1] = b_im[l];
      }
    }
  }

  double high = static_cast<double>(h) * LaneSum(whole);
  for (int g0 = 0; g0 < groups; g0 += kGatherGroups) {
    const int gathered = std::min(kGatherGroups, groups - g0);
    for (int y = 0; y < h; ++y) {
      const double* src = &staging[2 * (static_cast<size_t>(y) * staged + static_cast<size_t>(g0) * kLanes)];
      // Staged rows are far apart (a page or more): hardware prefetchers do not follow them.
      if (y + kPrefetchRows < h)
        for (int line = 0; line < kGatherLines; ++line)
          __builtin_prefetch(src + 2 * kPrefetchRows * staged + line * kDoublesPerLine);
      for (int g = 0; g < gathered; ++g) {
        Lanes& e = columns[static_cast<size_t>(g) * h + y];
        for (int l = 0; l < kLanes; ++l) {
          e.re[l] = src[2 * (g * kLanes + l)];
          e.im[l] = src[2 * (g * kLanes + l) + 1];
        }
      }
    }
    for (int g = 0; g < gathered; ++g) {
      Lanes* column = &columns[static_cast<size_t>(g) * h];
      Fft(column, column_plan);
      for (int lane = 0; lane < kLanes; ++lane) {
        const int kx = (g0 + g) * kLanes + lane;
        if (kx >= whole_begin) break;
        double sum = 0.0;
        for (int ky = first_row[kx]; ky <= h - first_row[kx]; ++ky) {
          const Lanes& x = column[column_plan.reverse[ky]];
          sum += x.re[lane] * x.re[lane] + x.im[lane] * x.im[lane];
        }
        high += (kx == 0 || kx == half_w ? 1.0 : 2.0) * sum;
      }
    }
  }
  return high;
}

}  // namespace visalign::imaging
