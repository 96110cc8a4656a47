// The two requests the Hub client makes, over libcurl (loaded lazily, backends/curl_library.h):
// HEAD of a `resolve` URL without following redirects (the Hub's X-Repo-Commit, X-Linked-Etag and
// X-Linked-Size are on its first answer, which for LFS files redirects to a content server), and a GET
// that follows redirects and streams the body into a file descriptor, from a byte offset (Range).
// The token goes in an Authorization header, which libcurl does not forward to another host or port
// on a redirect. Internal to the hub module.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "visalign/core/status.h"

namespace visalign::hub {

struct HubResponse {
  long status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, of the last response
  std::string body;                                          // a non-2xx answer's text (bounded)
  // The first header named `name` (lower case), "" if none.
  std::string Header(std::string_view name) const;
};

// HEAD `url`. kUnavailable when the server cannot be reached (naming the URL, never the token).
Result<HubResponse> Head(const std::string& url, const std::string& token);

struct DownloadSink {
  int fd = -1;                             // the body of a 200/206 answer is written here
  uint64_t offset = 0;                     // bytes already in fd: asked for with Range when > 0
  std::function<void(uint64_t)> on_bytes;  // called with each chunk's size
};
// GET `url` following redirects. Returns the final answer; a transfer cut short is kUnavailable with
// `*written` bytes written (so the caller can resume), a failed write kIoError ("disk full" for ENOSPC).
Result<HubResponse> Get(const std::string& url, const std::string& token, DownloadSink& sink, uint64_t* written);

}  // namespace visalign::hub
