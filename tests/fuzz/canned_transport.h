// An HttpTransport that answers every request with one canned response (the fuzz input), so the
// real client code parses it in this process; no network. For the harnesses of reply parsers.
#pragma once

#include <atomic>
#include <utility>

#include "visalign/backends/backends.h"

namespace visalign::fuzz {

class CannedTransport final : public backends::HttpTransport {
 public:
  explicit CannedTransport(backends::HttpResponse response) : response_(std::move(response)) {}
  backends::Attempt<backends::HttpResponse> Send(const backends::HttpRequest&, const backends::HttpTimeouts&,
                                                 const std::atomic<bool>*) override {
    return backends::Attempt<backends::HttpResponse>::Ok(response_);
  }

 private:
  backends::HttpResponse response_;
};

// A base URL no request leaves this process for.
inline constexpr char kCannedEndpoint[] = "http://127.0.0.1:9";

}  // namespace visalign::fuzz
