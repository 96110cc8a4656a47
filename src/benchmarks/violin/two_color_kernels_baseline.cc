// The baseline x86-64 build of two_color_kernels.inc, and the choice of build.
#include "benchmarks/violin/two_color_kernels.h"

#define TWO_COLOR_KERNELS_NAME "baseline x86-64"
#define TWO_COLOR_KERNELS_OBJECT kBaselineTwoColorKernels
#include "benchmarks/violin/two_color_kernels.inc"

namespace visalign::violin {

const TwoColorKernels* Avx2TwoColorKernels() {
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported ? &kAvx2TwoColorKernels : nullptr;
}

const TwoColorKernels* Avx512TwoColorKernels() {
  static const bool supported = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                __builtin_cpu_supports("fma") && __builtin_cpu_supports("popcnt");
  return supported ? &kAvx512TwoColorKernels : nullptr;
}

const TwoColorKernels& BestTwoColorKernels() {
  static const TwoColorKernels& best = Avx512TwoColorKernels() != nullptr ? *Avx512TwoColorKernels()
                                       : Avx2TwoColorKernels() != nullptr ? *Avx2TwoColorKernels()
                                                                          : kBaselineTwoColorKernels;
  return best;
}

size_t RunnableTwoColorKernels(const TwoColorKernels* out[kTwoColorBuilds]) {
  size_t n = 0;
  out[n++] = &kBaselineTwoColorKernels;
  if (Avx2TwoColorKernels() != nullptr) out[n++] = Avx2TwoColorKernels();
  if (Avx512TwoColorKernels() != nullptr) out[n++] = Avx512TwoColorKernels();
  return n;
}

}  // namespace visalign::violin
