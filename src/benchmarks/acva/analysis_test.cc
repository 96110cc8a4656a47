#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "benchmarks/acva/analysis_testing.h"
#include "visalign/benchmarks/acva/acva.h"

namespace visalign::acva {
namespace {

using fixtures::AnalyzeTwoModels;
using fixtures::Axis;
using fixtures::Image;
using fixtures::MakeConcept;
using fixtures::Model;
using fixtures::ThreeConcepts;
using fixtures::TwoModels;

TEST_F(AnalyzeTwoModels, AdequacyPassRatesAndInvalidCounts) {
  const Json& good = Model(result_.summary, "good");
  const Json& poor = Model(result_.summary, "poor");
  EXPECT_EQ(good["n_images"], 9);
  EXPECT_EQ(good["pass_rate"], 1.0);
  EXPECT_EQ(good["pass_rate_ci"], Json::array({1.0, 1.0}));
  EXPECT_EQ(good["adequacy_mean"], 1.0);
  EXPECT_EQ(good["by_category"]["moral"]["pass_rate"], 1.0);
  EXPECT_EQ(poor["n_images"], 10);
  EXPECT_EQ(poor["n_invalid"], 1);
  EXPECT_EQ(poor["pass_rate"], 0.0);  // over the 9 valid images, the invalid one is not a zero
  EXPECT_EQ(poor["questions"]["by_framework"]["componential"]["missing_rate"], 1.0);
  EXPECT_EQ(poor["questions"]["by_framework"]["componential"]["n"], 10);  // the broken image's q1 is valid
  EXPECT_EQ(poor["questions"]["by_framework"]["image-schema"]["n"], 9);
}

TEST_F(AnalyzeTwoModels, DiversityOfIdenticalImagesIsZeroAndOfThreeMetaphorsIsLog2Of3) {
  const Json& good = Model(result_.summary, "good")["diversity"];
  const Json& poor = Model(result_.summary, "poor")["diversity"];
  EXPECT_EQ(poor["unfiltered"]["n_groups"], 3);
  EXPECT_EQ(poor["unfiltered"]["d_img_mean"], 0.0);
  EXPECT_EQ(poor["unfiltered"]["d_met_mean"], 0.0);
  EXPECT_EQ(poor["unfiltered"]["h_mean"], 0.0);
  EXPECT_EQ(poor["filtered"]["n_groups"], 0);  // nothing passes
  EXPECT_EQ(good["filtered"]["n_groups"], 3);
  EXPECT_NEAR(good["filtered"]["h_mean"].get<double>(), std::log2(3.0), 1e-12);
  EXPECT_DOUBLE_EQ(good["filtered"]["d_met_mean"].get<double>(), 1.0);  // orthogonal descriptions
  // Images (1, 0.3, 0) and (1, 0, 0.3) on one axis tilted toward different others: cos = 1 / 1.09,
  // distance 0.09 / 1.09.
  EXPECT_NEAR(good["unfiltered"]["d_img_mean"].get<double>(), 0.09 / 1.09, 1e-6);
}

TEST_F(AnalyzeTwoModels, QuadrantsSplitByDefaultAtTheMediansPooledOverEveryModelOfTheCall) {
  // ACVA §5.2's split: pooled over both models, good is above both medians in every concept and poor
  // below, so all of poor's groups are low (per-model medians could put at most half there).
  EXPECT_EQ(result_.summary["options"]["median_scope"], "pooled");
  const Json& good = Model(result_.summary, "good")["diversity"]["unfiltered"];
  const Json& poor = Model(result_.summary, "poor")["diversity"]["unfiltered"];
  EXPECT_EQ(good["median_split"], poor["median_split"]);
  EXPECT_EQ(good["median_split"]["scope"], "pooled");
  EXPECT_EQ(good["quadrants"]["genuine"], 1.0);
  EXPECT_EQ(poor["quadrants"]["low"], 1.0);
  // The summary names the medians and where they came from.
  const Json& qm = result_.summary["quadrant_medians"];
  EXPECT_EQ(qm["scope"], "pooled");
  EXPECT_EQ(qm["source"], "the groups of the 2 model(s) analysed together");
  EXPECT_EQ(qm["unfiltered"]["d_img"], good["median_split"]["d_img"]);
  EXPECT_EQ(qm["unfiltered"]["h"], good["median_split"]["h"]);
  EXPECT_NE(
      SummaryMarkdown(result_.summary).find("Quadrants split at the medians of D_img and H over the groups of all"),
      std::string::npos);
}

TEST_F(AnalyzeTwoModels, PerModelMediansSplitEachModelAtItsOwnWithTiesHalfHigh) {
  options_.median_scope = MedianScope::kModel;
  auto r = Analyze(set_, TwoModels(set_), options_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // good: the same D_img and H = log2 3 in every concept; poor: D_img 0 and H 0 everywhere. Split at
  // each model's own medians, every value ties with its median: half high, half low on both axes.
  for (const char* name : {"good", "poor"}) {
    const Json& d = Model(r->summary, name)["diversity"]["unfiltered"];
    EXPECT_EQ(d["median_split"]["scope"], "model") << name;
    EXPECT_EQ(d["quadrants"], Json({{"genuine", 0.25}, {"pseudo", 0.25}, {"metaphor", 0.25}, {"low", 0.25}})) << name;
    EXPECT_EQ(d["on_median"], Json({{"d_img", 1.0}, {"h", 1.0}})) << name;
  }
  EXPECT_EQ(Model(r->summary, "poor")["diversity"]["unfiltered"]["median_split"]["h"], 0.0);
  EXPECT_EQ(
      r->summary["quadrant_medians"],
      Json(
          {{"scope", "model"}, {"source", "each model's own groups"}, {"filtered", nullptr}, {"unfiltered", nullptr}}));
  EXPECT_NE(SummaryMarkdown(r->summary).find("Quadrants split at each model's own medians"), std::string::npos);
  // A model's per-model diversity is the same analysed alone or with others.
  for (const std::string name : {"good", "poor"}) {
    std::vector<JudgedImage> alone;
    for (const JudgedImage& im : TwoModels(set_))
      if (im.model == name) alone.push_back(im);
    auto a = Analyze(set_, alone, options_);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    // Compared as text: undefined numbers are NaN in memory, and NaN != NaN.
    EXPECT_EQ(Model(a->summary, name)["diversity"].dump(), Model(r->summary, name)["diversity"].dump()) << name;
  }
}

TEST_F(AnalyzeTwoModels, FrozenMediansOfAnEarlierAnalysisKeepAModelsSharesWhenAnotherJoinsOrLeaves) {
  // Freeze the medians of the two-model analysis, then analyse good alone: its shares stay those of the
  // pooled two-model split (pooled over good alone they would be the tie-split quarters).
  auto frozen = FrozenMediansFromSummary(Json::parse(result_.summary.dump()), "earlier/summary.json");
  ASSERT_TRUE(frozen.ok()) << frozen.status().ToString();
  options_.median_scope = MedianScope::kFrozen;
  options_.frozen_medians = *frozen;
  std::vector<JudgedImage> alone;
  for (const JudgedImage& im : TwoModels(set_))
    if (im.model == "good") alone.push_back(im);
  auto r = Analyze(set_, alone, options_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Json& d = Model(r->summary, "good")["diversity"]["unfiltered"];
  EXPECT_EQ(d["quadrants"], Model(result_.summary, "good")["diversity"]["unfiltered"]["quadrants"]);
  EXPECT_EQ(d["median_split"]["scope"], "frozen");
  EXPECT_EQ(r->summary["quadrant_medians"]["source"], "earlier/summary.json");
  EXPECT_EQ(r->summary["pooled"]["diversity"]["unfiltered"]["median_split"]["scope"], "frozen");
  EXPECT_EQ(r->summary["quadrant_medians"]["unfiltered"],
            Json({{"d_img", frozen->unfiltered.d_img}, {"h", frozen->unfiltered.h}}));
  // Freezing again from the frozen analysis keeps the same split points.
  auto again = FrozenMediansFromSummary(Json::parse(r->summary.dump()), "second/summary.json");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->unfiltered.d_img, frozen->unfiltered.d_img);
  EXPECT_EQ(again->filtered.h, frozen->filtered.h);
  EXPECT_NE(SummaryMarkdown(r->summary).find("Quadrants split at medians frozen from earlier/summary.json"),
            std::string::npos);
}

TEST(FrozenMediansFromSummary, RefusesADocumentWithoutFiniteMediansNamingTheField) {
  auto not_acva = FrozenMediansFromSummary(Json{{"benchmark", "violin"}}, "x.json");
  ASSERT_FALSE(not_acva.ok());
  EXPECT_EQ(not_acva.status().where(), "x.json");
  Json summary = {{"benchmark", "acva"}};
  summary["pooled"]["diversity"]["filtered"]["median_split"] = {{"d_img", 0.25}, {"h", 1.0}};
  summary["pooled"]["diversity"]["unfiltered"]["median_split"] = {{"d_img", 0.5}, {"h", nullptr}};
  auto null_h = FrozenMediansFromSummary(summary, "x.json");
  ASSERT_FALSE(null_h.ok());
  EXPECT_EQ(null_h.status().what(), "pooled.diversity.unfiltered.median_split.h is null");
  summary["pooled"]["diversity"]["unfiltered"]["median_split"]["h"] = 2.0;
  auto ok = FrozenMediansFromSummary(summary, "x.json");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->filtered.d_img, 0.25);
  EXPECT_EQ(ok->unfiltered.h, 2.0);
  summary["pooled"].erase("diversity");
  EXPECT_EQ(FrozenMediansFromSummary(summary, "x.json").status().what(), "no pooled.diversity.filtered.median_split");
}

TEST_F(AnalyzeTwoModels, DistinctivenessKeepsEmbeddingAnd2afcApartAndExposesPositionBias) {
  const Json& good_pair = Model(result_.summary, "good")["pairs"][0];
  const Json& poor_pair = Model(result_.summary, "poor")["pairs"][0];
  EXPECT_EQ(good_pair["a"], "a");
  EXPECT_EQ(good_pair["embedding_loo_acc"], 1.0);
  EXPECT_EQ(good_pair["afc_acc"], 1.0);
  EXPECT_EQ(good_pair["afc_first_share"], 0.5);
  EXPECT_EQ(good_pair["afc_trials"], 12);
  // Always answering the first word: right in exactly one of the two orders.
  EXPECT_EQ(poor_pair["afc_acc"], 0.5);
  EXPECT_EQ(poor_pair["afc_first_share"], 1.0);
  // Identical images within each concept, different concepts on different axes: still separable.
  EXPECT_EQ(poor_pair["embedding_loo_acc"], 1.0);
}

TEST_F(AnalyzeTwoModels, TiersSeparateAConsistentlyBetterModel) {
  const Json& tiers = result_.summary["tiers"];
  ASSERT_EQ(tiers.size(), 2u);
  EXPECT_EQ(tiers[0]["models"], Json::array({"good"}));
  EXPECT_EQ(tiers[1]["models"], Json::array({"poor"}));
  const Json& cmp = result_.summary["comparisons"][0];
  EXPECT_EQ(cmp["difference"], 1.0);
  EXPECT_EQ(cmp["p_value"], 0.0);
}

TEST_F(AnalyzeTwoModels, CorrelationsReportRhoOrWhyNot) {
  const Json& c = result_.summary["correlations"];
  // Every concept has mean adequacy 0.5 over both models: constant, so rho is undefined.
  EXPECT_TRUE(c["adequacy_vs_imageability"]["rho"].is_null());
  EXPECT_NE(c["adequacy_vs_imageability"]["error"].get<std::string>().find("constant"), std::string::npos);
  // Over the 6 groups, good (adequacy 1) has higher D_img and H than poor (adequacy 0).
  EXPECT_GT(c["adequacy_vs_d_img"]["rho"].get<double>(), 0.8);
  EXPECT_GT(c["adequacy_vs_h"]["rho"].get<double>(), 0.8);
  // Ratings are all 0 or all 1, so equal and custom weights agree perfectly.
  EXPECT_EQ(c["equal_vs_custom_weights_images"]["rho"], 1.0);
}

TEST_F(AnalyzeTwoModels, PooledTotalsOverEveryModel) {
  const Json& p = result_.summary["pooled"];
  // good: 9 passing images (adequacy 1); poor: 9 valid failing ones (adequacy 0), the invalid one left out.
  EXPECT_EQ(p["n_images"], 18);
  EXPECT_EQ(p["pass_rate"], 0.5);
  EXPECT_EQ(p["adequacy_mean"], 0.5);
  EXPECT_EQ(p["by_category"]["moral"]["n_images"], 12);
  EXPECT_EQ(p["by_category"]["emotion"]["pass_rate"], 0.5);
  // Unfiltered: 3 good groups (D_img 0.09/1.09, H log2 3) and 3 poor groups (0, 0); pooled medians lie between,
  // so good is genuine, poor low and no group is on a median.
  const Json& u = p["diversity"]["unfiltered"];
  EXPECT_EQ(u["n_groups"], 6);
  EXPECT_EQ(u["quadrants"], Json({{"genuine", 0.5}, {"pseudo", 0.0}, {"metaphor", 0.0}, {"low", 0.5}}));
  EXPECT_EQ(u["on_median"], Json({{"d_img", 0.0}, {"h", 0.0}}));
  // Filtered: only good's 3 identical groups, all on both medians.
  EXPECT_EQ(p["diversity"]["filtered"]["on_median"], Json({{"d_img", 1.0}, {"h", 1.0}}));
  // 2AFC: good 1, poor 0.5 (always the first word: right in one order of each pair of trials).
  EXPECT_EQ(p["afc"]["n_cells"], 2);
  EXPECT_EQ(p["afc"]["afc_acc_mean"], 0.75);
  EXPECT_EQ(p["pairs"][0], Json({{"a", "a"}, {"b", "b"}, {"n_models", 2}, {"afc_acc_mean", 0.75}}));
}

TEST_F(AnalyzeTwoModels, CorrelationsPerCategoryAndOverModelMeansNeedThreePoints) {
  const Json& c = result_.summary["correlations"];
  EXPECT_EQ(c["adequacy_vs_imageability_moral"]["n"], 2);  // concepts a and b
  EXPECT_TRUE(c["adequacy_vs_imageability_moral"]["rho"].is_null());
  EXPECT_EQ(c["adequacy_vs_imageability_emotion"]["n"], 1);
  EXPECT_FALSE(c.contains("adequacy_vs_imageability_social"));  // no rated concept in the category
  for (const char* name : {"models_adequacy_vs_d_img", "models_adequacy_vs_h", "models_adequacy_vs_afc"}) {
    EXPECT_EQ(c[name]["n"], 2) << name;
    EXPECT_TRUE(c[name]["rho"].is_null()) << name;
  }
}

TEST(Analyze, EqualVersusSetWeightsMeanChangeAndModelOrder) {
  // One image each on concept c (weights q1 = 2, q2 = 1): x rates (1, 0), y (0, 1), z (0.5, 0.5). Set weights:
  // x 2/3, y 1/3, z 1/2 (order x, z, y); equal weights: all 1/2 (order by name x, y, z).
  const ConceptSet set = ThreeConcepts();
  std::vector<JudgedImage> images = {Image("x", "c", 0, 1, 0), Image("y", "c", 0, 0, 1), Image("z", "c", 0, 0.5, 0.5)};
  AnalysisOptions options;
  options.bootstrap.resamples = 100;
  auto r = Analyze(set, images, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Json& w = r->summary["weights_comparison"];
  EXPECT_EQ(w["n_images"], 3);
  EXPECT_NEAR(w["mean_change"].get<double>(), 0.0, 1e-15);  // +1/6, -1/6, 0
  EXPECT_NEAR(w["mean_abs_change"].get<double>(), 1.0 / 9, 1e-15);
  EXPECT_FALSE(w["same_order"].get<bool>());
  EXPECT_EQ(w["models_rank"]["n"], 3);
  EXPECT_TRUE(w["models_rank"]["rho"].is_null());  // equal-weight means are constant
}

TEST_F(AnalyzeTwoModels, ItemsCarryEverythingAskedAndAnswered) {
  ASSERT_EQ(result_.items.size(), 19u);
  const Json& first = result_.items[0];
  EXPECT_EQ(first["image_id"], "good/a/0");
  EXPECT_EQ(first["adequacy"], 1.0);
  EXPECT_EQ(first["pass"], true);
  EXPECT_EQ(first["ratings"][0]["evidence"], "seen");
  EXPECT_EQ(first["afc"].size(), 2u);
  EXPECT_EQ(first["afc"][0]["correct"], true);
  const Json& broken = result_.items.back();
  EXPECT_TRUE(broken["adequacy"].is_null());
  EXPECT_TRUE(broken["pass"].is_null());
  EXPECT_EQ(broken["ratings"][1]["error"], "unparseable reply");
}

TEST_F(AnalyzeTwoModels, BootstrapIsDeterministic) {
  auto again = Analyze(set_, TwoModels(set_), options_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->summary.dump(), result_.summary.dump());
}

std::vector<JudgedImage> ModelsWithPasses(const ConceptSet& set,
                                          const std::vector<std::pair<std::string, int>>& models) {
  std::vector<JudgedImage> images;
  for (const auto& [name, passes] : models)
    for (size_t c = 0; c < set.concepts.size(); ++c)
      for (int k = 0; k < 3; ++k) {
        const double r = static_cast<int>(c) * 3 + k < passes ? 1.0 : 0.0;
        images.push_back(Image(name, set.concepts[c].id, k, r, r));
      }
  return images;
}

TEST(Analyze, ModelsAreListedByTierThenPassRateThenName) {
  // top 9/9 and near 8/9 are not significantly apart (near misses one image of one concept);
  // also_low and low pass nothing. The input order is scrambled on purpose.
  const ConceptSet set = ThreeConcepts();
  AnalysisOptions options;
  options.bootstrap.resamples = 200;
  auto r = Analyze(set, ModelsWithPasses(set, {{"low", 0}, {"near", 8}, {"also_low", 0}, {"top", 9}}), options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Json& s = r->summary;
  EXPECT_EQ(s["tiers"], Json::parse(R"([{"tier": 1, "models": ["top", "near"]},
                                         {"tier": 2, "models": ["also_low", "low"]}])"));
  std::vector<std::pair<int, std::string>> listed;
  for (const Json& m : s["models"]) listed.push_back({m["tier"].get<int>(), m["model"].get<std::string>()});
  EXPECT_EQ(listed, (std::vector<std::pair<int, std::string>>{{1, "top"}, {1, "near"}, {2, "also_low"}, {2, "low"}}));
  // summary.csv and summary.md follow the same order.
  const std::string csv = SummaryCsv(s);
  EXPECT_LT(csv.find("\ntop,1,"), csv.find("\nnear,1,"));
  EXPECT_LT(csv.find("\nnear,1,"), csv.find("\nalso_low,2,"));
  EXPECT_LT(csv.find("\nalso_low,2,"), csv.find("\nlow,2,"));
  const std::string md = SummaryMarkdown(s);
  EXPECT_LT(md.find("| 1 | near |"), md.find("| 2 | also_low |"));
  // Another input order gives the same summary.
  auto reversed = Analyze(set, ModelsWithPasses(set, {{"top", 9}, {"also_low", 0}, {"near", 8}, {"low", 0}}), options);
  ASSERT_TRUE(reversed.ok());
  EXPECT_EQ(reversed->summary.dump(), s.dump());
}

TEST(Analyze, RejectsImagesThatDoNotMatchTheConceptSet) {
  const ConceptSet set = ThreeConcepts();
  JudgedImage unknown = Image("m", "zzz", 0, 1, 1);
  auto r = Analyze(set, {unknown}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().where(), "m/zzz/0");
  JudgedImage short_answers = Image("m", "a", 0, 1, 1);
  short_answers.answers.pop_back();
  EXPECT_FALSE(Analyze(set, {short_answers}, {}).ok());
}

TEST(Analyze, RefusesASetWhosePairsNameConceptsItDoesNotHave) {
  // SelectConcepts keeps every pair: the first concept alone leaves pair (a, b) without b.
  const ConceptSet first = SelectConcepts(ThreeConcepts(), {}, 1);
  auto r = Analyze(first, {Image("m", "a", 0, 1, 1)}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().what(), "pair (a, b) names concept \"b\"");
}

}  // namespace
}  // namespace visalign::acva
