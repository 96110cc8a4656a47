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

// Codes of the Canny map: a pixel that cannot be an edge, one that may join an edge (survived
// suppression with low < m <= high), a strong edge (m > high), and one that joined an edge during
// hysteresis. Exactly the edge codes have kCannyEdgeBit set.
inline constexpr uint8_t kCannyNever = 0;
inline constexpr uint8_t kCannyMaybe = 1;
inline constexpr uint8_t kCannyEdge = 0xFF;
inline constexpr uint8_t kCannyJoined = 0x80;
inline constexpr uint8_t kCannyEdgeBit = 0x80;

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
  // 3x3 Sobel of one row from its rows up, mid, down (w bytes each, replicated rows at the image
  // border): dx, dy and m = |dx| + |dy| at columns [0, w), m = 0 at columns -1 and w. Every
  // buffer holds kPixelKernelPad elements of margin on each side; smooth and diff are scratch.
  void (*sobel_row)(const uint8_t* up, const uint8_t* mid, const uint8_t* down, int w, int16_t* smooth,
                    int16_t* diff, int16_t* dx, int16_t* dy, int16_t* mag);
  // Non-maximum suppression of one row as cv::Canny does it (magnitudes of the rows above and
  // below, 0 outside the image): writes the map code of columns [0, w) to codes (and garbage to
  // up to kPixelKernelPad bytes after) and returns how many are kCannyEdge.
  int (*suppress_row)(int w, const int16_t* above, const int16_t* mag, const int16_t* below, const int16_t* dx,
                      const int16_t* dy, int low, int high, uint8_t* codes);
  // Columns x in [0, w) of the map row at `row` (rows step bytes apart, framed by kCannyNever)
  // whose code is kCannyMaybe with a kCannyEdgeBit code among its 8 neighbours, in increasing
  // order; returns how many were written to xs (at most w). Reads up to kPixelKernelPad bytes
  // past the frame.
  int (*find_seeds)(const uint8_t* row, ptrdiff_t step, int w, uint32_t* xs);
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
