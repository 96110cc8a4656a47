// What the regionalization tool and the ACVA rating page of `visalign serve` collected, read back
// from the study store's records for the admin exports and the command line (`visalign hues
// export-regions`, `visalign acva export-ratings`).
//   kind "regions":     {"cells": {"A1": "Red", ...}} — one painting; a participant's latest counts
//   kind "acva_rating": {"image": "<run>/<concept>/<k>", "run", "language", "answers": {...}, "score"}
#pragma once

#include <string>
#include <vector>

#include "visalign/benchmarks/acva/rating.h"
#include "visalign/benchmarks/hues/regions.h"
#include "visalign/core/status.h"
#include "visalign/store/study_store.h"

namespace visalign::server {

inline constexpr char kRegionsRecord[] = "regions";
inline constexpr char kAcvaRatingRecord[] = "acva_rating";

// Each participant's latest painting, in the order of the participants' first paintings.
Result<std::vector<hues::RegionPainting>> LatestRegionPaintings(store::StudyStore& study);
// The consensus map of those paintings (hues::RegionConsensus).
Result<hues::MacroMap> ExportRegions(store::StudyStore& study, const hues::Board& board);

// The ratings of ACVA run `run`, in the order given; rater = the participant's public user id.
Result<std::vector<acva::HumanRating>> AcvaRatings(store::StudyStore& study, const std::string& run);

}  // namespace visalign::server
