// Matrix multiplies used by the CLIP towers, all through oneDNN (chosen by measurement, see
// docs/performance.md; it detects AVX2/AVX-512/AVX512_BF16/AMX at run time). Threads come from the
// calling thread's OpenMP setting; called inside a parallel region they run on the calling thread.
//
// fp32: dnnl_sgemm. bf16: dnnl::matmul with bf16 source and weights, f32 accumulation and f32
// destination; the f32 source is rounded to bf16 per call, weights are converted once (at load).
// bf16x3: the same matmul over operands split in two bf16 terms, x = hi + lo (hi = bf16(x),
// lo = bf16(x - hi), ~16 significant bits), keeping three of the four products:
//   A·B ≈ A_hi·B_hi + A_hi·B_lo + A_lo·B_hi = [A_hi | A_hi | A_lo] · [B_hi ; B_lo ; B_hi]
// i.e. ONE bf16 matmul over K' = 3K. The dropped A_lo·B_lo and the rounding of lo leave a relative
// error of ~2^-16 per product where bf16 has ~2^-8: bf16 tensor units at about a third of their rate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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

// A bfloat16 value: the upper 16 bits of an IEEE float.
using Bf16 = uint16_t;

// y[i] = x[i] rounded to the nearest bf16 (ties to even; NaN stays NaN).
void ToBf16(const float* x, size_t count, Bf16* y);

// C[M, N] = A[M, K] · B + beta · C (beta 0 or 1) with B contiguous bf16 in `b_layout`; A (contiguous,
// f32) is rounded to bf16, products are accumulated and C written in f32. Requires Bf16Support().available
// (without the instructions oneDNN would fall back to a reference implementation ~100x slower).
void GemmBf16(int m, int n, int k, const float* a, const Bf16* b, BLayout b_layout, float beta, float* c);

// B (k·n values in `b_layout`) as the bf16x3 weight operand [B_hi ; B_lo ; B_hi] (3·k·n values): for
// kKN three [K, N] blocks, for kNK each of the N rows becomes [hi | lo | hi] (3K values).
std::vector<Bf16> ToBf16x3Weights(const float* b, int k, int n, BLayout b_layout);

// GemmBf16 with bf16x3 operands: b3 from ToBf16x3Weights, A (contiguous f32) split per call.
void GemmBf16x3(int m, int n, int k, const float* a, const Bf16* b3, BLayout b_layout, float beta, float* c);

struct Bf16Capability {
  bool available = false;  // oneDNN runs bf16 matmuls on AVX512_BF16 or AMX units
  bool amx = false;        // ... on AMX tiles (AVX512_BF16 alone is not faster than fp32, see docs/performance.md)
  std::string isa;         // the instruction set oneDNN uses here, e.g. "AVX-512 with BF16 (avx512_core_bf16)"
};
// What this CPU offers for bf16 (from oneDNN's ISA detection, which honours ONEDNN_MAX_CPU_ISA).
const Bf16Capability& Bf16Support();

}  // namespace visalign::clip
