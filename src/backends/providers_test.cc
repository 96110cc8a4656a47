// The hosted providers' pieces: how each reads its answers (refusals, pending states, errors),
// the shared parameter merge, sizes, polling waits, result downloads (data: URIs, schemes, size
// bounds, expired links) and content-filter errors as refusals. Whole runs against the imitation
// servers are in tests/generate_providers_test.cc.
#include <gtest/gtest.h>

#include "backends/provider.h"
#include "backends/test_util.h"
#include "visalign/backends/providers.h"
#include "visalign/core/base64.h"

namespace visalign::backends {
namespace {

ProviderOptions Options(const std::string& kind, const std::string& size = "") {
  ProviderOptions o;
  o.kind = kind;
  o.endpoint = "http://127.0.0.1:9";
  o.model = "m";
  o.size = size;
  return o;
}

TEST(Gemini, ABlockedPromptASafetyFinishAndATextAnswerAreRefusalsWithTheProvidersReason) {
  auto p = MakeGeminiProvider(Options("gemini"));
  auto blocked = p->ReadSubmitted(Json::parse(R"({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}})"));
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.error.kind, ErrorKind::kRefused);
  EXPECT_EQ(blocked.error.message, "prompt blocked: PROHIBITED_CONTENT");
  auto safety = p->ReadSubmitted(
      Json::parse(R"({"candidates": [{"finishReason": "IMAGE_SAFETY", "finishMessage": "not drawn"}]})"));
  ASSERT_FALSE(safety.ok());
  EXPECT_EQ(safety.error.kind, ErrorKind::kRefused);
  EXPECT_EQ(safety.error.message, "finishReason IMAGE_SAFETY (not drawn)");
  auto text = p->ReadSubmitted(Json::parse(
      R"({"candidates": [{"content": {"parts": [{"text": "I can't draw that."}]}, "finishReason": "STOP"}]})"));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error.kind, ErrorKind::kRefused);
  EXPECT_EQ(text.error.message, "answered with text and no image: I can't draw that.");
}

TEST(Gemini, TheInlineImageIsADataUriAndAnAnswerWithNeitherIsMalformed) {
  auto p = MakeGeminiProvider(Options("gemini"));
  auto ok = p->ReadSubmitted(Json::parse(
      R"({"candidates": [{"content": {"parts": [{"text": "here"}, {"inline_data": {"mime_type": "image/png", "data": "iVBO"}}]}}]})"));
  ASSERT_TRUE(ok.ok()) << ok.error.message;
  EXPECT_TRUE(ok.value->ready);
  EXPECT_EQ(ok.value->images, std::vector<std::string>{"data:image/png;base64,iVBO"});
  auto empty = p->ReadSubmitted(Json::parse(R"({"candidates": [{"finishReason": "STOP"}]})"));
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error.kind, ErrorKind::kProtocol);
  EXPECT_NE(empty.error.message.find("no inlineData part (finishReason STOP)"), std::string::npos);
}

TEST(Gemini, TheRequestHasTheTextPartImageModalityAndTheSizesAspectRatio) {
  ProviderOptions o = Options("gemini", "1536x1024");
  o.params = Json::parse(R"({"seed": "{seed}", "imageConfig": {"imageSize": "2K"}})");
  HttpRequest r = MakeGeminiProvider(o)->Submit({"a", "a red square", 0, 42});
  EXPECT_EQ(r.url, "http://127.0.0.1:9/v1beta/models/m:generateContent");
  EXPECT_EQ(nlohmann::json::parse(r.body),
            nlohmann::json::parse(R"({"contents": [{"role": "user", "parts": [{"text": "a red square"}]}],
      "generationConfig": {"responseModalities": ["IMAGE"], "seed": 42,
                           "imageConfig": {"aspectRatio": "3:2", "imageSize": "2K"}}})"));
  EXPECT_EQ(GeminiAspectRatio("").value(), "");
  EXPECT_EQ(GeminiAspectRatio("32x32").value(), "1:1");
  Status odd = GeminiAspectRatio("1000x300").status();
  EXPECT_NE(odd.ToString().find("aspect ratio 10:3, which Gemini does not offer"), std::string::npos) << odd.ToString();
}

TEST(Bfl, PendingReadyModeratedAndFailedStatesAsTheApiNamesThem) {
  auto p = MakeBflProvider(Options("bfl"));
  auto submitted =
      p->ReadSubmitted(Json::parse(R"({"id": "j1", "polling_url": "https://api.us1.bfl.ai/v1/get_result?id=j1"})"));
  ASSERT_TRUE(submitted.ok());
  EXPECT_FALSE(submitted.value->ready);
  EXPECT_EQ(Json::parse(submitted.value->job)["id"], "j1");
  EXPECT_FALSE(p->ReadPolled(Json::parse(R"({"status": "Pending"})")).value->ready);
  auto ready = p->ReadPolled(Json::parse(R"({"status": "Ready", "result": {"sample": "https://x/s.png"}})"));
  EXPECT_EQ(ready.value->images, std::vector<std::string>{"https://x/s.png"});
  auto moderated = p->ReadPolled(Json::parse(R"({"status": "Content Moderated", "details": {"reason": "nsfw"}})"));
  EXPECT_EQ(moderated.error.kind, ErrorKind::kRefused);
  EXPECT_EQ(moderated.error.message, R"(Content Moderated {"reason":"nsfw"})");
  EXPECT_EQ(p->ReadPolled(Json::parse(R"({"status": "Request Moderated"})")).error.kind, ErrorKind::kRefused);
  EXPECT_EQ(p->ReadPolled(Json::parse(R"({"status": "Error"})")).error.kind, ErrorKind::kServer);
  EXPECT_EQ(p->ReadPolled(Json::parse(R"({"status": "Task not found"})")).error.kind, ErrorKind::kServer);
  EXPECT_EQ(p->ReadPolled(Json::parse(R"({"status": "Ready"})")).error.kind, ErrorKind::kProtocol);
  EXPECT_EQ(p->ReadPolled(Json::parse(R"({"status": "Sleeping"})")).error.kind, ErrorKind::kProtocol);
}

TEST(Bfl, TheKeyGoesOnlyToPollingUrlsOfTheEndpointsOwnSite) {
  ProviderOptions o = Options("bfl", "512x256");
  o.endpoint = "https://api.bfl.ai";
  auto p = MakeBflProvider(o);
  EXPECT_TRUE(p->Poll(R"({"polling_url": "https://api.us1.bfl.ai/v1/get_result?id=1"})").second);
  EXPECT_FALSE(p->Poll(R"({"polling_url": "https://evil.example/v1/get_result?id=1"})").second);
  EXPECT_FALSE(p->Poll(R"({"polling_url": "https://bfl.ai.evil.example/x"})").second);
  HttpRequest submit = p->Submit({"a", "p", 0, 7});
  EXPECT_EQ(submit.url, "https://api.bfl.ai/v1/m");
  EXPECT_EQ(
      nlohmann::json::parse(submit.body),
      nlohmann::json::parse(R"({"prompt": "p", "width": 512, "height": 256, "seed": 7, "output_format": "png"})"));
}

TEST(DashScope, TaskStatesRefusalsAndTheAsyncRequest) {
  ProviderOptions o = Options("dashscope", "64x32");
  o.params = Json::parse(R"({"watermark": null, "negative_prompt": "text"})");
  auto p = MakeDashScopeProvider(o);
  HttpRequest submit = p->Submit({"a", "p", 0, std::nullopt});
  EXPECT_EQ(submit.url, "http://127.0.0.1:9/api/v1/services/aigc/text2image/image-synthesis");
  EXPECT_NE(std::find(submit.headers.begin(), submit.headers.end(),
                      std::pair<std::string, std::string>{"X-DashScope-Async", "enable"}),
            submit.headers.end());
  EXPECT_EQ(nlohmann::json::parse(submit.body), nlohmann::json::parse(R"({"model": "m", "input": {"prompt": "p"},
      "parameters": {"size": "64*32", "n": 1, "prompt_extend": false, "negative_prompt": "text"}})"));
  EXPECT_EQ(p->ReadSubmitted(Json::parse(R"({"output": {"task_id": "t1", "task_status": "PENDING"}})")).value->job,
            "t1");
  EXPECT_EQ(p->Poll("t1").first.url, "http://127.0.0.1:9/api/v1/tasks/t1");
  EXPECT_FALSE(p->ReadPolled(Json::parse(R"({"output": {"task_status": "RUNNING"}})")).value->ready);
  auto ok = p->ReadPolled(
      Json::parse(R"({"output": {"task_status": "SUCCEEDED", "results": [{"url": "https://o/1.png"}]}})"));
  EXPECT_EQ(ok.value->images, std::vector<std::string>{"https://o/1.png"});
  auto inspected = p->ReadPolled(Json::parse(
      R"({"output": {"task_status": "SUCCEEDED", "results": [{"code": "DataInspectionFailed", "message": "bad"}]}})"));
  EXPECT_EQ(inspected.error.kind, ErrorKind::kRefused);
  EXPECT_EQ(inspected.error.message, "DataInspectionFailed: bad");
  auto failed =
      p->ReadPolled(Json::parse(R"({"output": {"task_status": "FAILED", "code": "InternalError", "message": "x"}})"));
  EXPECT_EQ(failed.error.kind, ErrorKind::kServer);
  EXPECT_EQ(failed.error.message, "task FAILED: InternalError: x");
}

TEST(Replicate, PredictionStatesOutputsAndNsfwFailuresAsTheApiNamesThem) {
  ProviderOptions o = Options("replicate", "64x32");
  o.model = "black-forest-labs/flux-dev";
  auto p = MakeReplicateProvider(o);
  HttpRequest submit = p->Submit({"a", "p", 0, 5});
  EXPECT_EQ(submit.url, "http://127.0.0.1:9/v1/models/black-forest-labs/flux-dev/predictions");
  EXPECT_EQ(Json::parse(submit.body),
            Json::parse(R"({"input": {"prompt": "p", "seed": 5, "width": 64, "height": 32}})"));
  EXPECT_NE(
      std::find(submit.headers.begin(), submit.headers.end(), std::pair<std::string, std::string>{"Prefer", "wait"}),
      submit.headers.end());
  o.model = "owner/name:abc123";
  EXPECT_EQ(Json::parse(MakeReplicateProvider(o)->Submit({"a", "p", 0, std::nullopt}).body)["version"], "abc123");
  auto starting = p->ReadSubmitted(
      Json::parse(R"({"id": "x", "status": "starting", "urls": {"get": "http://127.0.0.1:9/v1/predictions/x"}})"));
  EXPECT_FALSE(starting.value->ready);
  EXPECT_EQ(starting.value->job, "http://127.0.0.1:9/v1/predictions/x");
  EXPECT_TRUE(p->Poll(starting.value->job).second);
  EXPECT_FALSE(p->Poll("https://elsewhere.example/v1/predictions/x").second);
  EXPECT_EQ(p->ReadPolled(Json::parse(R"({"status": "succeeded", "output": "https://r/1.png"})")).value->images,
            std::vector<std::string>{"https://r/1.png"});
  EXPECT_EQ(p->ReadPolled(Json::parse(R"({"status": "succeeded", "output": ["https://r/1.webp", "https://r/2.webp"]})"))
                .value->images.size(),
            2u);
  auto nsfw = p->ReadPolled(Json::parse(R"({"status": "failed", "error": "NSFW content detected. Try again."})"));
  EXPECT_EQ(nsfw.error.kind, ErrorKind::kRefused);
  EXPECT_EQ(nsfw.error.message, "NSFW content detected. Try again.");
  EXPECT_EQ(p->ReadPolled(Json::parse(R"({"status": "failed", "error": "CUDA OOM"})")).error.kind, ErrorKind::kServer);
  EXPECT_EQ(p->ReadPolled(Json::parse(R"({"status": "succeeded", "output": null})")).error.kind, ErrorKind::kProtocol);
  EXPECT_EQ(p->ReadPolled(Json::parse(R"({"detail": "x"})")).error.kind, ErrorKind::kProtocol);
}

TEST(Fal, TheJobMovesFromItsStatusToItsResultAndNsfwConceptsAreRefusals) {
  auto p = MakeFalProvider(Options("fal", "64x64"));
  EXPECT_EQ(Json::parse(p->Submit({"a", "p", 0, 3}).body),
            Json::parse(R"({"prompt": "p", "num_images": 1, "seed": 3, "image_size": {"width": 64, "height": 64}})"));
  EXPECT_EQ(p->KeyHeader("k").second, "Key k");
  auto queued = p->ReadSubmitted(Json::parse(
      R"({"request_id": "r", "status_url": "http://127.0.0.1:9/a/b/requests/r/status", "response_url": "http://127.0.0.1:9/a/b/requests/r"})"));
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(p->Poll(queued.value->job).first.url, "http://127.0.0.1:9/a/b/requests/r/status");
  EXPECT_FALSE(p->ReadPolled(Json::parse(R"({"status": "IN_PROGRESS"})")).value->ready);
  auto completed =
      p->ReadPolled(Json::parse(R"({"status": "COMPLETED", "response_url": "http://127.0.0.1:9/a/b/requests/r"})"));
  ASSERT_TRUE(completed.ok());
  EXPECT_FALSE(completed.value->ready);
  EXPECT_EQ(p->Poll(completed.value->job).first.url, "http://127.0.0.1:9/a/b/requests/r");
  EXPECT_EQ(
      p->ReadPolled(Json::parse(R"({"images": [{"url": "data:image/png;base64,iVBO"}], "has_nsfw_concepts": [false]})"))
          .value->images,
      std::vector<std::string>{"data:image/png;base64,iVBO"});
  EXPECT_EQ(
      p->ReadPolled(Json::parse(R"({"images": [{"url": "https://f/1.png"}], "has_nsfw_concepts": [true]})")).error.kind,
      ErrorKind::kRefused);
  EXPECT_EQ(p->ReadPolled(Json::parse(R"({"status": "COMPLETED", "error": "boom", "response_url": "http://x/y"})"))
                .error.kind,
            ErrorKind::kServer);
}

TEST(A1111, TheBodyPicksTheCheckpointAndTheImageIsTheFirstBase64) {
  ProviderOptions o = Options("a1111", "64x32");
  o.params = Json::parse(R"({"steps": 30, "override_settings": null})");
  auto p = MakeA1111Provider(o);
  EXPECT_EQ(Json::parse(p->Submit({"a", "p", 0, std::nullopt}).body),
            Json::parse(R"({"prompt": "p", "seed": -1, "batch_size": 1, "n_iter": 1, "send_images": true,
                            "save_images": false, "width": 64, "height": 32, "steps": 30})"));
  EXPECT_EQ(p->ReadSubmitted(Json::parse(R"({"images": ["iVBO"], "info": "{}"})")).value->images,
            std::vector<std::string>{"data:image/png;base64,iVBO"});
  EXPECT_EQ(p->ReadSubmitted(Json::parse(R"({"images": []})")).error.kind, ErrorKind::kProtocol);
}

TEST(ComfyUi, HistoryStatesOutputsAndErrorsNamingTheNode) {
  ProviderOptions o = Options("comfyui", "64x64");
  o.workflow = Json::parse(R"({"6": {"class_type": "CLIPTextEncode", "inputs": {"text": "{prompt}"}},
                              "3": {"class_type": "KSampler", "inputs": {"seed": "{seed}"}}})");
  auto p = MakeComfyUiProvider(o);
  const Json body = Json::parse(p->Submit({"a", "a cat", 0, 9}).body);
  EXPECT_EQ(body["prompt"]["6"]["inputs"]["text"], "a cat");
  EXPECT_EQ(body["prompt"]["3"]["inputs"]["seed"], 9);
  EXPECT_EQ(p->ReadSubmitted(Json::parse(R"({"prompt_id": "q1", "number": 0, "node_errors": {}})")).value->job, "q1");
  EXPECT_EQ(p->Poll("q1").first.url, "http://127.0.0.1:9/history/q1");
  EXPECT_FALSE(p->ReadPolled(Json::object()).value->ready);
  auto done = p->ReadPolled(Json::parse(R"({"q1": {"status": {"status_str": "success", "completed": true},
      "outputs": {"12": {"images": [{"filename": "prev.png", "subfolder": "", "type": "temp"}]},
                  "9": {"images": [{"filename": "ComfyUI 1.png", "subfolder": "a/b", "type": "output"}]}}}})"));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done.value->images.front(), "http://127.0.0.1:9/view?filename=ComfyUI%201.png&subfolder=a%2Fb&type=output");
  auto failed = p->ReadPolled(Json::parse(R"({"q1": {"status": {"status_str": "error", "completed": false, "messages":
      [["execution_error", {"node_id": "3", "node_type": "KSampler", "exception_type": "RuntimeError", "exception_message": "OOM"}]]}}})"));
  EXPECT_EQ(failed.error.kind, ErrorKind::kServer);
  EXPECT_EQ(failed.error.message, "node 3 (KSampler) failed: RuntimeError: OOM");
  AttemptError e{ErrorKind::kClient, "HTTP 400: Prompt outputs failed validation", {}};
  p->ExplainError(R"({"error": {"type": "prompt_outputs_failed_validation"}, "node_errors": {"4": {"errors":
      [{"message": "Value not in list", "details": "ckpt_name: 'x' not in []"}], "class_type": "CheckpointLoaderSimple"}}})",
                  e);
  EXPECT_EQ(
      e.message,
      "ComfyUI rejected the workflow: node 4 (CheckpointLoaderSimple): Value not in list: ckpt_name: 'x' not in []");
}

TEST(OpenAiClient, ABaseEndingInAVersionSegmentGetsNoV1) {
  auto url = [](const std::string& base) { return OpenAiClient({base, "", {}}, nullptr).Url("images/generations"); };
  EXPECT_EQ(url("https://ark.ap-southeast.bytepluses.com/api/v3"),
            "https://ark.ap-southeast.bytepluses.com/api/v3/images/generations");
  EXPECT_EQ(url("https://open.bigmodel.cn/api/paas/v4"), "https://open.bigmodel.cn/api/paas/v4/images/generations");
  EXPECT_EQ(url("https://gateway/v1"), "https://gateway/v1/images/generations");
  EXPECT_EQ(url("http://127.0.0.1:8080"), "http://127.0.0.1:8080/v1/images/generations");
  EXPECT_EQ(url("https://gateway/openai/vision"), "https://gateway/openai/vision/v1/images/generations");
}

TEST(ProviderParams, SeedPlaceholdersMergeAndNullRemoves) {
  const Json base = Json::parse(R"({"a": 1, "nested": {"b": 2, "c": 3}})");
  EXPECT_EQ(WithParams(base, Json::parse(R"({"a": null, "nested": {"c": "{seed}"}, "d": true})"), 9),
            Json::parse(R"({"nested": {"b": 2, "c": 9}, "d": true})"));
  EXPECT_EQ(WithParams(base, Json::parse(R"({"a": "{seed}"})"), std::nullopt),
            Json::parse(R"({"nested": {"b": 2, "c": 3}})"));
  EXPECT_EQ(ParseImageSize("32x48"), (std::pair<int, int>{32, 48}));
  for (const char* bad : {"", "32", "x3", "3x", "0x3", "3x3x3", "-3x3", "99999999999x1"})
    EXPECT_FALSE(ParseImageSize(bad)) << bad;
}

TEST(PollPolicy, WaitsGrowByTheMultiplierUpToTheMaximumWithJitterBelow) {
  PollPolicy p;
  p.initial = Millis(100);
  p.max = Millis(400);
  p.multiplier = 2;
  p.jitter = 0.25;
  for (int i = 0; i < 50; ++i) {
    EXPECT_GE(p.Wait(1).count(), 75);
    EXPECT_LE(p.Wait(1).count(), 100);
    EXPECT_GE(p.Wait(2).count(), 150);
    EXPECT_LE(p.Wait(2).count(), 200);
    EXPECT_GE(p.Wait(9).count(), 300);
    EXPECT_LE(p.Wait(9).count(), 400);
  }
}

TEST(ProviderBackend, BadOptionsAreOneLineNamingTheOption) {
  auto make = [](ProviderOptions o) { return MakeProviderBackend(std::move(o), nullptr).status().ToString(); };
  EXPECT_NE(make(Options("midjourney")).find("unknown provider \"midjourney\""), std::string::npos);
  ProviderOptions no_model = Options("bfl");
  no_model.model.clear();
  EXPECT_NE(make(no_model).find("--model"), std::string::npos);
  ProviderOptions file = Options("bfl");
  file.endpoint = "file:///etc";
  EXPECT_NE(make(file).find("is not an http(s) URL"), std::string::npos);
  EXPECT_NE(make(Options("dashscope", "big")).find("invalid size \"big\""), std::string::npos);
  ProviderOptions poll = Options("bfl");
  poll.poll.job_timeout = Millis(0);
  EXPECT_NE(make(poll).find("--poll-interval/--job-timeout"), std::string::npos);
  EXPECT_EQ(MakeProviderBackend(Options("gemini"), nullptr).value()->Identity(),
            Json::parse(R"({"backend": "gemini", "model": "m", "params": {}})"));
}

TEST(FetchResult, DataUrisDecodeOtherSchemesAreRefusedAndDownloadsAreBounded) {
  auto transport = MakeCurlTransport();
  const std::string png = testing::TinyPng();
  testing::LocalServer server;
  server.server.Get("/img.png",
                    [&](const httplib::Request&, httplib::Response& res) { res.set_content(png, "image/png"); });
  server.server.Get("/gone.png", [](const httplib::Request&, httplib::Response& res) {
    res.status = 403;
    res.set_content("<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>",
                    "application/xml");
  });
  server.Start();
  const HttpTimeouts t{Millis(2000), Millis(5000)};
  EXPECT_EQ(FetchResult(*transport, "data:image/png;base64," + EncodeBase64(png), t, 1 << 20, nullptr).value, png);
  EXPECT_EQ(FetchResult(*transport, server.url() + "/img.png", t, 1 << 20, nullptr).value, png);
  auto small = FetchResult(*transport, server.url() + "/img.png", t, 10, nullptr);
  EXPECT_EQ(small.error.kind, ErrorKind::kProtocol);
  EXPECT_NE(small.error.message.find("larger than 10 bytes"), std::string::npos) << small.error.message;
  auto expired = FetchResult(*transport, server.url() + "/gone.png", t, 1 << 20, nullptr);
  EXPECT_EQ(expired.error.kind, ErrorKind::kServer);
  EXPECT_NE(expired.error.message.find("has expired or is refused (HTTP 403"), std::string::npos)
      << expired.error.message;
  for (const char* bad : {"file:///etc/passwd", "ftp://x/y.png", "data:image/png,notbase64", "gopher://x"}) {
    auto r = FetchResult(*transport, bad, t, 1 << 20, nullptr);
    EXPECT_EQ(r.error.kind, ErrorKind::kProtocol) << bad;
  }
}

TEST(HttpStatusError, ContentFilterCodesAreRefusalsOtherClientErrorsAreNot) {
  HttpResponse openai{
      400,
      {},
      R"({"error": {"message": "Your request was rejected by the safety system.", "code": "moderation_blocked"}})"};
  EXPECT_EQ(HttpStatusError(openai).kind, ErrorKind::kRefused);
  EXPECT_EQ(HttpStatusError(openai).message, "HTTP 400: Your request was rejected by the safety system.");
  HttpResponse dashscope{
      400, {}, R"({"code": "DataInspectionFailed", "message": "Input data may contain inappropriate content."})"};
  EXPECT_EQ(HttpStatusError(dashscope).kind, ErrorKind::kRefused);
  HttpResponse ark{
      400,
      {},
      R"({"error": {"code": "InputTextSensitiveContentDetected", "message": "sensitive", "type": "BadRequest"}})"};
  EXPECT_EQ(HttpStatusError(ark).kind, ErrorKind::kRefused);
  HttpResponse zhipu{400, {}, R"({"error": {"code": "1301", "message": "unsafe"}})"};
  EXPECT_EQ(HttpStatusError(zhipu).kind, ErrorKind::kRefused);
  HttpResponse other{400, {}, R"({"error": {"message": "Unknown parameter", "code": "unknown_parameter"}})"};
  EXPECT_EQ(HttpStatusError(other).kind, ErrorKind::kClient);
  const AttemptError refusal{ErrorKind::kRefused, "x", {}};
  EXPECT_FALSE(refusal.retryable());
}

}  // namespace
}  // namespace visalign::backends
