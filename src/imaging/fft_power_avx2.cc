#include "imaging/fft_power_kernels.h"

#include <cstddef>

#include "visalign/core/cpu_target.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

VISALIGN_TARGET_BEGIN_AVX2_FMA
#define FFT_KERNELS_NAME "AVX2+FMA"
#define FFT_KERNELS_AVX2
#include "imaging/fft_power_kernels.inc"
VISALIGN_TARGET_END

namespace visalign::imaging {

const FftKernels* Avx2FftKernels() {
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported ? &kFftKernels : nullptr;
}

}  // namespace visalign::imaging

#else

namespace visalign::imaging {

const FftKernels* Avx2FftKernels() { return nullptr; }

}  // namespace visalign::imaging

#endif

namespace visalign::imaging {

const FftKernels& BestFftKernels() {
  static const FftKernels& best = Avx2FftKernels() != nullptr ? *Avx2FftKernels() : BaselineFftKernels();
  return best;
}

}  // namespace visalign::imaging
