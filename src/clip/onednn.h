// The oneDNN CPU engine and per-thread stream shared by the towers' oneDNN calls (gemm.cc, conv.cc).
// Internal to the clip module.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace visalign::clip {

const dnnl::engine& CpuEngine();

// An in-order stream on CpuEngine() owned by the calling thread (a stream is not shareable between
// threads that execute at the same time).
dnnl::stream& ThreadStream();

// Reports an unexpected oneDNN failure (invalid arguments, i.e. a bug in the caller) and aborts.
[[noreturn]] void OneDnnFailed(const char* what, int status, const char* detail);

}  // namespace visalign::clip
