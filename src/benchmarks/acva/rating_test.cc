// Human ratings: the form a rater sees, the score of their answers, the export and who rates what next.
#include "visalign/benchmarks/acva/rating.h"

#include <gtest/gtest.h>

#include "testing/dirs.h"

namespace visalign::acva {
namespace {

Concept Loyalty() {
  Concept c;
  c.id = "loyalty";
  c.word = "忠诚";
  c.gloss_en = "loyalty";
  c.rubric = {
      {"relationship", "是否存在持续的关系？", "Is there an ongoing relationship?", 3, Framework::kComponential},
      {"sacrifice", "是否有人为他人付出？", "Does someone give something up for another?", 1, Framework::kFrame}};
  return c;
}

JudgedImage Image(const std::string& run, int k) {
  JudgedImage image;
  image.model = run;
  image.concept_id = "loyalty";
  image.k = k;
  return image;
}

TEST(RatingForm, ShowsTheRubricInTheChosenLanguageOnTheJudgesScale) {
  const Json en = RatingFormJson(Loyalty(), Image("run-a", 2), Language::kEn);
  EXPECT_EQ(en["image"], "run-a/loyalty/2");
  EXPECT_EQ(en["concept"]["word"], "忠诚");
  EXPECT_EQ(en["questions"][1]["id"], "sacrifice");
  EXPECT_EQ(en["questions"][1]["text"], "Does someone give something up for another?");
  EXPECT_EQ(en["scale"]["levels"], Json(kRatingLevels));
  EXPECT_EQ(en["scale"]["low"], JudgeRatingScale(Language::kEn).low);
  const Json zh = RatingFormJson(Loyalty(), Image("run-a", 2), Language::kZh);
  EXPECT_EQ(zh["questions"][0]["text"], "是否存在持续的关系？");
  EXPECT_EQ(zh["scale"]["high"], JudgeRatingScale(Language::kZh).high);
}

TEST(RatingScore, IsTheWeightedAdequacyOfTheAnswers) {
  auto score = RatingScore(Loyalty(), {{"relationship", 1}, {"sacrifice", 0.25}}, "rating");
  ASSERT_TRUE(score.ok()) << score.status().ToString();
  EXPECT_DOUBLE_EQ(*score, (3 * 1.0 + 1 * 0.25) / 4);
}

TEST(RatingScore, NeedsEveryQuestionOnceOnTheJudgesScale) {
  const auto error = [](const Json& answers) { return RatingScore(Loyalty(), answers, "body answers").status(); };
  EXPECT_EQ(error({{"relationship", 1}}).what(), "no answer to question \"sacrifice\"");
  EXPECT_EQ(error({{"relationship", 0.6}, {"sacrifice", 1}}).what(), "rating 0.6 for question \"relationship\"");
  EXPECT_EQ(error({{"relationship", "1"}, {"sacrifice", 1}}).what(), "rating \"1\" for question \"relationship\"");
  EXPECT_EQ(error({{"relationship", 1}, {"sacrifice", 1}, {"extra", 1}}).what(), "unknown question \"extra\"");
  EXPECT_EQ(error(Json::array()).where(), "body answers");
}

TEST(HumanRatingsCsv, IsTheFormatAcvaAgreementReads) {
  const std::string csv = HumanRatingsCsv({{"run-a/loyalty/0", "p1", 0.8125}, {"run-a/loyalty/1", "p,2", 1.0 / 3}});
  EXPECT_EQ(csv, "image,rater,score\nrun-a/loyalty/0,p1,0.8125\nrun-a/loyalty/1,\"p,2\",0.3333333333333333\n");
  visalign::testing::TempDir dir;
  const std::vector<Json> items = {{{"image_id", "run-a/loyalty/0"}, {"sha256", "x"}, {"adequacy", 0.9}},
                                   {{"image_id", "run-a/loyalty/1"}, {"sha256", "y"}, {"adequacy", 0.25}}};
  auto agreement = HumanAgreement(items, dir.Write("ratings.csv", csv));
  ASSERT_TRUE(agreement.ok()) << agreement.status().ToString();
  EXPECT_EQ(agreement->n_ratings, 2u);
  EXPECT_EQ(agreement->exact_agreement, 1.0);  // 0.8125 and 0.9 share a bin, as do 1/3 and 0.25
}

TEST(NextImageToRate, FewestRatingsFirstAndNeverTheSameImageTwice) {
  const std::vector<std::string> images = {"r/a/0", "r/a/1", "r/b/0"};
  EXPECT_EQ(NextImageToRate(images, {}, "p1"), 0u);
  std::vector<HumanRating> ratings = {{"r/a/0", "p1", 1}};
  EXPECT_EQ(NextImageToRate(images, ratings, "p2"), 1u);  // r/a/1 and r/b/0 have none: the earlier
  ratings.push_back({"r/a/1", "p2", 0});
  ratings.push_back({"r/b/0", "p3", 0});
  EXPECT_EQ(NextImageToRate(images, ratings, "p4"), 0u);  // all have one: the earlier
  EXPECT_EQ(NextImageToRate(images, ratings, "p1"), 1u);  // p1 rated r/a/0
  ratings.push_back({"r/a/1", "p1", 0});
  ratings.push_back({"r/b/0", "p1", 0});
  EXPECT_FALSE(NextImageToRate(images, ratings, "p1").has_value());
}

}  // namespace
}  // namespace visalign::acva
