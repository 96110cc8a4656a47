// RunSummary: what one invocation of the generation runner did, as JSON, as text and as the
// command's outcome.
#include <algorithm>

#include <fmt/format.h>

#include "visalign/backends/runner.h"

namespace visalign::backends {
namespace {
constexpr size_t kFailuresShown = 5;
}  // namespace

Json RunSummary::ToJson() const {
  Json f = Json::array();
  for (const ItemFailure& x : failures) f.push_back({{"id", x.id}, {"k", x.k}, {"error", x.error}});
  return {{"selected", selected},
          {"already_done", already_done},
          {"skipped_failed", skipped_failed},
          {"done", done},
          {"failed", failed},
          {"left_pending", left_pending},
          {"refused", refused},
          {"already_refused", already_refused},
          {"attempts", attempts},
          {"seconds", seconds},
          {"interrupted", interrupted},
          {"finished_elsewhere", finished_elsewhere},
          {"lease_lost", lease_lost},
          {"failures", f},
          {"stopped_early",
           same_failure ? Json{{"items", same_failure_items}, {"error", same_failure->message}} : Json(nullptr)}};
}

std::string RunSummary::ToText() const {
  std::string s = fmt::format(
      "{} of {} images done now, {}{} failed, {} left pending; {} done before, {} failed before (not retried); "
      "{} attempts in {:.1f} s{}",
      done, selected, refused > 0 ? fmt::format("{} refused by the provider, ", refused) : std::string(), failed,
      left_pending, already_done, skipped_failed, attempts, seconds, interrupted ? " (interrupted)" : "");
  if (finished_elsewhere > 0 || lease_lost > 0)
    s +=
        fmt::format("\nother workers on this run finished {} of the selected images{}", finished_elsewhere + lease_lost,
                    lease_lost > 0 ? fmt::format(" ({} made here too, after this worker's lease had expired: "
                                                 "discarded, theirs kept)",
                                                 lease_lost)
                                   : std::string());
  if (!failures.empty()) {
    s += fmt::format("\nfailures ({} shown of {}):", std::min(kFailuresShown, failures.size()), failures.size());
    for (size_t i = 0; i < failures.size() && i < kFailuresShown; ++i)
      s += fmt::format("\n  {} #{}: {}", failures[i].id, failures[i].k, failures[i].error);
  }
  if (same_failure && same_failure->kind == ErrorKind::kConnection)
    s += fmt::format("\nstopped early: the endpoint cannot be reached: {}", same_failure->message);
  else if (same_failure)
    s += fmt::format("\nstopped early: {} different items in a row failed with the same error: {}", same_failure_items,
                     same_failure->message);
  if (skipped_failed > 0) s += "\nre-run with --retry-failed to retry earlier failures";
  return s;
}

Status RunSummary::StoppedEarly(const std::string& where) const {
  if (!same_failure) return Status::Ok();
  std::string fix;
  switch (same_failure->kind) {
    case ErrorKind::kClient:
      fix =
          "a request the server accepts (check --model, --size and --param; KEY=null removes a field visalign "
          "sends by default, see docs/backends.md)";
      break;
    case ErrorKind::kCommand:
      fix = "a --cmd that works: run it by hand for one prompt and check that it writes {out}";
      break;
    case ErrorKind::kConnection:
      return Status::Unavailable("cannot reach the endpoint before any image was made: " + same_failure->message, where,
                                 "a running server at --endpoint (check the host, port and scheme); nothing was "
                                 "marked failed, so the same command resumes");
    default:
      fix = "a backend that works for these items";
  }
  return Status::InvalidArgument(fmt::format("stopped after {} different items failed with the same error: {}",
                                             same_failure_items, same_failure->message),
                                 where,
                                 fix +
                                     "; then run the same command again (--retry-failed also retries the images "
                                     "that failed)");
}

Status RunSummary::Outcome(const std::string& where) const {
  if (interrupted)
    return Status::Interrupted(
        fmt::format("interrupted with {} images left pending; run the same command again to resume", left_pending));
  VISALIGN_RETURN_IF_ERROR(StoppedEarly(where));
  if (failed > 0)
    return Status::Unavailable(fmt::format("{} of {} images failed (first: {})", failed, selected,
                                           failures.empty() ? std::string("not recorded") : failures.front().error),
                               where, "see the failures above; --retry-failed retries them once the backend works");
  return Status::Ok();
}

}  // namespace visalign::backends
