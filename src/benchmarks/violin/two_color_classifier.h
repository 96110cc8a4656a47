// Which of two CIELAB colours A, B each pixel of an 8-bit sRGB image is nearer to (squared CIE76,
// ties to A): the classification behind the inertia and geometry probes (docs/metrics.md, "Probe
// metrics"). The answer equals converting every pixel with color::Srgb8ToLabBatch and comparing,
// but converts few:
//   g(p) = |p - A|² - |p - B|² = 2 (αx fx + αy fy + αz fz) + c,  with w = B - A,
//   α = (500 wa, 116 wL - 500 wa + 200 wb, -200 wb), c = -32 wL + |A|² - |B|²,
// where fx, fy, fz are CIELAB's f of X/Xn, Y/Yn, Z/Zn, each increasing in every sRGB channel. So
//   1. over a cube of 16 levels per channel g is bounded by f at the cube's lowest and highest
//      corner: a cube whose bounds agree decides all its 4,096 colours (decided on first use);
//   2. a pixel of an undecided cube gets g from f interpolated in a table of cube roots, whose
//      error is bounded (kFError): outside ± that margin the sign is certain;
//   3. only a pixel within the margin is converted exactly.
// Class 1 means nearer B.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "visalign/color.h"

namespace visalign::violin {

struct ClassifierTables;  // linearisation, XYZ and cube-root tables every classifier shares

class TwoColorClassifier {
 public:
  TwoColorClassifier(color::Lab a, color::Lab b);

  // Classes of n pixels (interleaved RGB bytes) into out[0 .. n-1]; returns how many are 1.
  size_t Row(const uint8_t* rgb, size_t n, uint8_t* out);

 private:
  // The class every colour of `cell`'s cube has (bounds of g at its corners), or kUndecided.
  uint8_t DecideCell(size_t cell) const;
  // g from interpolated f; its error is at most margin_.
  double ApproximateG(const uint8_t* p) const;
  uint8_t Exact(const uint8_t* p) const;

  const ClassifierTables& tables_;
  color::Lab a_, b_;
  std::array<double, 3> alpha2_{};  // 2 α
  double constant_ = 0, margin_ = 0;
  std::vector<uint8_t> cells_;
  std::vector<uint32_t> pending_;  // a row's pixels whose cube is not decided
  std::vector<double> g_;          // ... and their approximate g
};

}  // namespace visalign::violin
