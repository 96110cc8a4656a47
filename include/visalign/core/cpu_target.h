// Compiling a region of a file for a wider instruction set than the build's baseline, for kernels
// chosen at run time (__builtin_cpu_supports): the region between VISALIGN_TARGET_BEGIN_* and
// VISALIGN_TARGET_END. GCC spells this `#pragma GCC target`; clang ignores that pragma and has
// `#pragma clang attribute` instead, which gives every function in the region the same target.
#pragma once

#if defined(__clang__)
#define VISALIGN_TARGET_BEGIN_AVX2 \
  _Pragma("clang attribute push(__attribute__((target(\"avx2\"))), apply_to = function)")
#define VISALIGN_TARGET_BEGIN_AVX2_FMA \
  _Pragma("clang attribute push(__attribute__((target(\"avx2,fma\"))), apply_to = function)")
#define VISALIGN_TARGET_END _Pragma("clang attribute pop")
#else
#define VISALIGN_TARGET_BEGIN_AVX2 _Pragma("GCC push_options") _Pragma("GCC target(\"avx2\")")
#define VISALIGN_TARGET_BEGIN_AVX2_FMA _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,fma\")")
#define VISALIGN_TARGET_END _Pragma("GCC pop_options")
#endif
