// The fixture of the ACVA end-to-end tests (acva_pipeline_test.cc: generate, judge, analyze, run;
// acva_judge_test.cc: the judge's cache, retries and failures): four concepts, three runs generated
// once per program by the reference server over real HTTP on 127.0.0.1, whose first pixels say how
// its judge answers, and the tiny CLIP fixture.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <signal.h>

#include "testing/cli_runner.h"
#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/store.h"

namespace visalign::acva_testing {

using visalign::testing::RunVisalign;

// Four concepts with two rubric questions each; one near-synonym pair (oath/promise).
inline constexpr const char* kConcepts =
    R"({"id": "oath", "word": "誓言", "gloss_en": "oath", "category": "communication", "rubric": [{"id": "speaker", "text_zh": "是否有作出承诺的主体？", "text_en": "Is there a party who commits?", "weight": 2, "framework": "componential"}, {"id": "solemn", "text_zh": "是否庄严？", "text_en": "Is it solemn?", "weight": 1, "framework": "frame"}]}
{"id": "promise", "word": "诺言", "gloss_en": "promise", "category": "communication", "rubric": [{"id": "two_parties", "text_zh": "是否有双方？", "text_en": "Are there two parties?", "weight": 1, "framework": "componential"}, {"id": "trust", "text_zh": "是否有信任？", "text_en": "Is trust shown?", "weight": 1, "framework": "frame"}]}
{"id": "hope", "word": "希望", "gloss_en": "hope", "category": "emotion", "rubric": [{"id": "future", "text_zh": "是否有期待的结果？", "text_en": "Is a desired outcome shown?", "weight": 1, "framework": "frame"}, {"id": "path", "text_zh": "是否有朝向远处的结构？", "text_en": "Is there a path toward a goal?", "weight": 1, "framework": "image-schema"}]}
{"id": "truth", "word": "真理", "gloss_en": "truth", "category": "epistemic", "rubric": [{"id": "reveal", "text_zh": "是否有揭示？", "text_en": "Is something revealed?", "weight": 1, "framework": "image-schema"}, {"id": "general", "text_zh": "是否普遍？", "text_en": "Is it general?", "weight": 1, "framework": "frame"}]}
)";
inline constexpr const char* kPairs = R"({"a": "oath", "b": "promise"})";
inline constexpr size_t kConceptCount = 4, kSamples = 3, kModels = 3;
// Per image: 2 rubric questions + 1 metaphor; images of oath/promise add 2 orders of 2AFC.
inline constexpr size_t kQuestionsPerModel = kConceptCount * kSamples * 3 + 2 * kSamples * 2;
// mono draws one image per concept for all its samples: byte-identical images share every question.
inline constexpr size_t kDistinctQuestionsOfMono = kQuestionsPerModel / kSamples;

inline std::string ClipFixture() { return (testing::SharedDir() / "fixtures" / "clip-tiny").string(); }

class AcvaPipeline : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    std::ofstream(*dir_ / "concepts.jsonl") << kConcepts;
    std::ofstream(*dir_ / "pairs.jsonl") << kPairs;
    auto server = acva::ReferenceServer::Start({});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = server->release();
    for (const char* model : {"varied", "mono", "mixed"}) {
      auto r = RunVisalign(Args({"acva", "generate", "--run", model, "--endpoint", server_->url(), "--model", model,
                                 "--seed", "0", "--param", "seed={seed}", "--samples", "3"}));
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    ASSERT_EQ(server_->image_requests(), kConceptCount * kSamples * kModels);
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
  }

  static std::vector<std::string> Args(std::vector<std::string> args) {
    for (const std::string& extra :
         std::vector<std::string>{"--store", (*dir_ / "store").string(), "--concepts",
                                  (*dir_ / "concepts.jsonl").string(), "--pairs", (*dir_ / "pairs.jsonl").string()})
      args.push_back(extra);
    return args;
  }

  static std::vector<std::string> Judge(const std::string& judge_model, std::vector<std::string> runs,
                                        std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--json",       "acva",          "judge",    "--judge-endpoint",
                                     server_->url(), "--judge-model", judge_model};
    for (const std::string& r : runs) args.insert(args.end(), {"--run", r});
    args.insert(args.end(), extra.begin(), extra.end());
    return Args(args);
  }

  static Json Analyze(const std::string& judge_model, std::vector<std::string> runs, const std::string& out,
                      std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--json",
                                     "acva",
                                     "analyze",
                                     "--judge-model",
                                     judge_model,
                                     "--clip-model",
                                     ClipFixture(),
                                     "--cluster-threshold",
                                     "0.000001",
                                     "--bootstrap",
                                     "300",
                                     "--out",
                                     (*dir_ / out).string()};
    for (const std::string& r : runs) args.insert(args.end(), {"--run", r});
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = RunVisalign(Args(args));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return Json::parse(r.out, nullptr, false);
  }

  static const Json& Model(const Json& summary, const std::string& name) {
    for (const Json& m : summary["models"])
      if (m["model"] == name) return m;
    throw std::runtime_error("no model " + name);
  }

  static inline testing::TempDir* dir_ = nullptr;
  static inline acva::ReferenceServer* server_ = nullptr;
};

}  // namespace visalign::acva_testing
