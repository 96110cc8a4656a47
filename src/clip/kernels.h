// The non-GEMM parts of a CLIP transformer block, written as plain loops the compiler vectorises
// (`#pragma omp simd`) and parallelised over rows with OpenMP (the same thread pool oneDNN uses).
// All row-major float32.
#pragma once

#include <cstddef>

#include "visalign/clip.h"

namespace visalign::clip {

// y[r] = (x[r] - mean) / sqrt(var + eps) * gain + bias per row of `width` (biased variance,
// as torch.nn.LayerNorm). x and y may alias.
void LayerNorm(const float* x, float* y, int rows, int width, const float* gain, const float* bias, float eps);

// y[r][c] += bias[c].
void AddBias(float* y, int rows, int cols, const float* bias);

// y[r][c] = act(y[r][c] + bias[c]).
void AddBiasActivate(float* y, int rows, int cols, const float* bias, Activation act);

// Multi-head self-attention on a fused projection qkv[batch * seq, 3 * width] (q | k | v, heads are
// contiguous slices of width / heads). Writes the concatenated heads to out[batch * seq, width].
// `causal`: position t attends to positions <= t only.
void Attention(const float* qkv, float* out, int batch, int seq, int width, int heads, bool causal);

// Vectorisable scalar approximations used above (exposed for accuracy tests):
// erf with |error| < 1e-6 everywhere; exp with relative error < 1e-6 for x in [-87, 88].
float FastErf(float x);
float FastExp(float x);

}  // namespace visalign::clip
