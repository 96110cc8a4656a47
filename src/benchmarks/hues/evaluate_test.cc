// Model evaluation: published numbers for single words, weights, BH, flags and rates.
#include <gtest/gtest.h>

#include <cmath>

#include "benchmarks/hues/test_support.h"
#include "testing/dirs.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"

namespace visalign::hues {
namespace {

using testing::Data;
using testing::TestBoard;
using testing::TestMacro;
using testing::TestNonsense;
using testing::TestVocabulary;

class HuesEvaluate : public ::testing::Test {
 protected:
  void SetUp() override {
    auto humans =
        LoadHumans(Data("hues/peer-sample/HC_old.csv"), vocabulary_, {false, Data("hues/colorblind_ids.txt")});
    ASSERT_TRUE(humans.ok()) << humans.status().ToString();
    baseline_ = ComputeHumanBaseline(*humans, vocabulary_, board_, macro_, *ParseThreshold("chi2:0.95"));
    auto models =
        LoadPredictions(Data("hues/peer-sample"), PredictionFormat::kAuto, vocabulary_, board_, TestNonsense());
    ASSERT_TRUE(models.ok()) << models.status().ToString();
    models_ = std::move(models).value();
  }
  ModelEvaluation Evaluate(const ModelPredictions& m, ModelWeights w = ModelWeights::kAbsSimilarity) {
    return EvaluateModel(m, baseline_, vocabulary_, board_, macro_, {0.05, w});
  }
  const WordEvaluation& Find(const ModelEvaluation& e, const std::string& word) {
    for (const WordEvaluation& we : e.words)
      if (vocabulary_.words()[we.word].en == word) return we;
    ADD_FAILURE() << word;
    return e.words.front();
  }

  Board board_ = TestBoard();
  Vocabulary vocabulary_ = TestVocabulary();
  MacroMap macro_ = TestMacro();
  HumanBaseline baseline_;
  std::vector<ModelPredictions> models_;
};

TEST_F(HuesEvaluate, ReproducesPublishedRowsOfSingleWords) {
  // RN50-openai/p_values.csv: AMBER 0.07541734658240232 / 0.9278316681431311,
  // SKY 221.78234151146307 / 2.5103141787496952e-11 (p = 1 - CDF, as published).
  const ModelEvaluation rn50 = Evaluate(models_[0]);
  const WordEvaluation& amber = Find(rn50, "AMBER");
  EXPECT_NEAR(amber.hotelling.f / 0.07541734658240232, 1.0, 1e-9);
  EXPECT_NEAR(amber.hotelling.p_cdf / 0.9278316681431311, 1.0, 1e-9);
  const WordEvaluation& sky = Find(rn50, "SKY");
  EXPECT_NEAR(sky.hotelling.f / 221.78234151146307, 1.0, 1e-9);
  EXPECT_NEAR(sky.hotelling.p_cdf / 2.5103141787496952e-11, 1.0, 1e-5);  // 1 - CDF keeps ~5 digits here
  EXPECT_NEAR(sky.hotelling.p_value / sky.hotelling.p_cdf, 1.0, 1e-5);
  EXPECT_EQ(sky.hotelling.df1, 2);
  EXPECT_EQ(sky.hotelling.df2, sky.n_humans + 5 - 3);
}

TEST_F(HuesEvaluate, UniformWeightsUseThePlainCovarianceOfTheFiveCells) {
  const ModelEvaluation uniform = Evaluate(models_[0], ModelWeights::kUniform);
  const WordEvaluation& we = Find(uniform, "SALMON");
  std::vector<stats::Vec2> cells;
  for (const Prediction& p : models_[0].words[we.word]) cells.push_back(board_.cell(p.cell).xy);
  const WordBaseline& h = baseline_.words[we.word];
  auto expected = stats::HotellingTwoSample(h.mean, h.cov, h.n, stats::Mean(cells), *stats::Covariance(cells), 5);
  ASSERT_TRUE(expected.ok());
  EXPECT_DOUBLE_EQ(we.hotelling.t2, expected->t2);
  EXPECT_NE(we.hotelling.t2, Find(Evaluate(models_[0]), "SALMON").hotelling.t2);
}

TEST_F(HuesEvaluate, TopOneMahalanobisMacroAndFlags) {
  const ModelEvaluation rn50 = Evaluate(models_[0]);
  const WordEvaluation& salmon = Find(rn50, "SALMON");
  EXPECT_EQ(CellName(salmon.top1), "G10");
  EXPECT_EQ(salmon.top1_macro, macro_.at(*ParseCell("G10")).category);
  const WordBaseline& h = baseline_.words[salmon.word];
  EXPECT_DOUBLE_EQ(salmon.mahalanobis_d2, stats::MahalanobisSquared(board_.cell(salmon.top1).xy, h.mean, h.inverse));
  EXPECT_EQ(salmon.mahalanobis_outlier, salmon.mahalanobis_d2 > 5.991464547107979);
  EXPECT_FALSE(rn50.negative_similarities);
  EXPECT_TRUE(Evaluate(models_[1]).negative_similarities);  // SigLIP similarities go below 0
}

TEST_F(HuesEvaluate, QValuesAreBenjaminiHochbergOverTheModelsWords) {
  const ModelEvaluation e = Evaluate(models_[1]);
  std::vector<double> p;
  for (const WordEvaluation& we : e.words) p.push_back(we.hotelling.p_value);
  const std::vector<double> q = stats::BenjaminiHochberg(p);
  int rejected = 0, uncorrected = 0;
  for (size_t i = 0; i < e.words.size(); ++i) {
    EXPECT_DOUBLE_EQ(e.words[i].q_value, q[i]);
    EXPECT_EQ(e.words[i].reject, q[i] <= 0.05);
    rejected += e.words[i].reject;
    uncorrected += p[i] <= 0.05;
  }
  EXPECT_EQ(e.hotelling.tested, 100);
  EXPECT_EQ(e.hotelling.failed, rejected);
  EXPECT_EQ(e.hotelling_uncorrected.failed, uncorrected);
  EXPECT_LE(rejected, uncorrected);
}

TEST_F(HuesEvaluate, MissingWordsAreListedAndRatesCoverOnlyPresentWords) {
  ModelPredictions partial = models_[0];
  for (size_t w = 1; w < partial.words.size(); ++w) partial.words[w].clear();
  const ModelEvaluation e = Evaluate(partial);
  EXPECT_EQ(e.words.size(), 1u);
  EXPECT_EQ(e.missing_words.size(), 99u);
  EXPECT_EQ(e.missing_words.front(), "WHALE");
  EXPECT_EQ(e.mahalanobis.tested, 1);
  ASSERT_EQ(e.categories.size(), 1u);
  EXPECT_EQ(e.categories[0].category, "Animal");
  EXPECT_DOUBLE_EQ(e.human_fail_rate, baseline_.words[0].loo_fail_rate);
}

// A model without some words makes its rates partial: summary.md opens with the warning, in
// EvaluationWarnings' words over summary.json (what `visalign report` shows).
TEST_F(HuesEvaluate, SummaryWarnsOfMissingWords) {
  ModelPredictions partial = models_[0];
  for (size_t w = 4; w < partial.words.size(); ++w) partial.words[w].clear();
  EvaluationReport report;
  report.humans_source = "humans.csv";
  report.threshold = *ParseThreshold("chi2:0.95");
  report.macro_source = "derived";
  report.models = {Evaluate(partial), Evaluate(models_[1])};
  visalign::testing::TempDir t;
  ASSERT_TRUE(WriteEvaluation(report, baseline_, vocabulary_, t / "out").ok());
  const Json summary = Json::parse(*ReadFile(t / "out" / "summary.json"));
  const std::vector<std::string> warnings = EvaluationWarnings(summary);
  const std::vector<std::string>& missing = report.models[0].missing_words;
  ASSERT_EQ(warnings, std::vector<std::string>{"model " + partial.name + " has no predictions for 96 of 100 words (" +
                                               missing[0] + ", " + missing[1] + ", " + missing[2] +
                                               ", ...), so its fail rates cover only the other 4."});
  const std::string md = *ReadFile(t / "out" / "summary.md");
  EXPECT_EQ(md.rfind("# Hues and Cues evaluation\n\n**Warning:** " + warnings[0] + "\n\nHumans: ", 0), 0u) << md;
}

TEST_F(HuesEvaluate, CategoriesCountUncorrectedRejectionsLikeTheModel) {
  // RN50-openai on the old snapshot: 47 of 100 words have p <= 0.05 (the published pass table's 0.47).
  const ModelEvaluation e = Evaluate(models_[0]);
  EXPECT_EQ(e.hotelling_uncorrected.failed, 47);
  int failed = 0, tested = 0;
  for (const ModelEvaluation::Category& c : e.categories) {
    EXPECT_GE(c.hotelling_uncorrected.failed, c.hotelling.failed) << c.category;  // BH only removes rejections
    failed += c.hotelling_uncorrected.failed;
    tested += c.hotelling_uncorrected.tested;
  }
  EXPECT_EQ(failed, e.hotelling_uncorrected.failed);
  EXPECT_EQ(tested, e.hotelling_uncorrected.tested);
}

TEST(HuesSpread, MedianQuartilesAndRangeOfTheFiniteValues) {
  // Sorted finite values 0.1, 0.2, 0.3, 0.4: type-7 quartiles at positions 0.75, 1.5 and 2.25.
  const Spread s = SpreadOf({0.4, 0.1, std::nan(""), 0.3, 0.2});
  EXPECT_DOUBLE_EQ(s.median, 0.25);
  EXPECT_DOUBLE_EQ(s.q1, 0.175);
  EXPECT_DOUBLE_EQ(s.q3, 0.325);
  EXPECT_DOUBLE_EQ(s.min, 0.1);
  EXPECT_DOUBLE_EQ(s.max, 0.4);
  EXPECT_TRUE(std::isnan(SpreadOf({std::nan("")}).median));
}

TEST(HuesCatalog, ShippedCatalogHasThe162PublishedModelsAndAnOverrideReplacesRows) {
  std::vector<std::string> sources;
  auto shipped = LoadModelCatalog({}, sources);
  ASSERT_TRUE(shipped.ok()) << shipped.status().ToString();
  EXPECT_EQ(shipped->size(), 162u);
  EXPECT_EQ(sources.size(), 1u);
  EXPECT_EQ(shipped->at("RN50-openai").architecture, "ResNet");
  EXPECT_EQ(shipped->at("MobileCLIP2-S0-dfndr2b").architecture, "MobileCLIP");
  EXPECT_EQ(shipped->at("ViT-B-16-SigLIP2-256-webli").dataset, "WebLI");

  testing::Scratch dir;
  const auto override_csv =
      dir.Write("mine.csv", "model,architecture,dataset\nRN50-openai,CNN,WIT\nclip-tiny,ViT,random\n");
  sources.clear();
  auto merged = LoadModelCatalog(override_csv, sources);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->size(), 163u);
  EXPECT_EQ(merged->at("RN50-openai").architecture, "CNN");
  EXPECT_EQ(merged->at("clip-tiny").dataset, "random");
  EXPECT_EQ(sources.size(), 2u);
}

}  // namespace
}  // namespace visalign::hues
