// High-frequency power of a gray plane's 2-D DFT for power-of-two sizes, by radix-4 FFTs that
// run kLanes independent transforms side by side in SIMD lanes (AVX2+FMA when the CPU has it).
// Used by the hf purity measure (purity.cc), which falls back to FFTW's mixed-radix DFT for
// other sizes.
#pragma once

#include <vector>

#include "imaging/fft_power_kernels.h"
#include "visalign/imaging/purity.h"

namespace visalign::imaging {

// Sides accepted by HighPowerRadix2: both powers of two, at least kMinRadix2Side.
constexpr int kMinRadix2Side = 8;
bool IsRadix2Size(int width, int height);

// Sum of |X(kx, ky)|^2 over the masked bins of the unscaled gray plane's DFT X. The mask is given
// per row ky in [0, h/2] (rows h - ky mirror ky): bins with min(kx, w - kx) >= first_column[ky]
// count (0: the whole row, w/2 + 1: none). Rows from the last nonzero entry on count whole, via
// Parseval along x, without a row transform.
double HighPowerRadix2(const GrayImage& gray, const std::vector<int>& first_column,
                       const FftKernels& kernels = BestFftKernels());

}  // namespace visalign::imaging
