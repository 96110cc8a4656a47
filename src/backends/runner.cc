// The generation runner and the interrupt handler.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "visalign/backends/runner.h"
#include "visalign/core/parallel.h"
#include "visalign/core/progress.h"

namespace visalign::backends {
namespace {
using Clock = std::chrono::steady_clock;
constexpr Millis kSupervisorPoll{20};
// How often rows leased by other workers are asked for again: a tenth of the lease, within these.
constexpr Millis kMinBusyPoll{20}, kMaxBusyPoll{1000};
constexpr int kRenewalsPerLease = 3;
constexpr size_t kNoteChars = 60;

double MillisSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Different items failing in a row with the same message (RunnerOptions::stop_after_same_failures).
class SameFailureStreak {
 public:
  explicit SameFailureStreak(int limit) : limit_(static_cast<size_t>(std::max(limit, 0))) {}
  void Success() {
    std::lock_guard lock(mu_);
    signature_.clear();
    items_.clear();
  }
  // Records that item `key` failed with `signature`; true once `limit` different items did in a row.
  bool Failure(const std::string& key, const std::string& signature) {
    std::lock_guard lock(mu_);
    if (signature != signature_) {
      signature_ = signature;
      items_.clear();
    }
    items_.insert(key);
    return limit_ > 0 && items_.size() >= limit_;
  }

 private:
  const size_t limit_;
  std::mutex mu_;
  std::string signature_;
  std::set<std::string> items_;
};

// A work item and the attempts it has already failed in this invocation (set aside once).
struct Task {
  const WorkItem* item = nullptr;
  int failures = 0;
  std::string job;  // the provider job the row holds ("" = none)
};

// What a worker thread is to do next.
enum class Next { kWork, kWait, kFinish };

store::RowKey KeyOf(const WorkItem& it) { return {it.id, it.k}; }

}  // namespace

Result<std::vector<const WorkItem*>> SelectWork(const std::vector<store::Row>& rows, const std::vector<WorkItem>& items,
                                                bool retry_failed, const std::string& where, RunSummary& summary) {
  std::map<std::pair<std::string, int>, const store::Row*> by_key;
  for (const store::Row& r : rows) by_key[{r.item_id, r.k}] = &r;
  auto seed_text = [](std::optional<int64_t> seed) { return seed ? std::to_string(*seed) : std::string("none"); };
  std::vector<const WorkItem*> todo;
  summary.selected = items.size();
  for (const WorkItem& it : items) {
    auto found = by_key.find({it.id, it.k});
    const store::Row* r = found == by_key.end() ? nullptr : found->second;
    if (r && r->prompt != it.prompt)
      return Status::InvalidArgument(
          fmt::format("item {} sample {} was made for prompt \"{}\", now the prompt is \"{}\"", it.id, it.k, r->prompt,
                      it.prompt),
          where, "the same prompts to resume a run, or a new run name");
    if (r && r->seed != it.seed)
      return Status::InvalidArgument(fmt::format("item {} sample {} was made with seed {}, now the seed is {}", it.id,
                                                 it.k, seed_text(r->seed), seed_text(it.seed)),
                                     where, "the same seed to resume a run, or a new run name");
    if (r && r->status == store::RowStatus::kDone) {
      ++summary.already_done;
    } else if (r && r->status == store::RowStatus::kRefused) {
      ++summary.already_refused;
    } else if (r && r->status == store::RowStatus::kFailed && !retry_failed) {
      ++summary.skipped_failed;
    } else {
      todo.push_back(&it);
    }
  }
  return todo;
}

Json RunConnection(const GenerationBackend& backend, const RunnerOptions& options) {
  Json c = backend.Connection();
  c["concurrency"] = options.concurrency;
  c["rate"] = options.rate;
  c["max_attempts"] = options.retry.max_attempts;
  return c;
}

Result<RunSummary> RunGeneration(store::RunStore& store, store::RunInfo info, const std::vector<WorkItem>& items,
                                 GenerationBackend& backend, const RunnerOptions& options,
                                 const std::atomic<bool>& stop) {
  if (options.concurrency < 1)
    return Status::InvalidArgument(fmt::format("concurrency {}", options.concurrency), "concurrency", "at least 1");
  if (options.retry.max_attempts < 1)
    return Status::InvalidArgument(fmt::format("max attempts {}", options.retry.max_attempts), "max attempts",
                                   "at least 1");
  if (options.lease.count() < 1)
    return Status::InvalidArgument(fmt::format("lease {} ms", options.lease.count()), "lease", "a positive duration");
  auto start = Clock::now();
  info.identity = backend.Identity();
  info.connection = RunConnection(backend, options);
  VISALIGN_ASSIGN_OR_RETURN(store::RunOpening opening, store.OpenRun(info));
  const std::string run = info.name;
  if (opening == store::RunOpening::kTakenOver)
    spdlog::warn(
        "run {} had no done image yet: it now uses this invocation's settings ({}); its failed images "
        "will be asked again",
        run, info.identity.dump());
  std::vector<store::ItemSpec> specs;
  specs.reserve(items.size());
  for (const WorkItem& it : items) specs.push_back({it.id, it.k, it.prompt, it.seed});
  VISALIGN_RETURN_IF_ERROR(store.AddItems(run, specs));

  RunSummary summary;
  VISALIGN_ASSIGN_OR_RETURN(std::vector<store::Row> rows, store.Rows(run));
  VISALIGN_ASSIGN_OR_RETURN(
      std::vector<const WorkItem*> todo,
      SelectWork(rows, items, options.retry_failed, fmt::format("run {} in {}", run, store.root().string()), summary));

  Progress progress(options.label, todo.size(), options.progress);
  RateLimiter limiter(options.rate);
  SameFailureStreak streak(options.stop_after_same_failures);
  const std::string owner = store::MakeOwnerId();
  const Millis busy_poll = std::clamp(options.lease / 10, kMinBusyPoll, kMaxBusyPoll);
  const size_t claim_batch = static_cast<size_t>(options.concurrency);
  std::atomic<bool> halt{false}, cancel{false}, any_success{false};
  std::atomic<size_t> done{0}, failed{0}, refused{0}, attempts{0}, elsewhere{0}, lease_lost{0};
  std::atomic<int> running{0};
  std::mutex mu;                      // guards the claim state below, summary.failures, summary.same_failure and fatal
  size_t next = 0;                    // todo[next..] not asked for yet
  std::deque<Task> claimed;           // leased to this worker, not started
  std::vector<const WorkItem*> busy;  // leased by other workers when last asked
  Clock::time_point busy_asked;
  std::vector<Task> set_aside;
  Status fatal;
  auto record_fatal_locked = [&](Status st) {
    if (fatal.ok()) fatal = std::move(st);
    halt = true;
  };
  auto record_fatal = [&](Status st) {
    std::lock_guard lock(mu);
    record_fatal_locked(std::move(st));
  };
  // Leases `wanted`: claimed ones are queued, busy ones kept for later, the rest were finished by
  // other workers. False after a store error.
  auto claim_locked = [&](const std::vector<const WorkItem*>& wanted) {
    std::map<std::pair<std::string, int>, const WorkItem*> by_key;
    std::vector<store::RowKey> keys;
    for (const WorkItem* it : wanted) {
      by_key[{it->id, it->k}] = it;
      keys.push_back(KeyOf(*it));
    }
    auto claim = store.ClaimRows(run, owner, keys, options.lease,
                                 options.retry_failed || opening == store::RunOpening::kTakenOver);
    if (!claim.ok()) {
      record_fatal_locked(claim.status());
      return false;
    }
    for (size_t i = 0; i < claim->claimed.size(); ++i) {
      const store::RowKey& k = claim->claimed[i];
      claimed.push_back({by_key.at({k.item_id, k.k}), 0, i < claim->jobs.size() ? claim->jobs[i] : std::string()});
    }
    for (const store::RowKey& k : claim->busy) busy.push_back(by_key.at({k.item_id, k.k}));
    const size_t others = wanted.size() - claim->claimed.size() - claim->busy.size();
    elsewhere += others;
    progress.Add(others, 0);
    return true;
  };
  // The next task: untried items first (claimed a batch at a time), then those set aside, then
  // those other workers held, once their lease has expired.
  auto take = [&](Task& task) -> Next {
    std::lock_guard lock(mu);
    while (claimed.empty() && next < todo.size() && !halt.load()) {
      const size_t end = std::min(todo.size(), next + claim_batch);
      std::vector<const WorkItem*> batch(todo.begin() + static_cast<std::ptrdiff_t>(next),
                                         todo.begin() + static_cast<std::ptrdiff_t>(end));
      next = end;
      if (!claim_locked(batch)) return Next::kFinish;
    }
    if (claimed.empty() && set_aside.empty() && !busy.empty() && Clock::now() - busy_asked >= busy_poll) {
      busy_asked = Clock::now();
      std::vector<const WorkItem*> again;
      again.swap(busy);
      if (!claim_locked(again)) return Next::kFinish;
    }
    if (!claimed.empty()) {
      task = claimed.front();
      claimed.pop_front();
      return Next::kWork;
    }
    if (!set_aside.empty()) {
      task = set_aside.back();
      set_aside.pop_back();
      return Next::kWork;
    }
    return busy.empty() ? Next::kFinish : Next::kWait;
  };
  // Whether items other than the current ones are left to try.
  auto more_to_try = [&] {
    std::lock_guard lock(mu);
    return next < todo.size() || !claimed.empty() || !busy.empty();
  };

  auto worker = [&] {
    Task task;
    while (!halt.load()) {
      const Next what = take(task);
      if (what == Next::kFinish) break;
      if (what == Next::kWait) {
        std::this_thread::sleep_for(busy_poll);
        continue;
      }
      const WorkItem& it = *task.item;
      const std::string key = it.id + "#" + std::to_string(it.k);
      GenerationRequest req{it.id, it.prompt, it.k, it.seed};
      req.pace = &limiter;
      std::string job = task.job;
      double latency = 0;
      bool lost = false;  // the row's lease was taken over: stop working on it
      auto on_lease_lost = [&] {
        lost = true;
        ++lease_lost;
        spdlog::warn(
            "{} #{}: this worker's lease had expired and another worker took the row over: its result here "
            "is discarded (a longer --lease avoids this)",
            it.id, it.k);
      };
      // A provider job is recorded in the row as soon as it is known, so whoever resumes polls it.
      req.record_job = [&](const std::string& value) {
        job = value;
        auto recorded = store.SetJob(run, it.id, it.k, owner, value);
        if (!recorded.ok()) record_fatal(recorded.status());
      };
      auto on_failure = [&](const AttemptError& e, bool final) {
        auto recorded = e.kind == ErrorKind::kRefused
                            ? store.MarkRefused(run, it.id, it.k, owner, e.message, latency)
                            : store.MarkFailure(run, it.id, it.k, owner, e.message, latency, final);
        if (!recorded.ok()) return record_fatal(recorded.status());
        if (*recorded == store::Completion::kLeaseLost) return on_lease_lost();
        if (final) {
          spdlog::warn("{} #{} failed: {}", it.id, it.k, e.message);
        } else {
          spdlog::debug("{} #{} will be retried: {}", it.id, it.k, e.message);
          progress.SetNote("retrying: " + e.message.substr(0, kNoteChars));
        }
      };
      auto attempt = [&]() -> std::optional<AttemptError> {
        if (lost) return AttemptError{ErrorKind::kCancelled, "lease lost", {}};
        auto t0 = Clock::now();
        req.job = job;
        auto result = backend.Generate(req, cancel);
        latency = MillisSince(t0);
        if (!result.ok() && result.error.kind == ErrorKind::kCancelled) return result.error;
        ++attempts;
        // A refusal is the prompt's outcome: recorded as it is, never a failure streak.
        if (!result.ok() && result.error.kind == ErrorKind::kRefused) return result.error;
        if (!result.ok()) {
          AttemptError e = std::move(result.error);
          // Nothing answered yet and the endpoint cannot be reached (refused, DNS, TLS): every item would
          // wait out its retries, so the run stops now and the item stays pending.
          if (e.kind == ErrorKind::kConnection && !any_success.load() && options.stop_after_same_failures > 0) {
            std::lock_guard lock(mu);
            if (!summary.same_failure) {
              summary.same_failure = e;
              summary.same_failure_items = 1;
            }
            halt = true;
            return AttemptError{ErrorKind::kCancelled, "unreachable", {}};
          }
          // A failed command before anything has worked may be the same for every item.
          const bool untested_command = e.kind == ErrorKind::kCommand && !any_success.load();
          if ((!e.retryable() || untested_command) && streak.Failure(key, e.Signature())) {
            std::lock_guard lock(mu);
            if (!summary.same_failure) {
              summary.same_failure = e;
              summary.same_failure_items = static_cast<size_t>(options.stop_after_same_failures);
            }
            halt = true;
          }
          e.message = fmt::format("{} (after {:.0f} ms)", e.message, latency);
          if (untested_command && e.retryable() && task.failures == 0 && options.retry.max_attempts > 1 &&
              options.stop_after_same_failures > 0 && (halt.load() || more_to_try())) {
            on_failure(e, /*final=*/false);
            std::lock_guard lock(mu);
            if (!halt.load()) set_aside.push_back({&it, 1, job});
            return AttemptError{ErrorKind::kCancelled, "set aside", {}};
          }
          return e;
        }
        any_success = true;
        streak.Success();
        auto image = store.WriteImage(run, it.id, it.k, result.value->bytes, result.value->extension);
        auto recorded = image.ok() ? store.MarkDone(run, it.id, it.k, owner, *image, latency)
                                   : Result<store::Completion>(image.status());
        if (!recorded.ok()) {
          record_fatal(recorded.status());
          return AttemptError{ErrorKind::kCancelled, recorded.status().ToString(), {}};
        }
        if (*recorded == store::Completion::kLeaseLost) {
          on_lease_lost();
          return AttemptError{ErrorKind::kCancelled, "lease lost", {}};
        }
        return std::nullopt;
      };
      RetryPolicy policy = options.retry;
      policy.max_attempts -= task.failures;
      std::optional<AttemptError> error = RunWithRetries(policy, &limiter, halt, attempt, on_failure);
      if (!error) {
        ++done;
        progress.Add(1, 0);
      } else if (error->kind == ErrorKind::kRefused) {
        ++refused;
        progress.Add(1, 0);
        spdlog::info("{} #{} refused by the provider: {}", it.id, it.k, error->message);
      } else if (error->kind != ErrorKind::kCancelled) {
        ++failed;
        progress.Add(0, 1);
        std::lock_guard lock(mu);
        summary.failures.push_back({it.id, it.k, error->message});
      }
    }
  };
  // A worker that throws (a bug) stops the run with that error instead of terminating the process.
  auto guarded_worker = [&] {
    try {
      worker();
    } catch (...) {
      record_fatal(StatusFromCurrentException());
    }
    --running;
  };

  int n =
      static_cast<int>(std::min<size_t>(static_cast<size_t>(options.concurrency), std::max<size_t>(todo.size(), 1)));
  running = n;
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) threads.emplace_back(guarded_worker);
  std::optional<Clock::time_point> stop_seen;
  Clock::time_point renewed = Clock::now();
  while (running.load() > 0) {
    std::this_thread::sleep_for(kSupervisorPoll);
    if (Clock::now() - renewed >= options.lease / kRenewalsPerLease) {
      renewed = Clock::now();
      if (auto held = store.RenewLeases(run, owner, options.lease); !held.ok()) record_fatal(held.status());
    }
    if (stop.load() && !stop_seen) {
      stop_seen = Clock::now();
      halt = true;
    }
    if (stop_seen && Clock::now() - *stop_seen > options.grace) cancel = true;
  }
  for (std::thread& t : threads) t.join();
  progress.Finish();

  // What this worker did not finish (interrupted, set aside) is free for others at once.
  Status released = store.ReleaseLeases(run, owner);
  VISALIGN_RETURN_IF_ERROR(fatal);
  VISALIGN_RETURN_IF_ERROR(released);
  summary.done = done;
  summary.failed = failed;
  summary.refused = refused;
  summary.attempts = attempts;
  summary.finished_elsewhere = elsewhere;
  summary.lease_lost = lease_lost;
  summary.left_pending =
      todo.size() - summary.done - summary.failed - summary.refused - summary.finished_elsewhere - summary.lease_lost;
  summary.interrupted = stop.load();
  summary.seconds = MillisSince(start) / 1000.0;
  return summary;
}

namespace {
std::atomic<bool> g_stop{false};
std::atomic<int> g_signals{0};
struct sigaction g_old_int, g_old_term;

void OnSignal(int) {
  if (g_signals.fetch_add(1) >= 1) {
    constexpr char kMsg[] = "\ninterrupted again: exiting now\n";
    [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
    ::_exit(130);
  }
  g_stop = true;
  constexpr char kMsg[] =
      "\ninterrupt: no new requests; waiting for those in flight (interrupt again to exit at once)\n";
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
}
}  // namespace

InterruptHandler::InterruptHandler() {
  g_stop = false;
  g_signals = 0;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptHandler::~InterruptHandler() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

const std::atomic<bool>& InterruptHandler::stop() const { return g_stop; }

}  // namespace visalign::backends
