#include "clip/row_kernels.h"

#include "visalign/core/cpu_target.h"

#if defined(__x86_64__) && defined(__GNUC__)

VISALIGN_TARGET_BEGIN_AVX2_FMA
#define ROW_KERNELS_NAME "AVX2+FMA"
#include "clip/row_kernels.inc"
VISALIGN_TARGET_END

namespace visalign::clip {

const RowKernels* Avx2RowKernels() {
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported ? &kRowKernels : nullptr;
}

}  // namespace visalign::clip

#else

namespace visalign::clip {

const RowKernels* Avx2RowKernels() { return nullptr; }

}  // namespace visalign::clip

#endif

namespace visalign::clip {

const RowKernels& BestRowKernels() {
  static const RowKernels& best = Avx2RowKernels() != nullptr ? *Avx2RowKernels() : BaselineRowKernels();
  return best;
}

}  // namespace visalign::clip
