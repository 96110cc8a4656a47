// The AVX-512F build of two_color_kernels.inc (compiled with -mavx512f -mfma: CMakeLists.txt).
#include <immintrin.h>

#include "benchmarks/violin/two_color_kernels.h"

#define TWO_COLOR_KERNELS_NAME "AVX-512"
#define TWO_COLOR_KERNELS_OBJECT kAvx512TwoColorKernels
#include "benchmarks/violin/two_color_kernels.inc"
