#include "clip/conv_blocks.h"

#include <algorithm>

#include "clip/kernels.h"

namespace visalign::clip {
namespace {

int PooledSize(int size, int kernel, int stride, int pad) { return (size + 2 * pad - kernel) / stride + 1; }

}  // namespace

FeatureMap AvgPool2dExcludePad(const FeatureMap& x, int kernel, int stride, int pad) {
  FeatureMap y(x.n, PooledSize(x.h, kernel, stride, pad), PooledSize(x.w, kernel, stride, pad), x.c);
  const int c = x.c;
  const int rows = y.n * y.h;
#pragma omp parallel for schedule(static) if (Parallel(x.data.size()))
  for (int r = 0; r < rows; ++r) {
    const int i = r / y.h;
    const int oy = r % y.h;
    const int y0 = std::max(oy * stride - pad, 0);
    const int y1 = std::min(oy * stride - pad + kernel, x.h);
    for (int ox = 0; ox < y.w; ++ox) {
      const int x0 = std::max(ox * stride - pad, 0);
      const int x1 = std::min(ox * stride - pad + kernel, x.w);
      float* dst = y.data.data() + (static_cast<size_t>(r) * y.w + ox) * c;
      for (int iy = y0; iy < y1; ++iy) {
        for (int ix = x0; ix < x1; ++ix) {
          const float* src = x.data.data() + ((static_cast<size_t>(i) * x.h + iy) * x.w + ix) * c;
          for (int ch = 0; ch < c; ++ch) dst[ch] += src[ch];
        }
      }
      const float inv = 1.0f / static_cast<float>((y1 - y0) * (x1 - x0));
      for (int ch = 0; ch < c; ++ch) dst[ch] *= inv;
    }
  }
  return y;
}

}  // namespace visalign::clip
