// JudgeStats as JSON, as text and as the judging command's outcome.
#include <fmt/format.h>

#include "visalign/benchmarks/acva/pipeline.h"

namespace visalign::acva {

Json JudgeStats::ToJson() const {
  return {{"images", images},   {"questions", questions}, {"distinct", distinct},      {"cached", cached},
          {"asked", asked},     {"requests", requests},   {"invalid", invalid},        {"failed", failed},
          {"missing", missing}, {"errors", errors},       {"interrupted", interrupted}};
}

std::string JudgeStats::ToText() const {
  return fmt::format(
      "judge: {} images, {} questions ({} distinct): {} cached, {} asked ({} requests), {} invalid, {} failed", images,
      questions, distinct, cached, asked, requests, invalid, failed);
}

Status JudgeStats::Outcome(const JudgeConfig& config) const {
  if (interrupted) return Status::Interrupted("judging interrupted; answers so far are cached, rerun to continue");
  if (failed > 0)
    return Status::Unavailable(
        fmt::format("{} judge questions failed (first: {})", failed, errors.empty() ? "not recorded" : errors.front()),
        "--judge-endpoint " + config.endpoint, "rerun when the judge is reachable; answers so far are cached");
  if (missing > 0)
    return Status::NotFound(fmt::format("{} of {} judge answers are not in the cache", missing, questions),
                            "--judge-model " + config.settings.model,
                            "run `visalign acva judge` first with the same runs, judge model and language");
  if (images == 0) return Status::NotFound("no done images in the runs", "--run", "runs with generated images");
  return Status::Ok();
}

}  // namespace visalign::acva
