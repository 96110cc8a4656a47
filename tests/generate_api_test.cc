// `visalign violin generate` against reference servers that behave like gpt-image-1 and dall-e-3:
// request bodies per model family, stopping early on a failure every item would have, resuming
// after the server moved, the command backend's output path, `--dry-run`, `store show`, bad
// arguments and the deprecated `visalign generate`.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "testing/cli_runner.h"
#include "testing/violin_generation.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/store.h"

namespace visalign {
namespace {
namespace fs = std::filesystem;
using testing::Counts;
using testing::GenerateArgs;
using testing::kSide;
using testing::RunResult;
using testing::RunVisalign;
using testing::StartServer;
using testing::TempDir;
using testing::WriteDataset;

// The last line of `text`, and whether it is the only line from its "error: " on.
std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
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
  auto r = RunVisalign(GenerateArgs(
      t / "ds", t / "store", srv->url(),
      {"--param", "output_format=webp", "--param", "background=transparent", "--param", "quality=high", "--limit", "3"},
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
  EXPECT_EQ(srv->Stats()["by_status"], Json({{"200", 3}}));
}

TEST(GenerateReference, AnUnknownFieldStopsTheRunAfterThreeItemsWithTheServersMessage) {
  TempDir t;
  WriteDataset(t / "ds");
  auto srv = StartServer(t / "ds", 0, 0, 0, "gpt-image-1");
  // --model reference is a generic name: the body has response_format, which gpt-image-1 refuses.
  auto r = RunVisalign(GenerateArgs(t / "ds", t / "store", srv->url(), {"--concurrency", "1"}));
  ExpectOneLineError(r,
                     "stopped after 3 different items failed with the same error: HTTP 400: Unknown parameter: "
                     "'response_format'.");
  EXPECT_NE(LastLine(r.err).find("KEY=null removes a field"), std::string::npos) << r.err;
  EXPECT_EQ(srv->Stats()["requests"], 3);
  auto counts = store::OpenStore(t / "store").value()->Counts("ref").value();
  EXPECT_EQ(counts.failed, 3u);
  EXPECT_EQ(counts.done, 0u);
  // Removing the field fixes it; the run has no done image, so it takes the new settings and asks
  // the three failed images again.
  auto fixed = RunVisalign(
      GenerateArgs(t / "ds", t / "store", srv->url(), {"--param", "response_format=null", "--concurrency", "8"}));
  ASSERT_EQ(fixed.exit_code, 0) << fixed.out << fixed.err;
  counts = store::OpenStore(t / "store").value()->Counts("ref").value();
  EXPECT_EQ(counts.failed, 0u);
  EXPECT_EQ(counts.pending, 0u);
  EXPECT_NE(fixed.err.find("had no done image yet"), std::string::npos) << fixed.err;
}

// A mistyped port: nothing can connect, so the run stops on the first requests with one line naming
// the endpoint; no row is marked failed, so the corrected command resumes every item.
TEST(GenerateReference, AnEndpointThatRefusesConnectionsStopsTheRunAtOnceWithNothingFailed) {
  TempDir t;
  WriteDataset(t / "ds");
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> args = GenerateArgs(t / "ds", t / "store", "http://127.0.0.1:1");
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--backoff" || args[i] == "--max-backoff") args[i + 1] = "30";
  auto r = RunVisalign(args);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ExpectOneLineError(r,
                     "cannot reach the endpoint before any image was made: POST "
                     "http://127.0.0.1:1/v1/images/generations: ");
  EXPECT_NE(LastLine(r.err).find("check the host, port and scheme"), std::string::npos) << r.err;
  EXPECT_LT(seconds, 15.0);  // one retry alone would wait 15-30 s
  auto counts = store::OpenStore(t / "store").value()->Counts("ref").value();
  EXPECT_EQ(counts.failed, 0u);
  EXPECT_EQ(counts.done, 0u);
  auto srv = StartServer(t / "ds");
  auto fixed = RunVisalign(GenerateArgs(t / "ds", t / "store", srv->url(), {"--limit", "3"}));
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(srv->Stats()["requests"], 3);
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
  auto run = Json::parse(show.out)["runs"][0];
  EXPECT_EQ(run["identity"],
            Json({{"backend", "openai"}, {"model", "reference"}, {"params", Json::object()}, {"size", "32x32"}}));
  EXPECT_EQ(run["connection"]["endpoint"], second->url());
  EXPECT_EQ(run["connection"]["concurrency"], 2);
  EXPECT_EQ(run["rows"]["done"], 8);
  EXPECT_EQ(run["rows"]["failed"], 0);
  EXPECT_EQ(run["rows"]["pending"], 0);
  EXPECT_EQ(run["rows"]["leased"], 0);
  EXPECT_EQ(run["rows"]["attempts"], 8);
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
  auto again = RunVisalign(
      GenerateArgs(t / "ds", t / "store", "http://127.0.0.1:1",
                   {"--json", "--limit", "10", "--samples", "2", "--dry-run", "--price-per-image", "0.04"}));
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  auto j = Json::parse(again.out);
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
  const std::string like_pil =
      "case \"$1\" in *.png) cp \"$2\" \"$1\" ;; *) echo \"ValueError: unknown file "
      "extension: $1\" >&2; exit 1 ;; esac";
  auto ok = RunVisalign({"violin", "generate", "--dataset", (t / "ds").string(), "--store", (t / "store").string(),
                         "--run", "pil", "--backend", "command", "--cmd",
                         "/bin/sh -c '" + like_pil + "' sh {out} " + (t / "fixture/x.png").string(), "--limit", "2"});
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  // A script that cannot work (a missing module) fails the same way on every item: the run stops
  // after three, in well under a second per item, and nothing is marked failed.
  const std::string broken =
      "echo \"loading $1\" >&2; echo \"ModuleNotFoundError: No module named diffusers\" >&2; "
      "exit 1";
  auto t0 = std::chrono::steady_clock::now();
  auto r = RunVisalign({"violin", "generate", "--dataset", (t / "ds").string(), "--store", (t / "store").string(),
                        "--run", "broken", "--backend", "command", "--cmd",
                        "/bin/sh -c '" + broken + "' sh {prompt} {out}", "--concurrency", "1", "--limit", "20"});
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
    std::vector<std::string> args = {
        "violin", "generate", "--dataset", (t / "ds").string(), "--store", (t / "store").string(), "--run", "x"};
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
