#include "clip/conv.h"

#include <omp.h>

#include <oneapi/dnnl/dnnl.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <compare>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "clip/gemm.h"
#include "clip/kernels.h"
#include "clip/onednn.h"
#include "clip/row_kernels.h"

namespace visalign::clip {
namespace {

int OutputSize(int size, const ConvWeights& conv) { return (size + 2 * conv.pad - conv.kernel) / conv.stride + 1; }

bool IsPointwise(const ConvWeights& conv) { return conv.kernel == 1 && conv.stride == 1 && conv.pad == 0; }

// With AVX-512, `any`: oneDNN picks its blocked layout and brgconv kernels. Below it, oneDNN 2.6
// would pick its direct jit:avx2 kernels, whose sums measured about twice the rounding error of a
// GEMM's (clip-rn-tiny's pooled activations then miss the parity tolerance of 1e-4 against
// open_clip); plain hwio weights select its GEMM-based convolution (gemm:jit) instead.
dnnl::memory::format_tag WeightsTag() {
  static const bool avx512 = (dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
  return avx512 ? dnnl::memory::format_tag::any : dnnl::memory::format_tag::hwio;
}

}  // namespace

// Primitive descriptors depend on the thread count they are created for (oneDNN splits the work by
// it at creation), so that is part of the key. The scratchpad is the caller's (thread_local in
// RunOneDnn), which makes one primitive safe to execute from several threads at once. Entries are
// never erased: references stay valid after the lock is released.
class ConvPrimitiveCache {
 public:
  struct Key {
    int n, h, w, threads;
    bool relu, accumulate;
    auto operator<=>(const Key&) const = default;
  };
  struct Entry {
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::convolution_forward primitive;
    dnnl::memory weights;  // conv.weight in pd.weights_desc(); shared by entries of the same layout
  };

  const Entry& Get(const ConvWeights& conv, const Key& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
    try {
      Entry e;
      e.pd = MakeDesc(conv, key);
      e.primitive = dnnl::convolution_forward(e.pd);
      e.weights = ReorderedWeights(conv, e.pd.weights_desc());
      return entries_.emplace(key, std::move(e)).first->second;
    } catch (const dnnl::error& e) {
      OneDnnFailed("dnnl::convolution_forward creation", static_cast<int>(e.status), e.what());
    }
  }

 private:
  static dnnl::convolution_forward::primitive_desc MakeDesc(const ConvWeights& conv, const Key& key) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const int oh = OutputSize(key.h, conv);
    const int ow = OutputSize(key.w, conv);
    const dnnl::memory::desc src({key.n, conv.in, key.h, key.w}, dt::f32, tag::nhwc);
    const dnnl::memory::desc dst({key.n, conv.out, oh, ow}, dt::f32, tag::nhwc);
    const dnnl::memory::desc weights({conv.out, conv.in, conv.kernel, conv.kernel}, dt::f32, WeightsTag());
    const dnnl::memory::desc bias({conv.out}, dt::f32, tag::a);
    dnnl::post_ops ops;
    if (key.accumulate) ops.append_sum(1.0f);
    if (key.relu) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                               src, weights, bias, dst, {conv.stride, conv.stride},
                                               {conv.pad, conv.pad}, {conv.pad, conv.pad});
    return dnnl::convolution_forward::primitive_desc(desc, attr, CpuEngine());
  }

  dnnl::memory ReorderedWeights(const ConvWeights& conv, const dnnl::memory::desc& layout) {
    for (const auto& entry : entries_) {
      if (entry.second.weights.get_desc() == layout) return entry.second.weights;
    }
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    // (out, ky, kx, in) order is oneDNN's ohwi; reorder only reads it.
    dnnl::memory ohwi({{conv.out, conv.in, conv.kernel, conv.kernel}, dt::f32, tag::ohwi}, CpuEngine(),
                      const_cast<float*>(conv.weight.data()));
    dnnl::memory out(layout, CpuEngine());
    dnnl::stream& stream = ThreadStream();
    dnnl::reorder(ohwi, out).execute(stream, ohwi, out);
    stream.wait();
    return out;
  }

  std::mutex mutex_;
  std::map<Key, Entry> entries_;
};

namespace {

void RunOneDnn(const ConvWeights& conv, const FeatureMap& x, ConvActivation act, bool accumulate, FeatureMap& y) {
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const ConvPrimitiveCache::Entry& e =
      conv.primitives->Get(conv, {x.n, x.h, x.w, threads, act == ConvActivation::kRelu, accumulate});
  constexpr size_t kAlignment = 64;
  const dnnl::memory::desc scratchpad_md = e.pd.scratchpad_desc();
  const size_t scratchpad_size = scratchpad_md.get_size();
  thread_local std::vector<unsigned char> scratchpad_buffer;
  scratchpad_buffer.resize(scratchpad_size + kAlignment);
  void* scratchpad_ptr = scratchpad_buffer.data();
  size_t space = scratchpad_buffer.size();
  std::align(kAlignment, scratchpad_size, scratchpad_ptr, space);
  const dnnl::engine& engine = CpuEngine();
  // oneDNN writes only through the destination and scratchpad handles.
  dnnl::memory src(e.pd.src_desc(), engine, const_cast<float*>(x.data.data()));
  dnnl::memory bias(e.pd.bias_desc(), engine, const_cast<float*>(conv.bias.data()));
  dnnl::memory dst(e.pd.dst_desc(), engine, y.data.data());
  dnnl::memory scratchpad(scratchpad_md, engine, scratchpad_ptr);
  dnnl::stream& stream = ThreadStream();
  try {
    e.primitive.execute(stream, {{DNNL_ARG_SRC, src},
                                 {DNNL_ARG_WEIGHTS, e.weights},
                                 {DNNL_ARG_BIAS, bias},
                                 {DNNL_ARG_DST, dst},
                                 {DNNL_ARG_SCRATCHPAD, scratchpad}});
    stream.wait();
  } catch (const dnnl::error& err) {
    OneDnnFailed("dnnl::convolution_forward", static_cast<int>(err.status), err.what());
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

void TraceMap(const ForwardOptions& o, const std::string& name, const FeatureMap& x) {
  if (o.trace == nullptr) return;
  const std::vector<float> nchw = ToNchw(x);
  Trace(o, name, nchw.data(), nchw.size());
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
        conv.weight[(static_cast<size_t>(o) * taps + t) * in + c] =
            torch_weight[(static_cast<size_t>(o) * in + c) * taps + t];
      }
    }
  }
  conv.bias.assign(static_cast<size_t>(out), 0.0f);
  if (bias != nullptr) std::copy(bias, bias + out, conv.bias.begin());
  conv.primitives = std::make_shared<ConvPrimitiveCache>();
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
  conv.primitives = std::make_shared<ConvPrimitiveCache>();
}

FeatureMap Conv2d(const ConvWeights& conv, const FeatureMap& x, ConvActivation act, FeatureMap* residual) {
  FeatureMap y = residual != nullptr ? std::move(*residual)
                                     : FeatureMap(x.n, OutputSize(x.h, conv), OutputSize(x.w, conv), conv.out);
  if (!IsPointwise(conv)) {
    RunOneDnn(conv, x, act, residual != nullptr, y);
    return y;
  }
  Gemm(x.pixels(), conv.out, conv.in, x.data.data(), conv.in, conv.weight.data(), BLayout::kNK,
       residual != nullptr ? 1.0f : 0.0f, y.data.data(), conv.out);
  const RowKernels& rk = BestRowKernels();
  const auto epilogue = act == ConvActivation::kRelu ? rk.bias_relu : rk.add_bias;
  const int rows = y.pixels();
#pragma omp parallel for schedule(static) if (Parallel(y.data.size()))
  for (int r = 0; r < rows; ++r)
    epilogue(y.data.data() + static_cast<size_t>(r) * conv.out, conv.out, conv.bias.data());
  return y;
}

void GeluInPlace(FeatureMap& x) {
  const std::vector<float> zero(static_cast<size_t>(x.c), 0.0f);
  const RowKernels& rk = BestRowKernels();
  const int rows = x.pixels();
#pragma omp parallel for schedule(static) if (Parallel(x.data.size()))
  for (int r = 0; r < rows; ++r) rk.bias_gelu(x.data.data() + static_cast<size_t>(r) * x.c, x.c, zero.data());
}

std::vector<float> GlobalAveragePool(const FeatureMap& x) {
  const int grid = x.h * x.w;
  std::vector<float> pooled(static_cast<size_t>(x.n) * x.c);
  std::vector<double> sum(static_cast<size_t>(x.c));
  for (int i = 0; i < x.n; ++i) {
    std::fill(sum.begin(), sum.end(), 0.0);
    const float* src = x.data.data() + static_cast<size_t>(i) * grid * x.c;
    for (int k = 0; k < grid; ++k) {
      for (int ch = 0; ch < x.c; ++ch) sum[ch] += src[static_cast<size_t>(k) * x.c + ch];
    }
    for (int ch = 0; ch < x.c; ++ch) pooled[static_cast<size_t>(i) * x.c + ch] = static_cast<float>(sum[ch] / grid);
  }
  return pooled;
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

DepthwiseWeights MakeDepthwise(const float* torch_weight, const float* bias, int c, int kernel, int stride,
                               int multiplier) {
  DepthwiseWeights dw;
  dw.c = c;
  dw.kernel = kernel;
  dw.stride = stride;
  dw.multiplier = multiplier;
  const int taps = kernel * kernel;
  const int out = dw.out();
  dw.weight.resize(static_cast<size_t>(taps) * out);
  for (int ch = 0; ch < out; ++ch) {
    for (int t = 0; t < taps; ++t)
      dw.weight[static_cast<size_t>(t) * out + ch] = torch_weight[static_cast<size_t>(ch) * taps + t];
  }
  dw.bias.assign(bias, bias + out);
  return dw;
}

FeatureMap DepthwiseConv2d(const DepthwiseWeights& dw, const FeatureMap& input, DepthwiseEpilogue epilogue) {
  // With a multiplier, each input channel repeated `multiplier` times makes it a plain depthwise
  // convolution of c·multiplier channels.
  FeatureMap expanded;
  if (dw.multiplier > 1) {
    expanded = FeatureMap(input.n, input.h, input.w, dw.out());
    const int pixels = input.pixels();
    for (int p = 0; p < pixels; ++p) {
      const float* src = input.data.data() + static_cast<size_t>(p) * input.c;
      float* dst = expanded.data.data() + static_cast<size_t>(p) * expanded.c;
      for (int ch = 0; ch < input.c; ++ch) std::fill_n(dst + ch * dw.multiplier, dw.multiplier, src[ch]);
    }
  }
  const FeatureMap& x = dw.multiplier > 1 ? expanded : input;
  const int k = dw.kernel;
  const int pad = k / 2;
  const int s = dw.stride;
  FeatureMap y(x.n, (x.h + 2 * pad - k) / s + 1, (x.w + 2 * pad - k) / s + 1, x.c);
  const RowKernels& rk = BestRowKernels();
  const auto finish = epilogue == DepthwiseEpilogue::kBiasGelu ? rk.bias_gelu : rk.add_bias;
  const int c = x.c;
  const int rows = y.n * y.h;
#pragma omp parallel for schedule(static) if (Parallel(y.data.size() * static_cast <size_t>(k)))
  for (int r = 0; r < rows; ++r) {
    const int i = r / y.h;
    const int oy = r % y.h;
    for (int ox = 0; ox < y.w; ++ox) {
      float* dst = y.data.data() + (static_cast<size_t>(r) * y.w + ox) * c;  // zero-initialised
      for (int ky = 0; ky < k; ++ky) {
        const int iy = oy * s - pad + ky;
        if (iy < 0 || iy >= x.h) continue;
        for (int kx = 0; kx < k; ++kx) {
          const int ix = ox * s - pad + kx;
          if (ix < 0 || ix >= x.w) continue;
          const float* src = x.data.data() + ((static_cast<size_t>(i) * x.h + iy) * x.w + ix) * c;
          rk.multiply_add(dst, src, dw.weight.data() + static_cast<size_t>(ky * k + kx) * c, c);
        }
      }
      finish(dst, c, dw.bias.data());
    }
  }
  return y;
}

}  // namespace visalign::clip
