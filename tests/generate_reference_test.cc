// `visalign violin generate` over real HTTP on 127.0.0.1 against the in-process VIOLIN reference server:
// failures and rate limits, SIGINT / SIGKILL interruption and resume without duplicate requests,
// timeouts, the command backend with hostile prompts, and secrets kept out of logs and the store;
// the gpt-image-1 and dall-e-3 APIs, stopping early on a failure that every item would have,
// resuming after the server moved, `generate --dry-run` and `store show`.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "visalign/benchmarks/violin/reference_server.h"
#include "testing/cli_runner.h"
#include "visalign/imaging/image.h"
#include "visalign/core/io.h"
#include "visalign/store.h"
#include "visalign/benchmarks/violin/dataset.h"

extern char** environ;

namespace visalign {
namespace {
namespace fs = std::filesystem;
using testing::RunResult;
using testing::RunVisalign;
using testing::TempDir;

constexpr int kSide = 32;

// A small real VIOLIN dataset (variation 1 and 2 at scale 0.01, manifest only), optionally with
// one prompt replaced.
std::vector<violin::ManifestItem> WriteDataset(const fs::path& dir, const std::string& first_prompt = "") {
  violin::DatasetOptions o;
  o.variations = {1, 2};
  o.scale = 0.01;
  o.write_images = false;
  o.show_progress = false;
  auto items = violin::BuildItems(o).value();
  if (!first_prompt.empty()) items[0].prompt = first_prompt;
  std::string text;
  for (const auto& it : items) text += violin::ManifestLine(it) + "\n";
  fs::create_directories(dir);
  EXPECT_TRUE(WriteFileAtomic(dir / "manifest.jsonl", text).ok());
  return items;
}

std::unique_ptr<violin::ReferenceServer> StartServer(const fs::path& dataset, double fail_rate = 0,
                                                        int latency_ms = 0, double rate_limit = 0,
                                                        const std::string& api = "generic") {
  violin::ReferenceServerOptions o;
  o.dataset = dataset;
  o.api = api;
  o.fail_rate = fail_rate;
  o.latency_ms = latency_ms;
  o.rate_limit = rate_limit;
  o.seed = 7;
  auto s = violin::ReferenceServer::Start(o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

std::vector<std::string> GenerateArgs(const fs::path& dataset, const fs::path& store, const std::string& url,
                                      std::vector<std::string> extra = {}, const std::string& model = "reference") {
  std::vector<std::string> args = {"violin", "generate", "--dataset", dataset.string(), "--store", store.string(), "--run",
                                   "ref", "--backend", "openai", "--endpoint", url, "--model", model,
                                   "--size", std::to_string(kSide) + "x" + std::to_string(kSide), "--backoff",
                                   "0.02", "--max-backoff", "0.1"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Starts `visalign args...` as a child (stdout/stderr to files); returns its pid.
pid_t Spawn(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<std::string> argv = {VISALIGN_TEST_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

int WaitExit(pid_t pid) {
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

size_t DoneCount(const fs::path& store) {
  auto s = store::OpenStore(store).value();
  auto c = s->Counts("ref");
  return c.ok() ? c->done : 0;
}

void WaitUntilDone(const fs::path& store, size_t at_least) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (DoneCount(store) < at_least && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// Every done row has its complete image with the recorded SHA-256, and every file in the run's
// image folder at a final name decodes.
void ExpectStoreConsistent(const fs::path& store) {
  auto s = store::OpenStore(store).value();
  auto done = s->DoneImages("ref").value();
  for (const auto& d : done) {
    ASSERT_TRUE(fs::exists(d.image_path)) << d.image_path;
    EXPECT_EQ(Sha256File(d.image_path).value(), d.sha256) << d.image_path;
  }
  for (const auto& e : fs::directory_iterator(store / "images/ref"))
    if (e.path().extension() == ".png") {
      EXPECT_TRUE(imaging::ReadImage(e.path()).ok()) << e.path();
    }
}

// images_by_prompt and requests_by_prompt of the server's stats.
std::map<std::string, uint64_t> Counts(const violin::ReferenceServer& s, const char* field) {
  return s.Stats()[field].get<std::map<std::string, uint64_t>>();
}

TEST(GenerateReference, FailuresAndRateLimitsStillGiveEveryItemExactlyOnce) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", /*fail_rate=*/0.2, 0, /*rate_limit=*/40);
  auto r = RunVisalign(GenerateArgs(t / "ds", t / "store", srv->url(), {"--concurrency", "8", "--max-attempts", "30"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(std::to_string(items.size()) + " of " + std::to_string(items.size()) + " images done now"),
            std::string::npos)
      << r.out;
  nlohmann::json stats = srv->Stats();
  EXPECT_GT(stats["by_status"].value("500", 0), 0) << stats.dump();
  EXPECT_GT(stats["by_status"].value("429", 0), 0) << stats.dump();
  auto images = Counts(*srv, "images_by_prompt");
  EXPECT_EQ(images.size(), items.size());
  for (const auto& [prompt, n] : images) EXPECT_EQ(n, 1u) << prompt;
  // Each stored image is exactly the ground truth (exact profile), under its own item.
  auto store = store::OpenStore(t / "store").value();
  auto done = store->DoneImages("ref").value();
  ASSERT_EQ(done.size(), items.size());
  std::map<std::string, const violin::ManifestItem*> by_id;
  for (const auto& it : items) by_id[it.id] = &it;
  for (const auto& d : done) {
    auto img = imaging::ReadImage(d.image_path).value();
    EXPECT_EQ(img.rgb, violin::RenderGroundTruth(*by_id.at(d.item_id), kSide, kSide).rgb) << d.item_id;
  }
  auto rows = store->Rows("ref").value();
  for (const auto& row : rows) EXPECT_GE(row.attempts, 1);
}

// After an interrupted run: re-running the same command completes the run, and no item that was
// already done is requested again (counted by the server).
void ResumeWithoutRepeatingDoneItems(const TempDir& t, const violin::ReferenceServer& srv,
                                     const std::vector<violin::ManifestItem>& items, store::RunStore& store,
                                     const std::vector<store::DoneImage>& done_before) {
  auto requests_before = Counts(srv, "requests_by_prompt");
  auto r = RunVisalign(GenerateArgs(t / "ds", t / "store", srv.url(), {"--concurrency", "8"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(store.Counts("ref").value().done, items.size());
  auto requests_after = Counts(srv, "requests_by_prompt");
  std::map<std::string, std::string> prompt_of;
  for (const auto& it : items) prompt_of[it.id] = it.prompt;
  for (const auto& d : done_before)
    EXPECT_EQ(requests_after[prompt_of[d.item_id]], requests_before[prompt_of[d.item_id]]) << d.item_id;
}

TEST(GenerateReference, SigintStopsGracefullyAndResumeNeverRepeatsDoneItems) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", 0, /*latency_ms=*/40);
  pid_t pid = Spawn(GenerateArgs(t / "ds", t / "store", srv->url(), {"--concurrency", "2"}), t / "log1");
  WaitUntilDone(t / "store", 4);
  kill(pid, SIGINT);
  EXPECT_EQ(WaitExit(pid), 130);
  std::string log = ReadFile(t / "log1").value();
  EXPECT_NE(log.find("left pending"), std::string::npos) << log;
  EXPECT_NE(log.find("run the same command again to resume"), std::string::npos) << log;
  ExpectStoreConsistent(t / "store");
  auto store = store::OpenStore(t / "store").value();
  auto done_before = store->DoneImages("ref").value();
  ASSERT_GE(done_before.size(), 4u);
  ASSERT_LT(done_before.size(), items.size());
  ResumeWithoutRepeatingDoneItems(t, *srv, items, *store, done_before);
  for (const auto& [prompt, n] : Counts(*srv, "images_by_prompt")) EXPECT_EQ(n, 1u) << prompt;
}

TEST(GenerateReference, SigkillLosesOnlyInFlightWorkAndResumeCompletes) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", 0, /*latency_ms=*/15);
  pid_t pid = Spawn(GenerateArgs(t / "ds", t / "store", srv->url(), {"--concurrency", "4"}), t / "log1");
  WaitUntilDone(t / "store", 6);
  kill(pid, SIGKILL);
  EXPECT_EQ(WaitExit(pid), 128 + SIGKILL);
  ExpectStoreConsistent(t / "store");
  auto store = store::OpenStore(t / "store").value();
  auto done_before = store->DoneImages("ref").value();
  ResumeWithoutRepeatingDoneItems(t, *srv, items, *store, done_before);
  ExpectStoreConsistent(t / "store");
}

TEST(GenerateReference, ASecondSigintExitsAtOnce) {
  TempDir t;
  WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", 0, /*latency_ms=*/3000);
  pid_t pid = Spawn(GenerateArgs(t / "ds", t / "store", srv->url(), {"--concurrency", "2"}), t / "log1");
  // Signal only once requests are in flight (the handlers are installed by then).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (srv->Stats()["requests"].get<int>() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto t0 = std::chrono::steady_clock::now();
  kill(pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  kill(pid, SIGINT);
  EXPECT_EQ(WaitExit(pid), 130);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1500));
  EXPECT_NE(ReadFile(t / "log1").value().find("exiting now"), std::string::npos);
}

TEST(GenerateReference, AHangingServerAndAnUnknownPromptAreClearPerItemErrors) {
  TempDir t;
  WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", 0, /*latency_ms=*/2000);
  auto r = RunVisalign(GenerateArgs(t / "ds", t / "store", srv->url(),
                                    {"--timeout", "0.2", "--max-attempts", "2", "--limit", "2"}));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("0 of 2 images done now, 2 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("timed out"), std::string::npos) << r.out;
  auto rows = store::OpenStore(t / "store").value()->Rows("ref").value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, store::RowStatus::kFailed);
  EXPECT_EQ(rows[0].attempts, 2);
  EXPECT_NE(rows[0].last_error.find("timed out"), std::string::npos) << rows[0].last_error;

  // A dataset whose prompt the server does not know: HTTP 400 with the server's message, no retry.
  TempDir t2;
  WriteDataset(t2 / "ds", "a prompt the server has never seen");
  auto r2 = RunVisalign(GenerateArgs(t2 / "ds", t2 / "store", srv->url(), {"--limit", "1", "--timeout", "10"}));
  EXPECT_EQ(r2.exit_code, 2);
  EXPECT_NE(r2.out.find("HTTP 400: unknown prompt"), std::string::npos) << r2.out;
  EXPECT_EQ(store::OpenStore(t2 / "store").value()->Rows("ref").value()[0].attempts, 1);
}

TEST(GenerateReference, TheApiKeyIsSentButNeverLoggedOrStored) {
  TempDir t;
  WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", /*fail_rate=*/0.3);
  const std::string secret = "sk-test-DO-NOT-LEAK-4242";
  auto r = RunVisalign(GenerateArgs(t / "ds", t / "store", srv->url(),
                                    {"--api-key-env", "VISALIGN_TEST_API_KEY", "--limit", "5", "--max-attempts", "20",
                                     "--log-level", "debug"}),
                       {{"VISALIGN_TEST_API_KEY", secret}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find(secret), std::string::npos);
  EXPECT_EQ(r.err.find(secret), std::string::npos);
  for (const auto& e : fs::recursive_directory_iterator(t / "store"))
    if (e.is_regular_file()) {
      EXPECT_EQ(ReadFile(e.path()).value().find(secret), std::string::npos) << e.path();
    }
  auto run = store::OpenStore(t / "store").value()->FindRun("ref").value();
  EXPECT_EQ(run->connection["api_key_env"], "VISALIGN_TEST_API_KEY");
  EXPECT_FALSE(run->identity.contains("api_key_env"));
  // A named but unset variable is an argument error naming it.
  auto missing = RunVisalign(GenerateArgs(t / "ds", t / "store2", srv->url(), {"--api-key-env", "VISALIGN_UNSET_KEY"}));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("VISALIGN_UNSET_KEY"), std::string::npos) << missing.err;
}

TEST(GenerateReference, CommandBackendPassesHostilePromptsVerbatim) {
  TempDir t;
  const std::string prompt = R"(Pure "red" 'now' $(touch pwned); rm -rf ~ `id` & #D00000)";
  auto items = WriteDataset(t / "ds", prompt);
  fs::create_directories(t / "fixture");
  ASSERT_TRUE(imaging::WritePng(t / "fixture/x.png", violin::RenderGroundTruth(items[0], 8, 8)).ok());
  std::string script = "printf '%s' \"$1\" > \"$3/seen.txt\"; cp \"$4\" \"$2\"";
  std::string cmd = "/bin/sh -c '" + script + "' sh {prompt} {out} " + t.path().string() + " " +
                    (t / "fixture/x.png").string();
  auto r = RunVisalign({"violin", "generate", "--dataset", (t / "ds").string(), "--store", (t / "store").string(), "--run",
                        "cmd", "--backend", "command", "--cmd", cmd, "--limit", "1", "--samples", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ReadFile(t / "seen.txt").value(), prompt);
  EXPECT_FALSE(fs::exists(t / "pwned"));
  EXPECT_FALSE(fs::exists("pwned"));
  auto done = store::OpenStore(t / "store").value()->DoneImages("cmd").value();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[1].k, 1);
}

TEST(GenerateReference, DirectoryBackendImportsAndReportsMissingImages) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  fs::create_directories(t / "imgs");
  ASSERT_TRUE(imaging::WritePng(t / "imgs" / (items[0].id + ".png"), violin::RenderGroundTruth(items[0], 8, 8)).ok());
  auto r = RunVisalign({"violin", "generate", "--dataset", (t / "ds").string(), "--store", (t / "store").string(), "--run",
                        "imp", "--backend", "directory", "--path", (t / "imgs").string(), "--limit", "2"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("1 of 2 images done now, 1 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(items[1].id), std::string::npos) << r.out;
}

// The last line of `text`, and whether it is the only line from its "error: " on.
std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

void ExpectOneLineError(const RunResult& r, const std::string& starts_with) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  std::string last = LastLine(r.err);
  EXPECT_EQ(last.rfind("error: " + starts_with, 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("error: "), r.err.size() - last.size() - 1) << r.err;  // nothing after it
}

TEST(GenerateReference, TheReadmeGptImage1ExampleWorksAgainstAServerThatBehavesLikeGptImage1) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", 0, 0, 0, "gpt-image-1");
  auto r = RunVisalign(GenerateArgs(t / "ds", t / "store", srv->url(),
                                    {"--param", "output_format=webp", "--param", "background=transparent",
                                     "--param", "quality=high", "--limit", "3"},
                                    "gpt-image-1"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto done = store::OpenStore(t / "store").value()->DoneImages("ref").value();
  ASSERT_EQ(done.size(), 3u);
  std::map<std::string, const violin::ManifestItem*> by_id;
  for (const auto& it : items) by_id[it.id] = &it;
  for (const auto& d : done) {
    EXPECT_EQ(d.image_path.extension(), ".webp") << d.image_path;
    EXPECT_EQ(imaging::ReadImage(d.image_path).value().rgb,
              violin::RenderGroundTruth(*by_id.at(d.item_id), kSide, kSide).rgb)
        << d.item_id;  // lossless WebP of the ground truth
  }
  EXPECT_EQ(srv->Stats()["by_status"], nlohmann::json({{"200", 3}}));
}

TEST(GenerateReference, AnUnknownFieldStopsTheRunAfterThreeItemsWithTheServersMessage) {
  TempDir t;
  WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", 0, 0, 0, "gpt-image-1");
  // --model reference is a generic name: the body has response_format, which gpt-image-1 refuses.
  auto r = RunVisalign(GenerateArgs(t / "ds", t / "store", srv->url(), {"--concurrency", "1"}));
  ExpectOneLineError(r, "stopped after 3 different items failed with the same error: HTTP 400: Unknown parameter: "
                        "'response_format'.");
  EXPECT_NE(LastLine(r.err).find("KEY=null removes a field"), std::string::npos) << r.err;
  EXPECT_EQ(srv->Stats()["requests"], 3);
  auto counts = store::OpenStore(t / "store").value()->Counts("ref").value();
  EXPECT_EQ(counts.failed, 3u);
  EXPECT_EQ(counts.done, 0u);
  // Removing the field fixes it; the run has no done image, so it takes the new settings and asks
  // the three failed images again.
  auto fixed = RunVisalign(GenerateArgs(t / "ds", t / "store", srv->url(),
                                        {"--param", "response_format=null", "--concurrency", "8"}));
  ASSERT_EQ(fixed.exit_code, 0) << fixed.out << fixed.err;
  counts = store::OpenStore(t / "store").value()->Counts("ref").value();
  EXPECT_EQ(counts.failed, 0u);
  EXPECT_EQ(counts.pending, 0u);
  EXPECT_NE(fixed.err.find("had no done image yet"), std::string::npos) << fixed.err;
}

TEST(GenerateReference, ADallE3ServerAnswersUrlsAndTheClientFetchesThem) {
  TempDir t;
  WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", 0, 0, 0, "dall-e-3");
  auto r = RunVisalign(GenerateArgs(t / "ds", t / "store", srv->url(),
                                    {"--param", "response_format=url", "--param", "style=natural", "--limit", "3"},
                                    "dall-e-3"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(store::OpenStore(t / "store").value()->Counts("ref").value().done, 3u);
}

TEST(GenerateReference, ARestartedServerOnAnotherPortResumesTheRunWithoutAskingForDoneItems) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto first = StartServer(t / "ds");
  ASSERT_EQ(RunVisalign(GenerateArgs(t / "ds", t / "store", first->url(), {"--limit", "5"})).exit_code, 0);
  const std::string first_url = first->url();
  first.reset();
  auto second = StartServer(t / "ds");
  ASSERT_NE(second->url(), first_url);
  auto r = RunVisalign(GenerateArgs(t / "ds", t / "store", second->url(), {"--limit", "8", "--concurrency", "2"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("3 of 8 images done now"), std::string::npos) << r.out;
  auto asked = Counts(*second, "requests_by_prompt");
  EXPECT_EQ(asked.size(), 3u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(asked.count(items[i].prompt), 0u) << items[i].id;
  // store show: the identity without the endpoint, the last connection with the new one.
  auto show = RunVisalign({"--json", "store", "show", "--store", (t / "store").string(), "--run", "ref"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  auto run = nlohmann::json::parse(show.out)["runs"][0];
  EXPECT_EQ(run["identity"], nlohmann::json({{"backend", "openai"},
                                             {"model", "reference"},
                                             {"params", nlohmann::json::object()},
                                             {"size", "32x32"}}));
  EXPECT_EQ(run["connection"]["endpoint"], second->url());
  EXPECT_EQ(run["connection"]["concurrency"], 2);
  EXPECT_EQ(run["rows"], nlohmann::json({{"done", 8}, {"failed", 0}, {"pending", 0}}));
  auto text = RunVisalign({"store", "show", "--store", (t / "store").string()});
  EXPECT_NE(text.out.find("connection: {"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("8 done, 0 failed, 0 pending"), std::string::npos) << text.out;
}

TEST(GenerateReference, DryRunCountsRequestsAndCostWithoutRequestingOrWriting) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds");
  auto fresh = RunVisalign(GenerateArgs(t / "ds", t / "store", srv->url(),
                                        {"--limit", "10", "--samples", "2", "--dry-run", "--price-per-image", "0.04"}));
  ASSERT_EQ(fresh.exit_code, 0) << fresh.out << fresh.err;
  EXPECT_NE(fresh.out.find("run ref in " + (t / "store").string() + ": new"), std::string::npos) << fresh.out;
  EXPECT_NE(fresh.out.find(R"(identity:   {"backend":"openai","model":"reference","params":{},"size":"32x32"})"),
            std::string::npos)
      << fresh.out;
  EXPECT_NE(fresh.out.find("connection: {"), std::string::npos) << fresh.out;
  EXPECT_NE(fresh.out.find("POST " + srv->url() + "/v1/images/generations"), std::string::npos) << fresh.out;
  EXPECT_NE(fresh.out.find("images to request: 20 of 20"), std::string::npos) << fresh.out;
  EXPECT_NE(fresh.out.find("cost: 20 images x $0.04 = $0.80"), std::string::npos) << fresh.out;
  EXPECT_FALSE(fs::exists(t / "store"));
  EXPECT_EQ(srv->Stats()["requests"], 0);
  // After 4 images: 16 left, and the JSON form says the same.
  ASSERT_EQ(RunVisalign(GenerateArgs(t / "ds", t / "store", srv->url(), {"--limit", "2", "--samples", "2"})).exit_code,
            0);
  auto files_before = std::distance(fs::directory_iterator(t / "store/images/ref"), fs::directory_iterator());
  // The endpoint of a dry run does not matter: it is not identity, and nothing is asked.
  auto again = RunVisalign(GenerateArgs(t / "ds", t / "store", "http://127.0.0.1:1",
                                        {"--json", "--limit", "10", "--samples", "2", "--dry-run", "--price-per-image",
                                         "0.04"}));
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  auto j = nlohmann::json::parse(again.out);
  EXPECT_EQ(j["status"], "resume");
  EXPECT_EQ(j["already_done"], 4);
  EXPECT_EQ(j["to_request"], 16);
  EXPECT_EQ(j["max_requests"], 80);
  EXPECT_DOUBLE_EQ(j["cost"].get<double>(), 0.64);
  EXPECT_EQ(j["first_request"]["body"]["prompt"], items[2].prompt);
  EXPECT_EQ(srv->Stats()["requests"], 4);
  EXPECT_EQ(std::distance(fs::directory_iterator(t / "store/images/ref"), fs::directory_iterator()), files_before);
  EXPECT_EQ(store::OpenStore(t / "store").value()->FindRun("ref").value()->connection["endpoint"], srv->url());
  // Another model would be refused by the real run: the dry run says so the same way.
  auto other = RunVisalign(GenerateArgs(t / "ds", t / "store", srv->url(), {"--dry-run"}, "other"));
  ExpectOneLineError(other, "run \"ref\" exists with 4 done images made with");
}

TEST(GenerateReference, CommandBackendOutIsAPngPathAndADeterministicFailureStopsEarly) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  fs::create_directories(t / "fixture");
  ASSERT_TRUE(imaging::WritePng(t / "fixture/x.png", violin::RenderGroundTruth(items[0], 8, 8)).ok());
  // Like PIL's img.save(out): the format comes from the extension, unknown ones are refused.
  const std::string like_pil = "case \"$1\" in *.png) cp \"$2\" \"$1\" ;; *) echo \"ValueError: unknown file "
                               "extension: $1\" >&2; exit 1 ;; esac";
  auto ok = RunVisalign({"violin", "generate", "--dataset", (t / "ds").string(), "--store", (t / "store").string(), "--run",
                         "pil", "--backend", "command", "--cmd",
                         "/bin/sh -c '" + like_pil + "' sh {out} " + (t / "fixture/x.png").string(), "--limit", "2"});
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  // A script that cannot work (a missing module) fails the same way on every item: the run stops
  // after three, in well under a second per item, and nothing is marked failed.
  const std::string broken = "echo \"loading $1\" >&2; echo \"ModuleNotFoundError: No module named diffusers\" >&2; "
                             "exit 1";
  auto t0 = std::chrono::steady_clock::now();
  auto r = RunVisalign({"violin", "generate", "--dataset", (t / "ds").string(), "--store", (t / "store").string(), "--run",
                        "broken", "--backend", "command", "--cmd", "/bin/sh -c '" + broken + "' sh {prompt} {out}",
                        "--concurrency", "1", "--limit", "20"});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  ExpectOneLineError(r, "stopped after 3 different items failed with the same error: command exited with status 1");
  EXPECT_NE(r.err.find("No module named diffusers"), std::string::npos) << r.err;
  auto counts = store::OpenStore(t / "store").value()->Counts("broken").value();
  EXPECT_EQ(counts.pending, 20u);
}

TEST(GenerateReference, StoreShowReadsOnly) {
  TempDir t;
  auto r = RunVisalign({"store", "show", "--store", (t / "nothing").string()});
  ExpectOneLineError(r, "no visalign store in");
  EXPECT_FALSE(fs::exists(t / "nothing"));
}

TEST(GenerateReference, BadArgumentsAreOneLineErrors) {
  TempDir t;
  WriteDataset(t / "ds");
  struct Case {
    std::vector<std::string> extra;
    std::string says;
  } cases[] = {
      {{"--backend", "openai", "--model", "m"}, "--endpoint is required"},
      {{"--backend", "command", "--cmd", "gen --prompt {prompt}"}, "no {out} placeholder"},
      {{"--backend", "directory", "--path", (t / "nope").string()}, "not a directory"},
      {{"--backend", "directory", "--path", ".", "--filter", "colour=red"}, "unknown filter key"},
      {{"--backend", "directory", "--path", ".", "--filter", "variation=9"}, "no dataset item matches"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"violin", "generate", "--dataset", (t / "ds").string(), "--store", (t / "store").string(),
                                     "--run", "x"};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    auto r = RunVisalign(args);
    EXPECT_EQ(r.exit_code, 2) << c.says;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
}

// The old top-level name still runs the command, after a one-line warning naming the new one.
TEST(GenerateReference, OldNameGenerateStillWorksWithAWarning) {
  TempDir t;
  WriteDataset(t / "ds");
  auto r = RunVisalign({"generate", "--dataset", (t / "ds").string(), "--store", (t / "store").string(), "--run", "x",
                        "--backend", "directory", "--path", ".", "--filter", "variation=9"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("warning: `visalign generate` is deprecated: use `visalign violin generate`", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("\nerror: no dataset item matches"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace visalign
