// The non-GEMM parts of a CLIP transformer block, parallelised over rows with OpenMP (the same
// thread pool oneDNN uses). Per-row work runs through BestRowKernels() (row_kernels.h).
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
// `causal`: position t attends to positions <= t only. Per (item, head): scores = q·kᵀ/√d and
// out = softmax(scores)·v as two small GEMMs.
void Attention(const float* qkv, float* out, int batch, int seq, int width, int heads, bool causal);

}  // namespace visalign::clip
