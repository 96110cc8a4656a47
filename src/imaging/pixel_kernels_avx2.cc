#include "imaging/pixel_kernels.h"

#include <immintrin.h>

#include <cstring>

#include "visalign/core/cpu_target.h"
#include "visalign/imaging/purity.h"

VISALIGN_TARGET_BEGIN_AVX2
#define PIXEL_KERNELS_AVX2 1
#define PIXEL_KERNELS_NAME "AVX2"
#include "imaging/pixel_kernels.inc"
VISALIGN_TARGET_END

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
