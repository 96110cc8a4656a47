// ACVA-Bench end to end over real HTTP on 127.0.0.1: the reference server generates images whose
// first pixels say how a judge should answer, the same server judges them, the tiny CLIP fixture
// embeds them; every expected score, cluster, accuracy and position bias is known in advance.
#include <gtest/gtest.h>

#include <signal.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "acva_pipeline_fixture.h"
#include "testing/cli_runner.h"
#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/store.h"

namespace visalign {
namespace {

using acva_testing::AcvaPipeline;
using acva_testing::ClipFixture;
using acva_testing::kConceptCount;
using acva_testing::kDistinctQuestionsOfMono;
using acva_testing::kModels;
using acva_testing::kQuestionsPerModel;
using acva_testing::kSamples;
using testing::RunVisalign;

TEST_F(AcvaPipeline, FullRunGivesTheScoresClustersAndAccuraciesTheImagesEncode) {
  const size_t before = server_->chat_requests();
  auto judged = RunVisalign(Judge("ref", {"varied", "mono", "mixed"}));
  ASSERT_EQ(judged.exit_code, 0) << judged.err;
  EXPECT_EQ(server_->chat_requests() - before, 2 * kQuestionsPerModel + kDistinctQuestionsOfMono);

  const Json s = Analyze("ref", {"varied", "mono", "mixed"}, "full");
  ASSERT_FALSE(s.is_discarded());
  const Json& varied = Model(s, "varied");
  const Json& mono = Model(s, "mono");
  const Json& mixed = Model(s, "mixed");
  // Adequacy: varied rates 1 everywhere; mono 0.25; mixed 0.75 on seeds 0 and 2, 0.25 on seed 1.
  EXPECT_EQ(varied["n_images"], kConceptCount * kSamples);
  EXPECT_EQ(varied["pass_rate"], 1.0);
  EXPECT_EQ(mono["pass_rate"], 0.0);
  EXPECT_EQ(mono["adequacy_mean"], 0.25);
  EXPECT_NEAR(mixed["pass_rate"].get<double>(), 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(mixed["adequacy_mean"].get<double>(), (0.75 + 0.25 + 0.75) / 3.0, 1e-12);
  EXPECT_EQ(mixed["pass_rate_ci"], Json::array({2.0 / 3.0, 2.0 / 3.0}));  // the same in every concept
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
  const Json& vp = varied["pairs"][0];
  EXPECT_EQ(vp["afc_acc"], 1.0);
  EXPECT_EQ(vp["afc_first_share"], 0.5);
  EXPECT_EQ(vp["afc_trials"], 2 * kSamples * 2);
  const Json& mp = mono["pairs"][0];
  EXPECT_EQ(mp["afc_acc"], 0.5);
  EXPECT_EQ(mp["afc_first_share"], 1.0);
  EXPECT_EQ(mp["embedding_loo_acc"], 1.0);  // identical images per concept, different per concept
  // Tiers: varied > mixed > mono in every concept; models are listed in that order.
  ASSERT_EQ(s["tiers"].size(), 3u);
  EXPECT_EQ(s["tiers"][0]["models"], Json::array({"varied"}));
  EXPECT_EQ(s["tiers"][2]["models"], Json::array({"mono"}));
  std::vector<std::string> listed;
  for (const Json& m : s["models"]) listed.push_back(m["model"]);
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
  const Json stats = Json::parse(r.out);
  EXPECT_EQ(stats["questions"], kQuestionsPerModel);
  EXPECT_EQ(stats["distinct"], kDistinctQuestionsOfMono);
  EXPECT_EQ(stats["asked"], kDistinctQuestionsOfMono);
  EXPECT_EQ(stats["requests"], kDistinctQuestionsOfMono);
  // Every image got the shared answers.
  const Json s = Analyze("dedup", {"mono"}, "dedup");
  EXPECT_EQ(Model(s, "mono")["n_images"], kConceptCount * kSamples);
  EXPECT_EQ(Model(s, "mono")["n_invalid"], 0);
  EXPECT_EQ(Model(s, "mono")["adequacy_mean"], 0.25);
}

TEST_F(AcvaPipeline, QuadrantsSplitAtPooledMediansByDefaultFrozenOnRequestOrPerModel) {
  ASSERT_EQ(RunVisalign(Judge("quadrants", {"varied", "mono"})).exit_code, 0);
  // Default (ACVA §5.2): the medians of both models' groups; varied is above them, mono below.
  const Json both = Analyze("quadrants", {"varied", "mono"}, "q-both");
  EXPECT_EQ(both["options"]["median_scope"], "pooled");
  EXPECT_EQ(both["quadrant_medians"]["scope"], "pooled");
  EXPECT_EQ(Model(both, "varied")["diversity"]["unfiltered"]["quadrants"]["genuine"], 1.0);
  EXPECT_EQ(Model(both, "mono")["diversity"]["unfiltered"]["quadrants"]["low"], 1.0);

  // --thresholds-from freezes those medians: varied analysed alone keeps its two-model shares.
  const std::string earlier = (*dir_ / "q-both" / "summary.json").string();
  const Json frozen = Analyze("quadrants", {"varied"}, "q-frozen", {"--thresholds-from", earlier});
  EXPECT_EQ(frozen["options"]["median_scope"], "frozen");
  EXPECT_EQ(frozen["quadrant_medians"]["source"], earlier);
  for (const char* mode : {"filtered", "unfiltered"}) {
    EXPECT_EQ(Model(frozen, "varied")["diversity"][mode]["quadrants"],
              Model(both, "varied")["diversity"][mode]["quadrants"])
        << mode;
    EXPECT_EQ(frozen["quadrant_medians"][mode], both["quadrant_medians"][mode]) << mode;
  }

  // --quadrant-medians per-model: a model's shares are the same alone or with others.
  const Json alone = Analyze("quadrants", {"varied"}, "q-alone", {"--quadrant-medians", "per-model"});
  const Json both_own = Analyze("quadrants", {"varied", "mono"}, "q-own", {"--quadrant-medians", "per-model"});
  EXPECT_EQ(both_own["options"]["median_scope"], "model");
  for (const char* mode : {"filtered", "unfiltered"}) {
    const Json& a = Model(alone, "varied")["diversity"][mode];
    EXPECT_EQ(a, Model(both_own, "varied")["diversity"][mode]) << mode;
    // H = log2 3 in every concept ties with the median: the H split is even. D_img differs by concept,
    // 2 of the 4 concepts are above the median.
    EXPECT_EQ(a["quadrants"], Json({{"genuine", 0.25}, {"pseudo", 0.25}, {"metaphor", 0.25}, {"low", 0.25}})) << mode;
  }
}

// acva analyze embeds the images with the towers added by issue 31 as with any other: D_img from the
// ViTamin fixture (conv stem + GeGLU ViT) is positive for varied images and 0 for identical ones.
TEST_F(AcvaPipeline, AnalyzesWithAVitaminTower) {
  ASSERT_EQ(RunVisalign(Judge("vitamin", {"varied", "mono"})).exit_code, 0);
  const std::string vitamin = (testing::SharedDir() / "fixtures" / "vitamin-tiny").string();
  auto r =
      RunVisalign(Args({"--json", "acva", "analyze", "--judge-model", "vitamin", "--clip-model", vitamin, "--bootstrap",
                        "50", "--out", (*dir_ / "vitamin").string(), "--run", "varied", "--run", "mono"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json summary = Json::parse(r.out);
  EXPECT_GT(Model(summary, "varied")["diversity"]["unfiltered"]["d_img_mean"].get<double>(), 0.0);
  EXPECT_EQ(Model(summary, "mono")["diversity"]["unfiltered"]["d_img_mean"], 0.0);
}

TEST_F(AcvaPipeline, ThresholdsFromRefusesAFileThatIsNotAnAcvaSummary) {
  ASSERT_EQ(RunVisalign(Judge("quadrants", {"varied"})).exit_code, 0);
  const std::filesystem::path bad = *dir_ / "not-a-summary.json";
  ASSERT_TRUE(WriteFileAtomic(bad, R"({"benchmark": "violin"})").ok());
  auto r = RunVisalign(Args({"acva", "analyze", "--run", "varied", "--judge-model", "quadrants", "--clip-model",
                             ClipFixture(), "--out", (*dir_ / "q-bad").string(), "--thresholds-from", bad.string()}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: not an ACVA summary (" + bad.string() + "): the summary.json of `visalign acva analyze`\n");
  auto both = RunVisalign(
      Args({"acva", "analyze", "--run", "varied", "--judge-model", "quadrants", "--clip-model", ClipFixture(), "--out",
            (*dir_ / "q-bad").string(), "--thresholds-from", bad.string(), "--quadrant-medians", "per-model"}));
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--thresholds-from"), std::string::npos) << both.err;
}

// The PE-Core, CoCa and MobileCLIP (FastViT MCi, MCi ViT) fixtures (issue 31) score the same judged
// run as clip-tiny does.
TEST_F(AcvaPipeline, AnalyzeLoadsThePeCoreCocaAndMobileClipFixtures) {
  ASSERT_EQ(RunVisalign(Judge("ref", {"varied"})).exit_code, 0);
  for (const std::string fixture : {"pe-core-tiny", "coca-tiny", "mobileclip-s-tiny", "mobileclip-b-tiny"}) {
    SCOPED_TRACE(fixture);
    auto r = RunVisalign(Args({"--json", "acva", "analyze", "--run", "varied", "--judge-model", "ref", "--clip-model",
                               (testing::SharedDir() / "fixtures" / fixture).string(), "--bootstrap", "50", "--out",
                               (*dir_ / ("towers-" + fixture)).string()}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json s = Json::parse(*ReadFile(*dir_ / ("towers-" + fixture) / "summary.json"));
    EXPECT_EQ(s["benchmark"], "acva");
    EXPECT_EQ(s["models"].size(), 1u);
  }
}

TEST_F(AcvaPipeline, SummaryJsonRecordsWhatTheNumbersDependOn) {
  ASSERT_EQ(RunVisalign(Judge("provenance", {"varied"})).exit_code, 0);
  Analyze("provenance", {"varied"}, "provenance");
  const Json s = Json::parse(*ReadFile(*dir_ / "provenance" / "summary.json"));
  const acva::JudgeSettings settings{.model = "provenance", .language = acva::Language::kEn, .temperature = 0};
  EXPECT_EQ(s["judge"]["model"], "provenance");
  EXPECT_EQ(s["judge"]["language"], "en");
  EXPECT_EQ(s["judge"]["temperature"], 0.0);
  EXPECT_EQ(s["judge"]["prompt_hashes"],
            Json({{"rubric", acva::PromptTemplateHash(acva::JudgeTask::kRubric, settings)},
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
  auto r = RunVisalign(Args({"--json",       "acva",          "run",
                             "--run",        "pair-a",        "--model",
                             "varied",       "--run",         "pair-b",
                             "--model",      "mono",          "--endpoint",
                             server_->url(), "--seed",        "0",
                             "--param",      "seed={seed}",   "--judge-endpoint",
                             server_->url(), "--judge-model", "pairs",
                             "--clip-model", ClipFixture(),   "--bootstrap",
                             "100",          "--out",         (*dir_ / "pairs").string()}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(server_->image_requests() - images_before, 2 * kConceptCount * kSamples);
  EXPECT_EQ(server_->chat_requests() - chats_before, kQuestionsPerModel + kDistinctQuestionsOfMono);
  const Json s = Json::parse(r.out);
  EXPECT_EQ(Model(s, "pair-a")["pass_rate"], 1.0);  // generated by model varied
  EXPECT_EQ(Model(s, "pair-b")["pass_rate"], 0.0);  // generated by model mono
  EXPECT_EQ(s["generation"]["pair-b"]["done"], kConceptCount * kSamples);
  // Each run's refusal rate over its finished rows (none refused here), with its Wilson interval.
  EXPECT_EQ(s["generation"]["pair-b"]["refusals"]["refused"], 0);
  EXPECT_EQ(s["generation"]["pair-b"]["refusals"]["finished"], kConceptCount * kSamples);
  EXPECT_EQ(s["generation"]["pair-b"]["refusals"]["rate"], 0.0);
  // The same pairs from a runs file: everything is resumed, nothing is requested again.
  std::ofstream(*dir_ / "runs.jsonl") << R"({"run": "pair-a", "model": "varied"})"
                                      << "\n"
                                      << R"({"run": "pair-b", "model": "mono"})"
                                      << "\n";
  auto again = RunVisalign(Args({"--json",
                                 "acva",
                                 "run",
                                 "--runs-file",
                                 (*dir_ / "runs.jsonl").string(),
                                 "--endpoint",
                                 server_->url(),
                                 "--seed",
                                 "0",
                                 "--param",
                                 "seed={seed}",
                                 "--judge-endpoint",
                                 server_->url(),
                                 "--judge-model",
                                 "pairs",
                                 "--clip-model",
                                 ClipFixture(),
                                 "--bootstrap",
                                 "100",
                                 "--out",
                                 (*dir_ / "pairs-file").string()}));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server_->image_requests() - images_before, 2 * kConceptCount * kSamples);
  EXPECT_EQ(server_->chat_requests() - chats_before, kQuestionsPerModel + kDistinctQuestionsOfMono);
  EXPECT_EQ(Json::parse(again.out)["models"], s["models"]);
}

// The generation commands share their run-control vocabulary: --filter and --limit select concepts
// as `generate` selects items; unknown keys name the ones there are.
TEST_F(AcvaPipeline, GenerateFiltersAndLimitsConcepts) {
  auto r = RunVisalign(
      Args({"--json",           "acva",    "generate", "--run",       "subset",    "--endpoint", server_->url(),
            "--model",          "varied",  "--param",  "seed={seed}", "--samples", "2",          "--filter",
            "category=emotion", "--limit", "1",        "--backoff",   "0.01",      "--grace",    "1"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["selected"], 2);  // one emotion concept x 2 samples
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
  std::ofstream(*dir_ / "bad-runs.jsonl") << R"({"run": "x", "modle": "varied"})"
                                          << "\n";
  auto bad = RunVisalign(Args({"acva", "run", "--runs-file", (*dir_ / "bad-runs.jsonl").string(), "--endpoint",
                               server_->url(), "--judge-endpoint", server_->url(), "--judge-model", "pairs",
                               "--clip-model", ClipFixture(), "--out", (*dir_ / "unpaired").string()}));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("unknown field \"modle\""), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("bad-runs.jsonl:1"), std::string::npos) << bad.err;
}

// Every backend and the CLIP model are made before the first request: a mistake costs no image.
TEST_F(AcvaPipeline, RunRefusesAWrongClipModelOrARunNamedTwiceBeforeAnyImageIsRequested) {
  const size_t images_before = server_->image_requests();
  const std::string missing = (*dir_ / "no-such-model").string();
  auto r = RunVisalign(
      Args({"acva", "run", "--run", "early", "--model", "varied", "--endpoint", server_->url(), "--judge-endpoint",
            server_->url(), "--judge-model", "pairs", "--clip-model", missing, "--out", (*dir_ / "early").string()}));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
  auto twice = RunVisalign(Args({"acva", "run", "--run", "varied", "--model", "varied", "--with-run", "varied",
                                 "--endpoint", server_->url(), "--judge-endpoint", server_->url(), "--judge-model",
                                 "pairs", "--clip-model", ClipFixture(), "--out", (*dir_ / "twice").string()}));
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_EQ(twice.err, "error: run \"varied\" is named twice (runs): each run once\n");
  EXPECT_EQ(server_->image_requests(), images_before);
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
  const Json s = Json::parse(r.out);
  EXPECT_EQ(s["embeddings"]["random_weights"]["seed"], 3);
  EXPECT_NE(ReadFile(*dir_ / "random" / "summary.md")->find(label), std::string::npos);
}

TEST_F(AcvaPipeline, HumanAgreementAgainstItems) {
  ASSERT_EQ(RunVisalign(Judge("ref", {"mixed"})).exit_code, 0);
  Analyze("ref", {"mixed"}, "agree");
  // Automatic adequacy of mixed: k = 0, 2 -> 0.75 (bin 3), k = 1 -> 0.25 (bin 1).
  std::ofstream(*dir_ / "ratings.csv") << "image,rater,score\n"
                                       << "mixed/hope/0,r1,0.7\n"   // bin 3: exact
                                       << "mixed/hope/0,r2,0.5\n"   // bin 2: within one
                                       << "mixed/hope/1,r1,0.2\n"   // bin 1: exact
                                       << "mixed/truth/1,r1,0.9\n"  // bin 4 vs 1: off
                                       << "mixed/truth/2,r1,0.8\n"  // bin 4 vs 3: within one
                                       << "nobody/x/0,r1,0.5\n";
  auto r = RunVisalign({"--json", "acva", "agreement", "--items", (*dir_ / "agree" / "items.jsonl").string(), "--human",
                        (*dir_ / "ratings.csv").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["n_ratings"], 5);
  EXPECT_EQ(j["n_images"], 4);
  EXPECT_DOUBLE_EQ(j["exact_agreement"].get<double>(), 2.0 / 5.0);
  EXPECT_DOUBLE_EQ(j["within_one_bin"].get<double>(), 4.0 / 5.0);
  EXPECT_EQ(j["unmatched"], Json::array({"nobody/x/0"}));
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
  EXPECT_GE(Json::parse(ok.out)["concepts"].get<int>(), 24);
}

}  // namespace
}  // namespace visalign
