// Per-row pixel kernels behind the purity metrics (the Canny passes, the RGB region pass and the
// gray-plane statistics), compiled twice from the same source (pixel_kernels.inc): for baseline
// x86-64 and for AVX2. The AVX2 build is used when the CPU supports it (checked once at run
// time), so the binary still runs on any x86-64 CPU. Both builds give identical, exact results.
// Internal to the imaging module.
#pragma once

#include <cstddef>
#include <cstdint>

namespace visalign::imaging {

// Elements a kernel may read or write past either end of a row buffer (whole vectors).
inline constexpr int kPixelKernelPad = 32;

// Exact integer statistics of RGB pixels and of their gray levels (OpenCV's fixed-point
// RGB->GRAY); accumulated row after row.
struct RgbTotals {
  uint64_t sum[3] = {0, 0, 0};
  uint64_t sum_sq[3] = {0, 0, 0};
  uint64_t gray_sum_sq = 0;
  uint8_t gray_lo = 255, gray_hi = 0;
};

// Range and sum of squares of a gray plane.
struct GrayTotals {
  uint8_t lo = 255, hi = 0;
  uint64_t sum_sq = 0;
};

struct PixelKernels {
  const char* name;
  // Image row pixels (w bytes) as 16-bit values into row, with its first and last pixel repeated
  // at columns -1 and w (cv::Canny's replicated border); row has kPixelKernelPad elements of
  // margin on each side.
  void (*widen_row)(const uint8_t* pixels, int w, int16_t* row);
  // 3x3 Sobel of one row from the widened rows up, mid, down (replicated rows at the image
  // border). Writes the coded magnitude 4m + d of columns [0, w), where m = |dx| + |dy| and d is
  // the suppression direction (cv::Canny's fixed-point test), and 0 at columns -1 and w; coded
  // has kPixelKernelPad elements of margin on each side.
  void (*sobel_row)(const int16_t* up, const int16_t* mid, const int16_t* down, int w, int16_t* coded);
  // Non-maximum suppression of one row as cv::Canny does it (coded magnitudes of the rows above
  // and below, 0 outside the image). Sets bit x (bit x % 8 of byte x / 8) of strong_bits for the
  // pixels that survive with m > high and of maybe_bits for those with low < m <= high, for
  // columns [0, w); writes whole vectors of columns (up to kPixelKernelPad bits past w, cleared).
  void (*suppress_row)(int w, const int16_t* above, const int16_t* coded, const int16_t* below, int low, int high,
                       uint8_t* strong_bits, uint8_t* maybe_bits);
  // Number of set bits in n words.
  uint64_t (*count_bits)(const uint64_t* words, size_t n);
  // Gray levels of w RGB pixels (w >= 1) into gray, their statistics added to totals.
  void (*rgb_row)(const uint8_t* rgb, int w, uint8_t* gray, RgbTotals* totals);
  // Gray levels only.
  void (*gray_row)(const uint8_t* rgb, int w, uint8_t* gray);
  // Statistics of n gray levels added to totals.
  void (*gray_totals)(const uint8_t* gray, size_t n, GrayTotals* totals);
};

const PixelKernels& BaselinePixelKernels();
// nullptr when the CPU lacks AVX2.
const PixelKernels* Avx2PixelKernels();
// The AVX2 build when available, else the baseline (decided once per process).
const PixelKernels& BestPixelKernels();

}  // namespace visalign::imaging
