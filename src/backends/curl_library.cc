#include "backends/curl_library.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace visalign::backends {
namespace {

constexpr char kLibraryFile[] = "libcurl.so.4";
constexpr char kPackage[] = "libcurl4 (apt-get install -y libcurl4)";

template <typename Fn>
bool Resolve(void* library, const char* name, Fn*& out, std::string& missing) {
  out = reinterpret_cast<Fn*>(dlsym(library, name));
  if (!out) missing = name;
  return out != nullptr;
}

Result<CurlLibrary> Load() {
  void* library = dlopen(kLibraryFile, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* reason = dlerror();
    return Status::Unavailable(std::string("cannot load ") + kLibraryFile + ": " + (reason ? reason : "unknown"),
                               "HTTP transport", std::string("the Debian package ") + kPackage);
  }
  CurlLibrary c{};
  std::string missing;
  const bool ok = Resolve(library, "curl_global_init", c.global_init, missing) &&
                  Resolve(library, "curl_easy_init", c.easy_init, missing) &&
                  Resolve(library, "curl_easy_setopt", c.easy_setopt, missing) &&
                  Resolve(library, "curl_easy_perform", c.easy_perform, missing) &&
                  Resolve(library, "curl_easy_getinfo", c.easy_getinfo, missing) &&
                  Resolve(library, "curl_easy_reset", c.easy_reset, missing) &&
                  Resolve(library, "curl_easy_cleanup", c.easy_cleanup, missing) &&
                  Resolve(library, "curl_easy_strerror", c.easy_strerror, missing) &&
                  Resolve(library, "curl_slist_append", c.slist_append, missing) &&
                  Resolve(library, "curl_slist_free_all", c.slist_free_all, missing) &&
                  Resolve(library, "curl_getdate", c.getdate, missing);
  if (!ok)
    return Status::Unavailable(std::string(kLibraryFile) + " lacks " + missing, "HTTP transport",
                               std::string("libcurl 7.x or 8.x from the Debian package ") + kPackage);
  c.global_init(CURL_GLOBAL_DEFAULT);
  return c;  // the library stays loaded for the life of the process
}

}  // namespace

Result<const CurlLibrary*> Curl() {
  static const Result<CurlLibrary> loaded = Load();
  if (!loaded.ok()) return loaded.status();
  return &*loaded;
}

}  // namespace visalign::backends
