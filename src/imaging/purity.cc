#include "visalign/imaging/purity.h"

#include "imaging/canny.h"
#include "imaging/fft_power.h"
#include "imaging/pixel_kernels.h"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

namespace visalign::imaging {
namespace {

// cv::Canny(gray, 100, 200, apertureSize 3, L2gradient false), reproduced exactly by CannyEdges.
constexpr CannyThresholds kCannyThresholds{100, 200};
// With a 3x3 Sobel each of |dx|, |dy| is at most 4 * (max - min gray), so the L1 magnitude Canny
// compares against its thresholds is at most 8 * (max - min).
constexpr int kSobel3L1Gain = 8;
constexpr double kHfCutoff = 0.25;  // cycles/pixel; counted when r > cutoff (strictly)
constexpr double kChannelMax = 255.0;
constexpr int kTransposeRows = 8;  // 8 complex doubles = two 64-byte cache lines

// FFTW plans for one plane size: real DFTs of every row (w/2 + 1 bins each) and complex DFTs of
// `columns` columns of length h, in place. One set per thread, for the size seen last (images of
// a dataset share a size). FFTW_ESTIMATE plans without timing, so results do not depend on the
// machine's load; FFTW's planner is not thread-safe, hence the lock (executing plans is).
class FftwPlans {
 public:
  FftwPlans() = default;
  FftwPlans(const FftwPlans&) = delete;
  FftwPlans& operator=(const FftwPlans&) = delete;
  ~FftwPlans() { Reset(); }

  void Prepare(int w, int h, int columns) {
    if (w == w_ && h == h_ && columns == columns_) return;
    Reset();
    std::lock_guard<std::mutex> lock(PlannerMutex());
    w_ = w, h_ = h, columns_ = columns;
    const int bins = w / 2 + 1;
    plane_ = fftw_alloc_real(static_cast<size_t>(w) * h);
    rows_ = fftw_alloc_complex(static_cast<size_t>(bins) * h);
    row_plan_ = fftw_plan_many_dft_r2c(1, &w, h, plane_, nullptr, 1, w, rows_, nullptr, 1, bins, FFTW_ESTIMATE);
    if (columns > 0) {
      columns_data_ = fftw_alloc_complex(static_cast<size_t>(columns) * h);
      column_plan_ = fftw_plan_many_dft(1, &h, columns, columns_data_, nullptr, 1, h, columns_data_, nullptr, 1, h,
                                        FFTW_FORWARD, FFTW_ESTIMATE);
    }
  }
  double* plane() { return plane_; }
  const fftw_complex* row(int y) const { return rows_ + static_cast<size_t>(y) * (w_ / 2 + 1); }
  fftw_complex* column(size_t i) { return columns_data_ + i * h_; }
  void TransformRows() { fftw_execute(row_plan_); }
  void TransformColumns() { fftw_execute(column_plan_); }

 private:
  static std::mutex& PlannerMutex() {
    static std::mutex mutex;
    return mutex;
  }
  void Reset() {
    std::lock_guard<std::mutex> lock(PlannerMutex());
    if (row_plan_) fftw_destroy_plan(row_plan_);
    if (column_plan_) fftw_destroy_plan(column_plan_);
    fftw_free(plane_);
    fftw_free(rows_);
    fftw_free(columns_data_);
    row_plan_ = column_plan_ = nullptr;
    plane_ = nullptr;
    rows_ = columns_data_ = nullptr;
    w_ = h_ = columns_ = 0;
  }

  int w_ = 0, h_ = 0, columns_ = 0;
  double* plane_ = nullptr;
  fftw_complex* rows_ = nullptr;
  fftw_complex* columns_data_ = nullptr;
  fftw_plan row_plan_ = nullptr, column_plan_ = nullptr;
};

// Gray range and exact sum of squares.
using GrayRange = GrayTotals;

GrayRange Range(const GrayImage& gray) {
  GrayRange r;
  BestPixelKernels().gray_totals(gray.pixels.data(), gray.pixels.size(), &r);
  return r;
}

// numpy's fftfreq value of (non-negative) index k for length n, as numpy computes it: k * (1/n).
double FftFreq(int k, double inv_n) { return k * inv_n; }

bool IsHighFrequency(double fx, double fy) { return std::sqrt(fx * fx + fy * fy) > kHfCutoff; }

// For a frequency f along one axis, the smallest index k in [0, n/2] along the other axis (of
// length n) whose frequency makes r > cutoff, or n/2 + 1 when none does. r grows monotonically
// with |k| (each floating step is monotone) and fx^2 + fy^2 is symmetric in IEEE arithmetic, so a
// binary search evaluates exactly the same predicate numpy would, for columns and rows alike.
int FirstHighIndex(double f, int n, double inv_n) {
  int lo = 0, hi = n / 2 + 1;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (IsHighFrequency(f, FftFreq(mid, inv_n)))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

double Power(const fftw_complex& bin) { return bin[0] * bin[0] + bin[1] * bin[1]; }

double EdgeDensity(const GrayImage& gray, const GrayRange& range) {
  if ((range.hi - range.lo) * kSobel3L1Gain <= kCannyThresholds.high) return 0.0;
  return static_cast<double>(CannyEdges(gray, kCannyThresholds)) / static_cast<double>(gray.pixels.size());
}

// Sum of P over r > 0.25, by rows then columns: the 2-D DFT is a DFT of every row followed by a
// DFT of every column. Columns come in conjugate pairs (kx, w - kx) with equal power at mirrored
// rows, and a mirrored row has the same |fy|, so only kx in [0, w/2] is visited (weight 2 for a
// pair). A column whose own frequency already exceeds the cut counts whole: by Parseval its
// power is h * sum_y |R[y][kx]|^2, no column transform needed. Only the remaining ~w/4 columns
// are transformed. Gray levels are used unscaled: the ratio does not depend on the 1/255.
// Power-of-two planes go through HighPowerRadix2 (the same scheme with the axes swapped: columns
// first, then only the ~h/4 rows with |fy| <= cutoff), others through FFTW's mixed-radix DFT.
double HfRatio(const GrayImage& gray, const GrayRange& range) {
  if (range.sum_sq == 0 || range.lo == range.hi) return 0.0;  // all power in the DC bin
  const int w = gray.width, h = gray.height;
  const double inv_w = 1.0 / w, inv_h = 1.0 / h;
  const double total = static_cast<double>(w) * h * static_cast<double>(range.sum_sq);

  if (IsRadix2Size(w, h)) {
    thread_local std::vector<int> first_column;
    first_column.resize(h / 2 + 1);
    for (int ky = 0; ky <= h / 2; ++ky) first_column[ky] = FirstHighIndex(FftFreq(ky, inv_h), w, inv_w);
    return HighPowerRadix2(gray, first_column) / total;
  }
  thread_local std::vector<int> first_row;
  first_row.resize(w / 2 + 1);
  for (int kx = 0; kx <= w / 2; ++kx) first_row[kx] = FirstHighIndex(FftFreq(kx, inv_w), h, inv_h);

  // Columns with |fx| > cutoff form the contiguous range kx in [whole_begin, w/2].
  int whole_begin = w / 2 + 1;
  double high = 0.0;
  struct PartialColumn {
    int kx;
    int first_row;
    double weight;
  };
  thread_local std::vector<PartialColumn> partial;
  partial.clear();
  for (int kx = 0; kx <= w / 2; ++kx) {
    const double weight = (kx == 0 || (w % 2 == 0 && kx == w / 2)) ? 1.0 : 2.0;
    const int first = first_row[kx];
    if (first == 0) {
      whole_begin = std::min(whole_begin, kx);
    } else if (first <= h / 2) {
      partial.push_back({kx, first, weight});
    }
  }

  thread_local FftwPlans fftw;
  fftw.Prepare(w, h, static_cast<int>(partial.size()));
  double* plane = fftw.plane();
  for (size_t i = 0, n = static_cast<size_t>(w) * h; i < n; ++i) plane[i] = gray.pixels[i];
  fftw.TransformRows();

  if (whole_begin <= w / 2) {
    // Bins 1 .. (w-1)/2 stand for a conjugate pair (weight 2); an even w's Nyquist bin w/2 is
    // its own mirror (weight 1). kx = 0 is never whole (fx = 0).
    const int pair_end = (w - 1) / 2;  // last paired bin
    double pairs = 0.0, nyquist = 0.0;
    for (int y = 0; y < h; ++y) {
      const fftw_complex* row = fftw.row(y);
      for (int kx = whole_begin; kx <= pair_end; ++kx) pairs += Power(row[kx]);
      if (w % 2 == 0) nyquist += Power(row[w / 2]);
    }
    high += static_cast<double>(h) * (2.0 * pairs + nyquist);
  }
  if (!partial.empty()) {
    // Transpose in bands of kTransposeRows rows, so each column receives whole cache lines.
    for (int y0 = 0; y0 < h; y0 += kTransposeRows) {
      const int y1 = std::min(h, y0 + kTransposeRows);
      for (size_t i = 0; i < partial.size(); ++i) {
        fftw_complex* column = fftw.column(i);
        for (int y = y0; y < y1; ++y) {
          const fftw_complex& bin = fftw.row(y)[partial[i].kx];
          column[y][0] = bin[0];
          column[y][1] = bin[1];
        }
      }
    }
    fftw.TransformColumns();
    for (size_t i = 0; i < partial.size(); ++i) {
      // Rows ky with |numpy index| >= first: ky in [first, h - first].
      const fftw_complex* c = fftw.column(i);
      double column_high = 0.0;
      for (int ky = partial[i].first_row; ky <= h - partial[i].first_row; ++ky) column_high += Power(c[ky]);
      high += partial[i].weight * column_high;
    }
  }
  return high / total;
}

}  // namespace

GrayImage ToGray(const Image& image, Region region) {
  GrayImage gray;
  gray.width = region.w;
  gray.height = region.h;
  gray.pixels.resize(static_cast<size_t>(region.w) * region.h);
  const PixelKernels& kernels = BestPixelKernels();
  for (int y = 0; y < region.h; ++y)
    kernels.gray_row(image.pixel(region.x, region.y + y), region.w, &gray.pixels[static_cast<size_t>(y) * region.w]);
  return gray;
}

double CannyEdgeDensity(const GrayImage& gray) { return EdgeDensity(gray, Range(gray)); }

double HighFrequencyRatio(const GrayImage& gray) { return HfRatio(gray, Range(gray)); }

Result<RegionStats> AnalyzeRegion(const Image& image, Region region) {
  if (region.w <= 0 || region.h <= 0 || region.x < 0 || region.y < 0 || region.x + region.w > image.width ||
      region.y + region.h > image.height)
    return Status::InvalidArgument("region " + std::to_string(region.w) + "x" + std::to_string(region.h) + "+" +
                                       std::to_string(region.x) + "+" + std::to_string(region.y) + " of a " +
                                       std::to_string(image.width) + "x" + std::to_string(image.height) + " image",
                                   "AnalyzeRegion", "a non-empty rectangle inside the image");

  thread_local GrayImage gray;
  gray.width = region.w;
  gray.height = region.h;
  gray.pixels.resize(static_cast<size_t>(region.w) * region.h);
  // One pass: the gray plane, exact per-channel sums and sums of squares, and the gray range and
  // sum of squares (for Canny's shortcut and the hf total).
  const PixelKernels& kernels = BestPixelKernels();
  RgbTotals totals;
  for (int y = 0; y < region.h; ++y)
    kernels.rgb_row(image.pixel(region.x, region.y + y), region.w, &gray.pixels[static_cast<size_t>(y) * region.w],
                    &totals);
  const GrayRange range{totals.gray_lo, totals.gray_hi, totals.gray_sum_sq};

  RegionStats stats;
  const uint64_t n = static_cast<uint64_t>(region.w) * region.h;
  const double nd = static_cast<double>(n);
  double sd_sum = 0.0;
  for (int c = 0; c < 3; ++c) {
    const uint64_t sum = totals.sum[c], sum_sq = totals.sum_sq[c];
    stats.mean[c] = static_cast<double>(sum) / nd;
    // Population variance n^2 * var = n * sum(x^2) - (sum x)^2, exact in 128-bit integers.
    const unsigned __int128 scaled_var =
        static_cast<unsigned __int128>(n) * sum_sq - static_cast<unsigned __int128>(sum) * sum;
    sd_sum += std::sqrt(static_cast<double>(scaled_var)) / nd / kChannelMax;
  }
  stats.sd = sd_sum / 3.0;
  stats.ced = EdgeDensity(gray, range);
  stats.hf = HfRatio(gray, range);
  return stats;
}

}  // namespace visalign::imaging
