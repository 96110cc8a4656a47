#include "imaging/pixel_kernels.h"

#include <immintrin.h>

#include <cstring>

#include "visalign/imaging/purity.h"

#pragma GCC push_options
#pragma GCC target("avx2")
#define PIXEL_KERNELS_AVX2 1
#define PIXEL_KERNELS_NAME "AVX2"
#include "imaging/pixel_kernels.inc"
#pragma GCC pop_options

namespace visalign::imaging {

const PixelKernels* Avx2PixelKernels() {
  static const bool supported = __builtin_cpu_supports("avx2");
  return supported ? &kPixelKernels : nullptr;
}

const PixelKernels& BestPixelKernels() {
  static const PixelKernels& best = Avx2PixelKernels() != nullptr ? *Avx2PixelKernels() : BaselinePixelKernels();
  return best;
}

}  // namespace visalign::imaging
