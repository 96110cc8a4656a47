#include "clip/kernels.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "clip/gemm.h"
#include "clip/row_kernels.h"

namespace visalign::clip {
namespace {

// Below this many elements a parallel region costs more than it saves.
constexpr size_t kMinParallelElements = 1 << 14;

bool Parallel(size_t elements) { return elements >= kMinParallelElements && omp_get_max_threads() > 1; }

}  // namespace

void LayerNorm(const float* x, float* y, int rows, int width, const float* gain, const float* bias, float eps) {
  const RowKernels& k = BestRowKernels();
#pragma omp parallel for schedule(static) if (Parallel(static_cast<size_t>(rows) * width))
  for (int r = 0; r < rows; ++r) {
    const size_t offset = static_cast<size_t>(r) * width;
    k.layer_norm(x + offset, y + offset, width, gain, bias, eps);
  }
}

void AddBias(float* y, int rows, int cols, const float* bias) {
  const RowKernels& k = BestRowKernels();
#pragma omp parallel for schedule(static) if (Parallel(static_cast<size_t>(rows) * cols))
  for (int r = 0; r < rows; ++r) k.add_bias(y + static_cast<size_t>(r) * cols, cols, bias);
}

void AddBiasActivate(float* y, int rows, int cols, const float* bias, Activation act) {
  const RowKernels& k = BestRowKernels();
  const auto row_fn = act == Activation::kQuickGelu ? k.bias_quick_gelu : k.bias_gelu;
#pragma omp parallel for schedule(static) if (Parallel(static_cast<size_t>(rows) * cols))
  for (int r = 0; r < rows; ++r) row_fn(y + static_cast<size_t>(r) * cols, cols, bias);
}

void Attention(const float* qkv, float* out, int batch, int seq, int width, int heads, bool causal) {
  const RowKernels& k = BestRowKernels();
  const int head_dim = width / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  const int stride = 3 * width;
  const int tasks = batch * heads;
#pragma omp parallel if (Parallel(static_cast<size_t>(batch) * seq * seq * width))
  {
    std::vector<float> scores(static_cast<size_t>(seq) * seq);
#pragma omp for schedule(dynamic, 1)
    for (int task = 0; task < tasks; ++task) {
      const int b = task / heads;
      const int h = task % heads;
      const float* q = qkv + static_cast<size_t>(b) * seq * stride + static_cast<size_t>(h) * head_dim;
      const float* keys = q + width;
      const float* values = q + 2 * static_cast<size_t>(width);
      Gemm(seq, seq, head_dim, scale, q, stride, keys, stride, BLayout::kNK, 0.0f, scores.data(), seq);
      for (int t = 0; t < seq; ++t) {
        float* p = scores.data() + static_cast<size_t>(t) * seq;
        const int visible = causal ? t + 1 : seq;
        k.softmax(p, visible);
        std::fill(p + visible, p + seq, 0.0f);
      }
      float* o = out + static_cast<size_t>(b) * seq * width + static_cast<size_t>(h) * head_dim;
      Gemm(seq, head_dim, seq, 1.0f, scores.data(), seq, values, stride, BLayout::kKN, 0.0f, o, width);
    }
  }
}

}  // namespace visalign::clip
