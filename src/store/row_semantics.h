// What the SQLite and PostgreSQL stores share (internal to the store module): how rows and runs are
// written as text (timestamps, status names, a run's identity and connection JSON) and the lease
// rules, so both stores read, write and decide exactly the same.
#pragma once

#include <string>

#include "visalign/store.h"

namespace visalign::store {

// Now as ISO-8601 UTC with milliseconds: 2026-12-01T15:04:05.123Z.
std::string NowUtc();

// Done and refused rows are results: never claimed or completed again.
bool IsFinalStatus(const std::string& status);
// SQL for "the row is a result" (IsFinalStatus), for both stores' queries.
inline constexpr const char* kFinalStatusSql = "status IN ('done', 'refused')";

// "pending", "done", "failed" or "refused"; Corrupt at `where` for anything else.
Result<RowStatus> ParseRowStatus(const std::string& text, const std::string& where);

// A run read from the database: Corrupt at `where` when its identity or connection is not JSON.
Result<RunInfo> RunFromColumns(std::string name, std::string benchmark, std::string dataset_fingerprint,
                               const std::string& identity, std::string created_at, const std::string& connection,
                               const std::string& where);

// What ClaimRows does with a wanted row in `status` (as stored) leased by `holder` until `expires`
// (Unix ms): done and refused rows, and failed ones unless asked for, are skipped; another owner's live lease
// is busy; anything else is claimed.
enum class ClaimDecision { kSkip, kBusy, kClaim };
ClaimDecision DecideClaim(const std::string& status, const std::string& holder, int64_t expires,
                          const std::string& owner, int64_t now_ms, bool include_failed);
// Whether `owner` may complete a row in `status` leased by `holder`: not when it is done or refused (another
// worker finished it) or leased by someone else.
Completion CompletionFor(const std::string& status, const std::string& holder, const std::string& owner);

}  // namespace visalign::store
