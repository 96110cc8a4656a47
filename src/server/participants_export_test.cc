// The colour-vision rule of the answer export (a participant who read no plate is not "no"), the
// plate-score exclusion, and the participants export's rows, on a real SQLite study store.
#include "visalign/server/participants_export.h"

#include <gtest/gtest.h>

#include "testing/dirs.h"
#include "visalign/core/io.h"
#include "visalign/server/humans_export.h"

namespace visalign::server {
namespace {

store::Participant Screened(const std::string& reported, std::optional<double> score) {
  store::Participant p;
  p.language = "en";
  p.colorblind = reported;
  p.screen_score = score;
  return p;
}

TEST(ExportedColorblind, ASelfReportOrAPlateScoreBelowHalfIsYes) {
  EXPECT_EQ(ExportedColorblind(Screened("no", 0.0)), "YES") << "read no plate";
  EXPECT_EQ(ExportedColorblind(Screened("no", 0.25)), "YES");
  EXPECT_EQ(ExportedColorblind(Screened("no", 0.5)), "no");
  EXPECT_EQ(ExportedColorblind(Screened("no", 1.0)), "no");
  EXPECT_EQ(ExportedColorblind(Screened("no", std::nullopt)), "no") << "not screened: the self-report";
  EXPECT_EQ(ExportedColorblind(Screened("yes", std::nullopt)), "YES");
  EXPECT_EQ(ExportedColorblind(Screened("yes", 1.0)), "YES");
}

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto study = store::StudyStore::Open((dir_ / "store").string());
    ASSERT_TRUE(study.ok()) << study.status().ToString();
    study_ = std::move(*study);
    vocabulary_ = hues::Vocabulary::Default().value();
  }
  // A participant who answered clue 1 at A1, screened with `score` (none: not screened), their
  // attention check passed or failed (none: not given).
  store::Participant Add(const std::string& pid, std::optional<double> score, std::optional<bool> attention) {
    store::Participant p = study_->AddParticipant("hash-" + pid, {{"PROLIFIC_PID", pid}}).value();
    p.language = "en";
    p.gender = "other";
    p.age_range = "30-39";
    p.colorblind = "no";
    p.screen_score = score;
    EXPECT_TRUE(study_->UpdateParticipant(p).ok());
    EXPECT_TRUE(study_->SetAssignment(p.id, {1, 0}).ok());
    EXPECT_EQ(study_->AddAnswer({p.id, "", 0, 1, "SALMON", "ANIMAL", "A1", "", pid + "-answer"}).value(),
              store::Insert::kAdded);
    if (attention) {
      EXPECT_TRUE(
          study_
              ->AddRecord(kAttentionCheckRecord, p.id, "item-1",
                          {{"expected", "H15"}, {"coordinate", *attention ? "H15" : "B2"}, {"passed", *attention}})
              .ok());
    }
    return p;
  }
  std::set<std::string> Users(const HumansExport& e) {
    const CsvTable t = ParseCsv(e.csv, "export").value();
    std::set<std::string> users;
    for (const auto& r : t.rows) users.insert(r[*t.Column("userId")] + "=" + r[*t.Column("colorblind")]);
    return users;
  }
  visalign::testing::TempDir dir_;
  std::unique_ptr<store::StudyStore> study_;
  hues::Vocabulary vocabulary_;
};

TEST_F(ExportTest, MinPlateScoreLeavesOutLowerScoresAndTheUnscreened) {
  const auto full = Add("full", 1.0, true), half = Add("half", 0.5, false), none = Add("none", 0.0, true),
             unscreened = Add("unscreened", std::nullopt, true);
  const HumansExport all = ExportHumans(*study_, vocabulary_).value();
  EXPECT_EQ(Users(all), (std::set<std::string>{full.user_id + "=no", half.user_id + "=no", none.user_id + "=YES",
                                               unscreened.user_id + "=no"}));
  HumansExportOptions options;
  options.min_plate_score = 0.5;
  const HumansExport screened = ExportHumans(*study_, vocabulary_, options).value();
  EXPECT_EQ(Users(screened), (std::set<std::string>{full.user_id + "=no", half.user_id + "=no"}));
  EXPECT_EQ(screened.excluded_plate_score, 2u);
  EXPECT_EQ(screened.excluded_participants, 2u);
  options.exclude_failed_attention = true;
  const HumansExport both = ExportHumans(*study_, vocabulary_, options).value();
  EXPECT_EQ(Users(both), std::set<std::string>{full.user_id + "=no"});
  EXPECT_EQ(both.excluded_failed_attention, 1u);
  EXPECT_EQ(both.excluded_plate_score, 2u);
  EXPECT_EQ(both.excluded_participants, 3u);
  options.min_plate_score = 0.0;  // everyone screened
  options.exclude_failed_attention = false;
  EXPECT_EQ(ExportHumans(*study_, vocabulary_, options).value().excluded_participants, 1u);
}

TEST_F(ExportTest, EachParticipantIsOneRowWithTheirIdsScreenAndAttention) {
  const auto full = Add("full", 1.0, true), failed = Add("failed", std::nullopt, false);
  study_->AddParticipant("hash-left", {{"PROLIFIC_PID", "left"}, {"STUDY_ID", "s,1"}}).value();
  const auto rows = ExportParticipants(*study_).value();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].participant.user_id, full.user_id);
  EXPECT_EQ(rows[0].attention_passed, std::optional<bool>(true));
  EXPECT_EQ(rows[1].attention_passed, std::optional<bool>(false));
  EXPECT_EQ(rows[1].attention_answer, "B2");
  EXPECT_FALSE(rows[2].attention_passed.has_value());
  EXPECT_EQ(rows[0].items, 2u);
  EXPECT_EQ(rows[0].answers, 1u);
  EXPECT_EQ(rows[2].answers, 0u);
  const CsvTable t = ParseCsv(ParticipantsCsv(rows), "participants").value();
  EXPECT_EQ(t.header, ParticipantsCsvHeader());
  ASSERT_EQ(t.rows.size(), 3u);
  const auto col = [&](size_t r, const char* c) { return t.rows[r][*t.Column(c)]; };
  EXPECT_EQ(col(0, "PROLIFIC_PID"), "full");
  EXPECT_EQ(col(0, "plate_score"), "1.0");
  EXPECT_EQ(col(1, "plate_score"), "");
  EXPECT_EQ(col(1, "attention_check"), "failed");
  EXPECT_EQ(col(2, "attention_check"), "none");
  EXPECT_EQ(col(2, "STUDY_ID"), "s,1") << "quoted in the CSV, read back unchanged";
  EXPECT_EQ(col(2, "colorblind"), "") << "not onboarded: no profile, no verdict";
  const Json doc = ParticipantsJson(rows);
  EXPECT_EQ(doc["participants"][1]["user_id"], failed.user_id);
  EXPECT_EQ(doc["participants"][1]["plate_score"], nullptr);
  EXPECT_EQ(doc["participants"][2]["url_params"]["STUDY_ID"], "s,1");
}

}  // namespace
}  // namespace visalign::server
