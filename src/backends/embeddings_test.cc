// The /v1/embeddings client against a loopback server: request shape, batching, answers placed by
// index, retries of a failing request, and answers that break the contract.
#include "visalign/backends/embeddings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>

#include "visalign/backends/http_server.h"

namespace visalign::backends {
namespace {

using ::testing::HasSubstr;

// Answers each input s with the embedding [len(s), first byte of s], in reversed order (clients
// must place rows by "index"); fails the first `failures` requests with HTTP 503.
class FakeEmbeddingServer {
 public:
  explicit FakeEmbeddingServer(int failures = 0, Json broken = nullptr)
      : failures_(failures), broken_(std::move(broken)) {
    server_.Route("POST", "/v1/embeddings", [this](const HttpServerRequest& req, HttpServerResponse& res) {
      std::lock_guard<std::mutex> lock(mutex_);
      requests_.push_back(Json::parse(req.body));
      if (failures_ > 0) {
        --failures_;
        res.SetJson(503, {{"error", {{"message", "warming up"}}}});
        return;
      }
      if (!broken_.is_null()) {
        res.SetJson(200, broken_);
        return;
      }
      const Json& input = requests_.back()["input"];
      Json data = Json::array();
      for (size_t i = input.size(); i-- > 0;) {
        const std::string s = input[i];
        data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", {s.size(), s.empty() ? 0 : s[0]}}});
      }
      res.SetJson(200, {{"object", "list"}, {"data", data}, {"model", requests_.back().value("model", "")}});
    });
    EXPECT_TRUE(server_.Start().ok());
  }
  std::string url() const { return server_.url(); }
  std::vector<Json> requests() {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }

 private:
  HttpServer server_{HttpServerOptions{}};
  std::mutex mutex_;
  int failures_;
  Json broken_;
  std::vector<Json> requests_;
};

EmbeddingsOptions Options(const std::string& url) {
  EmbeddingsOptions o;
  o.endpoint.base_url = url;
  o.model = "siglip-tiny";
  o.batch = 2;
  o.retry.initial_backoff = Millis(1);
  o.retry.max_attempts = 3;
  return o;
}

const std::atomic<bool> kNoStop{false};

TEST(FetchEmbeddings, SendsBatchesAndPlacesRowsByIndex) {
  FakeEmbeddingServer server;
  const std::vector<std::string> inputs = {"a", "bb", PngDataUrl("\x89PNG"), "dddd", "e"};
  const auto rows = FetchEmbeddings(Options(server.url()), MakeCurlTransport(), inputs, kNoStop);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ((*rows)[i], std::vector<float>({static_cast<float>(inputs[i].size()), static_cast<float>(inputs[i][0])}));
  }
  const std::vector<Json> requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);  // batches of 2, 2, 1
  EXPECT_EQ(nlohmann::json(requests[0]),
            nlohmann::json({{"model", "siglip-tiny"}, {"input", {"a", "bb"}}, {"encoding_format", "float"}}));
  EXPECT_EQ(requests[1]["input"][0], "data:image/png;base64,iVBORw==");
  EXPECT_EQ(requests[2]["input"], Json({"e"}));
}

TEST(FetchEmbeddings, RetriesServerErrors) {
  FakeEmbeddingServer server(/*failures=*/2);
  const auto rows = FetchEmbeddings(Options(server.url()), MakeCurlTransport(), {"x"}, kNoStop);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST(FetchEmbeddings, GivesUpAfterTheRetriesNamingTheEndpoint) {
  FakeEmbeddingServer server(/*failures=*/5);
  const auto rows = FetchEmbeddings(Options(server.url()), MakeCurlTransport(), {"x"}, kNoStop);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(rows.status().what(), HasSubstr("warming up"));
  EXPECT_EQ(rows.status().where(), server.url() + "/v1/embeddings");
}

TEST(FetchEmbeddings, RefusesAnswersThatBreakTheContract) {
  const std::vector<std::pair<Json, std::string>> cases = {
      {{{"data", Json::array()}}, "0 embeddings for 1 inputs"},
      {{{"data", {{{"index", 0}, {"embedding", "AAAA"}}}}}, "base64 encoding is not read"},
      {{{"data", {{{"embedding", {1.0}}}}}}, "without a valid \"index\""},
      {{{"object", "list"}}, "no \"data\" array"},
      {{{"data", {{{"index", 0}, {"embedding", {1.0, -1e300}}}}}}, "-1e+300 in embedding 0, beyond a 32-bit float"},
  };
  for (const auto& [answer, message] : cases) {
    SCOPED_TRACE(message);
    FakeEmbeddingServer server(0, answer);
    const auto rows = FetchEmbeddings(Options(server.url()), MakeCurlTransport(), {"x"}, kNoStop);
    ASSERT_FALSE(rows.ok());
    EXPECT_EQ(rows.status().code(), StatusCode::kCorrupt);
    EXPECT_THAT(rows.status().what(), HasSubstr(message));
  }
}

}  // namespace
}  // namespace visalign::backends
