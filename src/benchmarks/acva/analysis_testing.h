// The fixtures of the ACVA analysis tests (analysis_test.cc: the metrics; analysis_outputs_test.cc:
// summary.csv, summary.md and the warnings): a three-concept set and two models built so that every
// metric has a known value ("good" passes, varies and picks right; "poor" fails, repeats itself and
// picks the first word).
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "visalign/benchmarks/acva/acva.h"

namespace visalign::acva::fixtures {

inline Concept MakeConcept(const std::string& id, Category category, double imageability) {
  Concept c;
  c.id = id;
  c.word = id;
  c.gloss_en = id;
  c.category = category;
  c.ratings["imageability"] = imageability;
  c.rubric = {{"q1", "", "", 2.0, Framework::kComponential}, {"q2", "", "", 1.0, Framework::kImageSchema}};
  return c;
}

inline ConceptSet ThreeConcepts() {
  ConceptSet set;
  set.concepts = {MakeConcept("a", Category::kMoral, 2), MakeConcept("b", Category::kMoral, 4),
                  MakeConcept("c", Category::kEmotion, 6)};
  set.pairs = {{"a", "b", ""}};
  set.fingerprint = "test";
  return set;
}

// Unit vector along axis `axis` of a 6-dimensional space, slightly tilted toward axis `tilt`.
inline Embedding Axis(int axis, int tilt = -1, float amount = 0.f) {
  Embedding e(6, 0.f);
  e[axis] = 1.f;
  if (tilt >= 0) e[tilt] += amount;
  return e;
}

inline JudgedImage Image(const std::string& model, const std::string& concept_id, int k, double r1, double r2) {
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
inline std::vector<JudgedImage> TwoModels(const ConceptSet& set) {
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

inline const Json& Model(const Json& summary, const std::string& name) {
  for (const Json& m : summary["models"])
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

}  // namespace visalign::acva::fixtures
