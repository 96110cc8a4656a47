// ACVA-Bench end to end over real HTTP on 127.0.0.1: the reference server generates images whose
// first pixels say how a judge should answer, the same server judges them, the tiny CLIP fixture
// embeds them; every expected score, cluster, accuracy and position bias is known in advance.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <signal.h>

#include <nlohmann/json.hpp>

#include "testing/cli_runner.h"
#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/store.h"

namespace visalign {
namespace {

using nlohmann::json;
using testing::RunVisalign;

// Four concepts with two rubric questions each; one near-synonym pair (oath/promise).
constexpr const char* kConcepts = R"({"id": "oath", "word": "誓言", "gloss_en": "oath", "category": "communication", "rubric": [{"id": "speaker", "text_zh": "是否有作出承诺的主体？", "text_en": "Is there a party who commits?", "weight": 2, "framework": "componential"}, {"id": "solemn", "text_zh": "是否庄严？", "text_en": "Is it solemn?", "weight": 1, "framework": "frame"}]}
{"id": "promise", "word": "诺言", "gloss_en": "promise", "category": "communication", "rubric": [{"id": "two_parties", "text_zh": "是否有双方？", "text_en": "Are there two parties?", "weight": 1, "framework": "componential"}, {"id": "trust", "text_zh": "是否有信任？", "text_en": "Is trust shown?", "weight": 1, "framework": "frame"}]}
{"id": "hope", "word": "希望", "gloss_en": "hope", "category": "emotion", "rubric": [{"id": "future", "text_zh": "是否有期待的结果？", "text_en": "Is a desired outcome shown?", "weight": 1, "framework": "frame"}, {"id": "path", "text_zh": "是否有朝向远处的结构？", "text_en": "Is there a path toward a goal?", "weight": 1, "framework": "image-schema"}]}
{"id": "truth", "word": "真理", "gloss_en": "truth", "category": "epistemic", "rubric": [{"id": "reveal", "text_zh": "是否有揭示？", "text_en": "Is something revealed?", "weight": 1, "framework": "image-schema"}, {"id": "general", "text_zh": "是否普遍？", "text_en": "Is it general?", "weight": 1, "framework": "frame"}]}
)";
constexpr const char* kPairs = R"({"a": "oath", "b": "promise"})";
constexpr size_t kConceptCount = 4, kSamples = 3, kModels = 3;
// Per image: 2 rubric questions + 1 metaphor; images of oath/promise add 2 orders of 2AFC.
constexpr size_t kQuestionsPerModel = kConceptCount * kSamples * 3 + 2 * kSamples * 2;
// mono draws one image per concept for all its samples: byte-identical images share every question.
constexpr size_t kDistinctQuestionsOfMono = kQuestionsPerModel / kSamples;

std::string ClipFixture() { return (testing::SharedDir() / "fixtures" / "clip-tiny").string(); }

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
    for (const std::string& extra : std::vector<std::string>{"--store", (*dir_ / "store").string(), "--concepts", (*dir_ / "concepts.jsonl").string(),
                              "--pairs", (*dir_ / "pairs.jsonl").string()})
      args.push_back(extra);
    return args;
  }

  static std::vector<std::string> Judge(const std::string& judge_model, std::vector<std::string> runs,
                                        std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--json", "acva", "judge", "--judge-endpoint", server_->url(), "--judge-model",
                                     judge_model};
    for (const std::string& r : runs) args.insert(args.end(), {"--run", r});
    args.insert(args.end(), extra.begin(), extra.end());
    return Args(args);
  }

  static json Analyze(const std::string& judge_model, std::vector<std::string> runs, const std::string& out,
                      std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--json", "acva", "analyze", "--judge-model", judge_model, "--clip-model",
                                     ClipFixture(), "--cluster-threshold", "0.000001", "--bootstrap", "300",
                                     "--out", (*dir_ / out).string()};
    for (const std::string& r : runs) args.insert(args.end(), {"--run", r});
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = RunVisalign(Args(args));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false);
  }

  static const json& Model(const json& summary, const std::string& name) {
    for (const json& m : summary["models"])
      if (m["model"] == name) return m;
    throw std::runtime_error("no model " + name);
  }

  static testing::TempDir* dir_;
  static acva::ReferenceServer* server_;
};

testing::TempDir* AcvaPipeline::dir_ = nullptr;
acva::ReferenceServer* AcvaPipeline::server_ = nullptr;

TEST_F(AcvaPipeline, FullRunGivesTheScoresClustersAndAccuraciesTheImagesEncode) {
  const size_t before = server_->chat_requests();
  auto judged = RunVisalign(Judge("ref", {"varied", "mono", "mixed"}));
  ASSERT_EQ(judged.exit_code, 0) << judged.err;
  EXPECT_EQ(server_->chat_requests() - before, 2 * kQuestionsPerModel + kDistinctQuestionsOfMono);

  const json s = Analyze("ref", {"varied", "mono", "mixed"}, "full");
  ASSERT_FALSE(s.is_discarded());
  const json& varied = Model(s, "varied");
  const json& mono = Model(s, "mono");
  const json& mixed = Model(s, "mixed");
  // Adequacy: varied rates 1 everywhere; mono 0.25; mixed 0.75 on seeds 0 and 2, 0.25 on seed 1.
  EXPECT_EQ(varied["n_images"], kConceptCount * kSamples);
  EXPECT_EQ(varied["pass_rate"], 1.0);
  EXPECT_EQ(mono["pass_rate"], 0.0);
  EXPECT_EQ(mono["adequacy_mean"], 0.25);
  EXPECT_NEAR(mixed["pass_rate"].get<double>(), 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(mixed["adequacy_mean"].get<double>(), (0.75 + 0.25 + 0.75) / 3.0, 1e-12);
  EXPECT_EQ(mixed["pass_rate_ci"], json::array({2.0 / 3.0, 2.0 / 3.0}));  // the same in every concept
  EXPECT_EQ(varied["by_category"]["emotion"]["pass_rate"], 1.0);
  // Diversity: mono repeats one image and one metaphor; varied/mixed draw three variants, three metaphors.
  EXPECT_EQ(mono["diversity"]["unfiltered"]["d_img_mean"], 0.0);
  EXPECT_EQ(mono["diversity"]["unfiltered"]["h_mean"], 0.0);
  EXPECT_EQ(mono["diversity"]["filtered"]["n_groups"], 0);
  EXPECT_NEAR(varied["diversity"]["unfiltered"]["h_mean"].get<double>(), std::log2(3.0), 1e-12);
  EXPECT_GT(varied["diversity"]["unfiltered"]["d_img_mean"].get<double>(), 0.0);
  // mixed: two passing images per concept (variants 0 and 2), two metaphors -> H = 1 bit.
  EXPECT_EQ(mixed["diversity"]["filtered"]["n_groups"], kConceptCount);
  EXPECT_NEAR(mixed["diversity"]["filtered"]["h_mean"].get<double>(), 1.0, 1e-12);
  // Distinctiveness: the judge reads the prompt hash and answers right, except for mono's "first" bias.
  const json& vp = varied["pairs"][0];
  EXPECT_EQ(vp["afc_acc"], 1.0);
  EXPECT_EQ(vp["afc_first_share"], 0.5);
  EXPECT_EQ(vp["afc_trials"], 2 * kSamples * 2);
  const json& mp = mono["pairs"][0];
  EXPECT_EQ(mp["afc_acc"], 0.5);
  EXPECT_EQ(mp["afc_first_share"], 1.0);
  EXPECT_EQ(mp["embedding_loo_acc"], 1.0);  // identical images per concept, different per concept
  // Tiers: varied > mixed > mono in every concept; models are listed in that order.
  ASSERT_EQ(s["tiers"].size(), 3u);
  EXPECT_EQ(s["tiers"][0]["models"], json::array({"varied"}));
  EXPECT_EQ(s["tiers"][2]["models"], json::array({"mono"}));
  std::vector<std::string> listed;
  for (const json& m : s["models"]) listed.push_back(m["model"]);
  EXPECT_EQ(listed, (std::vector<std::string>{"varied", "mixed", "mono"}));
  // Outputs.
  for (const char* f : {"summary.json", "summary.csv", "summary.md", "items.jsonl"})
    EXPECT_TRUE(std::filesystem::exists(*dir_ / "full" / f)) << f;
  auto items = acva::ReadItems(*dir_ / "full" / "items.jsonl");
  ASSERT_TRUE(items.ok());
  EXPECT_EQ(items->size(), kModels * kConceptCount * kSamples);
  EXPECT_EQ(items->front()["ratings"].size(), 2u);
  EXPECT_FALSE(items->front()["metaphor"].is_null());
}

TEST_F(AcvaPipeline, ByteIdenticalImagesAreAskedOnceWithinOneJudgeCommand) {
  // The store holds 12 mono images with 4 distinct SHA-256s.
  auto store = store::OpenStore(*dir_ / "store");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto done = (*store)->DoneImages("mono");
  ASSERT_TRUE(done.ok());
  std::set<std::string> shas;
  for (const store::DoneImage& d : *done) shas.insert(d.sha256);
  EXPECT_EQ(done->size(), kConceptCount * kSamples);
  EXPECT_EQ(shas.size(), kConceptCount);

  const size_t before = server_->chat_requests();
  auto r = RunVisalign(Judge("dedup", {"mono"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(server_->chat_requests() - before, kDistinctQuestionsOfMono);
  const json stats = json::parse(r.out);
  EXPECT_EQ(stats["questions"], kQuestionsPerModel);
  EXPECT_EQ(stats["distinct"], kDistinctQuestionsOfMono);
  EXPECT_EQ(stats["asked"], kDistinctQuestionsOfMono);
  EXPECT_EQ(stats["requests"], kDistinctQuestionsOfMono);
  // Every image got the shared answers.
  const json s = Analyze("dedup", {"mono"}, "dedup");
  EXPECT_EQ(Model(s, "mono")["n_images"], kConceptCount * kSamples);
  EXPECT_EQ(Model(s, "mono")["n_invalid"], 0);
  EXPECT_EQ(Model(s, "mono")["adequacy_mean"], 0.25);
}

TEST_F(AcvaPipeline, QuadrantsSplitAtPooledMediansByDefaultFrozenOnRequestOrPerModel) {
  ASSERT_EQ(RunVisalign(Judge("quadrants", {"varied", "mono"})).exit_code, 0);
  // Default (ACVA §5.2): the medians of both models' groups; varied is above them, mono below.
  const json both = Analyze("quadrants", {"varied", "mono"}, "q-both");
  EXPECT_EQ(both["options"]["median_scope"], "pooled");
  EXPECT_EQ(both["quadrant_medians"]["scope"], "pooled");
  EXPECT_EQ(Model(both, "varied")["diversity"]["unfiltered"]["quadrants"]["genuine"], 1.0);
  EXPECT_EQ(Model(both, "mono")["diversity"]["unfiltered"]["quadrants"]["low"], 1.0);

  // --thresholds-from freezes those medians: varied analysed alone keeps its two-model shares.
  const std::string earlier = (*dir_ / "q-both" / "summary.json").string();
  const json frozen = Analyze("quadrants", {"varied"}, "q-frozen", {"--thresholds-from", earlier});
  EXPECT_EQ(frozen["options"]["median_scope"], "frozen");
  EXPECT_EQ(frozen["quadrant_medians"]["source"], earlier);
  for (const char* mode : {"filtered", "unfiltered"}) {
    EXPECT_EQ(Model(frozen, "varied")["diversity"][mode]["quadrants"], Model(both, "varied")["diversity"][mode]["quadrants"])
        << mode;
    EXPECT_EQ(frozen["quadrant_medians"][mode], both["quadrant_medians"][mode]) << mode;
  }

  // --quadrant-medians per-model: a model's shares are the same alone or with others.
  const json alone = Analyze("quadrants", {"varied"}, "q-alone", {"--quadrant-medians", "per-model"});
  const json both_own = Analyze("quadrants", {"varied", "mono"}, "q-own", {"--quadrant-medians", "per-model"});
  EXPECT_EQ(both_own["options"]["median_scope"], "model");
  for (const char* mode : {"filtered", "unfiltered"}) {
    const json& a = Model(alone, "varied")["diversity"][mode];
    EXPECT_EQ(a, Model(both_own, "varied")["diversity"][mode]) << mode;
    // H = log2 3 in every concept ties with the median: the H split is even. D_img differs by concept,
    // 2 of the 4 concepts are above the median.
    EXPECT_EQ(a["quadrants"], json({{"genuine", 0.25}, {"pseudo", 0.25}, {"metaphor", 0.25}, {"low", 0.25}}))
        << mode;
  }
}

TEST_F(AcvaPipeline, ThresholdsFromRefusesAFileThatIsNotAnAcvaSummary) {
  ASSERT_EQ(RunVisalign(Judge("quadrants", {"varied"})).exit_code, 0);
  const std::filesystem::path bad = *dir_ / "not-a-summary.json";
  ASSERT_TRUE(WriteFileAtomic(bad, R"({"benchmark": "violin"})").ok());
  auto r = RunVisalign(Args({"acva", "analyze", "--run", "varied", "--judge-model", "quadrants", "--clip-model",
                             ClipFixture(), "--out", (*dir_ / "q-bad").string(), "--thresholds-from", bad.string()}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: not an ACVA summary (" + bad.string() + "): the summary.json of `visalign acva analyze`\n");
  auto both = RunVisalign(Args({"acva", "analyze", "--run", "varied", "--judge-model", "quadrants", "--clip-model",
                                ClipFixture(), "--out", (*dir_ / "q-bad").string(), "--thresholds-from", bad.string(),
                                "--quadrant-medians", "per-model"}));
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--thresholds-from"), std::string::npos) << both.err;
}

// The PE-Core and CoCa fixtures (issue 31) score the same judged run as clip-tiny does.
TEST_F(AcvaPipeline, AnalyzeLoadsThePeCoreAndCocaFixtures) {
  ASSERT_EQ(RunVisalign(Judge("ref", {"varied"})).exit_code, 0);
  for (const std::string fixture : {"pe-core-tiny", "coca-tiny"}) {
    SCOPED_TRACE(fixture);
    auto r = RunVisalign(Args({"--json", "acva", "analyze", "--run", "varied", "--judge-model", "ref", "--clip-model",
                               (testing::SharedDir() / "fixtures" / fixture).string(), "--bootstrap", "50", "--out",
                               (*dir_ / ("towers-" + fixture)).string()}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json s = json::parse(*ReadFile(*dir_ / ("towers-" + fixture) / "summary.json"));
    EXPECT_EQ(s["benchmark"], "acva");
    EXPECT_EQ(s["models"].size(), 1u);
  }
}

TEST_F(AcvaPipeline, SummaryJsonRecordsWhatTheNumbersDependOn) {
  ASSERT_EQ(RunVisalign(Judge("provenance", {"varied"})).exit_code, 0);
  Analyze("provenance", {"varied"}, "provenance");
  const json s = json::parse(*ReadFile(*dir_ / "provenance" / "summary.json"));
  const acva::JudgeSettings settings{.model = "provenance", .language = acva::Language::kEn, .temperature = 0};
  EXPECT_EQ(s["judge"]["model"], "provenance");
  EXPECT_EQ(s["judge"]["language"], "en");
  EXPECT_EQ(s["judge"]["temperature"], 0.0);
  EXPECT_EQ(s["judge"]["prompt_hashes"],
            json({{"rubric", acva::PromptTemplateHash(acva::JudgeTask::kRubric, settings)},
                  {"metaphor", acva::PromptTemplateHash(acva::JudgeTask::kMetaphor, settings)},
                  {"afc", acva::PromptTemplateHash(acva::JudgeTask::kAfc, settings)}}));
  EXPECT_EQ(s["options"]["pass_threshold"], 0.6);
  EXPECT_EQ(s["options"]["cluster_threshold"], 0.000001);
  EXPECT_EQ(s["options"]["median_scope"], "pooled");
  auto clip = clip::LoadClipModel(ClipFixture());
  ASSERT_TRUE(clip.ok()) << clip.status().ToString();
  EXPECT_EQ(s["embeddings"]["clip_fingerprint"], *clip->Fingerprint());
  auto version = RunVisalign({"--version"});
  ASSERT_EQ(version.exit_code, 0);
  EXPECT_EQ("visalign " + s["visalign_version"].get<std::string>() + "\n", version.out);
}

TEST_F(AcvaPipeline, RunGeneratesJudgesAndAnalyzesSeveralRunModelPairs) {
  const size_t images_before = server_->image_requests(), chats_before = server_->chat_requests();
  auto r = RunVisalign(Args({"--json", "acva", "run", "--run", "pair-a", "--model", "varied", "--run", "pair-b",
                             "--model", "mono", "--endpoint", server_->url(), "--seed", "0", "--param",
                             "seed={seed}", "--judge-endpoint", server_->url(), "--judge-model", "pairs",
                             "--clip-model", ClipFixture(), "--bootstrap", "100", "--out",
                             (*dir_ / "pairs").string()}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(server_->image_requests() - images_before, 2 * kConceptCount * kSamples);
  EXPECT_EQ(server_->chat_requests() - chats_before, kQuestionsPerModel + kDistinctQuestionsOfMono);
  const json s = json::parse(r.out);
  EXPECT_EQ(Model(s, "pair-a")["pass_rate"], 1.0);  // generated by model varied
  EXPECT_EQ(Model(s, "pair-b")["pass_rate"], 0.0);  // generated by model mono
  EXPECT_EQ(s["generation"]["pair-b"]["done"], kConceptCount * kSamples);
  // Each run's refusal rate over its finished rows (none refused here), with its Wilson interval.
  EXPECT_EQ(s["generation"]["pair-b"]["refusals"]["refused"], 0);
  EXPECT_EQ(s["generation"]["pair-b"]["refusals"]["finished"], kConceptCount * kSamples);
  EXPECT_EQ(s["generation"]["pair-b"]["refusals"]["rate"], 0.0);
  // The same pairs from a runs file: everything is resumed, nothing is requested again.
  std::ofstream(*dir_ / "runs.jsonl") << R"({"run": "pair-a", "model": "varied"})" << "\n"
                                      << R"({"run": "pair-b", "model": "mono"})" << "\n";
  auto again = RunVisalign(Args({"--json", "acva", "run", "--runs-file", (*dir_ / "runs.jsonl").string(),
                                 "--endpoint", server_->url(), "--seed", "0", "--param", "seed={seed}",
                                 "--judge-endpoint", server_->url(), "--judge-model", "pairs", "--clip-model",
                                 ClipFixture(), "--bootstrap", "100", "--out", (*dir_ / "pairs-file").string()}));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server_->image_requests() - images_before, 2 * kConceptCount * kSamples);
  EXPECT_EQ(server_->chat_requests() - chats_before, kQuestionsPerModel + kDistinctQuestionsOfMono);
  EXPECT_EQ(json::parse(again.out)["models"], s["models"]);
}

// The generation commands share their run-control vocabulary: --filter and --limit select concepts
// as `generate` selects items; unknown keys name the ones there are.
TEST_F(AcvaPipeline, GenerateFiltersAndLimitsConcepts) {
  auto r = RunVisalign(Args({"--json", "acva", "generate", "--run", "subset", "--endpoint", server_->url(), "--model",
                             "varied", "--param", "seed={seed}", "--samples", "2", "--filter",
                             "category=emotion", "--limit", "1", "--backoff", "0.01", "--grace", "1"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["selected"], 2);  // one emotion concept x 2 samples
  auto bad = RunVisalign(Args({"acva", "generate", "--run", "subset2", "--endpoint", server_->url(), "--model",
                               "varied", "--filter", "colour=red"}));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "error: unknown filter key \"colour\" (--filter colour=red): ids, category\n");
}

TEST_F(AcvaPipeline, RunRefusesModelsThatDoNotPairWithRuns) {
  auto r = RunVisalign(Args({"acva", "run", "--run", "x", "--run", "y", "--model", "varied", "--endpoint",
                             server_->url(), "--judge-endpoint", server_->url(), "--judge-model", "pairs",
                             "--clip-model", ClipFixture(), "--out", (*dir_ / "unpaired").string()}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: 1 --model for 2 --run (--model): one --model per --run, paired in order\n");
  std::ofstream(*dir_ / "bad-runs.jsonl") << R"({"run": "x", "modle": "varied"})" << "\n";
  auto bad = RunVisalign(Args({"acva", "run", "--runs-file", (*dir_ / "bad-runs.jsonl").string(), "--endpoint",
                               server_->url(), "--judge-endpoint", server_->url(), "--judge-model", "pairs",
                               "--clip-model", ClipFixture(), "--out", (*dir_ / "unpaired").string()}));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("unknown field \"modle\""), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("bad-runs.jsonl:1"), std::string::npos) << bad.err;
}

TEST_F(AcvaPipeline, SecondJudgeRunIsServedFromTheCacheWithZeroRequests) {
  ASSERT_EQ(RunVisalign(Judge("cache-check", {"varied"})).exit_code, 0);
  const size_t before = server_->chat_requests();
  auto again = RunVisalign(Judge("cache-check", {"varied"}));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server_->chat_requests(), before);
  const json stats = json::parse(again.out);
  EXPECT_EQ(stats["asked"], 0);
  EXPECT_EQ(stats["cached"], kQuestionsPerModel);
  // Another prompt language changes the template hash: everything is asked again.
  auto zh = RunVisalign(Judge("cache-check", {"varied"}, {"--judge-language", "zh"}));
  ASSERT_EQ(zh.exit_code, 0) << zh.err;
  EXPECT_EQ(server_->chat_requests() - before, kQuestionsPerModel);
}

TEST_F(AcvaPipeline, FencedRepliesWithProseAreParsed) {
  auto r = RunVisalign(Judge("ref+fenced", {"varied"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json stats = json::parse(r.out);
  EXPECT_EQ(stats["invalid"], 0);
  EXPECT_EQ(stats["requests"], kQuestionsPerModel);
}

TEST_F(AcvaPipeline, GarbageRepliesAreAskedAgain) {
  auto r = RunVisalign(Judge("ref+garbage-once", {"varied"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json stats = json::parse(r.out);
  EXPECT_EQ(stats["invalid"], 0);
  EXPECT_EQ(stats["requests"], 2 * kQuestionsPerModel);
}

// A judge that refuses everything is not paid for question after question: the first three invalid
// answers stop the command (cached, so nothing is asked twice); asked to go on (0 = never stop),
// every answer is recorded invalid, never scored 0, and an analysis of no valid judgment is an error.
TEST_F(AcvaPipeline, AJudgeThatRefusesEverythingStopsEarlyAndCannotBeAnalyzed) {
  auto stopped = RunVisalign(Judge("ref+refuse", {"mixed"}, {"--judge-reply-attempts", "2", "--judge-concurrency", "1"}));
  EXPECT_EQ(stopped.exit_code, 2) << stopped.out;
  EXPECT_NE(stopped.err.find("error: stopped after the first 3 questions asked got no valid answer; last: no valid "
                             "reply in 2 attempts"),
            std::string::npos)
      << stopped.err;
  EXPECT_NE(stopped.err.find("(judge ref+refuse at " + server_->url() + ")"), std::string::npos) << stopped.err;
  auto r = RunVisalign(Judge("ref+refuse", {"mixed"}, {"--judge-reply-attempts", "2", "--judge-stop-after-invalid", "0"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json stats = json::parse(r.out);
  EXPECT_EQ(stats["invalid"], kQuestionsPerModel);
  EXPECT_EQ(stats["cached"], 3);  // the three of the stopped command
  EXPECT_EQ(stats["requests"], 2 * (kQuestionsPerModel - 3));
  auto analyze = RunVisalign(Args({"acva", "analyze", "--run", "mixed", "--judge-model", "ref+refuse", "--clip-model",
                                   ClipFixture(), "--out", (*dir_ / "refused").string()}));
  EXPECT_EQ(analyze.exit_code, 2);
  EXPECT_EQ(analyze.err.rfind("error: none of the 24 rubric answers of 12 images is valid", 0), 0u) << analyze.err;
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "refused" / "summary.json"));
}

// A mistyped port is reported in seconds, not after every question's retries.
TEST_F(AcvaPipeline, AJudgeEndpointThatCannotBeReachedStopsAtOnce) {
  const auto start = std::chrono::steady_clock::now();
  auto dead = RunVisalign(Args({"acva", "judge", "--run", "varied", "--judge-endpoint", "http://127.0.0.1:1",
                                "--judge-model", "nobody"}));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(dead.exit_code, 2);
  const size_t error = dead.err.find("error: cannot reach the judge: POST http://127.0.0.1:1/v1/chat/completions: ");
  ASSERT_NE(error, std::string::npos) << dead.err;
  EXPECT_EQ(dead.err.find('\n', error), dead.err.size() - 1) << "the last line: " << dead.err;
  EXPECT_NE(dead.err.find("(--judge-endpoint http://127.0.0.1:1): a running OpenAI-compatible server"),
            std::string::npos)
      << dead.err;
  EXPECT_LT(seconds, 20.0);  // the retry policy alone would wait ~15 s per question (1+2+4+8 s backoff)
}

// Ctrl-C: no new question, the requests in flight are awaited and their answers cached (they are
// paid for), then the command ends with code 130; a dry run then counts them as cached.
TEST_F(AcvaPipeline, AnInterruptWaitsForTheQuestionsInFlightAndCachesTheirAnswers) {
  auto slow = acva::ReferenceServer::Start({.port = 0, .slow_ms = 1500});
  ASSERT_TRUE(slow.ok());
  const std::vector<std::string> judge = Args({"acva", "judge", "--run", "varied", "--judge-endpoint", (*slow)->url(),
                                               "--judge-model", "ref+slow", "--judge-concurrency", "4"});
  testing::Child child = testing::StartVisalign(judge, dir_->path(), "interrupted");
  ASSERT_GT(child.pid, 0);
  for (int i = 0; i < 400 && (*slow)->chat_requests() < 4; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ((*slow)->chat_requests(), 4u);
  ::kill(child.pid, SIGINT);
  const testing::RunResult r = testing::Wait(child);
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_EQ((*slow)->chat_requests(), 4u);  // nothing asked after the interrupt
  std::vector<std::string> dry = judge;
  dry.insert(dry.begin(), "--json");
  dry.push_back("--dry-run");
  auto counted = RunVisalign(dry);
  ASSERT_EQ(counted.exit_code, 0) << counted.err;
  const json j = json::parse(counted.out);
  EXPECT_EQ(j["cached"], 4);
  EXPECT_EQ(j["to_ask"], kQuestionsPerModel - 4);
  EXPECT_EQ((*slow)->chat_requests(), 4u);  // a dry run asks nothing
}

TEST_F(AcvaPipeline, RefusedMetaphorsLeaveRatingsIntact) {
  ASSERT_EQ(RunVisalign(Judge("ref+refuse-metaphor", {"varied"}, {"--judge-reply-attempts", "1"})).exit_code, 0);
  const json s = Analyze("ref+refuse-metaphor", {"varied"}, "no-metaphor");
  const json& m = Model(s, "varied");
  EXPECT_EQ(m["pass_rate"], 1.0);
  EXPECT_TRUE(m["diversity"]["unfiltered"]["h_mean"].is_null());
  EXPECT_GT(m["diversity"]["unfiltered"]["d_img_mean"].get<double>(), 0.0);
}

TEST_F(AcvaPipeline, TimeoutsFailClearlyAndAreNotCached) {
  // A server of its own, so the slow handlers do not hold up the other tests' requests.
  auto slow = acva::ReferenceServer::Start({.port = 0, .slow_ms = 400});
  ASSERT_TRUE(slow.ok());
  auto r = RunVisalign(Args({"acva", "judge", "--run", "mono", "--judge-endpoint", (*slow)->url(), "--judge-model",
                             "ref+slow", "--judge-timeout", "0.1", "--judge-max-attempts", "1",
                             "--judge-concurrency", "8"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("judge questions failed"), std::string::npos) << r.err;
  // Nothing was cached: analysis from the cache refuses, naming what is missing.
  auto analyze = RunVisalign(Args({"acva", "analyze", "--run", "mono", "--judge-model", "ref+slow", "--clip-model",
                                   ClipFixture(), "--out", (*dir_ / "slow").string()}));
  EXPECT_EQ(analyze.exit_code, 2);
  EXPECT_NE(analyze.err.find("not in the cache"), std::string::npos) << analyze.err;
}

// The judge cache is a store other programs can open: an answer record edited or damaged there is
// one error line naming the store and key, checked as a fresh reply is, never an exception.
TEST_F(AcvaPipeline, AnEditedCachedAnswerIsAClearErrorNamingTheStoreAndKey) {
  ASSERT_EQ(RunVisalign(Judge("cache-edit", {"varied"})).exit_code, 0);
  const acva::ConceptSet set = acva::LoadConceptSet(*dir_ / "concepts.jsonl", *dir_ / "pairs.jsonl").value();
  const acva::Concept& oath = set.concepts[*set.IndexOf("oath")];
  const acva::Concept& promise = set.concepts[*set.IndexOf("promise")];
  auto store = store::OpenStore(*dir_ / "store").value();
  const std::vector<store::DoneImage> done = store->DoneImages("varied").value();
  std::string oath_sha;
  for (const store::DoneImage& d : done)
    if (d.item_id == "oath") oath_sha = d.sha256;
  ASSERT_FALSE(oath_sha.empty());
  const acva::JudgeSettings settings{"cache-edit", acva::Language::kEn, 0};
  const std::string rubric_key =
      acva::JudgeCacheKey(oath_sha, acva::RubricQuestionFor(oath, oath.rubric[0], acva::Language::kEn), settings);
  const std::string afc_key = acva::JudgeCacheKey(oath_sha, acva::AfcQuestionFor(oath, promise, acva::Language::kEn), settings);
  std::map<std::string, std::string> original;
  for (const std::string& key : {rubric_key, afc_key}) {
    const Result<std::optional<std::string>> cached = store->CacheGet("acva.judge", key);
    ASSERT_TRUE(cached.ok() && cached->has_value()) << key;
    original[key] = **cached;
  }
  struct Edit {
    std::string key, value, says;
  };
  for (const Edit& edit : std::vector<Edit>{
           {rubric_key, "{\"valid\": tru", "is invalid JSON (syntax error at byte"},
           {rubric_key, "[]", "is not a JSON object: []"},
           {rubric_key, R"({"valid": "yes", "rating": 1})", "without a boolean \"valid\""},
           {rubric_key, R"({"valid": false})", "without a string \"error\""},
           {rubric_key, R"({"valid": true, "rating": "high", "evidence": "x"})", "without a numeric \"rating\""},
           {rubric_key, R"({"valid": true, "rating": 7, "evidence": "x"})", "rating 7 is not one of 0, 0.25"},
           {rubric_key, R"({"valid": true, "rating": 1})", "without a string \"evidence\""},
           {afc_key, R"({"valid": true, "choice": "希望"})", "choice \"希望\" is neither \"誓言\" nor \"诺言\""},
       }) {
    ASSERT_TRUE(store->CachePut("acva.judge", edit.key, edit.value).ok());
    const testing::RunResult r = RunVisalign(Judge("cache-edit", {"varied"}));
    EXPECT_EQ(r.exit_code, 2) << edit.value;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("error: cached judge answer "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(edit.says), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(cache acva.judge, key " + edit.key + ")"), std::string::npos) << r.err;
    ASSERT_TRUE(store->CachePut("acva.judge", edit.key, original[edit.key]).ok());
  }
  // Analysis reads the same records.
  ASSERT_TRUE(store->CachePut("acva.judge", rubric_key, R"({"valid": true})").ok());
  const testing::RunResult analyze = RunVisalign(Args({"acva", "analyze", "--run", "varied", "--judge-model",
                                                       "cache-edit", "--clip-model", ClipFixture(), "--out",
                                                       (*dir_ / "edited").string()}));
  EXPECT_EQ(analyze.exit_code, 2);
  EXPECT_NE(analyze.err.find("cached judge answer"), std::string::npos) << analyze.err;
  ASSERT_TRUE(store->CachePut("acva.judge", rubric_key, original[rubric_key]).ok());
}

TEST_F(AcvaPipeline, RandomClipModelIsLabelledInTheSummary) {
  const std::string model = (*dir_ / "clip-random").string();
  ASSERT_EQ(RunVisalign({"clip", "random-model", "--out", model, "--seed", "3"}).exit_code, 0);
  ASSERT_EQ(RunVisalign(Judge("random-label", {"varied"})).exit_code, 0);
  auto r = RunVisalign(Args({"--json", "acva", "analyze", "--run", "varied", "--judge-model", "random-label",
                             "--clip-model", model, "--out", (*dir_ / "random").string()}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string label = "RANDOM (visalign clip random-model, arch tiny, seed 3): its numbers mean nothing";
  EXPECT_NE(r.err.find("warning: --clip-model " + model + " has weights " + label), std::string::npos) << r.err;
  const json s = json::parse(r.out);
  EXPECT_EQ(s["embeddings"]["random_weights"]["seed"], 3);
  EXPECT_NE(ReadFile(*dir_ / "random" / "summary.md")->find(label), std::string::npos);
}

TEST_F(AcvaPipeline, HumanAgreementAgainstItems) {
  ASSERT_EQ(RunVisalign(Judge("ref", {"mixed"})).exit_code, 0);
  Analyze("ref", {"mixed"}, "agree");
  // Automatic adequacy of mixed: k = 0, 2 -> 0.75 (bin 3), k = 1 -> 0.25 (bin 1).
  std::ofstream(*dir_ / "ratings.csv") << "image,rater,score\n"
                                       << "mixed/hope/0,r1,0.7\n"     // bin 3: exact
                                       << "mixed/hope/0,r2,0.5\n"     // bin 2: within one
                                       << "mixed/hope/1,r1,0.2\n"     // bin 1: exact
                                       << "mixed/truth/1,r1,0.9\n"    // bin 4 vs 1: off
                                       << "mixed/truth/2,r1,0.8\n"    // bin 4 vs 3: within one
                                       << "nobody/x/0,r1,0.5\n";
  auto r = RunVisalign({"--json", "acva", "agreement", "--items", (*dir_ / "agree" / "items.jsonl").string(),
                        "--human", (*dir_ / "ratings.csv").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["n_ratings"], 5);
  EXPECT_EQ(j["n_images"], 4);
  EXPECT_DOUBLE_EQ(j["exact_agreement"].get<double>(), 2.0 / 5.0);
  EXPECT_DOUBLE_EQ(j["within_one_bin"].get<double>(), 4.0 / 5.0);
  EXPECT_EQ(j["unmatched"], json::array({"nobody/x/0"}));
  EXPECT_TRUE(j["spearman"]["rho"].is_number());
  std::ofstream(*dir_ / "bad.csv") << "image,rater,score\nmixed/hope/0,r1,4\n";
  auto bad = RunVisalign({"acva", "agreement", "--items", (*dir_ / "agree" / "items.jsonl").string(), "--human",
                          (*dir_ / "bad.csv").string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bad.csv:2"), std::string::npos) << bad.err;
}

TEST(AcvaCli, ValidateReportsFileAndLine) {
  testing::TempDir dir;
  std::ofstream(dir / "c.jsonl") << R"({"id": "a", "word": "词", "gloss_en": "w", "category": "vibes", "rubric": []})"
                                 << "\n";
  auto r = RunVisalign({"acva", "validate", "--concepts", (dir / "c.jsonl").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("c.jsonl:1 field category"), std::string::npos) << r.err;
  auto ok = RunVisalign({"--json", "acva", "validate"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_GE(json::parse(ok.out)["concepts"].get<int>(), 24);
}

}  // namespace
}  // namespace visalign
