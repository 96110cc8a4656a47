#include "visalign/backends/generation_plan.h"

namespace visalign::backends {

std::string_view PlannedRunName(PlannedRun run) {
  switch (run) {
    case PlannedRun::kNew:
      return "new";
    case PlannedRun::kResume:
      return "resume";
    case PlannedRun::kTakeOver:
      return "take_over";
  }
  return "new";
}

Result<GenerationPlan> PlanGeneration(store::RunStore* store, const store::RunInfo& wanted,
                                      const std::vector<WorkItem>& work, const GenerationPlanOptions& options) {
  GenerationPlan plan;
  bool retry_failed = options.retry_failed;
  std::vector<store::Row> rows;
  if (store != nullptr) {
    VISALIGN_ASSIGN_OR_RETURN(std::optional<store::RunInfo> existing, store->FindRun(wanted.name));
    if (existing) {
      VISALIGN_ASSIGN_OR_RETURN(rows, store->Rows(wanted.name));
      VISALIGN_ASSIGN_OR_RETURN(plan.counts, store->Counts(wanted.name));
      VISALIGN_ASSIGN_OR_RETURN(store::RunOpening opening, store::CheckRunReuse(*existing, wanted, plan.counts.done,
                                                                                "store " + options.store_display));
      plan.run = opening == store::RunOpening::kTakenOver ? PlannedRun::kTakeOver : PlannedRun::kResume;
      retry_failed = retry_failed || plan.run == PlannedRun::kTakeOver;
    }
  }
  VISALIGN_ASSIGN_OR_RETURN(
      plan.to_request,
      SelectWork(rows, work, retry_failed, "run " + wanted.name + " in " + options.store_display, plan.selection));
  plan.max_requests = plan.to_request.size() * static_cast<size_t>(options.max_attempts);
  if (options.price_per_image) plan.cost = *options.price_per_image * static_cast<double>(plan.to_request.size());
  return plan;
}

}  // namespace visalign::backends
