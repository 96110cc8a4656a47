#include "clip/row_kernels.h"

#define ROW_KERNELS_NAME "baseline x86-64"
#include "clip/row_kernels.inc"

namespace visalign::clip {

const RowKernels& BaselineRowKernels() { return kRowKernels; }

}  // namespace visalign::clip
