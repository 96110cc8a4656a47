// What the images backend and the retry loop make of a broken connection, with the faults injected
// by testing::FaultInjectionTransport in front of a real HTTP server on 127.0.0.1.
#include <gtest/gtest.h>

#include <atomic>

#include "backends/test_util.h"
#include "testing/fault_injection_transport.h"
#include "visalign/backends/backends.h"
#include "visalign/core/base64.h"

namespace visalign::backends {
namespace {
using visalign::testing::FaultInjectionTransport;
using visalign::testing::TransportFault;

const std::atomic<bool> kNoCancel{false};

// An images API answering every request with a PNG, counting the requests it served.
class FaultyConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    png_ = testing::TinyPng();
    server_.server.Post("/v1/images/generations", [this](const httplib::Request&, httplib::Response& res) {
      ++served_;
      res.set_content(Json{{"data", {{{"b64_json", EncodeBase64(png_)}}}}}.dump(), "application/json");
    });
    server_.Start();
    transport_ = std::make_shared<FaultInjectionTransport>(MakeCurlTransport());
    OpenAiImagesOptions o;
    o.endpoint = {server_.url(), "", {Millis(1000), Millis(3000)}};
    o.model = "test-model";
    backend_ = MakeOpenAiImagesBackend(o, transport_).value();
  }
  Attempt<GeneratedImage> Ask() { return backend_->Generate({"id1", "red", 0, 42}, kNoCancel); }

  testing::LocalServer server_;
  std::string png_;
  std::atomic<int> served_{0};
  std::shared_ptr<FaultInjectionTransport> transport_;
  std::unique_ptr<GenerationBackend> backend_;
};

TEST_F(FaultyConnectionTest, ADroppedConnectionIsARetryableConnectionErrorAndTheRetryGetsTheImage) {
  transport_->FailRequests(TransportFault::kDropConnection);
  auto dropped = Ask();
  ASSERT_FALSE(dropped.ok());
  EXPECT_EQ(dropped.error.kind, ErrorKind::kConnection);
  EXPECT_TRUE(dropped.error.retryable());
  EXPECT_EQ(served_.load(), 0);

  transport_->FailRequests(TransportFault::kDropConnection);
  RetryPolicy policy;
  policy.initial_backoff = Millis(1);
  policy.max_backoff = Millis(2);
  std::vector<ErrorKind> failures;
  std::optional<GeneratedImage> image;
  auto error = RunWithRetries(
      policy, nullptr, kNoCancel,
      [&]() -> std::optional<AttemptError> {
        auto r = Ask();
        if (!r.ok()) return r.error;
        image = std::move(r.value);
        return std::nullopt;
      },
      [&](const AttemptError& e, bool final) { failures.push_back(e.kind); });
  EXPECT_FALSE(error.has_value()) << error->message;
  EXPECT_EQ(failures, std::vector<ErrorKind>{ErrorKind::kConnection});
  ASSERT_TRUE(image.has_value());
  EXPECT_EQ(image->bytes, png_);
  EXPECT_EQ(served_.load(), 1);
  EXPECT_EQ(transport_->requests(), 3);
  EXPECT_EQ(transport_->injected(), 2);
}

TEST_F(FaultyConnectionTest, AnAnswerLostAfterTheServerActedIsRetryableToo) {
  // The server made (and may bill) the image; the client cannot know, so it asks again.
  transport_->FailRequests(TransportFault::kDropResponse);
  auto lost = Ask();
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.error.kind, ErrorKind::kConnection);
  EXPECT_TRUE(lost.error.retryable());
  EXPECT_EQ(served_.load(), 1);
  auto again = Ask();
  ASSERT_TRUE(again.ok()) << again.error.message;
  EXPECT_EQ(served_.load(), 2);
}

TEST_F(FaultyConnectionTest, AnInjectedTimeoutIsARetryableTimeout) {
  transport_->FailRequests(TransportFault::kTimeout, /*skip=*/1);
  EXPECT_TRUE(Ask().ok());
  auto timed_out = Ask();
  ASSERT_FALSE(timed_out.ok());
  EXPECT_EQ(timed_out.error.kind, ErrorKind::kTimeout);
  EXPECT_TRUE(timed_out.error.retryable());
  EXPECT_TRUE(Ask().ok());
  EXPECT_EQ(served_.load(), 2);
}

}  // namespace
}  // namespace visalign::backends
