// HTTP transport, error classification and the OpenAI-compatible images backend against a real
// HTTP server on 127.0.0.1.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>

#include "backends/test_util.h"
#include "testing/dirs.h"
#include "visalign/backends/backends.h"
#include "visalign/core/base64.h"

namespace visalign::backends {
namespace {
using testing::LocalServer;
using testing::TinyPng;

const std::atomic<bool> kNoCancel{false};

// `depth` opening tokens, then as many closing ones: hostile replies nested far beyond any real one.
std::string Nested(std::string_view open, int depth, std::string_view close) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += open;
  for (int i = 0; i < depth; ++i) s += close;
  return s;
}

HttpResponse Response(int status, std::string content_type, std::string body,
                      std::vector<std::pair<std::string, std::string>> extra = {}) {
  HttpResponse r;
  r.status = status;
  r.headers = std::move(extra);
  r.headers.emplace_back("content-type", std::move(content_type));
  r.body = std::move(body);
  return r;
}

TEST(HttpStatusError, ClassifiesStatusesAndQuotesTheServer) {
  struct Case {
    int status;
    std::string content_type, body;
    ErrorKind kind;
    bool retryable;
    std::string message;
  } cases[] = {
      {400, "application/json", R"({"error": {"message": "Invalid size 7x7"}})", ErrorKind::kClient, false,
       "HTTP 400: Invalid size 7x7"},
      {401, "application/json", R"({"error": "bad key"})", ErrorKind::kClient, false, "HTTP 401: bad key"},
      {422, "application/json", R"({"detail": "prompt too long"})", ErrorKind::kClient, false,
       "HTTP 422: prompt too long"},
      {408, "text/plain", "slow", ErrorKind::kServer, true, "HTTP 408: slow"},
      {429, "application/json", R"({"message": "slow down"})", ErrorKind::kRateLimited, true, "HTTP 429: slow down"},
      {502, "text/html", "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
       ErrorKind::kServer, true, "HTTP 502: HTML page: 502 Bad Gateway"},
      {503, "text/plain", "", ErrorKind::kServer, true, "HTTP 503: empty body"},
  };
  for (const Case& c : cases) {
    AttemptError e = HttpStatusError(Response(c.status, c.content_type, c.body));
    EXPECT_EQ(e.kind, c.kind) << c.status;
    EXPECT_EQ(e.retryable(), c.retryable) << c.status;
    EXPECT_EQ(e.message, c.message);
  }
}

TEST(HttpStatusError, ReadsRetryAfterSecondsAndDates) {
  AttemptError e = HttpStatusError(Response(429, "text/plain", "x", {{"retry-after", "7"}}));
  ASSERT_TRUE(e.retry_after.has_value());
  EXPECT_EQ(e.retry_after->count(), 7000);
  EXPECT_EQ(ParseRetryAfter("0.5"), Millis(500));
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), Millis(0));  // in the past
  EXPECT_EQ(ParseRetryAfter("soon"), std::nullopt);
  // Absurd delays saturate at a year instead of overflowing the milliseconds (UBSan).
  constexpr Millis kYear{int64_t{365} * 24 * 3600 * 1000};
  EXPECT_EQ(ParseRetryAfter("99999999999999999999999999999"), kYear);
  EXPECT_EQ(ParseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT"), kYear);
}

TEST(CurlTransport, ReturnsStatusHeadersAndBody) {
  LocalServer s;
  std::string seen_auth, seen_body;
  s.server.Post("/echo", [&](const httplib::Request& req, httplib::Response& res) {
    seen_auth = req.get_header_value("Authorization");
    seen_body = req.body;
    res.status = 201;
    res.set_header("X-Thing", "yes");
    res.set_content("hello", "text/plain");
  });
  s.Start();
  auto t = MakeCurlTransport();
  HttpRequest req{"POST", s.url() + "/echo", {{"Authorization", "Bearer k"}}, "payload"};
  auto r = t->Send(req, {});
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value->status, 201);
  EXPECT_EQ(r.value->body, "hello");
  EXPECT_EQ(r.value->Header("X-THING"), "yes");
  EXPECT_EQ(seen_auth, "Bearer k");
  EXPECT_EQ(seen_body, "payload");
}

TEST(CurlTransport, AHangingServerIsATimeout) {
  LocalServer s;
  s.server.Get("/hang", [](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    res.set_content("late", "text/plain");
  });
  s.Start();
  auto t0 = std::chrono::steady_clock::now();
  auto r = MakeCurlTransport()->Send({"GET", s.url() + "/hang", {}, ""}, {Millis(1000), Millis(200)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.kind, ErrorKind::kTimeout);
  EXPECT_TRUE(r.error.retryable());
  EXPECT_NE(r.error.message.find("timed out"), std::string::npos) << r.error.message;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(650));
}

TEST(CurlTransport, ARefusedConnectionIsAConnectionError) {
  const int port = testing::ClosedPort();
  auto r = MakeCurlTransport()->Send({"GET", "http://127.0.0.1:" + std::to_string(port) + "/", {}, ""}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.kind, ErrorKind::kConnection);
}

// The transport speaks HTTP(S) only, so no URL a server hands back can make it read a local file.
TEST(CurlTransport, RefusesEveryProtocolButHttpAndHttps) {
  ::visalign::testing::TempDir t;
  const std::filesystem::path secret = t.Write("secret.png", "not for the server");
  for (const std::string& url :
       std::vector<std::string>{"file://" + secret.string(), "ftp://127.0.0.1/x.png", "gopher://127.0.0.1/"}) {
    auto r = MakeCurlTransport()->Send({"GET", url, {}, ""}, {Millis(1000), Millis(1000)});
    ASSERT_FALSE(r.ok()) << url;
    EXPECT_EQ(r.error.message.find("not for the server"), std::string::npos) << r.error.message;
  }
}

TEST(CurlTransport, CancellingAbortsARequestInFlight) {
  LocalServer s;
  s.server.Get("/hang", [](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
  });
  s.Start();
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancel = true;
  });
  auto r = MakeCurlTransport()->Send({"GET", s.url() + "/hang", {}, ""}, {}, &cancel);
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.kind, ErrorKind::kCancelled);
}

TEST(ValidateImageBytes, NamesTheFormatOrTheProblem) {
  std::string png = TinyPng();
  EXPECT_EQ(*ValidateImageBytes(png, "x").value, "png");
  auto cut = ValidateImageBytes(png.substr(0, png.size() / 2), "x");
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error.message.find("truncated PNG"), std::string::npos);
  auto text = ValidateImageBytes("<html>", "x");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error.message.find("not a PNG, JPEG or WebP"), std::string::npos);
}

TEST(OpenAiClient, BuildsUrlsWithOneV1) {
  auto t = MakeCurlTransport();
  EXPECT_EQ(OpenAiClient({"http://h:1", "", {}}, t).Url("images/generations"), "http://h:1/v1/images/generations");
  EXPECT_EQ(OpenAiClient({"http://h:1/v1/", "", {}}, t).Url("chat/completions"), "http://h:1/v1/chat/completions");
}

// A fake image API whose answer depends on the prompt.
class ImagesApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    png_ = TinyPng();
    s_.server.Post("/v1/images/generations", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard lock(mu_);
        last_auth_ = req.get_header_value("Authorization");
        last_body_ = Json::parse(req.body);
      }
      std::string p = last_body_["prompt"];
      std::string b64 = EncodeBase64(png_);
      if (p == "good") res.set_content(Json{{"data", {{{"b64_json", b64}}}}}.dump(), "application/json");
      if (p == "url") res.set_content(Json{{"data", {{{"url", s_.url() + "/file.png"}}}}}.dump(), "application/json");
      if (p == "malformed") res.set_content(R"({"data": [{"b64_json": "iVBO)", "application/json");
      if (p == "truncated")
        res.set_content(Json{{"data", {{{"b64_json", b64.substr(0, b64.size() / 2)}}}}}.dump(), "application/json");
      if (p == "html") {
        res.status = 502;
        res.set_content("<html><head><title>502 Bad Gateway</title></head></html>", "text/html");
      }
      if (p == "html200") res.set_content("<html><body>Welcome to nginx!</body></html>", "text/html");
      if (p == "refused") {
        res.status = 400;
        res.set_content(R"({"error": {"message": "Your request was rejected by the safety system."}})",
                        "application/json");
      }
      if (p == "empty") res.set_content(R"({"data": []})", "application/json");
      if (p == "file-url") res.set_content(R"({"data": [{"url": "file:///etc/passwd"}]})", "application/json");
      if (p == "nul-url")
        res.set_content(R"({"data": [{"url": "http://127.0.0.1\u0000.evil/x.png"}]})", "application/json");
      if (p == "deep") res.set_content(R"({"data":)" + Nested("[", 100000, "]") + "}", "application/json");
      if (p == "nested") res.set_content(R"({"data":)" + Nested("[", 60, "]") + "}", "application/json");
    });
    s_.server.Get("/file.png", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      url_auth_ = req.get_header_value("Authorization");
      res.set_content(png_, "image/png");
    });
    s_.Start();
    OpenAiImagesOptions o;
    o.endpoint = {s_.url(), "sk-secret-123", {Millis(1000), Millis(3000)}};
    o.model = "test-model";
    o.size = "64x32";
    o.params = {{"quality", "high"}, {"seed", "{seed}"}};
    backend_ = MakeOpenAiImagesBackend(o, MakeCurlTransport()).value();
  }
  Attempt<GeneratedImage> Ask(const std::string& prompt) {
    return backend_->Generate({"id1", prompt, 0, 42}, kNoCancel);
  }

  LocalServer s_;
  std::string png_;
  std::mutex mu_;
  std::string last_auth_, url_auth_;
  Json last_body_;
  std::unique_ptr<GenerationBackend> backend_;
};

TEST_F(ImagesApiTest, B64JsonAnswerGivesTheImageAndTheRequestCarriesEverything) {
  auto r = Ask("good");
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value->bytes, png_);
  EXPECT_EQ(r.value->extension, "png");
  EXPECT_EQ(last_auth_, "Bearer sk-secret-123");
  EXPECT_EQ(last_body_["model"], "test-model");
  EXPECT_EQ(last_body_["size"], "64x32");
  EXPECT_EQ(last_body_["n"], 1);
  EXPECT_EQ(last_body_["response_format"], "b64_json");
  EXPECT_EQ(last_body_["quality"], "high");
  EXPECT_EQ(last_body_["seed"], 42);
}

TEST_F(ImagesApiTest, UrlAnswerIsFetchedWithoutTheKey) {
  auto r = Ask("url");
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value->bytes, png_);
  EXPECT_EQ(url_auth_, "");
}

TEST_F(ImagesApiTest, EachBrokenAnswerIsAClearPermanentError) {
  struct Case {
    std::string prompt;
    ErrorKind kind;
    std::string says;
  } cases[] = {
      {"malformed", ErrorKind::kProtocol, "malformed JSON body"},
      {"truncated", ErrorKind::kProtocol, "truncated"},
      {"html", ErrorKind::kServer, "HTTP 502: HTML page: 502 Bad Gateway"},
      {"html200", ErrorKind::kProtocol, "malformed JSON body"},
      {"refused", ErrorKind::kClient, "HTTP 400: Your request was rejected by the safety system."},
      {"empty", ErrorKind::kProtocol, "no data[0]"},
      // A URL answer is fetched only over HTTP(S): never a local file, never a URL that C strings cut short.
      {"file-url", ErrorKind::kProtocol, "data[0].url \"file:///etc/passwd\" is not an http:// or https:// URL"},
      {"nul-url", ErrorKind::kProtocol,
       "data[0].url \"http://127.0.0.1\\x00.evil/x.png\" is not an http:// or https:// URL"},
  };
  for (const Case& c : cases) {
    auto r = Ask(c.prompt);
    ASSERT_FALSE(r.ok()) << c.prompt;
    EXPECT_EQ(r.error.kind, c.kind) << c.prompt << ": " << r.error.message;
    EXPECT_NE(r.error.message.find(c.says), std::string::npos) << c.prompt << ": " << r.error.message;
    EXPECT_EQ(r.error.message.find("sk-secret"), std::string::npos);
  }
}

TEST_F(ImagesApiTest, IdentityAndConnectionHaveNoSecretAndTheEndpointIsNotIdentity) {
  const Json identity = backend_->Identity(), connection = backend_->Connection();
  EXPECT_EQ(identity.dump().find("sk-secret"), std::string::npos);
  EXPECT_EQ(connection.dump().find("sk-secret"), std::string::npos);
  EXPECT_EQ(nlohmann::json(identity), nlohmann::json({{"backend", "openai"},
                                                      {"model", "test-model"},
                                                      {"size", "64x32"},
                                                      {"params", {{"quality", "high"}, {"seed", "{seed}"}}}}));
  EXPECT_EQ(nlohmann::json(connection),
            nlohmann::json({{"endpoint", s_.url()}, {"connect_timeout_ms", 1000}, {"timeout_ms", 3000}}));
}

TEST(ImagesApiFamilyOf, ReadsTheModelNameAfterAnyGatewayPrefix) {
  EXPECT_EQ(ImagesApiFamilyOf("gpt-image-1"), ImagesApiFamily::kGptImage);
  EXPECT_EQ(ImagesApiFamilyOf("gpt-image-1-mini"), ImagesApiFamily::kGptImage);
  EXPECT_EQ(ImagesApiFamilyOf("openai/gpt-image-1"), ImagesApiFamily::kGptImage);
  EXPECT_EQ(ImagesApiFamilyOf("dall-e-3"), ImagesApiFamily::kDallE);
  EXPECT_EQ(ImagesApiFamilyOf("dall-e-2"), ImagesApiFamily::kDallE);
  EXPECT_EQ(ImagesApiFamilyOf("stabilityai/sdxl"), ImagesApiFamily::kGeneric);
  EXPECT_EQ(ImagesApiFamilyOf("my-gpt-image-clone"), ImagesApiFamily::kGeneric);
}

TEST(ImagesRequestBody, OneBodyPerModelFamilyWithParamsOnTop) {
  OpenAiImagesOptions o;
  o.size = "1024x1024";
  const GenerationRequest seeded{"id", "a red square", 0, 42}, unseeded{"id", "a red square", 0, {}};
  struct Case {
    std::string model;
    Json params;
    const GenerationRequest& request;
    Json body;
  } cases[] = {
      // gpt-image-* answers base64 anyway and rejects response_format.
      {"gpt-image-1",
       Json::object(),
       seeded,
       {{"model", "gpt-image-1"}, {"prompt", "a red square"}, {"n", 1}, {"size", "1024x1024"}}},
      {"gpt-image-1",
       {{"output_format", "webp"}, {"background", "transparent"}, {"quality", "high"}},
       seeded,
       {{"model", "gpt-image-1"},
        {"prompt", "a red square"},
        {"n", 1},
        {"size", "1024x1024"},
        {"output_format", "webp"},
        {"background", "transparent"},
        {"quality", "high"}}},
      {"dall-e-3",
       {{"style", "natural"}},
       seeded,
       {{"model", "dall-e-3"},
        {"prompt", "a red square"},
        {"n", 1},
        {"size", "1024x1024"},
        {"response_format", "b64_json"},
        {"style", "natural"}}},
      // Generic servers get response_format; null removes it; {seed} is the request's seed.
      {"sdxl",
       {{"seed", "{seed}"}},
       seeded,
       {{"model", "sdxl"},
        {"prompt", "a red square"},
        {"n", 1},
        {"size", "1024x1024"},
        {"response_format", "b64_json"},
        {"seed", 42}}},
      {"sdxl",
       {{"response_format", nullptr}, {"size", nullptr}, {"seed", "{seed}"}},
       unseeded,
       {{"model", "sdxl"}, {"prompt", "a red square"}, {"n", 1}}},
  };
  for (const Case& c : cases) {
    o.model = c.model;
    o.params = c.params;
    EXPECT_EQ(ImagesRequestBody(o, c.request), c.body) << c.model << " " << c.params.dump();
  }
}

TEST(OpenAiImagesBackend, RejectsBadOptions) {
  auto make = [](std::string url, std::string model, std::string size, Json params) {
    OpenAiImagesOptions o;
    o.endpoint.base_url = std::move(url);
    o.model = std::move(model);
    o.size = std::move(size);
    o.params = std::move(params);
    return MakeOpenAiImagesBackend(o, MakeCurlTransport()).status();
  };
  EXPECT_EQ(make("ftp://x", "m", "", Json::object()).where(), "endpoint");
  EXPECT_EQ(make("http://x", "", "", Json::object()).where(), "model name");
  EXPECT_EQ(make("http://x", "m", "1024", Json::object()).where(), "requested image size");
  EXPECT_EQ(make("http://x", "m", "", {{"prompt", "x"}}).where(), "request parameters");
  EXPECT_TRUE(make("http://x", "m", "1024x768", {{"quality", "hd"}}).ok());
}

TEST(ApiKeyFromEnv, NamesTheVariableButNeverAValue) {
  ::setenv("VISALIGN_TEST_KEY", "sk-abc", 1);
  EXPECT_EQ(ApiKeyFromEnv("VISALIGN_TEST_KEY").value(), "sk-abc");
  EXPECT_EQ(ApiKeyFromEnv("").value(), "");
  ::unsetenv("VISALIGN_TEST_KEY_MISSING");
  Status st = ApiKeyFromEnv("VISALIGN_TEST_KEY_MISSING").status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.what().find("VISALIGN_TEST_KEY_MISSING"), std::string::npos);
}

TEST(ChatCompletion, ReturnsTheFirstChoiceContent) {
  LocalServer s;
  s.server.Post("/v1/chat/completions", [](const httplib::Request& req, httplib::Response& res) {
    auto body = Json::parse(req.body);
    std::string text = body["messages"][0]["content"];
    res.set_content(Json{{"choices", {{{"message", {{"role", "assistant"}, {"content", "re: " + text}}}}}}}.dump(),
                    "application/json");
  });
  s.Start();
  OpenAiClient c({s.url(), "", {}}, MakeCurlTransport());
  auto r = c.ChatCompletion({{"model", "judge"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}});
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(*r.value, "re: hi");
}

// Replies that once crashed a run (a judge worker's SIGABRT, a SIGSEGV while quoting the reply):
// each must be a protocol failure with a short one-line message.
TEST(ChatCompletion, AHostileReplyIsAProtocolErrorNotACrash) {
  const std::string replies[] = {
      R"({"choices":[1]})",
      R"({"choices":[{"message":"text"}]})",
      R"({"choices":)" + Nested("[", 100000, "]") + "}",
      R"({"choices":[{"message":{"content":)" + Nested(R"({"a":)", 100000, "}") + "}}]}",
      R"({"choices":[], "note": "line\nbreak \u001b[31m\u0000)" + std::string(100000, 'x') + R"("})",
  };
  std::atomic<size_t> served{0};
  LocalServer s;
  s.server.Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(replies[served++ % std::size(replies)], "application/json");
  });
  s.Start();
  OpenAiClient c({s.url(), "", {}}, MakeCurlTransport());
  for (const std::string& reply : replies) {
    auto r = c.ChatCompletion({{"model", "judge"}, {"messages", Json::array()}});
    ASSERT_FALSE(r.ok()) << reply.substr(0, 60);
    EXPECT_EQ(r.error.kind, ErrorKind::kProtocol) << r.error.message;
    EXPECT_LT(r.error.message.size(), 400u) << r.error.message;
    EXPECT_EQ(r.error.message.find_first_of(std::string("\n\r\x1b\0", 4)), std::string::npos) << r.error.message;
  }
  EXPECT_EQ(served.load(), std::size(replies));
}

TEST_F(ImagesApiTest, ADeeplyNestedAnswerIsAProtocolErrorNotACrash) {
  auto r = Ask("deep");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.kind, ErrorKind::kProtocol);
  EXPECT_NE(r.error.message.find("JSON nested deeper than 64 levels"), std::string::npos) << r.error.message;
}

TEST_F(ImagesApiTest, AnAnswerNestedWithinTheLimitIsQuotedShortly) {
  auto r = Ask("nested");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.kind, ErrorKind::kProtocol);
  EXPECT_NE(r.error.message.find(R"(no data[0] (expected {"data": [{"b64_json": ...}]}): {"data":[[[[)"),
            std::string::npos)
      << r.error.message;
  EXPECT_LT(r.error.message.size(), 300u);
}

}  // namespace
}  // namespace visalign::backends
