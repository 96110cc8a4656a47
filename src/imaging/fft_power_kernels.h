// The SIMD kernel behind HighPowerRadix2 (fft_power.h), compiled twice from the same source
// (fft_power_kernels.inc): for baseline x86-64 and for AVX2+FMA. The AVX2 build is used when the
// CPU supports it (checked once at run time). Internal to the imaging module.
#pragma once

#include <cstdint>

namespace visalign::imaging {

// Doubles per FFT element: 4 lanes of (re, im), one 64-byte cache line.
constexpr int kFftElementDoubles = 8;
// Doubles per twiddle entry of a radix-4 pass: w^j, w^2j, w^3j as (re, im) pairs.
constexpr int kFftTwiddleDoubles = 6;

// Padding between groups of staged rows: groups a power of two apart would share cache sets.
constexpr int kFftStagedPadElements = 8;
// Width in bytes of the column strips the kernel copies out of the plane (one cache line).
constexpr int kFftStripBytes = 64;

// Tables of one power-of-two transform length n >= 8 (built by fft_power.cc).
struct FftTable {
  int n = 0;
  // The radix-4 decimation-in-frequency passes of spans q = n/4, n/16, ..., >= 1, one after the
  // other: for each q, q entries j of {w^j, w^2j, w^3j}, w = e^(-2 pi i / 4q), (re, im) each.
  const double* twiddles = nullptr;
  // reverse[k]: where bin k ends up (bit reversal of log2 n bits).
  const uint32_t* reverse = nullptr;
  // mirror_distance[i]: min(k, n - k) for the bin k stored at position i.
  const double* mirror_distance = nullptr;
};

// One HighPowerRadix2 evaluation: the plane (width along_x.n, height along_y.n, both >= 8),
// the mask and 64-byte aligned scratch.
struct HighPowerJob {
  const uint8_t* pixels = nullptr;
  FftTable along_x, along_y;
  // first_column[ky] for ky in [0, split_row): bins with min(kx, w - kx) >= it count. Rows
  // ky in [split_row, h/2] count whole.
  const int* first_column = nullptr;
  int split_row = 0;
  uint8_t* strip = nullptr;  // along_y.n * kFftStripBytes bytes
  double* work = nullptr;    // along_y.n elements
  // ceil(split_row / 4) groups of along_x.n elements, group g at element g * staged_stride.
  double* staged = nullptr;
  int staged_stride = 0;
};

struct FftKernels {
  const char* name;
  // Sum of |X(kx, ky)|^2 over the masked bins of the plane's unscaled 2-D DFT X.
  double (*high_power)(const HighPowerJob& job);
};

const FftKernels& BaselineFftKernels();
// nullptr when the CPU lacks AVX2 or FMA.
const FftKernels* Avx2FftKernels();
// The AVX2 build when available, else the baseline (decided once per process).
const FftKernels& BestFftKernels();

}  // namespace visalign::imaging
