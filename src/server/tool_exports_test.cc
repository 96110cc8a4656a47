// The tools' records read back for export: each participant's latest painting counts once, and a
// run's ratings are that run's only.
#include "visalign/server/tool_exports.h"

#include <gtest/gtest.h>

#include "testing/dirs.h"

namespace visalign::server {
namespace {

Json AllCells(const std::string& category) {
  Json cells = Json::object();
  for (int i = 0; i < hues::kCells; ++i) cells[hues::CellName(i)] = category;
  return {{"cells", cells}};
}

class ToolExports : public ::testing::Test {
 protected:
  void SetUp() override {
    auto study = store::StudyStore::Open((dir_ / "store").string());
    ASSERT_TRUE(study.ok()) << study.status().ToString();
    study_ = std::move(*study);
    for (const char* session : {"a", "b"}) {
      auto p = study_->AddParticipant(session, Json::object());
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      participants_.push_back(*p);
    }
  }
  visalign::testing::TempDir dir_;
  std::unique_ptr<store::StudyStore> study_;
  std::vector<store::Participant> participants_;
};

TEST_F(ToolExports, AParticipantsLatestPaintingReplacesTheirEarlierOne) {
  ASSERT_TRUE(study_->AddRecord(kRegionsRecord, participants_[0].id, "first-painting", AllCells("Red")).ok());
  ASSERT_TRUE(study_->AddRecord(kRegionsRecord, participants_[1].id, "other-painting", AllCells("Blue")).ok());
  ASSERT_TRUE(study_->AddRecord(kRegionsRecord, participants_[0].id, "second-painting", AllCells("Blue")).ok());
  auto paintings = LatestRegionPaintings(*study_);
  ASSERT_TRUE(paintings.ok()) << paintings.status().ToString();
  EXPECT_EQ(paintings->size(), 2u);
  auto board = hues::Board::Default(hues::Chromaticity::kDisplay);
  auto map = ExportRegions(*study_, *board);
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  for (int i = 0; i < hues::kCells; ++i) {
    EXPECT_EQ(map->at(i).category, hues::Macro::kBlue) << hues::CellName(i);
    EXPECT_EQ(map->at(i).confidence, 1.0) << hues::CellName(i);
  }
}

TEST_F(ToolExports, RatingsAreThoseOfTheRunAsked) {
  const auto rating = [](const std::string& run, const std::string& image, double score) {
    return Json{{"image", image}, {"run", run}, {"language", "en"}, {"answers", Json::object()}, {"score", score}};
  };
  ASSERT_TRUE(
      study_->AddRecord(kAcvaRatingRecord, participants_[0].id, "rating-01", rating("r1", "r1/a/0", 0.25)).ok());
  ASSERT_TRUE(study_->AddRecord(kAcvaRatingRecord, participants_[1].id, "rating-02", rating("r2", "r2/a/0", 1)).ok());
  ASSERT_TRUE(study_->AddRecord(kAcvaRatingRecord, participants_[1].id, "rating-03", rating("r1", "r1/a/0", 0.5)).ok());
  auto r1 = AcvaRatings(*study_, "r1");
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  ASSERT_EQ(r1->size(), 2u);
  EXPECT_EQ((*r1)[0].rater, participants_[0].user_id);
  EXPECT_EQ((*r1)[1].score, 0.5);
  EXPECT_EQ(acva::HumanRatingsCsv(*r1), "image,rater,score\nr1/a/0," + participants_[0].user_id + ",0.25\nr1/a/0," +
                                            participants_[1].user_id + ",0.5\n");
  EXPECT_TRUE(AcvaRatings(*study_, "r3")->empty());
}

}  // namespace
}  // namespace visalign::server
