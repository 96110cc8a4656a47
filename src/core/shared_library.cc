#include "visalign/core/shared_library.h"

#include <dlfcn.h>

#include <utility>

namespace visalign {

Result<SharedLibrary> SharedLibrary::Open(std::string file, std::string purpose, std::string package) {
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* reason = dlerror();
    return Status::Unavailable("cannot load " + file + ": " + (reason ? reason : "unknown reason"), purpose,
                               "the Debian package " + package);
  }
  return SharedLibrary(handle, std::move(file), std::move(purpose));
}

void* SharedLibrary::Symbol(const char* name) {
  void* symbol = dlsym(handle_, name);
  if (!symbol && missing_.empty()) missing_ = name;
  return symbol;
}

Status SharedLibrary::Complete(const std::string& expected) const {
  if (missing_.empty()) return Status::Ok();
  return Status::Unavailable(file_ + " lacks " + missing_, purpose_, expected);
}

}  // namespace visalign
