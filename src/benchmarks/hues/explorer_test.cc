// The result explorer's numbers: filtered human answers per word, and the evaluated models' top-5.
#include "visalign/benchmarks/hues/explorer.h"

#include <gtest/gtest.h>

#include <numeric>

#include "benchmarks/hues/test_support.h"
#include "visalign/core/io.h"

namespace visalign::hues {
namespace {

using testing::Data;
using testing::Scratch;
using testing::TestBoard;
using testing::TestMacro;
using testing::TestVocabulary;

constexpr double kD2 = 5.991464547107979;  // chi2:0.95

HumanFilter Colorblind(ColorblindFilter choice) {
  HumanFilter filter;
  filter.colorblind = choice;
  return filter;
}

HumanData AllPlayers(const Vocabulary& vocabulary) {
  HumanLoadOptions keep;
  keep.include_colorblind = true;
  auto humans = DefaultHumans(vocabulary, keep);
  EXPECT_TRUE(humans.ok()) << humans.status().ToString();
  return std::move(humans).value();
}

TEST(HumanFilter, ColourBlindPlayersAreMarkedWhenKeptAndLeftOutByDefault) {
  const Vocabulary vocabulary = TestVocabulary();
  const HumanData all = AllPlayers(vocabulary);
  auto without = DefaultHumans(vocabulary);
  ASSERT_TRUE(without.ok());
  const auto marked = std::count_if(all.answers.begin(), all.answers.end(), [](const auto& a) { return a.colorblind; });
  EXPECT_EQ(static_cast<int>(marked), without->excluded_answers);
  EXPECT_TRUE(
      std::none_of(without->answers.begin(), without->answers.end(), [](const auto& a) { return a.colorblind; }));
}

TEST(WordView, TheDefaultFilterGivesTheBaselinesNumbers) {
  const Vocabulary vocabulary = TestVocabulary();
  const Board board = TestBoard();
  const HumanData all = AllPlayers(vocabulary);
  auto evaluated = DefaultHumans(vocabulary);
  ASSERT_TRUE(evaluated.ok());
  const HumanBaseline baseline = ComputeHumanBaseline(*evaluated, vocabulary, board, TestMacro(), {"chi2:0.95", kD2});
  const int salmon = *vocabulary.IndexOfName("SALMON");
  const WordView view = ViewWord(all, board, salmon, HumanFilter{}, kD2);
  const WordBaseline& expected = baseline.words[static_cast<size_t>(salmon)];
  EXPECT_EQ(view.n, expected.n);
  EXPECT_EQ(std::accumulate(view.counts.begin(), view.counts.end(), 0), view.n);
  EXPECT_EQ(view.mean, expected.mean);
  ASSERT_TRUE(view.cov.has_value());
  EXPECT_EQ(*view.cov, expected.cov);
  ASSERT_EQ(view.ellipse.size(), size_t(kEllipseSegments + 1));
  for (const stats::Vec2& p : view.ellipse)
    EXPECT_NEAR(stats::MahalanobisSquared(p, view.mean, expected.inverse), kD2, 1e-6);
  const Json j = WordViewJson(view, vocabulary);
  EXPECT_EQ(j["word"], "SALMON");
  EXPECT_EQ(j["counts"].size(), size_t(kCells));
  EXPECT_EQ(j["ellipse"].size(), view.ellipse.size());
}

TEST(WordView, FiltersSplitTheAnswers) {
  const Vocabulary vocabulary = TestVocabulary();
  const Board board = TestBoard();
  const HumanData all = AllPlayers(vocabulary);
  const int word = *vocabulary.IndexOfName("SKY");
  const auto n = [&](const HumanFilter& f) { return ViewWord(all, board, word, f, kD2).n; };
  const int sighted = n(Colorblind(ColorblindFilter::kExclude)), colorblind = n(Colorblind(ColorblindFilter::kOnly));
  EXPECT_EQ(n(Colorblind(ColorblindFilter::kInclude)), sighted + colorblind);
  EXPECT_GT(colorblind, 0);
  int by_gender = 0;
  const Json choices = HumanFilterChoicesJson(all);
  EXPECT_EQ(choices["colorblind"], Json({"exclude", "include", "only"}));
  for (const Json& gender : choices["gender"]) {
    auto filter = ParseHumanFilter("exclude", gender.get<std::string>(), "", "", all);
    ASSERT_TRUE(filter.ok()) << filter.status().ToString();
    by_gender += n(*filter);
  }
  EXPECT_EQ(by_gender, sighted);
  int expected_young = 0;
  for (const HumanAnswer& a : all.answers)
    expected_young += a.word == word && !a.colorblind && GroupsOf(a).age == "<30";
  EXPECT_EQ(n(*ParseHumanFilter("", "", "<30", "", all)), expected_young);
  EXPECT_GT(expected_young, 0);
}

TEST(HumanFilter, RefusesUnknownChoicesAndGroups) {
  const HumanData all = AllPlayers(TestVocabulary());
  EXPECT_EQ(ParseHumanFilter("sometimes", "", "", "", all).status().where(), "human filter colorblind");
  const Status gender = ParseHumanFilter("", "<script>", "", "", all).status();
  EXPECT_EQ(gender.what(), "unknown group \"<script>\"");
  EXPECT_EQ(gender.where(), "human filter gender");
  EXPECT_FALSE(ParseHumanFilter("", "", "40-49", "", all).ok());  // age groups are <30, >=30, unknown
  EXPECT_FALSE(ParseHumanFilter("", "", "", "klingon", all).ok());
}

// A results folder whose summary.json names the published RN50 predictions with their SHA-256.
std::filesystem::path EvaluatedFolder(const Scratch& dir, const std::string& sha256) {
  const Json summary = {{"benchmark", "hues"},
                        {"inputs",
                         {{"predictions",
                           {{{"model", "RN50-openai"},
                             {"path", Data("hues/peer-sample/RN50-openai/results.csv").string()},
                             {"sha256", sha256}}}}}}};
  dir.Write("eval/summary.json", summary.dump());
  return dir / "eval";
}

TEST(LoadEvaluatedModels, GivesEachEvaluatedModelsTopFive) {
  const Vocabulary vocabulary = TestVocabulary();
  const Board board = TestBoard();
  Scratch dir;
  auto models = LoadEvaluatedModels(EvaluatedFolder(dir, *Sha256File(Data("hues/peer-sample/RN50-openai/results.csv"))),
                                    vocabulary, board);
  ASSERT_TRUE(models.ok()) << models.status().ToString();
  ASSERT_EQ(models->size(), 1u);
  const Json top = ModelTopJson(models->front(), *vocabulary.IndexOfName("SALMON"), vocabulary);
  EXPECT_EQ(top["model"], "RN50-openai");
  ASSERT_EQ(top["top"].size(), size_t(kTopK));
  EXPECT_EQ(top["top"][0]["cell"], "G10");  // the file's first SALMON row
  EXPECT_EQ(top["top"][0]["rank"], 1);
  EXPECT_EQ(top["top"][4]["cell"], "H13");
}

TEST(LoadEvaluatedModels, RefusesPredictionsChangedSinceTheEvaluation) {
  Scratch dir;
  auto models = LoadEvaluatedModels(EvaluatedFolder(dir, std::string(64, '0')), TestVocabulary(), TestBoard());
  ASSERT_FALSE(models.ok());
  EXPECT_NE(models.status().what().find("changed since the evaluation"), std::string::npos)
      << models.status().ToString();
  dir.Write("other/summary.json", R"({"benchmark": "violin"})");
  EXPECT_FALSE(LoadEvaluatedModels(dir / "other", TestVocabulary(), TestBoard()).ok());
}

}  // namespace
}  // namespace visalign::hues
