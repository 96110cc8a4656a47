#include "clip/gemm.h"

#include <oneapi/dnnl/dnnl.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include "clip/onednn.h"

namespace visalign::clip {
namespace {

[[noreturn]] void GemmFailed(const char* what, int status, int m, int n, int k) {
  char shape[64];
  std::snprintf(shape, sizeof shape, "m=%d n=%d k=%d", m, n, k);
  OneDnnFailed(what, status, shape);
}

// Matmul primitives of the calling thread by shape (creating a primitive descriptor costs tens of
// microseconds; a tower pass repeats the same few shapes). Bounded: cleared when it grows past
// kMaxCachedShapes (text batches of many different lengths).
constexpr size_t kMaxCachedShapes = 256;
using MatmulKey = std::tuple<int, int, int, BLayout, bool>;

dnnl::matmul& Bf16Matmul(int m, int n, int k, BLayout b_layout, bool accumulate) {
  thread_local std::map<MatmulKey, dnnl::matmul> cache;
  const MatmulKey key{m, n, k, b_layout, accumulate};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= kMaxCachedShapes) cache.clear();
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const dnnl::memory::desc a_md({m, k}, dt::bf16, tag::ab);
  const dnnl::memory::desc b_md({k, n}, dt::bf16, b_layout == BLayout::kNK ? tag::ba : tag::ab);
  const dnnl::memory::desc c_md({m, n}, dt::f32, tag::ab);
  dnnl::primitive_attr attr;
  if (accumulate) {
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr.set_post_ops(ops);
  }
  try {
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), attr, CpuEngine());
    return cache.emplace(key, dnnl::matmul(pd)).first->second;
  } catch (const dnnl::error& e) {
    GemmFailed("dnnl::matmul (bf16) creation", static_cast<int>(e.status), m, n, k);
  }
}

}  // namespace

void Gemm(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, BLayout b_layout,
          float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  const char transb = b_layout == BLayout::kNK ? 'T' : 'N';
  const dnnl_status_t st = dnnl_sgemm('N', transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (st != dnnl_success) GemmFailed("dnnl_sgemm", static_cast<int>(st), m, n, k);
}

void Gemm(int m, int n, int k, const float* a, int lda, const float* b, BLayout b_layout, float beta, float* c,
          int ldc) {
  Gemm(m, n, k, 1.0f, a, lda, b, b_layout == BLayout::kNK ? k : n, b_layout, beta, c, ldc);
}

void ToBf16(const float* x, size_t count, Bf16* y) {
  constexpr uint32_t kQuietNan = 0x7fc0;
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, sizeof bits);
    const bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
    const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
    y[i] = static_cast<Bf16>(nan ? (bits >> 16) | kQuietNan : rounded);
  }
}

namespace {

// C[M, N] = A[M, K] · B (+ C when beta is 1) with both operands already bf16.
void RunBf16Matmul(int m, int n, int k, const Bf16* a, const Bf16* b, BLayout b_layout, float beta, float* c) {
  dnnl::matmul& mm = Bf16Matmul(m, n, k, b_layout, beta != 0.0f);
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const dnnl::engine& engine = CpuEngine();
  // oneDNN does not write through these handles except for the destination.
  dnnl::memory a_mem({{m, k}, dt::bf16, tag::ab}, engine, const_cast<Bf16*>(a));
  dnnl::memory b_mem({{k, n}, dt::bf16, b_layout == BLayout::kNK ? tag::ba : tag::ab}, engine, const_cast<Bf16*>(b));
  dnnl::memory c_mem({{m, n}, dt::f32, tag::ab}, engine, c);
  dnnl::stream& stream = ThreadStream();
  try {
    mm.execute(stream, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
    stream.wait();
  } catch (const dnnl::error& e) {
    GemmFailed("dnnl::matmul (bf16)", static_cast<int>(e.status), m, n, k);
  }
}

float FromBf16(Bf16 b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// hi = bf16(x[i]), lo = bf16(x[i] - hi) for `count` values.
void SplitBf16(const float* x, size_t count, Bf16* hi, Bf16* lo) {
  ToBf16(x, count, hi);
  thread_local std::vector<float> rest;
  rest.resize(count);
  for (size_t i = 0; i < count; ++i) rest[i] = x[i] - FromBf16(hi[i]);
  ToBf16(rest.data(), count, lo);
}

}  // namespace

void GemmBf16(int m, int n, int k, const float* a, const Bf16* b, BLayout b_layout, float beta, float* c) {
  if (m == 0 || n == 0) return;
  thread_local std::vector<Bf16> a_bf16;
  a_bf16.resize(static_cast<size_t>(m) * k);
  ToBf16(a, a_bf16.size(), a_bf16.data());
  RunBf16Matmul(m, n, k, a_bf16.data(), b, b_layout, beta, c);
}

std::vector<Bf16> ToBf16x3Weights(const float* b, int k, int n, BLayout b_layout) {
  const size_t kn = static_cast<size_t>(k) * n;
  std::vector<Bf16> out(3 * kn), lo(kn);
  if (b_layout == BLayout::kKN) {
    SplitBf16(b, kn, out.data(), out.data() + kn);
    std::copy_n(out.data(), kn, out.data() + 2 * kn);
    return out;
  }
  std::vector<Bf16> hi(kn);
  SplitBf16(b, kn, hi.data(), lo.data());
  for (int row = 0; row < n; ++row) {
    Bf16* dst = out.data() + static_cast<size_t>(row) * 3 * k;
    const size_t src = static_cast<size_t>(row) * k;
    std::copy_n(hi.data() + src, k, dst);
    std::copy_n(lo.data() + src, k, dst + k);
    std::copy_n(hi.data() + src, k, dst + 2 * k);
  }
  return out;
}

void GemmBf16x3(int m, int n, int k, const float* a, const Bf16* b3, BLayout b_layout, float beta, float* c) {
  if (m == 0 || n == 0) return;
  thread_local std::vector<Bf16> a3, lo;
  a3.resize(static_cast<size_t>(m) * 3 * k);
  lo.resize(static_cast<size_t>(k));
  for (int row = 0; row < m; ++row) {
    Bf16* dst = a3.data() + static_cast<size_t>(row) * 3 * k;
    SplitBf16(a + static_cast<size_t>(row) * k, k, dst, lo.data());
    std::copy_n(dst, k, dst + k);
    std::copy_n(lo.data(), k, dst + 2 * k);
  }
  RunBf16Matmul(m, n, 3 * k, a3.data(), b3, b_layout, beta, c);
}

const Bf16Capability& Bf16Support() {
  static const Bf16Capability kCapability = [] {
    const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    Bf16Capability c;
    c.available = (isa & dnnl_cpu_isa_avx512_core_bf16) == dnnl_cpu_isa_avx512_core_bf16;
    c.amx = (isa & dnnl_cpu_isa_avx512_core_amx) == dnnl_cpu_isa_avx512_core_amx;
    switch (isa) {
      case dnnl_cpu_isa_avx512_core_amx:
        c.isa = "AMX (avx512_core_amx)";
        break;
      case dnnl_cpu_isa_avx512_core_bf16:
        c.isa = "AVX-512 with BF16 (avx512_core_bf16)";
        break;
      case dnnl_cpu_isa_avx512_core_vnni:
        c.isa = "AVX-512 VNNI without BF16 (avx512_core_vnni)";
        break;
      case dnnl_cpu_isa_avx512_core:
        c.isa = "AVX-512 without BF16 (avx512_core)";
        break;
      case dnnl_cpu_isa_avx2_vnni:
        c.isa = "AVX2 VNNI (avx2_vnni)";
        break;
      case dnnl_cpu_isa_avx2:
        c.isa = "AVX2 (avx2)";
        break;
      default:
        c.isa = "pre-AVX2 x86-64";
        break;
    }
    return c;
  }();
  return kCapability;
}

}  // namespace visalign::clip
