// Many workers, one run, no coordinator, on each kind of store (the embedded SQLite store, and a
// PostgreSQL store on a real server this program starts, images in a shared folder): concurrent
// `visalign violin generate` processes on one run against the fault-injecting reference server
// (20 % HTTP 500, a rate limit with 429s), one of them SIGKILLed mid-run. Every item ends done
// exactly once, every done image matches its recorded SHA-256, and the server served no prompt
// twice except those in flight in the killed worker. The same for two `visalign acva judge`
// processes: no question asked twice except those in flight in the killed judge. And the same run
// made in either store scores byte-identically.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "testing/cli_runner.h"
#include "testing/postgres_server.h"
#include "testing/violin_generation.h"
#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/store.h"

namespace visalign {
namespace {
namespace fs = std::filesystem;
using testing::Child;
using testing::RunResult;
using testing::TempDir;

constexpr int kWorkers = 4;
constexpr int kConcurrency = 4;
constexpr double kFailRate = 0.2;
constexpr int kLatencyMs = 20;
constexpr double kServerRateLimit = 30;
constexpr size_t kKillAfterDone = 50;
constexpr std::chrono::seconds kPatience{120};

// The store of one test: a folder, or a new PostgreSQL database with its images in a folder.
class SharedRun : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { location_ = NewStore("store"); }

  // A new store named `name`: its --store value.
  std::string NewStore(const std::string& name) {
    if (GetParam() == "sqlite") return (t_ / name).string();
    auto server = testing::PostgresServer::Shared();
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    if (!server.ok()) return "";
    auto url = (*server)->CreateDatabase();
    EXPECT_TRUE(url.ok()) << url.status().ToString();
    return url.ok() ? *url : "";
  }
  // The flags beside --store every command on `location` gets.
  std::vector<std::string> StoreFlags(const std::string& location) const {
    if (GetParam() == "sqlite") return {};
    return {"--image-root", ImageRoot(location).string()};
  }
  fs::path ImageRoot(const std::string& location) const {
    return t_ / ("images-" + location.substr(location.rfind('/') + 1));
  }
  std::unique_ptr<store::RunStore> Open(const std::string& location) const {
    store::StoreOptions options;
    if (GetParam() == "postgres") options.image_root = ImageRoot(location);
    auto s = store::OpenStore(location, options);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  store::RunCounts CountsOf(const std::string& location) const {
    auto s = Open(location);
    if (!s) return {};
    auto c = s->Counts("ref");
    return c.ok() ? *c : store::RunCounts{};
  }
  std::vector<std::string> With(std::vector<std::string> args, const std::vector<std::string>& more) const {
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  TempDir t_;
  std::string location_;
};

TEST_P(SharedRun, FourGenerateWorkersOneKilledDoEveryItemOnce) {
  const TempDir& t = t_;
  const auto items = testing::WriteDataset(t / "ds");
  auto srv = testing::StartServer(t / "ds", kFailRate, kLatencyMs, kServerRateLimit);
  const std::vector<std::string> extra = With(
      {"--concurrency", std::to_string(kConcurrency), "--max-attempts", "60", "--lease", "2"}, StoreFlags(location_));
  std::vector<Child> workers;
  for (int w = 0; w < kWorkers; ++w)
    workers.push_back(testing::StartVisalign(testing::GenerateArgs(t / "ds", location_, srv->url(), extra), t.path(),
                                             "worker" + std::to_string(w)));
  for (const Child& c : workers) ASSERT_GT(c.pid, 0);

  // SIGKILL one worker (the visalign process itself) once the run is well under way.
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (CountsOf(location_).done < kKillAfterDone && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(kill(workers[0].pid, SIGKILL), 0);
  const store::RunCounts at_kill = CountsOf(location_);
  EXPECT_LT(at_kill.done, items.size()) << "the run ended before the kill";
  EXPECT_EQ(testing::Wait(workers[0]).exit_code, 128 + SIGKILL);
  for (int w = 1; w < kWorkers; ++w) {
    RunResult r = testing::Wait(workers[w]);
    EXPECT_EQ(r.exit_code, 0) << "worker " << w << ":\n" << r.out << r.err;
  }

  // Every item done exactly once, nothing leased, each image as recorded.
  auto s = Open(location_);
  ASSERT_NE(s, nullptr);
  const store::RunCounts c = s->Counts("ref").value();
  EXPECT_EQ(c.done, items.size());
  EXPECT_EQ(c.pending + c.failed + c.leased, 0u);
  std::map<std::string, uint64_t> rows_by_prompt;
  const std::vector<store::Row> rows = s->Rows("ref").value();
  for (const store::Row& r : rows) {
    ++rows_by_prompt[r.prompt];
    EXPECT_EQ(r.status, store::RowStatus::kDone) << r.item_id;
    auto sha = Sha256File(s->root() / r.image_path);
    ASSERT_TRUE(sha.ok()) << r.item_id << ": " << sha.status().ToString();
    EXPECT_EQ(*sha, r.sha256) << r.item_id;
  }
  EXPECT_EQ(rows_by_prompt.size(), items.size());

  // The server's count of images per prompt: once each, except those in flight in the killed worker.
  const Json stats = srv->Stats();
  EXPECT_GT(stats["by_status"].value("500", 0), 0) << stats.dump();
  EXPECT_GT(stats["by_status"].value("429", 0), 0) << stats.dump();
  uint64_t served_twice = 0;
  for (const auto& [prompt, served] : testing::Counts(*srv, "images_by_prompt")) {
    ASSERT_EQ(rows_by_prompt.count(prompt), 1u) << prompt;
    EXPECT_LE(served, 2u) << prompt;
    served_twice += served - 1;
  }
  EXPECT_LE(served_twice, static_cast<uint64_t>(kConcurrency));
  std::printf(
      "shared run (%s store): %zu items, %d workers x %d in flight, killed one at %zu done; images served twice "
      "(in flight in the killed worker): %llu\n",
      GetParam().c_str(), items.size(), kWorkers, kConcurrency, at_kill.done,
      static_cast<unsigned long long>(served_twice));
}

// Six concepts with two rubric questions each, and one near-synonym pair.
constexpr const char* kConcepts =
    R"({"id": "oath", "word": "誓言", "gloss_en": "oath", "category": "communication", "rubric": [{"id": "speaker", "text_zh": "是否有作出承诺的主体？", "text_en": "Is there a party who commits?", "weight": 1, "framework": "componential"}, {"id": "solemn", "text_zh": "是否庄严？", "text_en": "Is it solemn?", "weight": 1, "framework": "frame"}]}
{"id": "promise", "word": "诺言", "gloss_en": "promise", "category": "communication", "rubric": [{"id": "two_parties", "text_zh": "是否有双方？", "text_en": "Are there two parties?", "weight": 1, "framework": "componential"}, {"id": "trust", "text_zh": "是否有信任？", "text_en": "Is trust shown?", "weight": 1, "framework": "frame"}]}
{"id": "hope", "word": "希望", "gloss_en": "hope", "category": "emotion", "rubric": [{"id": "future", "text_zh": "是否有期待的结果？", "text_en": "Is a desired outcome shown?", "weight": 1, "framework": "frame"}, {"id": "path", "text_zh": "是否有朝向远处的结构？", "text_en": "Is there a path toward a goal?", "weight": 1, "framework": "image-schema"}]}
{"id": "truth", "word": "真理", "gloss_en": "truth", "category": "epistemic", "rubric": [{"id": "reveal", "text_zh": "是否有揭示？", "text_en": "Is something revealed?", "weight": 1, "framework": "image-schema"}, {"id": "general", "text_zh": "是否普遍？", "text_en": "Is it general?", "weight": 1, "framework": "frame"}]}
{"id": "fear", "word": "恐惧", "gloss_en": "fear", "category": "emotion", "rubric": [{"id": "threat", "text_zh": "是否有威胁？", "text_en": "Is a threat shown?", "weight": 1, "framework": "frame"}, {"id": "retreat", "text_zh": "是否有退缩？", "text_en": "Is there retreat?", "weight": 1, "framework": "image-schema"}]}
{"id": "justice", "word": "正义", "gloss_en": "justice", "category": "epistemic", "rubric": [{"id": "balance", "text_zh": "是否有平衡？", "text_en": "Is balance shown?", "weight": 1, "framework": "image-schema"}, {"id": "judge", "text_zh": "是否有裁决者？", "text_en": "Is there an arbiter?", "weight": 1, "framework": "frame"}]}
)";
constexpr const char* kPairs = R"({"a": "oath", "b": "promise"})";
constexpr int kJudgeSlowMs = 60;
constexpr size_t kKillAfterQuestions = 25;
constexpr int kJudgeConcurrency = 2;

TEST_P(SharedRun, TwoJudgesOneKilledAskEveryQuestionOnce) {
  const TempDir& t = t_;
  std::ofstream(t / "concepts.jsonl") << kConcepts;
  std::ofstream(t / "pairs.jsonl") << kPairs;
  acva::ReferenceServerOptions options;
  options.slow_ms = kJudgeSlowMs;
  auto server = acva::ReferenceServer::Start(options).value();
  auto args = [&](std::vector<std::string> a) {
    a.insert(a.end(), {"--store", location_, "--concepts", (t / "concepts.jsonl").string(), "--pairs",
                       (t / "pairs.jsonl").string()});
    return With(a, StoreFlags(location_));
  };
  RunResult gen =
      testing::RunVisalign(args({"acva", "generate", "--run", "varied", "--endpoint", server->url(), "--model",
                                 "varied", "--seed", "0", "--param", "seed={seed}", "--samples", "4"}));
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  auto judge = [&](const std::string& model) {
    return args({"--json", "acva", "judge", "--run", "varied", "--judge-endpoint", server->url(), "--judge-model",
                 model, "--judge-concurrency", std::to_string(kJudgeConcurrency), "--judge-lease", "2"});
  };
  // "+slow" judge models answer after slow_ms; both judges use the same model name (one cache key).
  std::vector<Child> judges;
  for (int j = 0; j < 2; ++j)
    judges.push_back(testing::StartVisalign(judge("ref-judge+slow"), t.path(), "judge" + std::to_string(j)));
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (server->chat_requests() < kKillAfterQuestions && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(kill(judges[0].pid, SIGKILL), 0);
  const size_t asked_at_kill = server->chat_requests();
  EXPECT_EQ(testing::Wait(judges[0]).exit_code, 128 + SIGKILL);
  RunResult survivor = testing::Wait(judges[1]);
  ASSERT_EQ(survivor.exit_code, 0) << survivor.out << survivor.err;
  const Json survived = Json::parse(survivor.out);
  const size_t distinct = survived["distinct"].get<size_t>();
  EXPECT_GT(distinct, asked_at_kill);
  EXPECT_EQ(survived["cached"].get<size_t>() + survived["asked"].get<size_t>(), distinct) << survived.dump();

  // Everything is in the cache now: a third judge asks nothing.
  RunResult again = testing::RunVisalign(judge("ref-judge+slow"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const Json rerun = Json::parse(again.out);
  EXPECT_EQ(rerun["asked"], 0) << rerun.dump();
  EXPECT_EQ(rerun["cached"], distinct) << rerun.dump();

  // Each distinct question reached the judge once, except those in flight in the killed judge.
  const size_t asked_twice = server->chat_requests() - distinct;
  EXPECT_LE(asked_twice, static_cast<size_t>(kJudgeConcurrency));
  std::printf(
      "shared judging (%s store): %zu distinct questions, 2 judges x %d in flight, killed one after %zu requests; "
      "questions asked twice (in flight in the killed judge): %zu\n",
      GetParam().c_str(), distinct, kJudgeConcurrency, asked_at_kill, asked_twice);
}

// The same run, made by two workers in a store of this kind and alone in an embedded store, gives
// the same scores byte for byte: summary.csv and summary.md, and items.jsonl and summary.json but
// for where the images were (each store's own folder or location).
TEST_P(SharedRun, TheSameRunScoresByteIdenticallyInEitherStore) {
  const TempDir& t = t_;
  testing::WriteDataset(t / "ds");
  auto srv = testing::StartServer(t / "ds");
  const std::string embedded = (t / "embedded").string();
  RunResult alone = testing::RunVisalign(testing::GenerateArgs(t / "ds", embedded, srv->url()));
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  std::vector<Child> workers;
  for (int w = 0; w < 2; ++w)
    workers.push_back(
        testing::StartVisalign(testing::GenerateArgs(t / "ds", location_, srv->url(), StoreFlags(location_)), t.path(),
                               "worker" + std::to_string(w)));
  for (const Child& c : workers) ASSERT_EQ(testing::Wait(c).exit_code, 0);
  auto evaluate = [&](const std::string& location, const std::string& out) {
    return testing::RunVisalign(With({"violin", "evaluate", "--dataset", (t / "ds").string(), "--store", location,
                                      "--run", "ref", "--out", (t / out).string(), "--bootstrap", "100"},
                                     location == embedded ? std::vector<std::string>{} : StoreFlags(location)));
  };
  RunResult a = evaluate(embedded, "eval-embedded"), b = evaluate(location_, "eval-shared");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  for (const char* file : {"summary.csv", "summary.md"})
    EXPECT_TRUE(ReadFile(t / "eval-embedded" / file).value() == ReadFile(t / "eval-shared" / file).value()) << file;
  // Where each image file was is the one thing that differs: each store's own folder.
  auto items = [&](const std::string& out) {
    std::string lines;
    std::istringstream in(ReadFile(t / out / "items.jsonl").value());
    for (std::string line; std::getline(in, line);) {
      Json j = Json::parse(line);
      EXPECT_NE(j.value("path", ""), "") << line;
      j.erase("path");
      lines += j.dump() + "\n";
    }
    return lines;
  };
  const std::string embedded_items = items("eval-embedded");
  EXPECT_FALSE(embedded_items.empty());
  EXPECT_TRUE(embedded_items == items("eval-shared")) << "items.jsonl differs beyond the image paths";
  auto summary = [&](const std::string& out) {
    Json j = Json::parse(ReadFile(t / out / "summary.json").value());
    for (Json& model : j["inputs"]["models"]) model.erase("path");
    return j.dump();
  };
  EXPECT_EQ(summary("eval-embedded"), summary("eval-shared"));
}

INSTANTIATE_TEST_SUITE_P(Stores, SharedRun, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace visalign
