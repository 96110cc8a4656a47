#include "clip/gemm.h"

#include <oneapi/dnnl/dnnl.h>

#include <cstdio>
#include <cstdlib>

namespace visalign::clip {

void Gemm(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, BLayout b_layout,
          float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  const char transb = b_layout == BLayout::kNK ? 'T' : 'N';
  const dnnl_status_t st = dnnl_sgemm('N', transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (st != dnnl_success) {
    // Only invalid arguments make dnnl_sgemm fail, i.e. a bug in the caller.
    std::fprintf(stderr, "visalign: internal error: dnnl_sgemm failed with status %d (m=%d n=%d k=%d)\n",
                 static_cast<int>(st), m, n, k);
    std::abort();
  }
}

void Gemm(int m, int n, int k, const float* a, int lda, const float* b, BLayout b_layout, float beta, float* c,
          int ldc) {
  Gemm(m, n, k, 1.0f, a, lda, b, b_layout == BLayout::kNK ? k : n, b_layout, beta, c, ldc);
}

}  // namespace visalign::clip
