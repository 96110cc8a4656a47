#include "clip/onednn.h"

#include <cstdio>
#include <cstdlib>

namespace visalign::clip {

const dnnl::engine& CpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream stream(CpuEngine());
  return stream;
}

void OneDnnFailed(const char* what, int status, const char* detail) {
  std::fprintf(stderr, "visalign: internal error: %s failed with status %d (%s)\n", what, status, detail);
  std::abort();
}

}  // namespace visalign::clip
