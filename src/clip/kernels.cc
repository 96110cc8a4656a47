#include "clip/kernels.h"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace visalign::clip {
namespace {

constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kQuickGeluAlpha = 1.702f;
// Below this many elements a parallel region costs more than it saves.
constexpr size_t kMinParallelElements = 1 << 14;

// Rational approximation of erf on [-4, 4] (beyond, erf rounds to +-1 in float).
// Coefficients: XLA's ErfImpl32 (same as Eigen's generic_fast_erf_float).
inline float ErfInline(float x) {
  constexpr float kAlpha[7] = {-2.72614225801306e-10f, 2.77068142495902e-08f,  -2.10102402082508e-06f,
                               -5.69250639462346e-05f, -7.34990630326855e-04f, -2.95459980854025e-03f,
                               -1.60960333262415e-02f};
  constexpr float kBeta[5] = {-1.45660718464996e-05f, -2.13374055278905e-04f, -1.68282697438203e-03f,
                              -7.37332916720468e-03f, -1.42647390514189e-02f};
  x = std::clamp(x, -4.0f, 4.0f);
  const float x2 = x * x;
  float p = kAlpha[0];
  for (int i = 1; i < 7; ++i) p = p * x2 + kAlpha[i];
  float q = kBeta[0];
  for (int i = 1; i < 5; ++i) q = q * x2 + kBeta[i];
  return x * p / q;
}

// exp(x) by range reduction x = n ln2 + r, |r| <= ln2/2, and Cephes' degree-6 polynomial.
inline float ExpInline(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kMaxX = 88.3762626647949f;
  constexpr float kMinX = -87.3365447504f;  // exp(kMinX) is the smallest normal float
  x = std::clamp(x, kMinX, kMaxX);
  const float n = std::floor(x * kLog2e + 0.5f);
  const float r = x - n * kLn2Hi - n * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r * r + r + 1.0f;
  // 2^n via the exponent bits; n in [-126, 128) so split to keep both factors finite.
  const int32_t ni = static_cast<int32_t>(n);
  const int32_t half = ni >> 1;
  const float s1 = std::bit_cast<float>((half + 127) << 23);
  const float s2 = std::bit_cast<float>((ni - half + 127) << 23);
  return er * s1 * s2;
}

bool Parallel(size_t elements) { return elements >= kMinParallelElements && omp_get_max_threads() > 1; }

}  // namespace

float FastErf(float x) { return ErfInline(x); }
float FastExp(float x) { return ExpInline(x); }

void LayerNorm(const float* x, float* y, int rows, int width, const float* gain, const float* bias, float eps) {
#pragma omp parallel for schedule(static) if (Parallel(static_cast<size_t>(rows) * width))
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<size_t>(r) * width;
    float* yr = y + static_cast<size_t>(r) * width;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int c = 0; c < width; ++c) sum += xr[c];
    const float mean = sum / static_cast<float>(width);
    float sq = 0.0f;
#pragma omp simd reduction(+ : sq)
    for (int c = 0; c < width; ++c) {
      const float d = xr[c] - mean;
      sq += d * d;
    }
    const float rstd = 1.0f / std::sqrt(sq / static_cast<float>(width) + eps);
#pragma omp simd
    for (int c = 0; c < width; ++c) yr[c] = (xr[c] - mean) * rstd * gain[c] + bias[c];
  }
}

void AddBias(float* y, int rows, int cols, const float* bias) {
#pragma omp parallel for schedule(static) if (Parallel(static_cast<size_t>(rows) * cols))
  for (int r = 0; r < rows; ++r) {
    float* yr = y + static_cast<size_t>(r) * cols;
#pragma omp simd
    for (int c = 0; c < cols; ++c) yr[c] += bias[c];
  }
}

void AddBiasActivate(float* y, int rows, int cols, const float* bias, Activation act) {
  const bool quick = act == Activation::kQuickGelu;
#pragma omp parallel for schedule(static) if (Parallel(static_cast<size_t>(rows) * cols))
  for (int r = 0; r < rows; ++r) {
    float* yr = y + static_cast<size_t>(r) * cols;
    if (quick) {
#pragma omp simd
      for (int c = 0; c < cols; ++c) {
        const float v = yr[c] + bias[c];
        yr[c] = v / (1.0f + ExpInline(-kQuickGeluAlpha * v));
      }
    } else {
#pragma omp simd
      for (int c = 0; c < cols; ++c) {
        const float v = yr[c] + bias[c];
        yr[c] = 0.5f * v * (1.0f + ErfInline(v * kInvSqrt2));
      }
    }
  }
}

void Attention(const float* qkv, float* out, int batch, int seq, int width, int heads, bool causal) {
  const int head_dim = width / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  const size_t stride = static_cast<size_t>(3) * width;
  const int tasks = batch * heads;
#pragma omp parallel if (Parallel(static_cast<size_t>(batch) * seq * seq * width))
  {
    std::vector<float> q(static_cast<size_t>(head_dim));
    std::vector<float> p(static_cast<size_t>(seq));
#pragma omp for schedule(dynamic, 1)
    for (int task = 0; task < tasks; ++task) {
      const int b = task / heads;
      const int h = task % heads;
      const float* base = qkv + static_cast<size_t>(b) * seq * stride + static_cast<size_t>(h) * head_dim;
      for (int t = 0; t < seq; ++t) {
        const float* qt = base + static_cast<size_t>(t) * stride;
#pragma omp simd
        for (int d = 0; d < head_dim; ++d) q[d] = qt[d] * scale;
        const int keys = causal ? t + 1 : seq;
        float max_score = -INFINITY;
        for (int s = 0; s < keys; ++s) {
          const float* ks = base + static_cast<size_t>(s) * stride + width;
          float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
          for (int d = 0; d < head_dim; ++d) dot += q[d] * ks[d];
          p[s] = dot;
          max_score = std::max(max_score, dot);
        }
        float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
        for (int s = 0; s < keys; ++s) {
          p[s] = ExpInline(p[s] - max_score);
          sum += p[s];
        }
        const float inv = 1.0f / sum;
        float* ot = out + (static_cast<size_t>(b) * seq + t) * width + static_cast<size_t>(h) * head_dim;
#pragma omp simd
        for (int d = 0; d < head_dim; ++d) ot[d] = 0.0f;
        for (int s = 0; s < keys; ++s) {
          const float w = p[s] * inv;
          const float* vs = base + static_cast<size_t>(s) * stride + 2 * static_cast<size_t>(width);
#pragma omp simd
          for (int d = 0; d < head_dim; ++d) ot[d] += w * vs[d];
        }
      }
    }
  }
}

}  // namespace visalign::clip
