// `visalign violin generate --backend worker` with the shipped diffusers worker
// (scripts/workers/diffusers_worker.py) whose pipeline is replaced through its documented seam
// (VISALIGN_PIPELINE_FACTORY) by tests/data/workers/fake_pipeline.py, which answers each prompt with
// the reference server's correct image: a whole run scores exactly, each image made once; workers
// get their index and GPU; a worker that crashes once is restarted and its item retried; one that
// prints garbage, one that never gets ready, a --cmd that cannot start and a refused image; two
// processes sharing a run; workers end when visalign does.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "testing/cli_runner.h"
#include "testing/violin_generation.h"
#include "visalign/store.h"

namespace visalign {
namespace {
namespace fs = std::filesystem;
using testing::Counts;
using testing::kSide;
using testing::RunVisalign;
using testing::TempDir;
using testing::WriteDataset;

fs::path SourceDir() { return testing::DataDir().parent_path(); }

std::string WorkerCmd() {
  return "python3 " + (SourceDir() / "scripts/workers/diffusers_worker.py").string() +
         " --model fake/model --device cpu";
}

std::vector<std::string> Args(const TempDir& t, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"violin",        "generate",
                                   "--dataset",     (t / "ds").string(),
                                   "--store",       (t / "store").string(),
                                   "--run",         "w",
                                   "--backend",     "worker",
                                   "--cmd",         WorkerCmd(),
                                   "--size",        std::to_string(kSide) + "x" + std::to_string(kSide),
                                   "--backoff",     "0.02",
                                   "--max-backoff", "0.05"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::map<std::string, std::string> Env(const violin::ReferenceServer& srv, const TempDir& t,
                                       std::map<std::string, std::string> more = {}) {
  more["VISALIGN_PIPELINE_FACTORY"] = (SourceDir() / "tests/data/workers/fake_pipeline.py").string() + ":load";
  more["VISALIGN_FAKE_URL"] = srv.url();
  more["VISALIGN_FAKE_LOG"] = (t / "fake.log").string();
  return more;
}

std::vector<std::string> LogLines(const TempDir& t) {
  std::ifstream in(t / "fake.log");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t CountOf(const std::vector<std::string>& lines, const std::string& prefix) {
  return static_cast<size_t>(
      std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(prefix, 0) == 0; }));
}

void ExpectExact(const TempDir& t, const std::vector<violin::ManifestItem>& items, size_t n) {
  auto st = store::OpenStore(t / "store").value();
  std::map<std::string, const violin::ManifestItem*> by_id;
  for (const auto& it : items) by_id[it.id] = &it;
  const auto done = st->DoneImages("w").value();
  ASSERT_EQ(done.size(), n);
  for (const auto& d : done)
    EXPECT_EQ(imaging::ReadImage(d.image_path).value().rgb,
              violin::RenderGroundTruth(*by_id.at(d.item_id), kSide, kSide).rgb)
        << d.item_id;
}

void ExpectOneLineError(const testing::RunResult& r, const std::string& contains) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  std::istringstream lines(r.err);
  std::vector<std::string> errors;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("error: ", 0) == 0) errors.push_back(line);
  ASSERT_EQ(errors.size(), 1u) << r.err;
  EXPECT_NE(errors[0].find(contains), std::string::npos) << r.err;
}

TEST(Worker, AWholeRunOnTwoWorkersScoresExactlyWithEachImageMadeOnce) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto srv = testing::StartServer(t / "ds");
  auto r = RunVisalign(Args(t, {"--workers", "2", "--gpus", "3,5", "--concurrency", "4"}), Env(*srv, t));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ExpectExact(t, items, items.size());
  for (const auto& [prompt, n] : Counts(*srv, "requests_by_prompt")) EXPECT_EQ(n, 1u) << prompt;
  const auto lines = LogLines(t);
  // Two workers, each told its index and its own GPU; both ended when visalign did.
  EXPECT_EQ(CountOf(lines, "start 0 3"), 1u);
  EXPECT_EQ(CountOf(lines, "start 1 5"), 1u);
  EXPECT_EQ(CountOf(lines, "image "), items.size());
  EXPECT_EQ(CountOf(lines, "exit "), 2u);
  auto info = store::OpenStore(t / "store").value()->FindRun("w").value();
  EXPECT_EQ(info->identity["backend"], "worker");
  EXPECT_EQ(info->identity["cmd"], WorkerCmd());
  EXPECT_EQ(info->connection["workers"], 2);
}

TEST(Worker, AWorkerThatCrashesOnceIsRestartedAndItsItemRetried) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto srv = testing::StartServer(t / "ds");
  auto r = RunVisalign(Args(t, {"--limit", "4", "--concurrency", "1"}),
                       Env(*srv, t, {{"VISALIGN_FAKE_CRASH_ONCE", (t / "crashed").string()}}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ExpectExact(t, items, 4);
  EXPECT_EQ(CountOf(LogLines(t), "start 0"), 2u);
  auto rows = store::OpenStore(t / "store").value()->Rows("w").value();
  int attempts = 0;
  for (const auto& row : rows) attempts += row.attempts;
  EXPECT_EQ(attempts, 5);  // the crashed item took two
}

TEST(Worker, WorkersThatKeepDyingStopTheRunWithinTheRestartLimitWithOneLine) {
  TempDir t;
  WriteDataset(t / "ds");
  auto srv = testing::StartServer(t / "ds");
  ExpectOneLineError(RunVisalign(Args(t, {"--concurrency", "1"}), Env(*srv, t, {{"VISALIGN_FAKE_CRASH_ALWAYS", "1"}})),
                     "failed with the same error: worker 0 died (exited with status 3)");
  EXPECT_LE(CountOf(LogLines(t), "start 0"), 4u);  // the first start and at most 3 restarts
}

TEST(Worker, GarbageOnStdoutIsRefusedQuotingTheLineAndStopsTheRunWithOneLine) {
  TempDir t;
  WriteDataset(t / "ds");
  auto srv = testing::StartServer(t / "ds");
  ExpectOneLineError(
      RunVisalign(Args(t, {"--concurrency", "1"}), Env(*srv, t, {{"VISALIGN_FAKE_GARBAGE", "Loading 50%"}})),
      "worker 0 printed a line that is not the protocol: \"Loading 50%\"");
}

TEST(Worker, AWorkerThatIsNeverReadyOrCannotStartIsOneLineExit2) {
  TempDir t;
  WriteDataset(t / "ds");
  auto srv = testing::StartServer(t / "ds");
  ExpectOneLineError(
      RunVisalign(Args(t, {"--startup-timeout", "0.5"}), Env(*srv, t, {{"VISALIGN_FAKE_SLOW_START", "30"}})),
      "worker 0 printed no ready line within 0.5 s (--startup-timeout)");
  std::vector<std::string> missing = Args(t);
  missing[std::find(missing.begin(), missing.end(), "--cmd") - missing.begin() + 1] = "no-such-worker-program --x";
  ExpectOneLineError(RunVisalign(missing), "cannot start \"no-such-worker-program\": not found on PATH");
  std::vector<std::string> no_cmd = Args(t);
  no_cmd.erase(std::find(no_cmd.begin(), no_cmd.end(), "--cmd"), std::find(no_cmd.begin(), no_cmd.end(), "--cmd") + 2);
  ExpectOneLineError(RunVisalign(no_cmd), "--cmd is required with --backend worker");
  ExpectOneLineError(RunVisalign(Args(t, {"--gpus", "0,,1"})), "GPU list \"0,,1\"");
}

TEST(Worker, ASafetyCheckersRefusalIsARefusedRow) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto srv = testing::StartServer(t / "ds");
  auto r = RunVisalign(Args(t, {"--limit", "3"}), Env(*srv, t, {{"VISALIGN_FAKE_REFUSE", items[1].prompt}}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto counts = store::OpenStore(t / "store").value()->Counts("w").value();
  EXPECT_EQ(counts.refused, 1u);
  EXPECT_EQ(counts.done, 2u);
}

TEST(Worker, TwoProcessesSharingARunMakeEachImageOnce) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto srv = testing::StartServer(t / "ds");
  std::vector<testing::Child> children;
  for (const char* name : {"a", "b"})
    children.push_back(
        testing::StartVisalign(Args(t, {"--limit", "12", "--concurrency", "2"}), t.path(), name, Env(*srv, t)));
  for (const auto& c : children) EXPECT_EQ(testing::Wait(c).exit_code, 0);
  ExpectExact(t, items, 12);
  auto asked = Counts(*srv, "requests_by_prompt");
  EXPECT_EQ(asked.size(), 12u);
  for (const auto& [prompt, n] : asked) EXPECT_EQ(n, 1u) << prompt;
}

TEST(Worker, DryRunPrintsTheFirstRequestLineAndStartsNoWorker) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto srv = testing::StartServer(t / "ds");
  auto r = RunVisalign(Args(t, {"--dry-run", "--json", "--param", "num_inference_steps=28"}), Env(*srv, t));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto request = Json::parse(r.out)["first_request"];
  EXPECT_EQ(request["body"]["prompt"], items[0].prompt);
  EXPECT_EQ(request["body"]["width"], kSide);
  EXPECT_EQ(request["body"]["params"], Json({{"num_inference_steps", 28}}));
  EXPECT_TRUE(LogLines(t).empty());
}

}  // namespace
}  // namespace visalign
