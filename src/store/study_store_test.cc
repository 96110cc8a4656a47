// The study store: participants from consent on, one assignment each, answers and records that a
// replay cannot store twice, events, counts, reset, and a server location refused.
#include "visalign/store/study_store.h"

#include <gtest/gtest.h>

#include "testing/dirs.h"

namespace visalign::store {
namespace {

class StudyStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = StudyStore::Open((dir_ / "store").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(*opened);
  }
  visalign::testing::TempDir dir_;
  std::unique_ptr<StudyStore> store_;
};

TEST_F(StudyStoreTest, AParticipantIsFoundByTheirSessionAndKeepsTheirProfile) {
  auto p = store_->AddParticipant("hash-1", {{"PROLIFIC_PID", "abc"}});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->user_id.size(), 36u);  // a UUID
  EXPECT_FALSE(p->onboarded());
  p->language = "english", p->gender = "female", p->age_range = "20-29", p->colorblind = "no";
  p->screen_score = 0.75;
  p->metadata = {{"devicePixelRatio", 2}};
  ASSERT_TRUE(store_->UpdateParticipant(*p).ok());
  auto found = store_->FindSession("hash-1");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->user_id, p->user_id);
  EXPECT_EQ((*found)->language, "english");
  EXPECT_EQ((*found)->screen_score, 0.75);
  EXPECT_EQ((*found)->url_params["PROLIFIC_PID"], "abc");
  EXPECT_EQ((*found)->metadata["devicePixelRatio"], 2);
  EXPECT_FALSE(store_->FindSession("hash-2")->has_value());
}

TEST_F(StudyStoreTest, AssignmentsAreSetOnceAndCountedPerClue) {
  auto a = store_->AddParticipant("a", {}), b = store_->AddParticipant("b", {});
  ASSERT_TRUE(store_->SetAssignment(a->id, {3, 1, 0}).ok());
  ASSERT_TRUE(store_->SetAssignment(b->id, {3}).ok());
  EXPECT_EQ(store_->SetAssignment(a->id, {2}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*store_->Assignment(a->id), (std::vector<int>{3, 1, 0}));
  EXPECT_EQ(*store_->AssignmentCounts(), (std::map<int, int64_t>{{0, 1}, {1, 1}, {3, 2}}));
}

TEST_F(StudyStoreTest, AReplayedAnswerOrASecondAnswerToAnItemIsADuplicateAndStoresNothing) {
  auto p = store_->AddParticipant("a", {});
  HuesAnswerRow answer{p->id, "", 0, 1, "SALMON", "ANIMAL", "E11", "2025-01-01T00:00:00.000Z", "c1"};
  EXPECT_EQ(*store_->AddAnswer(answer), Insert::kAdded);
  EXPECT_EQ(*store_->AddAnswer(answer), Insert::kDuplicate);
  HuesAnswerRow again = answer;
  again.client_id = "c2";
  again.coordinate = "A1";
  EXPECT_EQ(*store_->AddAnswer(again), Insert::kDuplicate);
  auto answers = store_->Answers();
  ASSERT_EQ(answers->size(), 1u);
  EXPECT_EQ(answers->front().user_id, p->user_id);
  EXPECT_EQ(answers->front().coordinate, "E11");
  EXPECT_EQ(*store_->CoordinateCounts(1), (std::map<std::string, int64_t>{{"E11", 1}}));
}

TEST_F(StudyStoreTest, RecordsAreUniquePerKindParticipantAndClientId) {
  auto p = store_->AddParticipant("a", {});
  EXPECT_EQ(*store_->AddRecord("regions", p->id, "r1", {{"cells", {1, 2}}}), Insert::kAdded);
  EXPECT_EQ(*store_->AddRecord("regions", p->id, "r1", {{"cells", {3}}}), Insert::kDuplicate);
  EXPECT_EQ(*store_->AddRecord("acva_rating", p->id, "r1", {{"score", 4}}), Insert::kAdded);
  auto regions = store_->Records("regions");
  ASSERT_EQ(regions->size(), 1u);
  EXPECT_EQ(regions->front().payload, nlohmann::json({{"cells", {1, 2}}}));
  EXPECT_EQ(regions->front().user_id, p->user_id);
  ASSERT_TRUE(store_->AddEvents(p->id, {{p->id, "blur", 1500, ""}, {p->id, "focus", 2500, ""}}).ok());
  EXPECT_EQ(store_->Events(p->id)->size(), 2u);
  auto counts = store_->Counts();
  EXPECT_EQ(counts->participants, 1);
  EXPECT_EQ(counts->events, 2);
  EXPECT_EQ(counts->records, (std::map<std::string, int64_t>{{"acva_rating", 1}, {"regions", 1}}));
  ASSERT_TRUE(store_->Reset().ok());
  EXPECT_EQ(store_->Counts()->participants, 0);
  EXPECT_TRUE(store_->Records("regions")->empty());
}

TEST(StudyStore, IsSqliteOnlyAndNamesTheSchemeOfAServerLocation) {
  auto opened = StudyStore::Open("postgres://user:secret@db/visalign");
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(opened.status().where(), "store location");
  EXPECT_EQ(opened.status().ToString().find("secret"), std::string::npos);
}

}  // namespace
}  // namespace visalign::store
