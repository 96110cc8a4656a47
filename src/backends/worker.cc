// The worker backend (worker.h): a pool of persistent processes speaking JSON Lines.
#include "visalign/backends/worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "backends/provider.h"
#include "backends/spawn.h"
#include "visalign/backends/providers.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

extern char** environ;

namespace visalign::backends {
namespace {
using Clock = std::chrono::steady_clock;

constexpr int kPollSliceMs = 50;
constexpr size_t kMaxLineBytes = size_t{1} << 20;
constexpr size_t kQuotedLineChars = 200;

// How a process ended, in words.
std::string EndOf(int wstatus) {
  if (WIFSIGNALED(wstatus)) return fmt::format("killed by signal {}", WTERMSIG(wstatus));
  return fmt::format("exited with status {}", WEXITSTATUS(wstatus));
}

// Whether `program` can be started: a path to an executable file, or a name found on PATH.
bool Startable(const std::string& program) {
  auto executable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos) return executable(program);
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/bin:/bin";
  while (true) {
    const size_t colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    if (executable((dir.empty() ? std::string(".") : dir) + "/" + program)) return true;
    if (colon == std::string_view::npos) return false;
    dirs = dirs.substr(colon + 1);
  }
}

// One worker process and its pipes. Used by one request at a time (the pool hands it out).
class WorkerProcess {
 public:
  WorkerProcess(int index, const WorkerOptions& options, const std::vector<std::string>& argv)
      : index_(index),
        options_(options),
        argv_(argv),
        log_(options.scratch_dir / fmt::format("worker-{}.log", index)) {}
  ~WorkerProcess() { Kill(); }

  bool running() const { return pid_ > 0; }
  int index() const { return index_; }

  // Starts the process and waits for its ready line. The error is final (kLocal) or kCancelled.
  std::optional<AttemptError> Start(const std::atomic<bool>& cancel) {
    std::error_code ec;
    std::filesystem::create_directories(options_.scratch_dir, ec);
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
      return AttemptError{ErrorKind::kLocal, std::string("pipe: ") + std::strerror(errno), {}};
    const int log = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    if (log >= 0) posix_spawn_file_actions_adddup2(&actions, log, 2);
    posix_spawnattr_t attr;
    InitChildSpawnAttr(&attr);
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "VISALIGN_WORKER_INDEX=", 22) != 0 &&
          (options_.gpus.empty() || std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0))
        env.emplace_back(*e);
    env.push_back(fmt::format("VISALIGN_WORKER_INDEX={}", index_));
    if (!options_.gpus.empty())
      env.push_back("CUDA_VISIBLE_DEVICES=" + options_.gpus[static_cast<size_t>(index_) % options_.gpus.size()]);
    std::vector<char*> cargv, cenv;
    for (const std::string& a : argv_) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (const std::string& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    const int rc = posix_spawnp(&pid_, cargv[0], &actions, &attr, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(in[0]);
    ::close(out[1]);
    if (log >= 0) ::close(log);
    if (rc != 0) {
      pid_ = 0;
      ::close(in[1]);
      ::close(out[0]);
      return AttemptError{ErrorKind::kLocal,
                          fmt::format("worker {}: cannot start {}: {}", index_, QuoteText(argv_[0]), std::strerror(rc)),
                          {}};
    }
    stdin_ = in[1];
    stdout_ = out[0];
    ::fcntl(stdout_, F_SETFL, O_NONBLOCK);
    buffer_.clear();
    auto line = ReadLine(Clock::now() + options_.startup_timeout, cancel);
    if (!line.ok()) {
      AttemptError e = line.error;
      if (e.kind == ErrorKind::kTimeout)
        e.message = fmt::format("worker {} printed no ready line within {:g} s (--startup-timeout){}", index_,
                                options_.startup_timeout.count() / 1000.0, LogTail());
      if (e.kind != ErrorKind::kCancelled) e.kind = ErrorKind::kLocal;
      Kill();
      return e;
    }
    auto ready = ParseJson(*line.value);
    if (!ready.ok() || !ready->is_object() || ready->value("ready", Json()) != true) {
      Kill();
      return AttemptError{ErrorKind::kLocal, NotProtocol(*line.value, "its ready line {\"ready\": true, ...}"), {}};
    }
    return std::nullopt;
  }

  // One request: writes `request`, reads the answer line for `id`.
  Attempt<Json> Ask(const Json& request, const std::string& id, const std::atomic<bool>& cancel) {
    using Out = Attempt<Json>;
    const std::string text = request.dump() + "\n";
    for (size_t sent = 0; sent < text.size();) {
      const ssize_t n = ::write(stdin_, text.data() + sent, text.size() - sent);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Out::Fail(Died("its stdin closed"));
      sent += static_cast<size_t>(n);
    }
    auto line = ReadLine(Clock::now() + options_.request_timeout, cancel);
    if (!line.ok()) {
      AttemptError e = line.error;
      if (e.kind == ErrorKind::kTimeout)
        e.message = fmt::format("worker {} did not answer within {:g} s (--timeout){}", index_,
                                options_.request_timeout.count() / 1000.0, LogTail());
      Kill();
      return Out::Fail(std::move(e));
    }
    auto answer = ParseJson(*line.value);
    if (!answer.ok() || !answer->is_object() || answer->value("id", Json()) != id || !answer->contains("ok") ||
        !(*answer)["ok"].is_boolean()) {
      const std::string message = NotProtocol(*line.value, "the answer {\"id\", \"ok\", ...} to its request");
      Kill();
      return Out::Fail({ErrorKind::kProtocol, message, {}});
    }
    return Out::Ok(std::move(*answer));
  }

  // Closes stdin (the worker's cue to exit); returns at once.
  void CloseStdin() {
    if (stdin_ >= 0) ::close(stdin_);
    stdin_ = -1;
  }

  // After CloseStdin: waits until `deadline` for the exit, then SIGTERM, then SIGKILL.
  void Stop(Clock::time_point deadline) {
    CloseStdin();
    if (pid_ <= 0) return;
    for (const int sig : {0, SIGTERM}) {
      if (sig) ::kill(-pid_, sig);
      const auto until = sig ? Clock::now() + options_.stop_grace : deadline;
      while (Clock::now() < until) {
        if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
          pid_ = 0;
          Kill();
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    Kill();
  }

  // Ends the process group at once (SIGKILL) and closes the pipes.
  void Kill() {
    CloseStdin();
    if (stdout_ >= 0) ::close(stdout_);
    stdout_ = -1;
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    pid_ = 0;
  }

  // The error of a worker that died (reaped now): "worker i died (exited with status 1) ...".
  AttemptError Died(const std::string& how) {
    int wstatus = 0;
    std::string end = how;
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      if (::waitpid(pid_, &wstatus, 0) == pid_) end = EndOf(wstatus);
      pid_ = 0;
    }
    Kill();
    return {ErrorKind::kCommand,
            fmt::format("worker {} died ({}){}", index_, end, LogTail()),
            {},
            fmt::format("worker died ({})", end)};
  }

  std::string LogTail() const {
    auto text = ReadFile(log_);
    if (!text.ok() || text->empty()) return "";
    std::string tail =
        text->size() > options_.log_tail_bytes ? text->substr(text->size() - options_.log_tail_bytes) : *text;
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
    return fmt::format("; {}: {}", log_.string(), EscapeControlBytes(tail, options_.log_tail_bytes));
  }

 private:
  std::string NotProtocol(const std::string& line, const std::string& expected) const {
    return fmt::format("worker {} printed a line that is not the protocol: {} (expected {}; logs belong on stderr)",
                       index_, QuoteText(line.substr(0, kQuotedLineChars)), expected);
  }

  // The next stdout line (without its newline) before `deadline`; EOF is the worker's death.
  Attempt<std::string> ReadLine(Clock::time_point deadline, const std::atomic<bool>& cancel) {
    using Out = Attempt<std::string>;
    for (;;) {
      if (const size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        return Out::Ok(std::move(line));
      }
      if (buffer_.size() > kMaxLineBytes)
        return Out::Fail({ErrorKind::kProtocol, NotProtocol(buffer_, "lines under 1 MiB"), {}});
      if (cancel.load()) return Out::Fail({ErrorKind::kCancelled, "cancelled while waiting for a worker", {}});
      if (Clock::now() >= deadline) return Out::Fail({ErrorKind::kTimeout, "", {}});
      pollfd p{stdout_, POLLIN, 0};
      ::poll(&p, 1, kPollSliceMs);
      char buf[65536];
      const ssize_t n = ::read(stdout_, buf, sizeof buf);
      if (n > 0)
        buffer_.append(buf, static_cast<size_t>(n));
      else if (n == 0)
        return Out::Fail(Died("closed its stdout"));
      else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        return Out::Fail(Died(std::strerror(errno)));
    }
  }

  const int index_;
  const WorkerOptions& options_;
  const std::vector<std::string>& argv_;
  const std::filesystem::path log_;
  pid_t pid_ = 0;
  int stdin_ = -1, stdout_ = -1;
  std::string buffer_;
};

class WorkerBackend final : public GenerationBackend {
 public:
  WorkerBackend(WorkerOptions options, std::vector<std::string> argv)
      : options_(std::move(options)), argv_(std::move(argv)) {
    for (int i = 0; i < options_.workers; ++i) {
      workers_.push_back(std::make_unique<WorkerProcess>(i, options_, argv_));
      free_.push_back(i);
    }
  }

  ~WorkerBackend() override {
    for (auto& w : workers_) w->CloseStdin();
    const auto deadline = Clock::now() + options_.stop_grace;
    for (auto& w : workers_) w->Stop(deadline);
  }

  Json Identity() const override {
    Json c = {{"backend", "worker"}, {"cmd", options_.command_template}, {"params", options_.params}};
    if (!options_.size.empty()) c["size"] = options_.size;
    return c;
  }

  Json Connection() const override {
    return {{"workers", options_.workers},
            {"gpus", options_.gpus},
            {"startup_timeout_ms", options_.startup_timeout.count()},
            {"timeout_ms", options_.request_timeout.count()}};
  }

  Attempt<GeneratedImage> Generate(const GenerationRequest& request, const std::atomic<bool>& cancel) override {
    using Out = Attempt<GeneratedImage>;
    std::optional<int> index = Acquire(cancel);
    if (!index) return Out::Fail({ErrorKind::kCancelled, "cancelled while waiting for a free worker", {}});
    Out result = OnWorker(*workers_[*index], request, cancel);
    Release(*index);
    return result;
  }

 private:
  Attempt<GeneratedImage> OnWorker(WorkerProcess& w, const GenerationRequest& request,
                                   const std::atomic<bool>& cancel) {
    using Out = Attempt<GeneratedImage>;
    if (!w.running()) {
      {
        std::lock_guard lock(mu_);
        if (broken_) return Out::Fail(*broken_);
      }
      if (auto e = w.Start(cancel)) {
        std::lock_guard lock(mu_);
        if (e->kind != ErrorKind::kCancelled && !broken_) broken_ = *e;
        return Out::Fail(*e);
      }
    }
    const uint64_t n = counter_.fetch_add(1);
    const std::string id = fmt::format("{}#{}/{}", request.item_id, request.k, n);
    const std::filesystem::path out = options_.scratch_dir / fmt::format("worker-{}-{}.png", ::getpid(), n);
    auto answer = w.Ask(WorkerRequestLine(options_, request, id, out.string()), id, cancel);
    std::error_code ec;
    if (!answer.ok()) {
      std::filesystem::remove(out, ec);
      return Out::Fail(AfterDeath(answer.error));
    }
    const Json& a = *answer.value;
    if (a["ok"] == false) {
      std::filesystem::remove(out, ec);
      const std::string error = EscapeControlBytes(a.value("error", std::string("no error given")), 500);
      if (a.value("refused", false) == true) return Out::Fail({ErrorKind::kRefused, error, {}});
      const bool retry = a.value("retryable", false) == true;
      return Out::Fail(
          {retry ? ErrorKind::kCommand : ErrorKind::kClient, fmt::format("worker {}: {}", w.index(), error), {}});
    }
    auto bytes = ReadFile(out);
    std::filesystem::remove(out, ec);
    if (!bytes.ok())
      return Out::Fail(
          {ErrorKind::kProtocol,
           fmt::format("worker {} answered ok but wrote no image to {}", w.index(), QuoteText(out.string())),
           {}});
    auto ext = ValidateImageBytes(*bytes, fmt::format("worker {}'s image", w.index()));
    if (!ext.ok()) return Out::Fail(ext.error);
    return Out::Ok({std::move(*bytes), *ext.value});
  }

  // A worker death or timeout counts against the restart limit; past it, every image fails.
  AttemptError AfterDeath(AttemptError e) {
    if (e.kind != ErrorKind::kCommand && e.kind != ErrorKind::kTimeout) return e;
    std::lock_guard lock(mu_);
    if (++restarts_ <= options_.max_restarts) {
      e.message += fmt::format("; restarted ({} of {} restarts)", restarts_, options_.max_restarts);
      return e;
    }
    broken_ = AttemptError{ErrorKind::kLocal,
                           fmt::format("workers died or hung {} times, more than the {} restarts allowed; last: {}",
                                       restarts_, options_.max_restarts, e.message),
                           {}};
    return *broken_;
  }

  std::optional<int> Acquire(const std::atomic<bool>& cancel) {
    std::unique_lock lock(mu_);
    while (free_.empty()) {
      if (cancel.load()) return std::nullopt;
      cv_.wait_for(lock, std::chrono::milliseconds(kPollSliceMs));
    }
    const int i = free_.back();
    free_.pop_back();
    return i;
  }

  void Release(int i) {
    {
      std::lock_guard lock(mu_);
      free_.push_back(i);
    }
    cv_.notify_one();
  }

  const WorkerOptions options_;
  const std::vector<std::string> argv_;
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> free_;
  int restarts_ = 0;
  std::optional<AttemptError> broken_;
  std::atomic<uint64_t> counter_{0};
};

}  // namespace

Json WorkerRequestLine(const WorkerOptions& options, const GenerationRequest& request, const std::string& id,
                       const std::string& out) {
  const auto wh = ParseImageSize(options.size);
  return {{"id", id},
          {"prompt", request.prompt},
          {"seed", request.seed ? Json(*request.seed) : Json(nullptr)},
          {"width", wh ? Json(wh->first) : Json(nullptr)},
          {"height", wh ? Json(wh->second) : Json(nullptr)},
          {"out", out},
          {"params", options.params}};
}

Result<std::vector<std::string>> ParseGpuList(const std::string& text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string id = text.substr(start, comma - start);
    if (id.empty() ||
        id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != std::string::npos)
      return Status::InvalidArgument("GPU list " + QuoteText(text), "--gpus", "comma-separated GPU ids, e.g. 0,1");
    out.push_back(id);
    start = comma + 1;
  }
  return out;
}

Result<std::unique_ptr<GenerationBackend>> MakeWorkerBackend(WorkerOptions options) {
  VISALIGN_ASSIGN_OR_RETURN(std::vector<std::string> argv, SplitCommandTemplate(options.command_template));
  if (!Startable(argv[0]))
    return Status::InvalidArgument(
        "cannot start " + QuoteText(argv[0]) +
            (argv[0].find('/') == std::string::npos ? ": not found on PATH" : ": no such executable file"),
        "--cmd", "a program that speaks the worker protocol (docs/backends.md)");
  if (options.workers < 1)
    return Status::InvalidArgument(fmt::format("{} workers", options.workers), "--workers", "at least 1");
  if (!options.size.empty() && !ParseImageSize(options.size))
    return Status::InvalidArgument("invalid size " + QuoteText(options.size), "--size", "WxH, e.g. 1024x1024");
  if (!options.params.is_object())
    return Status::InvalidArgument("params must be a JSON object", "--param", "key=value pairs");
  // A worker that dies while a request is written to it must not take visalign with it.
  ::signal(SIGPIPE, SIG_IGN);
  if (options.startup_timeout.count() <= 0 || options.request_timeout.count() <= 0)
    return Status::InvalidArgument("non-positive timeout", "--startup-timeout/--timeout", "seconds > 0");
  return std::unique_ptr<GenerationBackend>(std::make_unique<WorkerBackend>(std::move(options), std::move(argv)));
}

}  // namespace visalign::backends
