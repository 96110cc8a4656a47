// The vectorised parts of TwoColorClassifier (two_color_classifier.h): a row's cube or cell answers
// (pass 1), the decisions of cubes and cells by bounds at their corners, and g(p) = |p - A|² - |p - B|²
// of many 8-bit sRGB pixels in single precision within a stated error of the exact value, so that only
// pixels with |g| within that error need an exact conversion. The body (two_color_kernels.inc) is
// compiled once per instruction set: baseline x86-64 (SSE2, 4 lanes), AVX2 + FMA (8 lanes) and
// AVX-512F/BW (16 lanes), each .cc with its own compiler flags and no header that defines inline
// functions (so no function compiled for a wider set can be shared with baseline code). The widest
// build the CPU runs is chosen once per process; every build meets the same error bound.
#pragma once

#include <cstddef>
#include <cstdint>

namespace visalign::violin {

// What g of a target pair needs, in single precision (filled by TwoColorClassifier):
//   t_k = Σ_j xyz[k][j] lin[c_j]   (X/Xn, Y/Yn, Z/Zn of the pixel's linear channels c_j),
//   g   = constant + Σ_k alpha2[k] f(t_k),  f(t) = cbrt(t) for t > epsilon, else slope t + offset.
struct TwoColorG {
  float lin[256];   // linear value of each 8-bit code
  float xyz[3][3];  // X/Xn, Y/Yn, Z/Zn per unit of linear R, G, B
  float alpha2[3];  // 2 α of the target pair
  float constant;   // c of the target pair
  float epsilon, slope, offset;
};

// |g computed - g exact| <= kTwoColorFError Σ|alpha2| + kTwoColorSumError (|constant| + 1.1 Σ|alpha2|)
// for every 8-bit colour and every build (derivation in two_color_kernels.inc; tested on all colours).
inline constexpr double kTwoColorFError = 2e-6;    // per f, besides the jump of f at epsilon
inline constexpr double kTwoColorSumError = 5e-7;  // 8 float roundings of the sum

// The cube of 16 levels per channel an 8-bit colour is in, (r >> 4) << 8 | (g >> 4) << 4 | b >> 4, and
// its cell, the sub-cube of 8 levels per channel: (r >> 3) << 10 | (g >> 3) << 5 | b >> 3.
inline constexpr int kTwoColorCellShift = 4;
inline constexpr size_t kTwoColorCubes = 4096;
inline constexpr size_t kTwoColorCells = 8 * kTwoColorCubes;
inline constexpr size_t kTwoColorCellPad = 3;     // bytes a cell table has past its last cell
inline constexpr size_t kTwoColorListPad = 16;    // entries pass 2's lists have past n
inline constexpr uint8_t kTwoColorUndecided = 2;  // a cell's answer when its colours' classes differ

// CIELAB's f of X/Xn, Y/Yn, Z/Zn at every cube's and every cell's lowest and highest corner: the
// bounds of f over it (f is increasing in every channel), the same for every target pair. A cube's
// cells' are side by side (cells[cube][k][0: lowest, 1: highest][(r >> 3 & 1) << 2 | (g >> 3 & 1) << 1
// | (b >> 3 & 1)]): bounding them reads one block.
struct TwoColorCorners {
  float lo[3][kTwoColorCubes], hi[3][kTwoColorCubes];
  float cells[kTwoColorCubes][3][2][8];
};

struct TwoColorKernels {
  const char* name;
  // Pass 1 of a row of n pixels (interleaved RGB bytes): out[x] = table[cube of pixel x] (table:
  // kTwoColorCubes + kTwoColorCellPad bytes) or, `cells`, table[cell of pixel x] (kTwoColorCells +
  // kTwoColorCellPad bytes). Returns how many answers are 1.
  size_t (*lookup)(const uint8_t* rgb, size_t n, const uint8_t* table, bool cells, uint8_t* out);
  // This build's corners for the tables of `params` (lin, xyz, epsilon, slope, offset: the same on
  // every call), computed on the first call.
  const TwoColorCorners& (*corners)(const TwoColorG& params);
  // The answers of all kTwoColorCubes cubes (ids as above): 0 or 1 when g of every colour in the
  // cube is below -margin or above margin by the bounds of g from `corners`, else
  // kTwoColorUndecided. margin: at least the error bound of g.
  void (*decide_cubes)(const TwoColorG& params, const TwoColorCorners& corners, float margin, uint8_t* cubes);
  // The answers of all kTwoColorCells cells from the cubes' (decide_cubes): a decided cube gives its
  // answer to its eight cells, the cells of the others are bounded one by one, as cubes are.
  void (*decide_cells)(const TwoColorG& params, const TwoColorCorners& corners, float margin, const uint8_t* cubes,
                       uint8_t* cells);
  // Pass 2 of a row: g of n pixels whose answer is kTwoColorUndecided (x listed in pending, colours
  // as r | g << 8 | b << 16 in packed) into g[0 .. n-1], each one's class (1 when g > margin) into
  // out[pending[i]], and the pending[i] with |g| <= margin (an exact conversion decides them) in
  // order into near. Returns how many are near; *ones += how many classes are 1. packed, g: room for
  // n + kTwoColorListPad (read and written past n); near: room for n.
  size_t (*classify_listed)(const TwoColorG& params, float margin, const uint32_t* packed, const uint32_t* pending,
                            size_t n, float* g, uint8_t* out, uint32_t* near, size_t* ones);
};

// The builds themselves (data only: no code of a wider build runs before the CPU is checked).
extern const TwoColorKernels kBaselineTwoColorKernels, kAvx2TwoColorKernels, kAvx512TwoColorKernels;

const TwoColorKernels* Avx2TwoColorKernels();    // nullptr when the CPU lacks AVX2 or FMA
const TwoColorKernels* Avx512TwoColorKernels();  // nullptr when the CPU lacks AVX-512F/BW, FMA or POPCNT
// The widest build the CPU runs (decided once per process).
const TwoColorKernels& BestTwoColorKernels();
// Every build the CPU runs, the baseline first, into out[0 .. returned count - 1].
inline constexpr size_t kTwoColorBuilds = 3;
size_t RunnableTwoColorKernels(const TwoColorKernels* out[kTwoColorBuilds]);

}  // namespace visalign::violin
