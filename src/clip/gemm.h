// Single-precision matrix multiply used by the CLIP towers: oneDNN's dnnl_sgemm (chosen by
// measurement, see docs/performance.md: it detects AVX2/AVX-512/AMX at run time). Threads come from
// the calling thread's OpenMP setting; called inside a parallel region it runs on the calling thread.
#pragma once

namespace visalign::clip {

enum class BLayout {
  kKN,  // B is stored [K, N] row-major (e.g. visual.proj, text_projection)
  kNK,  // B is stored [N, K] row-major (a Linear weight [out, in]): C = A · Bᵀ
};

// C[M, N] = alpha · A[M, K] · B + beta · C, all row-major with leading dimensions lda / ldb / ldc.
void Gemm(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, BLayout b_layout,
          float beta, float* c, int ldc);

// The same with alpha = 1 and a contiguous B.
void Gemm(int m, int n, int k, const float* a, int lda, const float* b, BLayout b_layout, float beta, float* c,
          int ldc);

}  // namespace visalign::clip
