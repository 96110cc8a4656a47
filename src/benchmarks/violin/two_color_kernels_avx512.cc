// The AVX-512 build of two_color_kernels.inc (compiled with -mavx512f -mavx512bw -mfma -mpopcnt:
// CMakeLists.txt).
#include <immintrin.h>

#include "benchmarks/violin/two_color_kernels.h"

#define TWO_COLOR_KERNELS_NAME "AVX-512"
#define TWO_COLOR_KERNELS_OBJECT kAvx512TwoColorKernels
#include "benchmarks/violin/two_color_kernels.inc"
