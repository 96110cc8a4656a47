// `visalign violin generate --backend gemini|bfl|dashscope|replicate|fal|a1111|comfyui` against the
// reference server's imitations of those APIs (and Seedream / GLM-Image through --backend openai): whole runs whose
// images are the ground truth, each image asked for once; refusals as refused rows (not retried, shown by `store
// show`); jobs that error, expired and non-http(s) result links, 429s; a run killed mid-poll resumes by polling its
// jobs; two processes on one run;
// --dry-run's first request; malformed answers and bad options as one-line errors.
#include <signal.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "testing/cli_runner.h"
#include "testing/violin_generation.h"
#include "visalign/backends/providers.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/store.h"

namespace visalign {
namespace {
namespace fs = std::filesystem;
using testing::Counts;
using testing::kSide;
using testing::RunVisalign;
using testing::TempDir;
using testing::WriteDataset;

constexpr char kKeyVar[] = "VISALIGN_TEST_PROVIDER_KEY";
constexpr char kKey[] = "sk-provider-test-7d1c";

std::string ModelOf(const std::string& kind) {
  if (kind == "gemini") return "gemini-2.5-flash-image";
  if (kind == "bfl") return "flux-dev";
  if (kind == "replicate") return "black-forest-labs/flux-dev";
  if (kind == "fal") return "fal-ai/flux/dev";
  if (kind == "a1111") return "sd_xl_base_1.0";
  if (kind == "comfyui") return "sdxl";
  return "qwen-image";
}

// The stock SDXL workflow shipped for ComfyUI users.
fs::path ComfyWorkflow() {
  return testing::DataDir().parent_path() / "scripts" / "workflows" / "comfyui_sdxl_api.json";
}

std::unique_ptr<violin::ReferenceServer> StartProvider(const fs::path& dataset, const std::string& api,
                                                       violin::ReferenceServerOptions o = {}) {
  o.dataset = dataset;
  o.api = api;
  o.default_size = kSide;
  o.api_key = kKey;
  auto s = violin::ReferenceServer::Start(o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

std::vector<std::string> Args(const std::string& kind, const TempDir& t, const std::string& url,
                              std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"violin",
                                   "generate",
                                   "--dataset",
                                   (t / "ds").string(),
                                   "--store",
                                   (t / "store").string(),
                                   "--run",
                                   "p",
                                   "--backend",
                                   kind,
                                   "--endpoint",
                                   url,
                                   "--model",
                                   ModelOf(kind),
                                   "--api-key-env",
                                   kKeyVar,
                                   "--size",
                                   std::to_string(kSide) + "x" + std::to_string(kSide),
                                   "--backoff",
                                   "0.02",
                                   "--max-backoff",
                                   "0.1",
                                   "--poll-interval",
                                   "0.02",
                                   "--max-poll-interval",
                                   "0.05"};
  if (kind == "comfyui") args.insert(args.end(), {"--workflow", ComfyWorkflow().string()});
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

testing::RunResult Generate(const std::string& kind, const TempDir& t, const std::string& url,
                            std::vector<std::string> extra = {}) {
  return RunVisalign(Args(kind, t, url, std::move(extra)), {{kKeyVar, kKey}});
}

std::string LastLine(const std::string& text) {
  const size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

void ExpectOneLineError(const testing::RunResult& r, const std::string& starts_with) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  const std::string last = LastLine(r.err);
  EXPECT_EQ(last.rfind("error: " + starts_with, 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("error: "), r.err.size() - last.size() - 1) << r.err;
}

// Every prompt of the first `n` items was submitted exactly `times` times.
void ExpectSubmissions(const violin::ReferenceServer& srv, const std::vector<violin::ManifestItem>& items, size_t n,
                       uint64_t times) {
  auto asked = Counts(srv, "requests_by_prompt");
  EXPECT_EQ(asked.size(), n) << srv.Stats().dump();
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(asked[items[i].prompt], times) << items[i].id;
}

class Providers : public ::testing::TestWithParam<std::string> {};
class ModeratedProviders : public ::testing::TestWithParam<std::string> {};
class AsyncProviders : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Kinds, Providers,
                         ::testing::Values("gemini", "bfl", "dashscope", "replicate", "fal", "a1111", "comfyui"));
// The kinds whose API has a content filter (A1111 and ComfyUI have none).
INSTANTIATE_TEST_SUITE_P(Kinds, ModeratedProviders,
                         ::testing::Values("gemini", "bfl", "dashscope", "replicate", "fal"));
INSTANTIATE_TEST_SUITE_P(Kinds, AsyncProviders, ::testing::Values("bfl", "dashscope", "replicate", "fal", "comfyui"));

TEST_P(Providers, AWholeRunMakesEachImageOnceAndEachIsTheGroundTruth) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto srv = StartProvider(t / "ds", GetParam());
  auto r = Generate(GetParam(), t, srv->url(), {"--concurrency", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ExpectSubmissions(*srv, items, items.size(), 1);
  auto st = store::OpenStore(t / "store").value();
  auto done = st->DoneImages("p").value();
  ASSERT_EQ(done.size(), items.size());
  std::map<std::string, const violin::ManifestItem*> by_id;
  for (const auto& it : items) by_id[it.id] = &it;
  for (const auto& d : done)
    EXPECT_EQ(imaging::ReadImage(d.image_path).value().rgb,
              violin::RenderGroundTruth(*by_id.at(d.item_id), kSide, kSide).rgb)
        << d.item_id;
  const auto info = st->FindRun("p").value();
  Json identity = {
      {"backend", GetParam()}, {"model", ModelOf(GetParam())}, {"params", Json::object()}, {"size", "32x32"}};
  if (GetParam() == "comfyui") identity["workflow_sha256"] = Sha256File(ComfyWorkflow()).value();
  EXPECT_EQ(info->identity, identity);
  EXPECT_EQ(info->connection["endpoint"], srv->url());
  EXPECT_EQ(info->connection["api_key_env"], kKeyVar);
  EXPECT_EQ(info->connection.dump().find(kKey), std::string::npos);
  EXPECT_EQ(r.out.find(kKey) + r.err.find(kKey), 2 * std::string::npos);
  // The asynchronous kinds recorded each row's job; every job was polled at least once.
  if (GetParam() != "gemini" && GetParam() != "a1111") {
    for (const auto& row : st->Rows("p").value()) EXPECT_FALSE(row.job.empty()) << row.item_id;
    EXPECT_GE(srv->Stats()["jobs"]["polls"].get<size_t>(), items.size());
  }
}

TEST_P(ModeratedProviders, AModeratedPromptIsARefusedRowAskedOnceAndShownByStoreShow) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  violin::ReferenceServerOptions o;
  o.moderate = items[0].prompt;
  auto srv = StartProvider(t / "ds", GetParam(), o);
  auto r = Generate(GetParam(), t, srv->url(), {"--limit", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("3 of 4 images done now, 1 refused by the provider, 0 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("run totals: 3 done, 1 refused, 0 failed, 0 pending"), std::string::npos) << r.out;
  ExpectSubmissions(*srv, items, 4, 1);
  auto rows = store::OpenStore(t / "store").value()->Rows("p").value();
  const std::map<std::string, std::string> reasons = {
      {"gemini", "prompt blocked: PROHIBITED_CONTENT"},
      {"bfl", R"(Request Moderated {"Moderation Reasons":["Derivative Works Filter"]})"},
      {"dashscope", "HTTP 400: Input data may contain inappropriate content."},
      {"replicate", "NSFW content detected. Try running it again, or try a different prompt."},
      {"fal", "has_nsfw_concepts: the safety checker flagged the image (fal blanks it)"}};
  for (const auto& row : rows) {
    if (row.item_id != items[0].id) continue;
    EXPECT_EQ(row.status, store::RowStatus::kRefused);
    EXPECT_EQ(row.attempts, 1);
    EXPECT_EQ(row.last_error, reasons.at(GetParam()));
  }
  auto show = RunVisalign({"store", "show", "--store", (t / "store").string(), "--run", "p"});
  EXPECT_NE(show.out.find("3 done, 1 refused, 0 failed, 0 pending"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("refused:    " + items[0].id + " #0: " + reasons.at(GetParam())), std::string::npos)
      << show.out;
  // A refusal is a result: --retry-failed does not ask again.
  ASSERT_EQ(Generate(GetParam(), t, srv->url(), {"--limit", "4", "--retry-failed"}).exit_code, 0);
  ExpectSubmissions(*srv, items, 4, 1);
}

TEST_P(Providers, DryRunPrintsTheFirstRequestWithTheKeysVariableAndAsksNothing) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  auto srv = StartProvider(t / "ds", GetParam());
  auto r = Generate(GetParam(), t, srv->url(), {"--dry-run", "--json", "--limit", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto request = Json::parse(r.out)["first_request"];
  EXPECT_EQ(request["method"], "POST");
  const std::map<std::string, std::pair<std::string, std::string>> expected = {
      {"gemini", {"/v1beta/models/gemini-2.5-flash-image:generateContent", "x-goog-api-key"}},
      {"bfl", {"/v1/flux-dev", "x-key"}},
      {"dashscope", {"/api/v1/services/aigc/text2image/image-synthesis", "Authorization"}},
      {"replicate", {"/v1/models/black-forest-labs/flux-dev/predictions", "Authorization"}},
      {"fal", {"/fal-ai/flux/dev", "Authorization"}},
      {"a1111", {"/sdapi/v1/txt2img", "Authorization"}},
      {"comfyui", {"/prompt", "Authorization"}}};
  EXPECT_EQ(request["url"], srv->url() + expected.at(GetParam()).first);
  const std::string key = request["headers"][expected.at(GetParam()).second];
  EXPECT_NE(key.find(std::string("$") + kKeyVar), std::string::npos) << request.dump();
  EXPECT_NE(request["body"].dump().find(items[0].prompt), std::string::npos) << request.dump();
  EXPECT_EQ(srv->Stats()["requests"], 0);
  EXPECT_FALSE(fs::exists(t / "store"));
}

TEST_P(AsyncProviders, AJobThatErrorsAndAnExpiredResultLinkAreSubmittedAgain) {
  for (const char* mode : {"fail-first-job", "expire-first"}) {
    TempDir t;
    auto items = WriteDataset(t / "ds");
    violin::ReferenceServerOptions o;
    o.fail_first_job = std::string(mode) == "fail-first-job";
    if (!o.fail_first_job) o.result_urls = "expire-first";
    auto srv = StartProvider(t / "ds", GetParam(), o);
    auto r = Generate(GetParam(), t, srv->url(), {"--limit", "3"});
    ASSERT_EQ(r.exit_code, 0) << mode << r.out << r.err;
    ExpectSubmissions(*srv, items, 3, 2);
    EXPECT_EQ(store::OpenStore(t / "store").value()->Counts("p").value().done, 3u) << mode;
  }
}

TEST_P(AsyncProviders, RateLimitedPollsAndSubmissionsWaitForRetryAfter) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  violin::ReferenceServerOptions o;
  o.rate_limit = 6;  // a burst of 6 requests, then 6/s: 6 items need about 24 requests
  auto srv = StartProvider(t / "ds", GetParam(), o);
  auto r = Generate(GetParam(), t, srv->url(), {"--limit", "6", "--concurrency", "6", "--max-attempts", "30"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_GT(srv->Stats()["by_status"].value("429", 0), 0) << srv->Stats().dump();
  ExpectSubmissions(*srv, items, 6, 1);
}

TEST_P(AsyncProviders, ANonHttpResultUrlAndAMalformedAnswerStopTheRunWithOneLine) {
  if (GetParam() != "comfyui") {  // ComfyUI's image URLs are the client's own /view URLs
    TempDir t;
    WriteDataset(t / "ds");
    violin::ReferenceServerOptions o;
    o.result_urls = "file";
    auto srv = StartProvider(t / "ds", GetParam(), o);
    ExpectOneLineError(Generate(GetParam(), t, srv->url(), {"--concurrency", "1"}),
                       "stopped after 3 different items failed with the same error: result \"file:///etc/passwd\" is "
                       "neither an http(s) URL nor a data: URI");
    EXPECT_EQ(srv->Stats()["jobs"]["submitted"], 3);
  }
  TempDir t;
  WriteDataset(t / "ds");
  violin::ReferenceServerOptions o;
  o.malformed = true;
  auto srv = StartProvider(t / "ds", GetParam(), o);
  ExpectOneLineError(Generate(GetParam(), t, srv->url(), {"--concurrency", "1"}),
                     "stopped after 3 different items failed with the same error: answer without ");
}

// Waits until `n` rows of run p in `store` hold a job (at most 20 s).
void WaitForRecordedJobs(const fs::path& store, size_t n) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    size_t with_job = 0;
    if (store::StoreExists(store))
      if (auto rows = store::OpenStore(store).value()->Rows("p"); rows.ok())
        for (const auto& row : *rows) with_job += !row.job.empty();
    if (with_job >= n || std::chrono::steady_clock::now() >= until) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

TEST_P(AsyncProviders, ARunKilledMidPollResumesByPollingItsJobsNotSubmittingThemAgain) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  violin::ReferenceServerOptions o;
  o.job_ms = 4000;  // long enough that the kill comes while every job is still running
  auto srv = StartProvider(t / "ds", GetParam(), o);
  const std::vector<std::string> extra = {"--limit", "4", "--concurrency", "4", "--lease", "1"};
  const testing::Child child =
      testing::StartVisalign(Args(GetParam(), t, srv->url(), extra), t.path(), "gen", {{kKeyVar, kKey}});
  WaitForRecordedJobs(t / "store", 4);
  kill(child.pid, SIGKILL);
  EXPECT_EQ(testing::Wait(child).exit_code, 128 + SIGKILL);
  EXPECT_EQ(store::OpenStore(t / "store").value()->Counts("p").value().done, 0u);
  auto r = Generate(GetParam(), t, srv->url(), extra);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(store::OpenStore(t / "store").value()->Counts("p").value().done, 4u);
  ExpectSubmissions(*srv, items, 4, 1);
}

TEST_P(Providers, TwoProcessesSharingARunSubmitEachItemOnce) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  violin::ReferenceServerOptions o;
  o.job_ms = 100;
  auto srv = StartProvider(t / "ds", GetParam(), o);
  const std::vector<std::string> extra = {"--limit", "12", "--concurrency", "3"};
  std::vector<testing::Child> workers;
  for (const char* name : {"a", "b"})
    workers.push_back(
        testing::StartVisalign(Args(GetParam(), t, srv->url(), extra), t.path(), name, {{kKeyVar, kKey}}));
  for (const auto& w : workers) EXPECT_EQ(testing::Wait(w).exit_code, 0);
  EXPECT_EQ(store::OpenStore(t / "store").value()->Counts("p").value().done, 12u);
  ExpectSubmissions(*srv, items, 12, 1);
}

TEST(ProviderOptions, BadKindsSizesAndMissingOptionsAreOneLineErrors) {
  TempDir t;
  WriteDataset(t / "ds");
  auto unknown = RunVisalign({"violin", "generate", "--dataset", (t / "ds").string(), "--store", (t / "store").string(),
                              "--run", "p", "--backend", "midjourney"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("midjourney"), std::string::npos) << unknown.err;
  std::vector<std::string> odd = Args("gemini", t, "http://127.0.0.1:1");
  *(std::find(odd.begin(), odd.end(), "--size") + 1) = "1000x300";
  ExpectOneLineError(RunVisalign(odd, {{kKeyVar, kKey}}),
                     "size 1000x300 has aspect ratio 10:3, which Gemini does not offer");
  ExpectOneLineError(RunVisalign({"violin", "generate", "--dataset", (t / "ds").string(), "--store",
                                  (t / "store").string(), "--run", "p", "--backend", "bfl"}),
                     "--model is required with --backend bfl");
  ExpectOneLineError(RunVisalign(Args("dashscope", t, "http://127.0.0.1:1")),
                     "environment variable " + std::string(kKeyVar) + " is not set or empty");
}

TEST(ProviderOptions, AnOpenAiModerationBlockIsARefusedRowToo) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  violin::ReferenceServerOptions o;
  o.dataset = t / "ds";
  o.moderate = items[1].prompt;
  auto srv = violin::ReferenceServer::Start(o).value();
  auto r = RunVisalign(testing::GenerateArgs(t / "ds", t / "store", srv->url(), {"--limit", "3"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto counts = store::OpenStore(t / "store").value()->Counts("ref").value();
  EXPECT_EQ(counts.refused, 1u);
  EXPECT_EQ(counts.done, 2u);
  EXPECT_EQ(Counts(*srv, "requests_by_prompt")[items[1].prompt], 1u);
  // violin evaluate counts the refusal per model, with its Wilson 95 % interval; under --missing
  // worst the refused item scores 1 like any item without an image.
  const std::vector<std::string> evaluate = {"violin",    "evaluate",
                                             "--dataset", (t / "ds").string(),
                                             "--store",   (t / "store").string(),
                                             "--run",     "ref",
                                             "--limit",   "3",
                                             "--out",     (t / "eval").string(),
                                             "--missing", "worst"};
  auto text = RunVisalign(evaluate);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("refusals (content filters; refused of finished rows, Wilson 95 %):\n  ref: 1 of 3 (33.3 %, "
                          "6.1-79.2 %)"),
            std::string::npos)
      << text.out;
  std::vector<std::string> as_json = evaluate;
  as_json.push_back("--json");
  auto j = RunVisalign(as_json);
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto refusals = Json::parse(j.out)["refusals"];
  EXPECT_EQ(refusals[0]["refused"], 1);
  EXPECT_EQ(refusals[0]["finished"], 3);
  EXPECT_NEAR(refusals[0]["ci95"][0].get<double>(), 0.0615, 1e-4);
  EXPECT_EQ(Json::parse(ReadFile(t / "eval" / "summary.json").value())["refusals"], refusals);
}

TEST(ComfyUi, AMissingWorkflowOrOneWithoutThePromptPlaceholderIsOneLineExit2) {
  TempDir t;
  WriteDataset(t / "ds");
  std::vector<std::string> args = Args("comfyui", t, "http://127.0.0.1:1");
  std::vector<std::string> without(args.begin(), args.end() - 2);  // no --workflow FILE
  ExpectOneLineError(RunVisalign(without, {{kKeyVar, kKey}}), "--workflow is required with --backend comfyui");
  const fs::path no_prompt =
      t.Write("no-prompt.json", R"({"6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a cat"}}})");
  args.back() = no_prompt.string();
  ExpectOneLineError(RunVisalign(args, {{kKeyVar, kKey}}), "the workflow has no \"{prompt}\"");
  args.back() = t.Write("ui.json", R"({"nodes": [], "links": []})").string();
  ExpectOneLineError(RunVisalign(args, {{kKeyVar, kKey}}), "the workflow is in ComfyUI's UI format");
  args.back() = t.Write("broken.json", "{\"3\": ").string();
  ExpectOneLineError(RunVisalign(args, {{kKeyVar, kKey}}), "");
}

TEST(ComfyUi, TheWorkflowIsSubstitutedJsonAwareAndItsHashIsTheIdentity) {
  const Json workflow = Json::parse(ReadFile(ComfyWorkflow()).value());
  ASSERT_TRUE(backends::CheckComfyWorkflow(workflow, "64x32").ok());
  const Json w = backends::SubstituteComfyWorkflow(workflow, "say \"{seed}\"", 7, "64x32");
  EXPECT_EQ(w["3"]["inputs"]["seed"], 7);
  EXPECT_EQ(w["5"]["inputs"]["width"], 64);
  EXPECT_EQ(w["5"]["inputs"]["height"], 32);
  EXPECT_EQ(w["6"]["inputs"]["text"], "say \"{seed}\"");  // the prompt's own braces are left alone
  EXPECT_EQ(w["4"], workflow["4"]);
  Status no_size = backends::CheckComfyWorkflow(workflow, "");
  EXPECT_NE(no_size.ToString().find("uses {width}/{height} but no --size"), std::string::npos) << no_size.ToString();
}

TEST(ComfyUi, ANodeErrorNamesTheNodeAndStopsTheRunWithOneLine) {
  TempDir t;
  WriteDataset(t / "ds");
  auto srv = StartProvider(t / "ds", "comfyui");
  std::string workflow = ReadFile(ComfyWorkflow()).value();
  workflow.replace(workflow.find("sd_xl_base_1.0.safetensors"), 26, "missing.safetensors");
  std::vector<std::string> args = Args("comfyui", t, srv->url(), {"--concurrency", "1"});
  args[std::find(args.begin(), args.end(), "--workflow") - args.begin() + 1] = t.Write("bad.json", workflow).string();
  ExpectOneLineError(
      RunVisalign(args, {{kKeyVar, kKey}}),
      "stopped after 3 different items failed with the same error: ComfyUI rejected the workflow: node 4 "
      "(CheckpointLoaderSimple): Value not in list: ckpt_name: \"missing.safetensors\" not in");
  EXPECT_EQ(srv->Stats()["jobs"]["submitted"], 0);
}

// The documented recipes of the OpenAI-shaped providers (docs/backends.md): Seedream on BytePlus
// ModelArk and GLM-Image on Zhipu.
struct Recipe {
  std::string api, path, model;
  std::vector<std::string> params;  // the recipe's --param values
};
void PrintTo(const Recipe& r, std::ostream* os) { *os << r.api; }
class OpenAiShapedProviders : public ::testing::TestWithParam<Recipe> {};
INSTANTIATE_TEST_SUITE_P(
    Recipes, OpenAiShapedProviders,
    ::testing::Values(
        Recipe{"seedream", "/api/v3", "seedream-4-5-251128", {"watermark=false", "seed={seed}", "response_format=url"}},
        Recipe{"glm-image", "/api/paas/v4", "glm-image", {"response_format=null", "watermark_enabled=false"}}),
    [](const auto& info) { return info.param.api == "seedream" ? std::string("Seedream") : std::string("GlmImage"); });

std::vector<std::string> RecipeArgs(const Recipe& r, const TempDir& t, const std::string& url, bool with_params) {
  std::vector<std::string> args = {"violin",        "generate",
                                   "--dataset",     (t / "ds").string(),
                                   "--store",       (t / "store").string(),
                                   "--run",         "p",
                                   "--backend",     "openai",
                                   "--endpoint",    url + r.path,
                                   "--model",       r.model,
                                   "--api-key-env", kKeyVar,
                                   "--size",        "32x32",
                                   "--limit",       "4",
                                   "--backoff",     "0.02"};
  if (with_params)
    for (const std::string& p : r.params) args.insert(args.end(), {"--param", p});
  return args;
}

TEST_P(OpenAiShapedProviders, TheRecipeMakesExactImagesAndTheContentFilterIsARefusal) {
  TempDir t;
  auto items = WriteDataset(t / "ds");
  violin::ReferenceServerOptions o;
  o.moderate = items[2].prompt;
  auto srv = StartProvider(t / "ds", GetParam().api, o);
  auto r = RunVisalign(RecipeArgs(GetParam(), t, srv->url(), true), {{kKeyVar, kKey}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto st = store::OpenStore(t / "store").value();
  EXPECT_EQ(st->Counts("p").value().refused, 1u);
  std::map<std::string, const violin::ManifestItem*> by_id;
  for (const auto& it : items) by_id[it.id] = &it;
  const auto done = st->DoneImages("p").value();
  ASSERT_EQ(done.size(), 3u);
  for (const auto& d : done)
    EXPECT_EQ(imaging::ReadImage(d.image_path).value().rgb,
              violin::RenderGroundTruth(*by_id.at(d.item_id), kSide, kSide).rgb)
        << d.item_id;
  ExpectSubmissions(*srv, items, 4, 1);
}

TEST_P(OpenAiShapedProviders, WithoutTheRecipeTheApiRefusesOpenAisFieldsOrWatermarksTheImage) {
  if (GetParam().api == "glm-image") {  // Zhipu has no response_format, which visalign sends by default
    TempDir t;
    WriteDataset(t / "ds");
    auto srv = StartProvider(t / "ds", GetParam().api);
    auto r = RunVisalign(RecipeArgs(GetParam(), t, srv->url(), false), {{kKeyVar, kKey}});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("The parameter `response_format`"), std::string::npos) << r.err;
  }
  // Only the watermark left on: images come back, but marked (they would not score exactly).
  TempDir t2;
  auto items = WriteDataset(t2 / "ds");
  auto srv2 = StartProvider(t2 / "ds", GetParam().api);
  std::vector<std::string> args = RecipeArgs(GetParam(), t2, srv2->url(), true);
  args.erase(std::find_if(args.begin(), args.end(), [](const std::string& a) { return a.find("watermark") == 0; }) - 1,
             std::find_if(args.begin(), args.end(), [](const std::string& a) { return a.find("watermark") == 0; }) + 1);
  ASSERT_EQ(RunVisalign(args, {{kKeyVar, kKey}}).exit_code, 0);
  std::map<std::string, const violin::ManifestItem*> by_id;
  for (const auto& it : items) by_id[it.id] = &it;
  for (const auto& d : store::OpenStore(t2 / "store").value()->DoneImages("p").value())
    EXPECT_NE(imaging::ReadImage(d.image_path).value().rgb,
              violin::RenderGroundTruth(*by_id.at(d.item_id), kSide, kSide).rgb);
}

}  // namespace
}  // namespace visalign
