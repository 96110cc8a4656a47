// libcurl, loaded when the first HTTP request is made instead of when visalign starts.
// Debian's libcurl pulls in ~28 shared libraries (TLS, Kerberos, LDAP, SSH, RTMP, IDN, ...) that
// the dynamic loader would otherwise map and relocate on every invocation, including the many
// that never use the network (`violin score`, `color`, `--version`). Linking it costs ~2/3 of
// the product's shared-library count; see docs/performance.md "Start-up".
#pragma once

#include <curl/curl.h>

#include <ctime>

#include "visalign/core/status.h"

namespace visalign::backends {

// The libcurl entry points visalign uses, resolved from libcurl.so.4 (the Debian package libcurl4).
struct CurlLibrary {
  CURLcode (*global_init)(long flags);
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL* handle, CURLoption option, ...);
  CURLcode (*easy_perform)(CURL* handle);
  CURLcode (*easy_getinfo)(CURL* handle, CURLINFO info, ...);
  void (*easy_reset)(CURL* handle);
  void (*easy_cleanup)(CURL* handle);
  const char* (*easy_strerror)(CURLcode code);
  curl_slist* (*slist_append)(curl_slist* list, const char* text);
  void (*slist_free_all)(curl_slist* list);
  time_t (*getdate)(const char* text, const time_t* unused);
};

// Loads libcurl and curl_global_init()s it once per process (thread-safe); later calls return
// the same table. kUnavailable naming the library and the package when it cannot be loaded.
Result<const CurlLibrary*> Curl();

}  // namespace visalign::backends
