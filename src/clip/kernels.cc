#include "clip/kernels.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "clip/gemm.h"
#include "clip/row_kernels.h"

namespace visalign::clip {
// Below this many elements a parallel region costs more than it saves.
constexpr size_t kMinParallelElements = 1 << 14;

bool Parallel(size_t elements) { return elements >= kMinParallelElements && omp_get_max_threads() > 1; }

void LayerNorm(const float* x, float* y, int rows, int width, const float* gain, const float* bias, float eps) {
  const RowKernels& k = BestRowKernels();
#pragma omp parallel for schedule(static) if (Parallel(static_cast <size_t>(rows) * width))
  for (int r = 0; r < rows; ++r) {
    const size_t offset = static_cast<size_t>(r) * width;
    k.layer_norm(x + offset, y + offset, width, gain, bias, eps);
  }
}

void AddBias(float* y, int rows, int cols, const float* bias) {
  const RowKernels& k = BestRowKernels();
#pragma omp parallel for schedule(static) if (Parallel(static_cast <size_t>(rows) * cols))
  for (int r = 0; r < rows; ++r) k.add_bias(y + static_cast<size_t>(r) * cols, cols, bias);
}

void AddRows(float* y, const float* x, int rows, int cols) {
  const size_t n = static_cast<size_t>(rows) * cols;
#pragma omp parallel for simd schedule(static) if (Parallel(n))
  for (size_t i = 0; i < n; ++i) y[i] += x[i];
}

void AddBiasActivate(float* y, int rows, int cols, const float* bias, Activation act) {
  const RowKernels& k = BestRowKernels();
  const auto row_fn = act == Activation::kQuickGelu  ? k.bias_quick_gelu
                      : act == Activation::kGeluTanh ? k.bias_gelu_tanh
                                                     : k.bias_gelu;
#pragma omp parallel for schedule(static) if (Parallel(static_cast <size_t>(rows) * cols))
  for (int r = 0; r < rows; ++r) row_fn(y + static_cast<size_t>(r) * cols, cols, bias);
}

namespace {

using GatedRowFn = void (*)(float*, const float*, int, const float*, const float*);

void GatedRows(GatedRowFn row_fn, float* gate, const float* value, int rows, int cols, const float* gate_bias,
               const float* value_bias) {
#pragma omp parallel for schedule(static) if (Parallel(static_cast <size_t>(rows) * cols))
  for (int r = 0; r < rows; ++r) {
    const size_t offset = static_cast<size_t>(r) * cols;
    row_fn(gate + offset, value + offset, cols, gate_bias, value_bias);
  }
}

}  // namespace

void AddBiasSwiGlu(float* gate, const float* value, int rows, int cols, const float* gate_bias,
                   const float* value_bias) {
  GatedRows(BestRowKernels().bias_swiglu, gate, value, rows, cols, gate_bias, value_bias);
}

void AddBiasGeGlu(float* gate, const float* value, int rows, int cols, const float* gate_bias,
                  const float* value_bias) {
  GatedRows(BestRowKernels().bias_geglu, gate, value, rows, cols, gate_bias, value_bias);
}

namespace {

// Per (item, head): scores = q·kᵀ/√d (two small GEMMs), softmax over the keys (the first t + 1
// only when causal), out = scores·v. Query rows of item b start at q + b * q_item_stride.
void MultiHeadAttention(const float* q, int q_stride, size_t q_item_stride, const float* k, const float* v,
                        int kv_stride, float* out, int batch, int q_seq, int kv_seq, int width, int heads, bool causal,
                        const uint8_t* key_valid) {
  const RowKernels& rk = BestRowKernels();
  const int head_dim = width / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  const size_t kv_item_stride = static_cast<size_t>(kv_seq) * kv_stride;
  const int tasks = batch * heads;
#pragma omp parallel if (Parallel(static_cast <size_t>(batch) * q_seq * kv_seq * width))
  {
    std::vector<float> scores(static_cast<size_t>(q_seq) * kv_seq);
#pragma omp for schedule(dynamic, 1)
    for (int task = 0; task < tasks; ++task) {
      const int b = task / heads;
      const size_t h = static_cast<size_t>(task % heads) * head_dim;
      const float* queries = q + b * q_item_stride + h;
      const float* keys = k + b * kv_item_stride + h;
      const float* values = v + b * kv_item_stride + h;
      Gemm(q_seq, kv_seq, head_dim, scale, queries, q_stride, keys, kv_stride, BLayout::kNK, 0.0f, scores.data(),
           kv_seq);
      const uint8_t* valid = key_valid != nullptr ? key_valid + static_cast<size_t>(b) * kv_seq : nullptr;
      for (int t = 0; t < q_seq; ++t) {
        float* p = scores.data() + static_cast<size_t>(t) * kv_seq;
        const int visible = causal ? t + 1 : kv_seq;
        if (valid != nullptr) {  // masked keys: -inf before the softmax, exactly 0 after
          for (int k = 0; k < visible; ++k) {
            if (valid[k] == 0) p[k] = -std::numeric_limits<float>::infinity();
          }
        }
        rk.softmax(p, visible);
        if (valid != nullptr) {
          for (int k = 0; k < visible; ++k) {
            if (valid[k] == 0) p[k] = 0.0f;
          }
        }
        std::fill(p + visible, p + kv_seq, 0.0f);
      }
      float* o = out + static_cast<size_t>(b) * q_seq * width + h;
      Gemm(q_seq, head_dim, kv_seq, 1.0f, scores.data(), kv_seq, values, kv_stride, BLayout::kKN, 0.0f, o, width);
    }
  }
}

}  // namespace

void Attention(const float* qkv, float* out, int batch, int seq, int width, int heads, bool causal,
               const uint8_t* key_valid) {
  const int stride = 3 * width;
  MultiHeadAttention(qkv, stride, static_cast<size_t>(seq) * stride, qkv + width, qkv + 2 * static_cast<size_t>(width),
                     stride, out, batch, seq, seq, width, heads, causal, key_valid);
}

void CrossAttention(const float* q, size_t q_item_stride, const float* kv, float* out, int batch, int q_seq, int kv_seq,
                    int width, int heads) {
  MultiHeadAttention(q, width, q_item_stride, kv, kv + width, 2 * width, out, batch, q_seq, kv_seq, width, heads,
                     /*causal=*/false, /*key_valid=*/nullptr);
}

}  // namespace visalign::clip
