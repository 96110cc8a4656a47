// The AVX2 + FMA build of two_color_kernels.inc (compiled with -mavx2 -mfma: CMakeLists.txt).
#include <immintrin.h>

#include "benchmarks/violin/two_color_kernels.h"

#define TWO_COLOR_KERNELS_NAME "AVX2"
#define TWO_COLOR_KERNELS_OBJECT kAvx2TwoColorKernels
#include "benchmarks/violin/two_color_kernels.inc"
