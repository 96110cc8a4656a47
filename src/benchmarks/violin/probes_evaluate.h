// Probe items inside `violin evaluate` (internal to the VIOLIN benchmark): scoring an item's image by
// its family and summarising the probe items into ProbeEstimates (docs/metrics.md, "Probe metrics").
#pragma once

#include <string>
#include <vector>

#include "benchmarks/violin/summary.h"
#include "visalign/benchmarks/violin/evaluate.h"

namespace visalign::violin {

// Inertia and geometry probe items: MeasureProbe (Metrics::probe set); every other item: ScoreImage.
Result<Metrics> ScoreItemImage(const imaging::Image& image, const ManifestItem& item, const Weights& weights);

// True for items whose images the VIOLIN rows average (not inertia or geometry probes).
bool HasViolinScore(const ManifestItem& item);

// The probe summary of every model: `records[m][i]` are model m's images of items[i].
std::vector<ProbeEstimate> SummariseProbes(const std::vector<const ManifestItem*>& items,
                                           const std::vector<std::string>& models,
                                           const std::vector<std::vector<std::vector<ImageRecord>>>& records,
                                           const stats::BootstrapOptions& bootstrap);

// The items.jsonl members of a probe item's image: "probe" (the spec) and "probe_measures"
// (inertia/geometry measures, gravity's pull). Nothing for other items.
void AddProbeJson(const ManifestItem& item, const Metrics& metrics, Json& line);

Json ProbesJson(const std::vector<ProbeEstimate>& probes);
std::string ProbesMarkdown(const std::vector<ProbeEstimate>& probes);

}  // namespace visalign::violin
