#include "testing/fault_injection_transport.h"

#include <optional>

namespace visalign::testing {
using backends::Attempt;
using backends::AttemptError;
using backends::ErrorKind;
using backends::HttpResponse;

FaultInjectionTransport::FaultInjectionTransport(std::shared_ptr<backends::HttpTransport> base)
    : base_(std::move(base)) {}

void FaultInjectionTransport::FailRequests(TransportFault fault, int skip, int times) {
  std::lock_guard lock(mu_);
  fault_ = fault;
  skip_ = skip;
  times_ = times;
}

int FaultInjectionTransport::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

int FaultInjectionTransport::injected() const {
  std::lock_guard lock(mu_);
  return injected_;
}

Attempt<HttpResponse> FaultInjectionTransport::Send(const backends::HttpRequest& request,
                                                    const backends::HttpTimeouts& timeouts,
                                                    const std::atomic<bool>* cancel) {
  std::optional<TransportFault> fault;
  {
    std::lock_guard lock(mu_);
    ++requests_;
    if (times_ != 0) {
      if (skip_ > 0) {
        --skip_;
      } else {
        if (times_ > 0) --times_;
        ++injected_;
        fault = fault_;
      }
    }
  }
  if (!fault) return base_->Send(request, timeouts, cancel);
  switch (*fault) {
    case TransportFault::kDropConnection:
      return Attempt<HttpResponse>::Fail({ErrorKind::kConnection, "connection reset by peer (injected)", {}});
    case TransportFault::kDropResponse: {
      Attempt<HttpResponse> lost = base_->Send(request, timeouts, cancel);
      if (!lost.ok()) return lost;
      return Attempt<HttpResponse>::Fail(
          {ErrorKind::kConnection, "connection closed before the response arrived (injected)", {}});
    }
    case TransportFault::kTimeout:
      return Attempt<HttpResponse>::Fail({ErrorKind::kTimeout, "request timed out (injected)", {}});
  }
  return base_->Send(request, timeouts, cancel);
}

}  // namespace visalign::testing
