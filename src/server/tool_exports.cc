// The regionalization and ACVA rating records of the study store, read back for export.
#include "visalign/server/tool_exports.h"

#include <map>

#include "visalign/core/untrusted.h"

namespace visalign::server {

Result<std::vector<hues::RegionPainting>> LatestRegionPaintings(store::StudyStore& study) {
  VISALIGN_ASSIGN_OR_RETURN(std::vector<store::StudyRecord> records, study.Records(kRegionsRecord));
  std::map<int64_t, size_t> slot;  // participant -> index in paintings
  std::vector<hues::RegionPainting> paintings;
  for (const store::StudyRecord& r : records) {
    const std::string where = "study record regions/" + r.user_id + "/" + r.client_id;
    const Json cells = r.payload.is_object() && r.payload.contains("cells") ? r.payload["cells"] : nullptr;
    VISALIGN_ASSIGN_OR_RETURN(hues::RegionPainting painting, hues::ParseRegionPainting(cells, where));
    auto [it, added] = slot.emplace(r.participant, paintings.size());
    if (added)
      paintings.push_back(std::move(painting));
    else
      paintings[it->second] = std::move(painting);
  }
  return paintings;
}

Result<hues::MacroMap> ExportRegions(store::StudyStore& study, const hues::Board& board) {
  VISALIGN_ASSIGN_OR_RETURN(std::vector<hues::RegionPainting> paintings, LatestRegionPaintings(study));
  return hues::RegionConsensus(paintings, board);
}

Result<std::vector<acva::HumanRating>> AcvaRatings(store::StudyStore& study, const std::string& run) {
  VISALIGN_ASSIGN_OR_RETURN(std::vector<store::StudyRecord> records, study.Records(kAcvaRatingRecord));
  std::vector<acva::HumanRating> ratings;
  for (const store::StudyRecord& r : records) {
    if (!r.payload.is_object() || StringMember(r.payload, "run") != run) continue;
    const auto score = r.payload.find("score");
    if (score == r.payload.end() || !score->is_number() || !(score->get<double>() >= 0 && score->get<double>() <= 1))
      return Status::Corrupt("rating without a score in [0, 1]",
                             "study record acva_rating/" + r.user_id + "/" + r.client_id,
                             "records written by the rating page");
    ratings.push_back({StringMember(r.payload, "image"), r.user_id, score->get<double>()});
  }
  return ratings;
}

}  // namespace visalign::server
