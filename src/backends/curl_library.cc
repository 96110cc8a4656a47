#include "backends/curl_library.h"

#include "visalign/core/shared_library.h"

namespace visalign::backends {
namespace {

constexpr char kPackage[] = "libcurl4 (apt-get install -y libcurl4)";

Result<CurlLibrary> Load() {
  VISALIGN_ASSIGN_OR_RETURN(SharedLibrary library, SharedLibrary::Open("libcurl.so.4", "HTTP transport", kPackage));
  CurlLibrary c{};
  library.Resolve("curl_global_init", c.global_init)
      .Resolve("curl_easy_init", c.easy_init)
      .Resolve("curl_easy_setopt", c.easy_setopt)
      .Resolve("curl_easy_perform", c.easy_perform)
      .Resolve("curl_easy_getinfo", c.easy_getinfo)
      .Resolve("curl_easy_reset", c.easy_reset)
      .Resolve("curl_easy_cleanup", c.easy_cleanup)
      .Resolve("curl_easy_strerror", c.easy_strerror)
      .Resolve("curl_slist_append", c.slist_append)
      .Resolve("curl_slist_free_all", c.slist_free_all)
      .Resolve("curl_getdate", c.getdate);
  VISALIGN_RETURN_IF_ERROR(library.Complete(std::string("libcurl 7.x or 8.x from the Debian package ") + kPackage));
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
