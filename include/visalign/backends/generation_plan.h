// What a generation invocation would do, found without a request or a write: the dry run of
// `violin generate --dry-run`, as a value a command prints and a web page or a scheduler could
// show. It reads the run (if the store has it) and applies the rules RunGeneration applies: the
// run is new, resumed, or taken over (store::CheckRunReuse: only the identity differs and nothing
// is done yet, so its failed rows are asked again), and the work is what SelectWork leaves.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "visalign/backends/runner.h"
#include "visalign/core/status.h"
#include "visalign/store.h"

namespace visalign::backends {

enum class PlannedRun {
  kNew,       // no such run (or no store yet): every selected item is requested
  kResume,    // the same identity: done, refused (and, without retry_failed, failed) rows are skipped
  kTakeOver,  // another identity and no done image: the run takes these settings, failed rows retried
};
// "new", "resume", "take_over" (the dry run's JSON "status").
std::string_view PlannedRunName(PlannedRun run);

struct GenerationPlanOptions {
  bool retry_failed = false;              // --retry-failed
  int max_attempts = 1;                   // attempts per image (RetryOptions::max_attempts)
  std::optional<double> price_per_image;  // USD; the plan's cost without it is nullopt
  std::string store_display;              // the store as errors name it (never with a password)
};

struct GenerationPlan {
  PlannedRun run = PlannedRun::kNew;
  store::RunCounts counts;                  // the run's rows as they are (all zero for a new run)
  RunSummary selection;                     // selected, already_done, already_refused, skipped_failed (SelectWork)
  std::vector<const WorkItem*> to_request;  // into the `work` given, in its order
  size_t max_requests = 0;     // to_request.size() * max_attempts: every image failing until its last attempt
  std::optional<double> cost;  // to_request.size() * price_per_image
};

// The plan of generating `work` into run `wanted.name` of `store` (null: there is no store yet,
// so the run is new). Errors: the store's, CheckRunReuse's when the run cannot be reused (another
// benchmark or dataset, or another identity with done images), SelectWork's when a row was made
// for another prompt or seed. Nothing is written.
Result<GenerationPlan> PlanGeneration(store::RunStore* store, const store::RunInfo& wanted,
                                      const std::vector<WorkItem>& work, const GenerationPlanOptions& options);

}  // namespace visalign::backends
