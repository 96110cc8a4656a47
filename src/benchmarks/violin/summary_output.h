// The parts of the VIOLIN summary's forms that items.jsonl shares (internal to the VIOLIN benchmark;
// the summary's own forms are evaluate.h's SummaryJson, SummaryCsv and SummaryMarkdown).
#pragma once

#include <array>
#include <filesystem>
#include <string>

#include "visalign/benchmarks/violin/evaluate.h"
#include "visalign/core/json.h"

namespace visalign::violin {

// {"rgb_ed": ..., "hf": ...}, with sd named sd_n when `normalised`.
Json MetricObject(const std::array<double, kMetricCount>& values, bool normalised);

// An image's path as items.jsonl and summary.json's problem lists record it: absolute and
// lexically normal, so readers of the results folder (`visalign report`) find the image from any
// working directory (docs/architecture.md, "Results contract").
std::string AbsoluteImagePath(const std::filesystem::path& path);

}  // namespace visalign::violin
