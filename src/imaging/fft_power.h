// High-frequency power of a gray plane's 2-D DFT for power-of-two sizes, by a radix-2 FFT that
// transforms several rows (then several columns) at once in SIMD lanes. Used by the hf purity
// measure (purity.cc), which falls back to OpenCV's mixed-radix DFT for other sizes.
#pragma once

#include <vector>

#include "visalign/purity.h"

namespace visalign::imaging {

// Sides accepted by HighPowerRadix2: both powers of two, at least kMinRadix2Side.
constexpr int kMinRadix2Side = 8;
bool IsRadix2Size(int width, int height);

// Sum of |X(kx, ky)|^2 over the high-frequency bins of the unscaled gray plane's DFT X. The mask
// is given per column kx in [0, w/2] (columns w - kx mirror kx): `first_row[kx]` is the smallest
// |ky| counted in that column, so bins ky in [first_row[kx], h - first_row[kx]] count. The mask
// must be monotone as r = sqrt(fx^2 + fy^2) is: first_row[kx] > 0 up to some column and 0 from
// there on (those columns count whole, via Parseval, without a column transform).
double HighPowerRadix2(const GrayImage& gray, const std::vector<int>& first_row);

}  // namespace visalign::imaging
