#include <gtest/gtest.h>

#include <cmath>

#include "visalign/acva.h"

namespace visalign::acva {
namespace {

using nlohmann::json;

Concept MakeConcept(const std::string& id, Category category, double imageability) {
  Concept c;
  c.id = id;
  c.word = id;
  c.gloss_en = id;
  c.category = category;
  c.ratings["imageability"] = imageability;
  c.rubric = {{"q1", "", "", 2.0, Framework::kComponential}, {"q2", "", "", 1.0, Framework::kImageSchema}};
  return c;
}

ConceptSet ThreeConcepts() {
  ConceptSet set;
  set.concepts = {MakeConcept("a", Category::kMoral, 2), MakeConcept("b", Category::kMoral, 4),
                  MakeConcept("c", Category::kEmotion, 6)};
  set.pairs = {{"a", "b", ""}};
  set.fingerprint = "test";
  return set;
}

// Unit vector along axis `axis` of a 6-dimensional space, slightly tilted toward axis `tilt`.
Embedding Axis(int axis, int tilt = -1, float amount = 0.f) {
  Embedding e(6, 0.f);
  e[axis] = 1.f;
  if (tilt >= 0) e[tilt] += amount;
  return e;
}

JudgedImage Image(const std::string& model, const std::string& concept_id, int k, double r1, double r2) {
  JudgedImage im;
  im.model = model;
  im.concept_id = concept_id;
  im.k = k;
  im.sha256 = model + concept_id + std::to_string(k);
  im.answers = {{"q1", r1, "seen", ""}, {"q2", r2, "seen", ""}};
  return im;
}

// "good": every image passes (ratings 1), its three images per concept differ (tilted toward three
// different axes) and use three different metaphors; it always picks the right word in 2AFC.
// "poor": every image fails (ratings 0), its three images per concept are identical with one metaphor;
// it always picks the first word. One extra "poor" image has an invalid answer.
std::vector<JudgedImage> TwoModels(const ConceptSet& set) {
  std::vector<JudgedImage> images;
  for (size_t c = 0; c < set.concepts.size(); ++c) {
    const std::string& id = set.concepts[c].id;
    for (int k = 0; k < 3; ++k) {
      JudgedImage good = Image("good", id, k, 1.0, 1.0);
      good.image_embedding = Axis(static_cast<int>(c), 3 + k, 0.3f);
      good.metaphor = "metaphor " + std::to_string(k);
      good.metaphor_embedding = Axis(3 + k);
      JudgedImage poor = Image("poor", id, k, 0.0, 0.0);
      poor.image_embedding = Axis(static_cast<int>(c));
      poor.metaphor = "same metaphor";
      poor.metaphor_embedding = Axis(0);
      if (id == "a" || id == "b") {
        for (const auto& [first, second] : {std::pair{"a", "b"}, std::pair{"b", "a"}}) {
          good.afc.push_back({"a", "b", first, second, id, ""});
          poor.afc.push_back({"a", "b", first, second, std::string(first), ""});
        }
      }
      images.push_back(good);
      images.push_back(poor);
    }
  }
  JudgedImage broken = Image("poor", "c", 3, 0.0, 0.0);
  broken.answers[1] = {"q2", std::nullopt, "", "unparseable reply"};
  images.push_back(broken);
  return images;
}

const json& Model(const json& summary, const std::string& name) {
  for (const json& m : summary["models"])
    if (m["model"] == name) return m;
  throw std::runtime_error("no model " + name);
}

class AnalyzeTwoModels : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.cluster_threshold = 0.1;
    options_.bootstrap.resamples = 200;
    auto r = Analyze(set_, TwoModels(set_), options_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    result_ = *r;
  }
  ConceptSet set_ = ThreeConcepts();
  AnalysisOptions options_;
  AnalysisResult result_;
};

TEST_F(AnalyzeTwoModels, AdequacyPassRatesAndInvalidCounts) {
  const json& good = Model(result_.summary, "good");
  const json& poor = Model(result_.summary, "poor");
  EXPECT_EQ(good["n_images"], 9);
  EXPECT_EQ(good["pass_rate"], 1.0);
  EXPECT_EQ(good["pass_rate_ci"], json::array({1.0, 1.0}));
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
  const json& good = Model(result_.summary, "good")["diversity"];
  const json& poor = Model(result_.summary, "poor")["diversity"];
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
  EXPECT_EQ(good["unfiltered"]["quadrants"]["genuine"], 1.0);
  EXPECT_EQ(poor["unfiltered"]["quadrants"]["low"], 1.0);
  EXPECT_EQ(poor["unfiltered"]["quadrants"]["pseudo"], 0.0);
}

TEST_F(AnalyzeTwoModels, DistinctivenessKeepsEmbeddingAnd2afcApartAndExposesPositionBias) {
  const json& good_pair = Model(result_.summary, "good")["pairs"][0];
  const json& poor_pair = Model(result_.summary, "poor")["pairs"][0];
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
  const json& tiers = result_.summary["tiers"];
  ASSERT_EQ(tiers.size(), 2u);
  EXPECT_EQ(tiers[0]["models"], json::array({"good"}));
  EXPECT_EQ(tiers[1]["models"], json::array({"poor"}));
  const json& cmp = result_.summary["comparisons"][0];
  EXPECT_EQ(cmp["difference"], 1.0);
  EXPECT_EQ(cmp["p_value"], 0.0);
}

TEST_F(AnalyzeTwoModels, CorrelationsReportRhoOrWhyNot) {
  const json& c = result_.summary["correlations"];
  // Every concept has mean adequacy 0.5 over both models: constant, so rho is undefined.
  EXPECT_TRUE(c["adequacy_vs_imageability"]["rho"].is_null());
  EXPECT_NE(c["adequacy_vs_imageability"]["error"].get<std::string>().find("constant"), std::string::npos);
  // Over the 6 groups, good (adequacy 1) has higher D_img and H than poor (adequacy 0).
  EXPECT_GT(c["adequacy_vs_d_img"]["rho"].get<double>(), 0.8);
  EXPECT_GT(c["adequacy_vs_h"]["rho"].get<double>(), 0.8);
  // Ratings are all 0 or all 1, so equal and custom weights agree perfectly.
  EXPECT_EQ(c["equal_vs_custom_weights_images"]["rho"], 1.0);
}

TEST_F(AnalyzeTwoModels, ItemsCarryEverythingAskedAndAnswered) {
  ASSERT_EQ(result_.items.size(), 19u);
  const json& first = result_.items[0];
  EXPECT_EQ(first["image_id"], "good/a/0");
  EXPECT_EQ(first["adequacy"], 1.0);
  EXPECT_EQ(first["pass"], true);
  EXPECT_EQ(first["ratings"][0]["evidence"], "seen");
  EXPECT_EQ(first["afc"].size(), 2u);
  EXPECT_EQ(first["afc"][0]["correct"], true);
  const json& broken = result_.items.back();
  EXPECT_TRUE(broken["adequacy"].is_null());
  EXPECT_TRUE(broken["pass"].is_null());
  EXPECT_EQ(broken["ratings"][1]["error"], "unparseable reply");
}

TEST_F(AnalyzeTwoModels, BootstrapIsDeterministic) {
  auto again = Analyze(set_, TwoModels(set_), options_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->summary.dump(), result_.summary.dump());
}

TEST_F(AnalyzeTwoModels, SummaryTablesNameEveryModel) {
  const std::string csv = SummaryCsv(result_.summary);
  EXPECT_EQ(csv.rfind("model,tier,n_images", 0), 0u);
  EXPECT_NE(csv.find("\ngood,1,9,0,1.000,1.000,1.000,1.000,"), std::string::npos) << csv;
  const std::string md = SummaryMarkdown(result_.summary);
  EXPECT_NE(md.find("| 2 | poor | 10 | 1 | 0.000 |"), std::string::npos) << md;
}

TEST_F(AnalyzeTwoModels, SummaryWarnsOnlyWhenTheClipModelHasRandomWeights) {
  const std::string label = "RANDOM (visalign clip random-model, arch tiny, seed 0): its numbers mean nothing";
  EXPECT_EQ(SummaryMarkdown(result_.summary).find("RANDOM"), std::string::npos);
  json summary = result_.summary;
  summary["embeddings"] = {{"random_weights", nullptr}};
  EXPECT_EQ(SummaryMarkdown(summary).find("RANDOM"), std::string::npos);
  summary["embeddings"]["random_weights"] = {{"arch", "tiny"}, {"seed", 0}, {"label", label}};
  EXPECT_NE(SummaryMarkdown(summary).find("**Warning: the CLIP model's weights are " + label + ".**"), std::string::npos);
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

}  // namespace
}  // namespace visalign::acva
