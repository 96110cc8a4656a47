#include "clip/conv.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "clip/gemm.h"
#include "clip/kernels.h"
#include "clip/row_kernels.h"

namespace visalign::clip {
namespace {

int OutputSize(int size, const ConvWeights& conv) { return (size + 2 * conv.pad - conv.kernel) / conv.stride + 1; }

// One image's im2col: a row of kernel·kernel·in values, (ky, kx, c) order, per output pixel.
void Im2Col(const ConvWeights& conv, const float* image, int h, int w, int oh, int ow, float* cols) {
  const int k = conv.kernel;
  const int in = conv.in;
  const size_t row_values = static_cast<size_t>(k) * k * in;
#pragma omp parallel for schedule(static) if (Parallel(static_cast<size_t>(oh) * ow * row_values))
  for (int oy = 0; oy < oh; ++oy) {
    for (int ox = 0; ox < ow; ++ox) {
      float* dst = cols + (static_cast<size_t>(oy) * ow + ox) * row_values;
      for (int ky = 0; ky < k; ++ky) {
        const int iy = oy * conv.stride - conv.pad + ky;
        for (int kx = 0; kx < k; ++kx) {
          const int ix = ox * conv.stride - conv.pad + kx;
          float* tap = dst + (static_cast<size_t>(ky) * k + kx) * in;
          if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
            std::fill(tap, tap + in, 0.0f);
          } else {
            const float* src = image + (static_cast<size_t>(iy) * w + ix) * in;
            std::copy(src, src + in, tap);
          }
        }
      }
    }
  }
}

}  // namespace

FeatureMap FeatureMapFromChw(const Matrix& pixels, int size) {
  constexpr int kChannels = 3;
  FeatureMap out(pixels.rows, size, size, kChannels);
  const size_t plane = static_cast<size_t>(size) * size;
  for (int i = 0; i < pixels.rows; ++i) {
    const float* src = pixels.row(i);
    float* dst = out.data.data() + static_cast<size_t>(i) * plane * kChannels;
    for (size_t p = 0; p < plane; ++p) {
      for (int c = 0; c < kChannels; ++c) dst[p * kChannels + c] = src[c * plane + p];
    }
  }
  return out;
}

std::vector<float> ToNchw(const FeatureMap& x) {
  std::vector<float> out(x.data.size());
  const size_t plane = static_cast<size_t>(x.h) * x.w;
  for (int i = 0; i < x.n; ++i) {
    const float* src = x.data.data() + static_cast<size_t>(i) * plane * x.c;
    float* dst = out.data() + static_cast<size_t>(i) * plane * x.c;
    for (size_t p = 0; p < plane; ++p) {
      for (int c = 0; c < x.c; ++c) dst[c * plane + p] = src[p * x.c + c];
    }
  }
  return out;
}

ConvWeights MakeConv(const float* torch_weight, const float* bias, int out, int in, int kernel, int stride, int pad) {
  ConvWeights conv;
  conv.in = in;
  conv.out = out;
  conv.kernel = kernel;
  conv.stride = stride;
  conv.pad = pad;
  const int taps = kernel * kernel;
  conv.weight.resize(static_cast<size_t>(out) * taps * in);
  for (int o = 0; o < out; ++o) {
    for (int c = 0; c < in; ++c) {
      for (int t = 0; t < taps; ++t) {
        conv.weight[(static_cast<size_t>(o) * taps + t) * in + c] = torch_weight[(static_cast<size_t>(o) * in + c) * taps + t];
      }
    }
  }
  conv.bias.assign(static_cast<size_t>(out), 0.0f);
  if (bias != nullptr) std::copy(bias, bias + out, conv.bias.begin());
  return conv;
}

void FoldBatchNorm(ConvWeights& conv, const float* gamma, const float* beta, const float* mean, const float* var,
                   float eps) {
  const size_t row = conv.weight.size() / static_cast<size_t>(conv.out);
  for (int o = 0; o < conv.out; ++o) {
    const float s = gamma[o] / std::sqrt(var[o] + eps);
    float* w = conv.weight.data() + static_cast<size_t>(o) * row;
    for (size_t i = 0; i < row; ++i) w[i] *= s;
    conv.bias[o] = (conv.bias[o] - mean[o]) * s + beta[o];
  }
}

FeatureMap Conv2d(const ConvWeights& conv, const FeatureMap& x, ConvActivation act, FeatureMap* residual) {
  const int oh = OutputSize(x.h, conv);
  const int ow = OutputSize(x.w, conv);
  FeatureMap y = residual != nullptr ? std::move(*residual) : FeatureMap(x.n, oh, ow, conv.out);
  const float beta = residual != nullptr ? 1.0f : 0.0f;
  const int k = conv.kernel * conv.kernel * conv.in;
  if (conv.kernel == 1 && conv.stride == 1 && conv.pad == 0) {
    Gemm(x.pixels(), conv.out, k, x.data.data(), conv.in, conv.weight.data(), BLayout::kNK, beta, y.data.data(),
         conv.out);
  } else {
    std::vector<float> cols(static_cast<size_t>(oh) * ow * k);
    const size_t in_image = static_cast<size_t>(x.h) * x.w * x.c;
    const size_t out_image = static_cast<size_t>(oh) * ow * conv.out;
    for (int i = 0; i < x.n; ++i) {
      Im2Col(conv, x.data.data() + i * in_image, x.h, x.w, oh, ow, cols.data());
      Gemm(oh * ow, conv.out, k, cols.data(), k, conv.weight.data(), BLayout::kNK, beta, y.data.data() + i * out_image,
           conv.out);
    }
  }
  const RowKernels& rk = BestRowKernels();
  const auto epilogue = act == ConvActivation::kRelu ? rk.bias_relu : rk.add_bias;
  const int rows = y.pixels();
#pragma omp parallel for schedule(static) if (Parallel(y.data.size()))
  for (int r = 0; r < rows; ++r) epilogue(y.data.data() + static_cast<size_t>(r) * conv.out, conv.out, conv.bias.data());
  return y;
}

FeatureMap AvgPool2d(const FeatureMap& x, int k) {
  FeatureMap y(x.n, x.h / k, x.w / k, x.c);
  const float inv = 1.0f / static_cast<float>(k * k);
  const int out_rows = x.n * y.h;
#pragma omp parallel for schedule(static) if (Parallel(x.data.size()))
  for (int r = 0; r < out_rows; ++r) {
    const int i = r / y.h;
    const int oy = r % y.h;
    for (int ox = 0; ox < y.w; ++ox) {
      float* dst = y.data.data() + ((static_cast<size_t>(i) * y.h + oy) * y.w + ox) * x.c;
      for (int ky = 0; ky < k; ++ky) {
        for (int kx = 0; kx < k; ++kx) {
          const float* src = x.data.data() + ((static_cast<size_t>(i) * x.h + oy * k + ky) * x.w + ox * k + kx) * x.c;
          for (int c = 0; c < x.c; ++c) dst[c] += src[c];
        }
      }
      for (int c = 0; c < x.c; ++c) dst[c] *= inv;
    }
  }
  return y;
}

DepthwiseWeights MakeDepthwise(const float* torch_weight, const float* bias, int c, int kernel) {
  DepthwiseWeights dw;
  dw.c = c;
  dw.kernel = kernel;
  const int taps = kernel * kernel;
  dw.weight.resize(static_cast<size_t>(taps) * c);
  for (int ch = 0; ch < c; ++ch) {
    for (int t = 0; t < taps; ++t) dw.weight[static_cast<size_t>(t) * c + ch] = torch_weight[static_cast<size_t>(ch) * taps + t];
  }
  dw.bias.assign(bias, bias + c);
  return dw;
}

FeatureMap DepthwiseConv2d(const DepthwiseWeights& dw, const FeatureMap& x) {
  FeatureMap y(x.n, x.h, x.w, x.c);
  const RowKernels& rk = BestRowKernels();
  const int k = dw.kernel;
  const int pad = k / 2;
  const int c = x.c;
  const int rows = x.n * x.h;
#pragma omp parallel for schedule(static) if (Parallel(x.data.size() * static_cast<size_t>(k)))
  for (int r = 0; r < rows; ++r) {
    const int i = r / x.h;
    const int oy = r % x.h;
    for (int ox = 0; ox < x.w; ++ox) {
      float* dst = y.data.data() + (static_cast<size_t>(r) * x.w + ox) * c;
      std::copy(dw.bias.begin(), dw.bias.end(), dst);
      for (int ky = 0; ky < k; ++ky) {
        const int iy = oy - pad + ky;
        if (iy < 0 || iy >= x.h) continue;
        for (int kx = 0; kx < k; ++kx) {
          const int ix = ox - pad + kx;
          if (ix < 0 || ix >= x.w) continue;
          const float* src = x.data.data() + ((static_cast<size_t>(i) * x.h + iy) * x.w + ix) * c;
          rk.multiply_add(dst, src, dw.weight.data() + static_cast<size_t>(ky * k + kx) * c, c);
        }
      }
    }
  }
  return y;
}

}  // namespace visalign::clip
