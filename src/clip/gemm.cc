#include "clip/gemm.h"

#include <oneapi/dnnl/dnnl.h>

#include <cstdio>
#include <cstdlib>

namespace visalign::clip {

void Gemm(int m, int n, int k, const float* a, int lda, const float* b, BLayout b_layout, float beta, float* c,
          int ldc) {
  if (m == 0 || n == 0) return;
  const bool transposed = b_layout == BLayout::kNK;
  const dnnl_status_t st = dnnl_sgemm('N', transposed ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, transposed ? k : n, beta,
                                      c, ldc);
  if (st != dnnl_success) {
    // Only invalid arguments make dnnl_sgemm fail, i.e. a bug in the caller.
    std::fprintf(stderr, "visalign: internal error: dnnl_sgemm failed with status %d (m=%d n=%d k=%d)\n",
                 static_cast<int>(st), m, n, k);
    std::abort();
  }
}

}  // namespace visalign::clip
