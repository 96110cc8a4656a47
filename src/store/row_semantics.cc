#include "store/row_semantics.h"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "visalign/core/untrusted.h"

namespace visalign::store {

std::string NowUtc() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buf, static_cast<int>(ms));
}

Result<RowStatus> ParseRowStatus(const std::string& s, const std::string& where) {
  if (s == "pending") return RowStatus::kPending;
  if (s == "done") return RowStatus::kDone;
  if (s == "failed") return RowStatus::kFailed;
  if (s == "refused") return RowStatus::kRefused;
  return Status::Corrupt("unknown row status " + QuoteText(s), where, "pending, done, failed or refused");
}

Result<RunInfo> RunFromColumns(std::string name, std::string benchmark, std::string dataset_fingerprint,
                               const std::string& identity, std::string created_at, const std::string& connection,
                               const std::string& where) {
  auto parsed_identity = ParseJson(identity);
  auto parsed_connection = ParseJson(connection);
  if (!parsed_identity.ok() || !parsed_connection.ok())
    return Status::Corrupt("backend identity or connection of run " + QuoteText(name) + " is not JSON", where,
                           "JSON objects");
  RunInfo r;
  r.name = std::move(name);
  r.benchmark = std::move(benchmark);
  r.dataset_fingerprint = std::move(dataset_fingerprint);
  r.identity = std::move(*parsed_identity);
  r.created_at = std::move(created_at);
  r.connection = std::move(*parsed_connection);
  return r;
}

bool IsFinalStatus(const std::string& status) { return status == "done" || status == "refused"; }

ClaimDecision DecideClaim(const std::string& status, const std::string& holder, int64_t expires,
                          const std::string& owner, int64_t now_ms, bool include_failed) {
  if (IsFinalStatus(status) || (status == "failed" && !include_failed)) return ClaimDecision::kSkip;
  if (!holder.empty() && holder != owner && expires > now_ms) return ClaimDecision::kBusy;
  return ClaimDecision::kClaim;
}

Completion CompletionFor(const std::string& status, const std::string& holder, const std::string& owner) {
  return !IsFinalStatus(status) && holder == owner ? Completion::kRecorded : Completion::kLeaseLost;
}

}  // namespace visalign::store
