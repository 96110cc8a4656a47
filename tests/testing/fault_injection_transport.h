// An HttpTransport that forwards to a real one and breaks the requests a test chooses, in the spirit
// of leveldb's fault-injection Env: a connection dropped before the request reached the server, an
// answer lost after the server acted on it, a timeout. Tests use it to check how clients classify and
// retry such failures without a misbehaving server. Thread-safe.
#pragma once

#include <memory>
#include <mutex>

#include "visalign/backends/backends.h"

namespace visalign::testing {

enum class TransportFault {
  kDropConnection,  // fails before sending: ErrorKind::kConnection, the server sees nothing
  kDropResponse,    // sends, then loses the answer: ErrorKind::kConnection, the server did the work
  kTimeout,         // fails before sending: ErrorKind::kTimeout
};

class FaultInjectionTransport : public backends::HttpTransport {
 public:
  explicit FaultInjectionTransport(std::shared_ptr<backends::HttpTransport> base);

  // The requests after the next `skip` ones suffer `fault`, `times` of them (-1: all).
  void FailRequests(TransportFault fault, int skip = 0, int times = 1);
  int requests() const;  // Send calls
  int injected() const;  // of which failed because of an injected fault

  backends::Attempt<backends::HttpResponse> Send(const backends::HttpRequest& request,
                                                 const backends::HttpTimeouts& timeouts,
                                                 const std::atomic<bool>* cancel = nullptr) override;

 private:
  std::shared_ptr<backends::HttpTransport> base_;
  mutable std::mutex mu_;
  TransportFault fault_ = TransportFault::kDropConnection;
  int skip_ = 0, times_ = 0, requests_ = 0, injected_ = 0;
};

}  // namespace visalign::testing
