// The generation runner and the interrupt handler.
#include <signal.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "visalign/generation_runner.h"
#include "visalign/progress.h"

namespace visalign::backends {
namespace {
using Clock = std::chrono::steady_clock;
constexpr Millis kSupervisorPoll{20};
constexpr size_t kFailuresShown = 5;
constexpr size_t kNoteChars = 60;

double MillisSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The rows this invocation must work on, and the counts of those it skips.
Result<std::vector<const WorkItem*>> SelectWork(store::RunStore& store, const std::string& run,
                                                const std::vector<WorkItem>& items, bool retry_failed,
                                                RunSummary& summary) {
  VISALIGN_ASSIGN_OR_RETURN(std::vector<store::Row> rows, store.Rows(run));
  std::map<std::pair<std::string, int>, const store::Row*> by_key;
  for (const store::Row& r : rows) by_key[{r.item_id, r.k}] = &r;
  std::vector<const WorkItem*> todo;
  for (const WorkItem& it : items) {
    const store::Row* r = by_key.at({it.id, it.k});
    if (r->prompt != it.prompt)
      return Status::InvalidArgument(
          fmt::format("item {} sample {} of run \"{}\" was made for prompt \"{}\", now the prompt is \"{}\"", it.id,
                      it.k, run, r->prompt, it.prompt),
          store.root().string(), "the same prompts to resume a run, or a new --run name");
    if (r->status == store::RowStatus::kDone) {
      ++summary.already_done;
    } else if (r->status == store::RowStatus::kFailed && !retry_failed) {
      ++summary.skipped_failed;
    } else {
      todo.push_back(&it);
    }
  }
  return todo;
}

}  // namespace

nlohmann::json RunSummary::ToJson() const {
  nlohmann::json f = nlohmann::json::array();
  for (const ItemFailure& x : failures) f.push_back({{"id", x.id}, {"k", x.k}, {"error", x.error}});
  return {{"selected", selected},     {"already_done", already_done}, {"skipped_failed", skipped_failed},
          {"done", done},             {"failed", failed},             {"left_pending", left_pending},
          {"attempts", attempts},     {"seconds", seconds},           {"interrupted", interrupted},
          {"failures", f}};
}

std::string RunSummary::ToText() const {
  std::string s = fmt::format(
      "{} of {} images done now, {} failed, {} left pending; {} done before, {} failed before (not retried); "
      "{} attempts in {:.1f} s{}",
      done, selected, failed, left_pending, already_done, skipped_failed, attempts, seconds,
      interrupted ? " (interrupted)" : "");
  if (!failures.empty()) {
    s += fmt::format("\nfailures ({} shown of {}):", std::min(kFailuresShown, failures.size()), failures.size());
    for (size_t i = 0; i < failures.size() && i < kFailuresShown; ++i)
      s += fmt::format("\n  {} #{}: {}", failures[i].id, failures[i].k, failures[i].error);
  }
  if (skipped_failed > 0) s += "\nre-run with --retry-failed to retry earlier failures";
  return s;
}

Result<RunSummary> RunGeneration(store::RunStore& store, store::RunInfo info, const std::vector<WorkItem>& items,
                                 GenerationBackend& backend, const RunnerOptions& options,
                                 const std::atomic<bool>& stop) {
  if (options.concurrency < 1)
    return Status::InvalidArgument(fmt::format("concurrency {}", options.concurrency), "--concurrency", "at least 1");
  if (options.retry.max_attempts < 1)
    return Status::InvalidArgument(fmt::format("max attempts {}", options.retry.max_attempts), "--max-attempts",
                                   "at least 1");
  auto start = Clock::now();
  info.backend = backend.Config();
  VISALIGN_RETURN_IF_ERROR(store.OpenRun(info));
  const std::string run = info.name;
  std::vector<store::ItemSpec> specs;
  specs.reserve(items.size());
  for (const WorkItem& it : items) specs.push_back({it.id, it.k, it.prompt, it.seed});
  VISALIGN_RETURN_IF_ERROR(store.AddItems(run, specs));

  RunSummary summary;
  summary.selected = items.size();
  VISALIGN_ASSIGN_OR_RETURN(std::vector<const WorkItem*> todo,
                            SelectWork(store, run, items, options.retry_failed, summary));

  Progress progress(options.label, todo.size(), options.progress);
  RateLimiter limiter(options.rate);
  std::atomic<bool> halt{false}, cancel{false};
  std::atomic<size_t> next{0}, done{0}, failed{0}, attempts{0};
  std::atomic<int> running{0};
  std::mutex mu;  // guards failures and fatal
  Status fatal;

  auto worker = [&] {
    for (size_t i; !halt.load() && (i = next.fetch_add(1)) < todo.size();) {
      const WorkItem& it = *todo[i];
      GenerationRequest req{it.id, it.prompt, it.k, it.seed};
      double latency = 0;
      auto attempt = [&]() -> std::optional<AttemptError> {
        auto t0 = Clock::now();
        auto result = backend.Generate(req, cancel);
        latency = MillisSince(t0);
        if (!result.ok() && result.error.kind == ErrorKind::kCancelled) return result.error;
        ++attempts;
        if (!result.ok()) {
          result.error.message = fmt::format("{} (after {:.0f} ms)", result.error.message, latency);
          return result.error;
        }
        auto image = store.WriteImage(run, it.id, it.k, result.value->bytes, result.value->extension);
        Status st = image.ok() ? store.MarkDone(run, it.id, it.k, *image, latency) : image.status();
        if (!st.ok()) {
          std::lock_guard lock(mu);
          if (fatal.ok()) fatal = st;
          halt = true;
          return AttemptError{ErrorKind::kCancelled, st.ToString(), {}};
        }
        return std::nullopt;
      };
      auto on_failure = [&](const AttemptError& e, bool final) {
        Status st = store.MarkFailure(run, it.id, it.k, e.message, latency, final);
        if (!st.ok()) {
          std::lock_guard lock(mu);
          if (fatal.ok()) fatal = st;
          halt = true;
        }
        if (final) {
          spdlog::warn("{} #{} failed: {}", it.id, it.k, e.message);
        } else {
          spdlog::debug("{} #{} will be retried: {}", it.id, it.k, e.message);
          progress.SetNote("retrying: " + e.message.substr(0, kNoteChars));
        }
      };
      std::optional<AttemptError> error = RunWithRetries(options.retry, &limiter, halt, attempt, on_failure);
      if (!error) {
        ++done;
        progress.Add(1, 0);
      } else if (error->kind != ErrorKind::kCancelled) {
        ++failed;
        progress.Add(0, 1);
        std::lock_guard lock(mu);
        summary.failures.push_back({it.id, it.k, error->message});
      }
    }
    --running;
  };

  int n = static_cast<int>(std::min<size_t>(static_cast<size_t>(options.concurrency), std::max<size_t>(todo.size(), 1)));
  running = n;
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) threads.emplace_back(worker);
  std::optional<Clock::time_point> stop_seen;
  while (running.load() > 0) {
    std::this_thread::sleep_for(kSupervisorPoll);
    if (stop.load() && !stop_seen) {
      stop_seen = Clock::now();
      halt = true;
    }
    if (stop_seen && Clock::now() - *stop_seen > options.grace) cancel = true;
  }
  for (std::thread& t : threads) t.join();
  progress.Finish();

  VISALIGN_RETURN_IF_ERROR(fatal);
  summary.done = done;
  summary.failed = failed;
  summary.attempts = attempts;
  summary.left_pending = todo.size() - summary.done - summary.failed;
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
  struct sigaction sa{};
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
