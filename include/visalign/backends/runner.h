// The generation runner: turns a list of work items (id, prompt, k, seed) into done rows of a run
// store through any GenerationBackend, concurrently, rate-limited, with retries, and resumable.
// It knows nothing about a benchmark: VIOLIN passes manifest prompts, ACVA concept words.
// Resume: rows already done (or refused) are never requested again; failed rows are retried only
// with retry_failed. A provider job recorded in a row (an asynchronous backend's) is handed to the
// backend with the row, so resuming polls it instead of submitting the item again. A kRefused
// attempt makes the row refused: final, not retried, not a failure. Interruption: once `stop` is set no new attempt
// starts; attempts in flight may finish for `grace`, then they are cancelled (their rows stay pending). Failures that
// are the same for every item stop the run early instead of being paid for item after item: see
// RunnerOptions::stop_after_same_failures. Many workers, one run: every invocation leases the rows it works on
// (RunStore::ClaimRows, a batch of `concurrency` rows at a time), renews its leases every third of
// RunnerOptions::lease, and releases what it did not finish when it ends; rows leased by another live worker are asked
// for again until they are done or their lease expires (a worker that died), so any number of
// processes on one run request every image once and each finishes when the run is finished.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "visalign/backends/backends.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/store.h"

namespace visalign::backends {

struct WorkItem {
  std::string id;
  std::string prompt;
  int k = 0;
  std::optional<int64_t> seed;
};

struct RunnerOptions {
  int concurrency = 4;  // attempts in flight
  double rate = 0;      // attempts started per second (token bucket); <= 0 = unlimited
  RetryPolicy retry;
  bool retry_failed = false;
  Millis grace{30'000};  // after a stop request, how long in-flight attempts may finish
  bool progress = true;
  std::string label = "generate";
  // The run stops (RunSummary::same_failure) once this many different items in a row failed with
  // the same message where retrying cannot help: a non-retryable error (an HTTP 4xx such as an
  // unknown request field), or a failed command while nothing has succeeded yet in this
  // invocation. Until then an item whose command failed is set aside (still pending) so the next
  // items show whether the failure is deterministic; it is retried once something succeeds or
  // nothing else is left. A connection failure (refused, DNS, TLS) before anything has succeeded in
  // this invocation stops the run at once (same_failure_items = 1; the item stays pending): a dead
  // endpoint is reported in seconds, while a server that answered before keeps the retry policy.
  // 0 = never stop early.
  int stop_after_same_failures = 3;
  // How long a claimed row stays this worker's without a renewal: after a crash, how long until
  // other workers take its rows over. Must outlast a store outage, not a request.
  Millis lease{60'000};
};

struct ItemFailure {
  std::string id;
  int k = 0;
  std::string error;
};

struct RunSummary {
  size_t selected = 0;            // work items given
  size_t already_done = 0;        // done before this invocation (not requested)
  size_t already_refused = 0;     // refused before this invocation (not requested, even with retry_failed)
  size_t skipped_failed = 0;      // failed before and not retried (no retry_failed)
  size_t done = 0;                // done now
  size_t failed = 0;              // failed now (permanently or out of attempts)
  size_t refused = 0;             // refused now by the provider's content filter (final rows, not failures)
  size_t left_pending = 0;        // not finished because of the interruption
  size_t attempts = 0;            // attempts made now (requests, command runs)
  size_t finished_elsewhere = 0;  // selected rows another worker finished meanwhile (not requested here)
  size_t lease_lost = 0;          // images made here but discarded: the row's lease had expired and was taken
  double seconds = 0;
  bool interrupted = false;
  std::vector<ItemFailure> failures;         // this invocation's failures, in completion order
  std::optional<AttemptError> same_failure;  // set when the run stopped early on it (message without timing)
  size_t same_failure_items = 0;             // how many different items failed with it in a row

  Json ToJson() const;
  std::string ToText() const;  // a short human summary (several lines)
  // OK unless the run stopped early (same_failure): then InvalidArgument with that error (Unavailable
  // for an unreachable endpoint), `where` (e.g. "run NAME"), and what to fix for that kind of error.
  Status StoppedEarly(const std::string& where) const;
  // The invocation's outcome for the command that ran it: Interrupted (rows left pending: the same
  // command resumes), StoppedEarly's error, Unavailable at `where` when images failed (naming the
  // first failure), else OK.
  Status Outcome(const std::string& where) const;
};

// The run's recorded connection for `backend` driven with `options`: backend.Connection() plus
// concurrency, rate and max_attempts. (Its identity is backend.Identity().)
Json RunConnection(const GenerationBackend& backend, const RunnerOptions& options);

// The items an invocation works on, given the run's `rows` (an item without a row is new): done rows
// and refused rows are skipped, failed ones too unless `retry_failed`. Sets summary.selected,
// already_done, already_refused and skipped_failed. InvalidArgument (at `where`) when a row of the run was made for
// another prompt or seed than its item has now.
Result<std::vector<const WorkItem*>> SelectWork(const std::vector<store::Row>& rows, const std::vector<WorkItem>& items,
                                                bool retry_failed, const std::string& where, RunSummary& summary);

// Opens (or resumes) `run` in `store` with `info` (identity and connection are set from `backend`
// and `options`; a run taken over is logged), adds rows for `items`, and works through every row
// that is not done. Errors only for store failures or invalid arguments; per-item failures and an
// early stop are in the summary and the store.
Result<RunSummary> RunGeneration(store::RunStore& store, store::RunInfo info, const std::vector<WorkItem>& items,
                                 GenerationBackend& backend, const RunnerOptions& options,
                                 const std::atomic<bool>& stop);

// Installs SIGINT/SIGTERM handlers for its lifetime: the first signal sets stop() (and prints a
// note to stderr); a second one ends the process at once with exit code 130. One at a time.
class InterruptHandler {
 public:
  InterruptHandler();
  ~InterruptHandler();
  InterruptHandler(const InterruptHandler&) = delete;
  InterruptHandler& operator=(const InterruptHandler&) = delete;
  const std::atomic<bool>& stop() const;
};

}  // namespace visalign::backends
