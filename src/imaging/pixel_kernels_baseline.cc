#include "imaging/pixel_kernels.h"

#include <emmintrin.h>

#include <cstring>

#include "visalign/imaging/purity.h"

#define PIXEL_KERNELS_AVX2 0
#define PIXEL_KERNELS_NAME "baseline x86-64"
#include "imaging/pixel_kernels.inc"

namespace visalign::imaging {

const PixelKernels& BaselinePixelKernels() { return kPixelKernels; }

}  // namespace visalign::imaging
