// k×k convolutions of the RN50 and convnext_base towers: visalign's im2col + GEMM (clip/conv.h
// Conv2d, the towers' code) against oneDNN's convolution primitive on the same NHWC data (weights
// reordered once to the layout oneDNN picks, outside the timing; bias and ReLU fused as post-ops
// like Conv2d's epilogue). Before timing, each layer's two outputs are compared (abort beyond 1e-4
// relative to the largest output), so both compute the same thing. Counter "GFLOP/s" is per second
// of wall time; with MeasureProcessCPUTime, "CPU" time gives the per-CPU-second rate
// (docs/performance.md). Run: VISALIGN_DATA=data build/bench/conv_primitives_benchmark
// (threads: VISALIGN_BENCH_THREADS, default 2).
#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include "clip/conv.h"
#include "visalign/core/parallel.h"

namespace visalign::clip {
namespace {

constexpr int kBatch = 8;

struct Layer {
  int in, out, kernel, stride, pad, size;  // input size (square)
  bool relu;
};

// RN50: stem conv1 (3 -> 32, 3x3 s2 at 224), conv2 (32 -> 32 at 112), a stage-1 and a stage-4
// Bottleneck 3x3; convnext_base: the 4x4 s4 stem and the first 2x2 s2 downsample.
constexpr Layer kRn50Stem1{3, 32, 3, 2, 1, 224, true};
constexpr Layer kRn50Stem2{32, 32, 3, 1, 1, 112, true};
constexpr Layer kRn50Stage1{64, 64, 3, 1, 1, 56, true};
constexpr Layer kRn50Stage4{512, 512, 3, 1, 1, 7, true};
constexpr Layer kConvNextStem{3, 128, 4, 4, 0, 224, false};
constexpr Layer kConvNextDown{128, 256, 2, 2, 0, 56, false};

int BenchThreads() {
  const char* env = std::getenv("VISALIGN_BENCH_THREADS");
  return env != nullptr ? std::atoi(env) : 2;
}

int OutSize(const Layer& l) { return (l.size + 2 * l.pad - l.kernel) / l.stride + 1; }

double Flops(const Layer& l) {
  const double o = OutSize(l);
  return 2.0 * kBatch * o * o * l.out * l.in * l.kernel * l.kernel;
}

struct Data {
  std::vector<float> torch_weight, bias;
  FeatureMap x;
};

Data MakeData(const Layer& l) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Data d;
  d.torch_weight.resize(static_cast<size_t>(l.out) * l.in * l.kernel * l.kernel);
  const float scale = 1.0f / std::sqrt(static_cast<float>(l.in * l.kernel * l.kernel));
  for (float& v : d.torch_weight) v = normal(rng) * scale;
  d.bias.resize(static_cast<size_t>(l.out));
  for (float& v : d.bias) v = 0.1f * normal(rng);
  d.x = FeatureMap(kBatch, l.size, l.size, l.in);
  for (float& v : d.x.data) v = normal(rng);
  return d;
}

// oneDNN's convolution on NHWC src/dst, weights in its preferred layout, bias + optional ReLU fused.
class OneDnnConv {
 public:
  OneDnnConv(const Layer& l, const Data& d) : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const int o = OutSize(l);
    src_md_ = dnnl::memory::desc({kBatch, l.in, l.size, l.size}, dt::f32, tag::nhwc);
    dst_md_ = dnnl::memory::desc({kBatch, l.out, o, o}, dt::f32, tag::nhwc);
    const dnnl::memory::desc weights_any({l.out, l.in, l.kernel, l.kernel}, dt::f32, tag::any);
    const dnnl::memory::desc bias_md({l.out}, dt::f32, tag::a);
    dnnl::primitive_attr attr;
    if (l.relu) {
      dnnl::post_ops ops;
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      attr.set_post_ops(ops);
    }
    const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                               src_md_, weights_any, bias_md, dst_md_, {l.stride, l.stride},
                                               {l.pad, l.pad}, {l.pad, l.pad});
    pd_ = dnnl::convolution_forward::primitive_desc(desc, attr, engine_);
    conv_ = dnnl::convolution_forward(pd_);
    dnnl::memory torch_weights({{l.out, l.in, l.kernel, l.kernel}, dt::f32, tag::oihw}, engine_,
                               const_cast<float*>(d.torch_weight.data()));
    weights_ = dnnl::memory(pd_.weights_desc(), engine_);
    dnnl::reorder(torch_weights, weights_).execute(stream_, torch_weights, weights_);
    bias_ = dnnl::memory(bias_md, engine_, const_cast<float*>(d.bias.data()));
    stream_.wait();
    name_ = pd_.impl_info_str();
  }

  void Run(const FeatureMap& x, FeatureMap& y) {
    dnnl::memory src(src_md_, engine_, const_cast<float*>(x.data.data()));
    dnnl::memory dst(dst_md_, engine_, y.data.data());
    conv_.execute(stream_, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_BIAS, bias_}, {DNNL_ARG_DST, dst}});
    stream_.wait();
  }
  const char* name() const { return name_; }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::memory::desc src_md_, dst_md_;
  dnnl::convolution_forward::primitive_desc pd_;
  dnnl::convolution_forward conv_;
  dnnl::memory weights_, bias_;
  const char* name_ = "";
};

void CheckSame(const FeatureMap& a, const FeatureMap& b) {
  float largest = 0.0f, diff = 0.0f;
  for (size_t i = 0; i < a.data.size(); ++i) {
    largest = std::max(largest, std::abs(a.data[i]));
    diff = std::max(diff, std::abs(a.data[i] - b.data[i]));
  }
  if (a.data.size() != b.data.size() || diff > 1e-4f * largest) std::abort();
}

void BM_ConvIm2colGemm(benchmark::State& state, Layer l) {
  SetThreadCount(BenchThreads());
  const Data d = MakeData(l);
  const ConvWeights w = MakeConv(d.torch_weight.data(), d.bias.data(), l.out, l.in, l.kernel, l.stride, l.pad);
  const ConvActivation act = l.relu ? ConvActivation::kRelu : ConvActivation::kNone;
  for (auto _ : state) {
    FeatureMap y = Conv2d(w, d.x, act);
    benchmark::DoNotOptimize(y.data.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(Flops(l) * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

void BM_ConvOneDnn(benchmark::State& state, Layer l) {
  SetThreadCount(BenchThreads());
  const Data d = MakeData(l);
  OneDnnConv conv(l, d);
  const ConvWeights w = MakeConv(d.torch_weight.data(), d.bias.data(), l.out, l.in, l.kernel, l.stride, l.pad);
  FeatureMap y(kBatch, OutSize(l), OutSize(l), l.out);
  conv.Run(d.x, y);
  CheckSame(Conv2d(w, d.x, l.relu ? ConvActivation::kRelu : ConvActivation::kNone), y);
  for (auto _ : state) {
    conv.Run(d.x, y);
    benchmark::DoNotOptimize(y.data.data());
  }
  state.SetLabel(conv.name());
  state.counters["GFLOP/s"] = benchmark::Counter(Flops(l) * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

// Interleaved per layer (im2col, then oneDNN), so load changes hit both alike.
#define VISALIGN_CONV_PAIR(name, layer)                                                                   \
  BENCHMARK_CAPTURE(BM_ConvIm2colGemm, name, layer)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->MinTime(3.0); \
  BENCHMARK_CAPTURE(BM_ConvOneDnn, name, layer)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->MinTime(3.0)

VISALIGN_CONV_PAIR(rn50_stem1, kRn50Stem1);
VISALIGN_CONV_PAIR(rn50_stem2, kRn50Stem2);
VISALIGN_CONV_PAIR(rn50_stage1_3x3, kRn50Stage1);
VISALIGN_CONV_PAIR(rn50_stage4_3x3, kRn50Stage4);
VISALIGN_CONV_PAIR(convnext_stem, kConvNextStem);
VISALIGN_CONV_PAIR(convnext_downsample1, kConvNextDown);

}  // namespace
}  // namespace visalign::clip

BENCHMARK_MAIN();
