// Refusal rates of generation runs, for the summaries of `violin evaluate` and `acva analyze`
// (here, beside the runner that records refused rows, so both benchmarks share them): a
// provider's content filter declining a prompt is a result (docs/backends.md, "Refusals"), so each
// run reports refused / finished rows (finished = done + refused: the prompts the model answered
// one way or the other) with its Wilson 95 % interval. Failed and pending rows are not answers and
// are left out.
#pragma once

#include <string>
#include <vector>

#include "visalign/core/json.h"
#include "visalign/stats/statistics.h"
#include "visalign/store.h"

namespace visalign::backends {

struct RefusalRate {
  std::string run;
  size_t refused = 0, finished = 0;
  stats::Proportion rate;  // NaN when nothing finished
};

RefusalRate RefusalRateOf(const std::string& run, const store::RunCounts& counts);
// {"run", "refused", "finished", "rate", "ci95": [lo, hi]} (null rate and interval when nothing finished).
Json RefusalJson(const RefusalRate& r);
// "refusals (content filters; refused of finished rows, Wilson 95 %):\n  RUN: 3 of 40 (7.5 %, 2.6-19.9 %)\n..."
// or "" when no run has a refusal (the summary stays as it was).
std::string RefusalText(const std::vector<RefusalRate>& rates);

}  // namespace visalign::backends
