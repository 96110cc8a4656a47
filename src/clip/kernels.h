// The non-GEMM parts of a CLIP transformer block, parallelised over rows with OpenMP (the same
// thread pool oneDNN uses). Per-row work runs through BestRowKernels() (row_kernels.h).
// All row-major float32.
#pragma once

#include <cstddef>
#include <cstdint>

#include "visalign/clip.h"

namespace visalign::clip {

// Whether per-element work on `elements` floats is worth an OpenMP parallel region (the `if`
// clause of every parallel loop here and in conv.cc).
bool Parallel(size_t elements);

// y[r] = (x[r] - mean) / sqrt(var + eps) * gain + bias per row of `width` (biased variance,
// as torch.nn.LayerNorm). x and y may alias.
void LayerNorm(const float* x, float* y, int rows, int width, const float* gain, const float* bias, float eps);

// y[r][c] += bias[c].
void AddBias(float* y, int rows, int cols, const float* bias);

// y[r][c] += x[r][c].
void AddRows(float* y, const float* x, int rows, int cols);

// y[r][c] = act(y[r][c] + bias[c]).
void AddBiasActivate(float* y, int rows, int cols, const float* bias, Activation act);

// gate[r][c] = silu(gate[r][c] + gate_bias[c]) * (value[r][c] + value_bias[c]) (SwiGLU).
void AddBiasSwiGlu(float* gate, const float* value, int rows, int cols, const float* gate_bias,
                   const float* value_bias);

// gate[r][c] = gelu(gate[r][c] + gate_bias[c]) * (value[r][c] + value_bias[c]) (GeGLU, exact GELU).
void AddBiasGeGlu(float* gate, const float* value, int rows, int cols, const float* gate_bias, const float* value_bias);

// Multi-head self-attention on a fused projection qkv[batch * seq, 3 * width] (q | k | v, heads are
// contiguous slices of width / heads). Writes the concatenated heads to out[batch * seq, width].
// `causal`: position t attends to positions <= t only. Per (item, head): scores = q·kᵀ/√d and
// out = softmax(scores)·v as two small GEMMs. `key_valid` (CoCa's key mask; null: every key):
// [batch * seq] bytes, key k of item b is attended to only where key_valid[b * seq + k] is non-zero; key 0
// must be valid (no row is fully masked).
void Attention(const float* qkv, float* out, int batch, int seq, int width, int heads, bool causal,
               const uint8_t* key_valid = nullptr);

// Multi-head attention of q_seq queries per item over kv_seq keys and values of the same item:
// q[q_seq, width] per item, item b's at q + b * q_item_stride (0: the same queries for every item,
// e.g. a learned latent); kv[batch * kv_seq, 2 * width] (k | v). Writes out[batch * q_seq, width].
void CrossAttention(const float* q, size_t q_item_stride, const float* kv, float* out, int batch, int q_seq, int kv_seq,
                    int width, int heads);

}  // namespace visalign::clip
