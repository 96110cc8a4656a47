// Ranking models by pass rate and grouping them into tiers by paired bootstrap tests (internal to
// the ACVA analysis). Definitions: docs/acva.md ("Statistics").
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "visalign/benchmarks/acva/acva.h"

namespace visalign::acva::internal {

// One model's (passes, judged images) on each concept of the set, in set order.
struct ModelTally {
  std::string name;
  std::vector<std::pair<double, double>> per_concept;
};

// Model indices in descending pass rate (undefined last), equal rates by name, so the order does not
// depend on the order of the input images.
std::vector<size_t> RankByPassRate(const std::vector<ModelTally>& models);

struct TierResult {
  std::vector<PassRateComparison> comparisons;
  std::vector<Tier> tiers;
  std::vector<size_t> tier_of;  // per model index
};

// Pass-rate comparisons between every two models (paired bootstrap over the concepts both have)
// and tiers: in ranking order, a model joins the current tier unless it is significantly (p < alpha)
// below the tier's first model.
TierResult Tiers(const std::vector<ModelTally>& models, const std::vector<size_t>& order, double alpha,
                 const stats::BootstrapOptions& bootstrap);

}  // namespace visalign::acva::internal
