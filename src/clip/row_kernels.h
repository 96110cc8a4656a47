// Per-row kernels of the CLIP blocks (LayerNorm, bias, GELU, softmax, ReLU, depthwise taps), compiled twice from the
// same source (row_kernels.inc): for baseline x86-64 and for AVX2+FMA. The AVX2 build is used when the CPU supports it
// (checked once at run time), so the binary still runs on any x86-64 CPU. Internal to the clip module.
#pragma once

namespace visalign::clip {

struct RowKernels {
  const char* name;
  // y = (x - mean) / sqrt(var + eps) * gain + bias over one row (biased variance). x and y may alias.
  void (*layer_norm)(const float* x, float* y, int width, const float* gain, const float* bias, float eps);
  void (*add_bias)(float* y, int cols, const float* bias);
  // y = gelu(y + bias) with exact-erf GELU / QuickGELU (x * sigmoid(1.702 x)).
  void (*bias_gelu)(float* y, int cols, const float* bias);
  void (*bias_quick_gelu)(float* y, int cols, const float* bias);
  // y = gelu_tanh(y + bias): PyTorch's gelu(approximate='tanh') (transformers' gelu_pytorch_tanh).
  void (*bias_gelu_tanh)(float* y, int cols, const float* bias);
  // gate = silu(gate + gate_bias) * (value + value_bias) (SwiGLU, silu(x) = x * sigmoid(x)).
  void (*bias_swiglu)(float* gate, const float* value, int cols, const float* gate_bias, const float* value_bias);
  // gate = gelu(gate + gate_bias) * (value + value_bias) (GeGLU, exact-erf GELU).
  void (*bias_geglu)(float* gate, const float* value, int cols, const float* gate_bias, const float* value_bias);
  // p[0, n) = softmax(p[0, n)) in place.
  void (*softmax)(float* p, int n);
  // y = max(y + bias, 0) (convolution towers' ReLU).
  void (*bias_relu)(float* y, int cols, const float* bias);
  // y += x * w element-wise (one tap of a depthwise convolution).
  void (*multiply_add)(float* y, const float* x, const float* w, int n);
  // The vectorisable approximations used above: erf with |error| < 1e-6 everywhere; exp with
  // relative error < 1e-6 for x in [-87, 88] (exposed for accuracy tests).
  float (*erf)(float x);
  float (*exp)(float x);
};

const RowKernels& BaselineRowKernels();
// nullptr when the CPU lacks AVX2 or FMA.
const RowKernels* Avx2RowKernels();
// The AVX2 build when available, else the baseline (decided once per process).
const RowKernels& BestRowKernels();

}  // namespace visalign::clip
