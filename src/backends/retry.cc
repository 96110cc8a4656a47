// Token-bucket rate limiting and the retry loop with exponential backoff, jitter and Retry-After.
#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include "visalign/backends/backends.h"

namespace visalign::backends {
namespace {
using Clock = std::chrono::steady_clock;
constexpr Millis kStopPollInterval{20};

double Uniform(double lo, double hi) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  if (hi <= lo) return lo;
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}
}  // namespace

RateLimiter::RateLimiter(double rate, double burst)
    : rate_(rate),
      burst_(std::max(1.0, burst)),
      tokens_(std::max(1.0, burst)),
      last_(Clock::now()),
      paused_until_(Clock::now()) {}

bool RateLimiter::Acquire(const std::atomic<bool>& stop) {
  while (!stop.load()) {
    Clock::duration wait{};
    {
      std::lock_guard lock(mu_);
      auto now = Clock::now();
      if (now < paused_until_) {
        wait = paused_until_ - now;
      } else if (rate_ <= 0) {
        return true;
      } else {
        tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * rate_);
        last_ = now;
        if (tokens_ >= 1.0) {
          tokens_ -= 1.0;
          return true;
        }
        wait = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>((1.0 - tokens_) / rate_));
      }
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(wait, kStopPollInterval));
  }
  return false;
}

void RateLimiter::PauseUntil(Clock::time_point until) {
  std::lock_guard lock(mu_);
  paused_until_ = std::max(paused_until_, until);
}

Millis RetryPolicy::Delay(int failures, std::optional<Millis> retry_after) const {
  double j = std::clamp(jitter, 0.0, 1.0);
  if (retry_after) {
    double base = static_cast<double>(std::min(*retry_after, max_retry_after).count());
    return Millis(static_cast<int64_t>(base + Uniform(0, j * static_cast<double>(initial_backoff.count()))));
  }
  double d = static_cast<double>(initial_backoff.count()) * std::pow(multiplier, std::max(0, failures - 1));
  d = std::min(d, static_cast<double>(max_backoff.count()));
  return Millis(static_cast<int64_t>(Uniform((1.0 - j) * d, d)));
}

bool SleepUnlessStopped(Millis d, const std::atomic<bool>& stop) {
  auto until = Clock::now() + d;
  while (!stop.load()) {
    auto now = Clock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(std::min<Clock::duration>(until - now, kStopPollInterval));
  }
  return false;
}

std::optional<AttemptError> RunWithRetries(const RetryPolicy& policy, RateLimiter* limiter,
                                           const std::atomic<bool>& stop,
                                           const std::function<std::optional<AttemptError>()>& attempt,
                                           const std::function<void(const AttemptError&, bool final)>& on_failure) {
  const AttemptError stopped{ErrorKind::kCancelled, "stopped before this item completed", {}};
  for (int failures = 0;;) {
    if (stop.load() || (limiter && !limiter->Acquire(stop))) return stopped;
    std::optional<AttemptError> error = attempt();
    if (!error) return std::nullopt;
    if (error->kind == ErrorKind::kCancelled) return error;
    ++failures;
    bool final = !error->retryable() || failures >= policy.max_attempts;
    on_failure(*error, final);
    if (final) return error;
    if (limiter && error->kind == ErrorKind::kRateLimited && error->retry_after)
      limiter->PauseUntil(Clock::now() + std::min(*error->retry_after, policy.max_retry_after));
    if (!SleepUnlessStopped(policy.Delay(failures, error->retry_after), stop)) return stopped;
  }
}

}  // namespace visalign::backends
