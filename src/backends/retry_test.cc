// Backoff delays, the retry loop's decisions and the token bucket.
#include <gtest/gtest.h>

#include <chrono>

#include "visalign/backends/backends.h"

namespace visalign::backends {
namespace {
using Clock = std::chrono::steady_clock;

TEST(RetryPolicy, DelaysGrowExponentiallyWithinTheJitterBand) {
  RetryPolicy p;
  p.initial_backoff = Millis(100);
  p.max_backoff = Millis(1000);
  p.jitter = 0.5;
  for (int i = 0; i < 50; ++i) {
    // failures 1, 2, 3, 5: nominal 100, 200, 400, min(1600, 1000); drawn from [d/2, d].
    EXPECT_GE(p.Delay(1, {}).count(), 50);
    EXPECT_LE(p.Delay(1, {}).count(), 100);
    EXPECT_GE(p.Delay(2, {}).count(), 100);
    EXPECT_LE(p.Delay(2, {}).count(), 200);
    EXPECT_GE(p.Delay(3, {}).count(), 200);
    EXPECT_LE(p.Delay(3, {}).count(), 400);
    EXPECT_GE(p.Delay(5, {}).count(), 500);
    EXPECT_LE(p.Delay(5, {}).count(), 1000);
  }
}

TEST(RetryPolicy, RetryAfterIsHonouredAndCapped) {
  RetryPolicy p;
  p.initial_backoff = Millis(100);
  p.jitter = 0.5;
  p.max_retry_after = Millis(5000);
  for (int i = 0; i < 50; ++i) {
    Millis d = p.Delay(1, Millis(3000));
    EXPECT_GE(d.count(), 3000);
    EXPECT_LE(d.count(), 3050);
    EXPECT_LE(p.Delay(1, Millis(60'000)).count(), 5050);
  }
}

struct Script {
  std::vector<std::optional<AttemptError>> outcomes;
  size_t calls = 0;
  std::vector<std::pair<std::string, bool>> failures = {};
};

std::optional<AttemptError> Play(Script& s, const RetryPolicy& p, const std::atomic<bool>& stop,
                                 RateLimiter* limiter = nullptr) {
  return RunWithRetries(
      p, limiter, stop, [&] { return s.outcomes.at(std::min(s.calls++, s.outcomes.size() - 1)); },
      [&](const AttemptError& e, bool final) { s.failures.emplace_back(e.message, final); });
}

RetryPolicy Fast(int attempts) {
  RetryPolicy p;
  p.max_attempts = attempts;
  p.initial_backoff = Millis(1);
  p.max_backoff = Millis(2);
  return p;
}

TEST(RunWithRetries, RetriesRetryableErrorsUntilSuccess) {
  std::atomic<bool> stop{false};
  Script s{{AttemptError{ErrorKind::kServer, "HTTP 503", {}}, AttemptError{ErrorKind::kTimeout, "timed out", {}},
            std::nullopt}};
  EXPECT_EQ(Play(s, Fast(5), stop), std::nullopt);
  EXPECT_EQ(s.calls, 3u);
  ASSERT_EQ(s.failures.size(), 2u);
  EXPECT_EQ(s.failures[0], std::make_pair(std::string("HTTP 503"), false));
  EXPECT_EQ(s.failures[1], std::make_pair(std::string("timed out"), false));
}

TEST(RunWithRetries, AClientErrorFailsAtOnce) {
  std::atomic<bool> stop{false};
  Script s{{AttemptError{ErrorKind::kClient, "HTTP 400: bad", {}}}};
  auto e = Play(s, Fast(5), stop);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->message, "HTTP 400: bad");
  EXPECT_EQ(s.calls, 1u);
  EXPECT_EQ(s.failures, (std::vector<std::pair<std::string, bool>>{{"HTTP 400: bad", true}}));
}

TEST(RunWithRetries, GivesUpAfterMaxAttempts) {
  std::atomic<bool> stop{false};
  Script s{{AttemptError{ErrorKind::kConnection, "refused", {}}}};
  auto e = Play(s, Fast(3), stop);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(s.calls, 3u);
  EXPECT_EQ(s.failures.back(), std::make_pair(std::string("refused"), true));
  EXPECT_FALSE(s.failures[1].second);
}

TEST(RunWithRetries, StopPreventsFurtherAttemptsAndIsNotRecorded) {
  std::atomic<bool> stop{true};
  Script s{{std::nullopt}};
  auto e = Play(s, Fast(3), stop);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, ErrorKind::kCancelled);
  EXPECT_EQ(s.calls, 0u);
  EXPECT_TRUE(s.failures.empty());
}

TEST(RunWithRetries, ARateLimitedAnswerPausesTheLimiterForEveryone) {
  std::atomic<bool> stop{false};
  RateLimiter limiter(0);
  Script s{{AttemptError{ErrorKind::kRateLimited, "HTTP 429", Millis(150)}, std::nullopt}};
  auto t0 = Clock::now();
  EXPECT_EQ(Play(s, Fast(3), stop, &limiter), std::nullopt);
  EXPECT_GE(Clock::now() - t0, Millis(150));
}

TEST(RateLimiter, SpacesAcquisitionsAtTheRate) {
  std::atomic<bool> stop{false};
  RateLimiter limiter(50.0);  // one token per 20 ms, burst 1
  auto t0 = Clock::now();
  for (int i = 0; i < 11; ++i) ASSERT_TRUE(limiter.Acquire(stop));
  auto elapsed = Clock::now() - t0;
  EXPECT_GE(elapsed, Millis(190));  // 10 waits of 20 ms after the first token
  EXPECT_LT(elapsed, Millis(600));
}

TEST(RateLimiter, StopReleasesAWaiter) {
  std::atomic<bool> stop{false};
  RateLimiter limiter(0.01);
  ASSERT_TRUE(limiter.Acquire(stop));
  std::thread t([&] {
    std::this_thread::sleep_for(Millis(50));
    stop = true;
  });
  EXPECT_FALSE(limiter.Acquire(stop));
  t.join();
}

}  // namespace
}  // namespace visalign::backends
