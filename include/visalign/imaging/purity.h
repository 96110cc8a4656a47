// Region statistics behind the VIOLIN metrics: the mean color of a rectangle of an image and
// three "purity" measures of how far it is from a flat fill (definitions in docs/metrics.md):
//   sd  - mean over R, G, B of the population standard deviation of pixel/255;
//   ced - Canny edge density: fraction of edge pixels of cv::Canny(gray, 100, 200, 3, L1) where
//         gray = (9798 R + 19235 G + 3735 B + 16384) >> 15 (OpenCV's 8-bit RGB->GRAY);
//   hf  - high-frequency power ratio: P = |FFT2(gray/255)|^2 (no window, no mean removal),
//         hf = sum P[r > 0.25] / sum P with r = sqrt(fx^2 + fy^2) and fx, fy as numpy's
//         fftfreq (cycles/pixel, computed as k * (1.0 / n)); 0 when sum P = 0.
// Results equal the definitions up to floating-point rounding (|error| < 1e-12); shortcuts are
// taken only where they give the exact value (a constant gray plane has ced = hf = 0; with a gray
// range of at most 25 levels no Sobel L1 magnitude can exceed Canny's high threshold, so ced = 0).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "visalign/core/status.h"
#include "visalign/imaging/image.h"

namespace visalign::imaging {

// A rectangle of pixels: columns [x, x + w), rows [y, y + h).
struct Region {
  int x = 0, y = 0, w = 0, h = 0;
};

struct RegionStats {
  std::array<double, 3> mean{};  // per-channel mean of the 8-bit values, 0..255
  double sd = 0;                 // in [0, 0.5]
  double ced = 0;                // in [0, 1]
  double hf = 0;                 // in [0, 1]
};

// Statistics of `region` of `image`, cropped and measured on its own (its own Canny and FFT).
// Errors: an empty region or one outside the image (kInvalidArgument).
Result<RegionStats> AnalyzeRegion(const Image& image, Region region);

// A single-channel 8-bit plane, row-major, width * height bytes.
struct GrayImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;
};

// OpenCV's fixed-point 8-bit RGB->GRAY of one pixel.
constexpr uint8_t GrayLevel(uint8_t r, uint8_t g, uint8_t b) {
  return static_cast<uint8_t>((9798u * r + 19235u * g + 3735u * b + 16384u) >> 15);
}
GrayImage ToGray(const Image& image, Region region);

// The two gray-plane measures on their own (the plane must be non-empty).
double CannyEdgeDensity(const GrayImage& gray);
double HighFrequencyRatio(const GrayImage& gray);

}  // namespace visalign::imaging
