// ACVA's judge end to end over real HTTP on 127.0.0.1 (acva_pipeline_fixture.h): answers cached
// in the run store and served again without a request, replies in fences or broken asked again,
// refusals, unreachable endpoints, interrupts and timeouts stopping cleanly, edited cache entries.
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
using acva_testing::kQuestionsPerModel;
using testing::RunVisalign;

TEST_F(AcvaPipeline, SecondJudgeRunIsServedFromTheCacheWithZeroRequests) {
  ASSERT_EQ(RunVisalign(Judge("cache-check", {"varied"})).exit_code, 0);
  const size_t before = server_->chat_requests();
  auto again = RunVisalign(Judge("cache-check", {"varied"}));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server_->chat_requests(), before);
  const Json stats = Json::parse(again.out);
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
  const Json stats = Json::parse(r.out);
  EXPECT_EQ(stats["invalid"], 0);
  EXPECT_EQ(stats["requests"], kQuestionsPerModel);
}

TEST_F(AcvaPipeline, GarbageRepliesAreAskedAgain) {
  auto r = RunVisalign(Judge("ref+garbage-once", {"varied"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json stats = Json::parse(r.out);
  EXPECT_EQ(stats["invalid"], 0);
  EXPECT_EQ(stats["requests"], 2 * kQuestionsPerModel);
}

// A judge that refuses everything is not paid for question after question: the first three invalid
// answers stop the command (cached, so nothing is asked twice); asked to go on (0 = never stop),
// every answer is recorded invalid, never scored 0, and an analysis of no valid judgment is an error.
TEST_F(AcvaPipeline, AJudgeThatRefusesEverythingStopsEarlyAndCannotBeAnalyzed) {
  auto stopped =
      RunVisalign(Judge("ref+refuse", {"mixed"}, {"--judge-reply-attempts", "2", "--judge-concurrency", "1"}));
  EXPECT_EQ(stopped.exit_code, 2) << stopped.out;
  EXPECT_NE(stopped.err.find("error: stopped after the first 3 questions asked got no valid answer; last: no valid "
                             "reply in 2 attempts"),
            std::string::npos)
      << stopped.err;
  EXPECT_NE(stopped.err.find("(judge ref+refuse at " + server_->url() + ")"), std::string::npos) << stopped.err;
  auto r =
      RunVisalign(Judge("ref+refuse", {"mixed"}, {"--judge-reply-attempts", "2", "--judge-stop-after-invalid", "0"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json stats = Json::parse(r.out);
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
  auto dead = RunVisalign(
      Args({"acva", "judge", "--run", "varied", "--judge-endpoint", "http://127.0.0.1:1", "--judge-model", "nobody"}));
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
  for (int i = 0; i < 400 && (*slow)->chat_requests() < 4; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
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
  const Json j = Json::parse(counted.out);
  EXPECT_EQ(j["cached"], 4);
  EXPECT_EQ(j["to_ask"], kQuestionsPerModel - 4);
  EXPECT_EQ((*slow)->chat_requests(), 4u);  // a dry run asks nothing
}

TEST_F(AcvaPipeline, RefusedMetaphorsLeaveRatingsIntact) {
  ASSERT_EQ(RunVisalign(Judge("ref+refuse-metaphor", {"varied"}, {"--judge-reply-attempts", "1"})).exit_code, 0);
  const Json s = Analyze("ref+refuse-metaphor", {"varied"}, "no-metaphor");
  const Json& m = Model(s, "varied");
  EXPECT_EQ(m["pass_rate"], 1.0);
  EXPECT_TRUE(m["diversity"]["unfiltered"]["h_mean"].is_null());
  EXPECT_GT(m["diversity"]["unfiltered"]["d_img_mean"].get<double>(), 0.0);
}

TEST_F(AcvaPipeline, TimeoutsFailClearlyAndAreNotCached) {
  // A server of its own, so the slow handlers do not hold up the other tests' requests.
  auto slow = acva::ReferenceServer::Start({.port = 0, .slow_ms = 400});
  ASSERT_TRUE(slow.ok());
  auto r = RunVisalign(
      Args({"acva", "judge", "--run", "mono", "--judge-endpoint", (*slow)->url(), "--judge-model", "ref+slow",
            "--judge-timeout", "0.1", "--judge-max-attempts", "1", "--judge-concurrency", "8"}));
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
  const std::string afc_key =
      acva::JudgeCacheKey(oath_sha, acva::AfcQuestionFor(oath, promise, acva::Language::kEn), settings);
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
  const testing::RunResult analyze =
      RunVisalign(Args({"acva", "analyze", "--run", "varied", "--judge-model", "cache-edit", "--clip-model",
                        ClipFixture(), "--out", (*dir_ / "edited").string()}));
  EXPECT_EQ(analyze.exit_code, 2);
  EXPECT_NE(analyze.err.find("cached judge answer"), std::string::npos) << analyze.err;
  ASSERT_TRUE(store->CachePut("acva.judge", rubric_key, original[rubric_key]).ok());
}

}  // namespace
}  // namespace visalign
