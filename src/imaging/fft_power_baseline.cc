#include "imaging/fft_power_kernels.h"

#include <emmintrin.h>

#include <cstddef>

#define FFT_KERNELS_NAME "baseline x86-64"
#include "imaging/fft_power_kernels.inc"

namespace visalign::imaging {

const FftKernels& BaselineFftKernels() { return kFftKernels; }

}  // namespace visalign::imaging
