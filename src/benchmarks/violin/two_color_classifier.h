// Which of two CIELAB colours A, B each pixel of an 8-bit sRGB image is nearer to (squared CIE76,
// ties to A): the classification behind the inertia and geometry probes (docs/metrics.md, "Probe
// metrics"). The answer equals converting every pixel with color::Srgb8ToLabBatch and comparing,
// but converts few:
//   g(p) = |p - A|² - |p - B|² = 2 (αx fx + αy fy + αz fz) + c,  with w = B - A,
//   α = (500 wa, 116 wL - 500 wa + 200 wb, -200 wb), c = -32 wL + |A|² - |B|²,
// where fx, fy, fz are CIELAB's f of X/Xn, Y/Yn, Z/Zn, each increasing in every sRGB channel. So
//   1. over a cube of 16 levels per channel g is bounded by f at the cube's lowest and highest
//      corner: a cube whose bounds agree decides all its 4,096 colours (every cube is decided when
//      the classifier is made, from f at the corners, which does not depend on A, B and is computed
//      once per process); once the undecided pixels are more than 1/32 of the first 1,024 or more
//      (noise: on flat images never), each of the eight cells (sub-cubes of 8 levels) of an undecided
//      cube is bounded likewise, which halves them on noise;
//   2. the pixels of undecided cubes (or cells) get g in single precision, whose error is bounded:
//      outside ± that margin the sign is certain;
//   3. only a pixel within the margin is converted exactly.
// Steps 1 and 2 are SIMD kernels (two_color_kernels.h), the widest build the CPU runs.
// Class 1 means nearer B.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "benchmarks/violin/two_color_kernels.h"
#include "visalign/color.h"

namespace visalign::violin {

// When step 1 bounds cells: as above, or never, or from the start (the classes are the same).
enum class TwoColorCells { kWhenUndecided, kNever, kAlways };

class TwoColorClassifier {
 public:
  // `kernels`: the build of steps 1 and 2 (any gives the same classes; tests pick each).
  TwoColorClassifier(color::Lab a, color::Lab b, const TwoColorKernels& kernels = BestTwoColorKernels(),
                     TwoColorCells cells = TwoColorCells::kWhenUndecided);

  // Classes of n pixels (interleaved RGB bytes) into out[0 .. n-1]; returns how many are 1.
  size_t Row(const uint8_t* rgb, size_t n, uint8_t* out);

  // Whether step 1 bounds cells by now.
  bool bounds_cells() const { return cells_ != nullptr; }

  // Step 2's parameters, and the bound of its g's error (the margin) for every build.
  const TwoColorG& g_params() const { return g_params_; }
  float g_margin() const { return margin_; }

 private:
  uint8_t Exact(const uint8_t* p) const;
  void BoundCells();  // cells_ from cubes_

  color::Lab a_, b_;
  const TwoColorKernels& kernels_;
  TwoColorG g_params_{};
  float margin_ = 0;  // bound of the kernels' g error
  TwoColorCells when_cells_;
  std::unique_ptr<uint8_t[]> cubes_;  // per cube: 0, 1 or kTwoColorUndecided (and the pad)
  std::unique_ptr<uint8_t[]> cells_;  // per cell, once bounded (else null)
  size_t seen_ = 0, undecided_ = 0;   // pixels classified, those of them pass 1 left undecided
  std::vector<uint32_t> pending_;     // a row's pixels whose cube (or cell) is not decided
  std::vector<uint32_t> packed_;      // ... their colours, r | g << 8 | b << 16
  std::vector<float> g_;              // ... their approximate g
  std::vector<uint32_t> near_;        // ... those of them within the margin
};

}  // namespace visalign::violin
