// Building the evaluation summary's rows from per-image results (internal to the VIOLIN benchmark).
#pragma once

#include <algorithm>

#include "visalign/core/progress.h"

#include <string>
#include <vector>

#include "visalign/benchmarks/violin/evaluate.h"

namespace visalign::violin {

// One image of an item: scored (with its metrics) or unreadable.
struct ImageRecord {
  bool scored = false;
  Metrics metrics;
};

// The value of the grouping columns (language, notation, summary.by; variation in CSV and Markdown)
// in the overall and common rows.
inline constexpr char kAllGroups[] = "all";

// Group rows of every (model, variation, language, notation, summary.by values), one overall row
// per model and, for two or more models, one row per model on the items every model has a scored
// image for; the overall and common rows get bootstrap intervals over items. `records[m][i]` are
// model m's images of items[i] (empty: missing). Uses summary.by, missing_policy and bootstrap.
// `progress` (optional) counts the bootstrap resamples, BootstrapSteps(models.size(), resamples) in
// all: on tens of thousands of items they take seconds.
Status BuildRows(const std::vector<const ManifestItem*>& items, const std::vector<std::string>& models,
                 const std::vector<std::vector<std::vector<ImageRecord>>>& records, Summary& summary,
                 Progress* progress = nullptr);
inline size_t BootstrapSteps(size_t models, int resamples) {
  return (models < 2 ? models : 2 * models) * static_cast<size_t>(std::max(0, resamples));
}

}  // namespace visalign::violin
