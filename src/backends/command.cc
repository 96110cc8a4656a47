// The command backend: runs a local program per image with posix_spawn (no shell), in its own
// process group so a timeout kills everything it started.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "backends/spawn.h"
#include "visalign/backends/backends.h"
#include "visalign/core/io.h"
#include "visalign/store.h"

extern char** environ;

namespace visalign::backends {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kPollMs = 20;
constexpr std::string_view kOutExtension = ".png";
// Where a command may have written its image: {out_stem} with one of these endings ({out} is the
// first); the bare stem too, for programs given {out_stem} that add nothing.
constexpr std::array<std::string_view, 5> kOutputEndings = {kOutExtension, ".jpg", ".jpeg", ".webp", ""};

struct Placeholders {
  std::string prompt, out, out_stem, seed, id, k;
  const std::string* Get(std::string_view name) const {
    if (name == "prompt") return &prompt;
    if (name == "out") return &out;
    if (name == "out_stem") return &out_stem;
    if (name == "seed") return &seed;
    if (name == "id") return &id;
    if (name == "k") return &k;
    return nullptr;
  }
};

// Substitutes {name} in one argument; {{ and }} are literal braces. `names` collects the
// placeholders used (for validation) when non-null.
Result<std::string> Substitute(std::string_view arg, const Placeholders& values, std::vector<std::string>* names) {
  std::string out;
  for (size_t i = 0; i < arg.size(); ++i) {
    char c = arg[i];
    if ((c == '{' || c == '}') && i + 1 < arg.size() && arg[i + 1] == c) {
      out += c;
      ++i;
    } else if (c == '{') {
      size_t close = arg.find('}', i);
      std::string name(arg.substr(i + 1, close == std::string_view::npos ? std::string_view::npos : close - i - 1));
      const std::string* v = close == std::string_view::npos ? nullptr : values.Get(name);
      if (!v)
        return Status::InvalidArgument(fmt::format("unknown placeholder in argument \"{}\"", arg), "command template",
                                       "{prompt}, {out}, {out_stem}, {seed}, {id}, {k} ({{ and }} for literal braces)");
      if (names) names->push_back(name);
      out += *v;
      i = close;
    } else if (c == '}') {
      return Status::InvalidArgument(fmt::format("unmatched '}}' in argument \"{}\"", arg), "command template",
                                     "{placeholder} or }} for a literal brace");
    } else {
      out += c;
    }
  }
  return out;
}

// The last `n` bytes of `s` on one line, with every occurrence of `scrub` (the item's scratch path)
// written as `scrub_as`, so the text is the same for every item when the failure is.
std::string Tail(std::string_view s, size_t n, const std::string& scrub, std::string_view scrub_as) {
  std::string t(s.size() > n ? s.substr(s.size() - n) : s);
  for (size_t at = 0; !scrub.empty() && (at = t.find(scrub, at)) != std::string::npos; at += scrub_as.size())
    t.replace(at, scrub.size(), scrub_as);
  for (char& c : t)
    if (c == '\n' || c == '\r') c = ' ';
  size_t b = t.find_first_not_of(' ');
  size_t e = t.find_last_not_of(' ');
  return b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
}

// The last non-empty line of `s`.
std::string_view LastLine(std::string_view s) {
  const size_t end = s.find_last_not_of(" \t\r\n");
  if (end == std::string_view::npos) return {};
  const size_t newline = s.find_last_of("\r\n", end);
  const size_t start = newline == std::string_view::npos ? 0 : newline + 1;
  return s.substr(start, end + 1 - start);
}

// How one run of the command ended.
struct CommandEnd {
  std::optional<AttemptError> error;  // kLocal or kCancelled: the command did not run to its end
  std::string failure;                // non-empty: "exited with status 3", "timed out after ..."
  std::string stderr_text;            // the end of what it wrote to stderr
};

class CommandBackend final : public GenerationBackend {
 public:
  CommandBackend(CommandOptions options, std::vector<std::string> argv)
      : options_(std::move(options)), argv_(std::move(argv)) {}

  Json Identity() const override { return {{"backend", "command"}, {"cmd", options_.command_template}}; }
  Json Connection() const override { return {{"timeout_ms", options_.timeout.count()}}; }

  Attempt<GeneratedImage> Generate(const GenerationRequest& request, const std::atomic<bool>& cancel) override {
    if (Status st = EnsureDirectory(options_.scratch_dir); !st.ok())
      return Attempt<GeneratedImage>::Fail({ErrorKind::kLocal, st.ToString(), {}});
    const std::string stem = (options_.scratch_dir / fmt::format("{}__{}.{}.{}", store::SafeFileName(request.item_id),
                                                                 request.k, ::getpid(), counter_.fetch_add(1)))
                                 .string();
    Placeholders values{
        request.prompt,  stem + std::string(kOutExtension), stem, request.seed ? std::to_string(*request.seed) : "",
        request.item_id, std::to_string(request.k)};
    std::vector<std::string> args;
    for (const std::string& a : argv_) {
      auto s = Substitute(a, values, nullptr);
      if (!s.ok()) return Attempt<GeneratedImage>::Fail({ErrorKind::kLocal, s.status().ToString(), {}});
      args.push_back(std::move(*s));
    }
    CommandEnd end = Run(args, cancel);
    std::vector<fs::path> written;
    std::error_code ec;
    for (std::string_view ending : kOutputEndings) {
      fs::path p = stem + std::string(ending);
      if (fs::is_regular_file(p, ec)) written.push_back(std::move(p));
    }
    struct RemoveWritten {
      const std::vector<fs::path>& files;
      ~RemoveWritten() {
        std::error_code ignored;
        for (const fs::path& f : files) fs::remove(f, ignored);
      }
    } cleanup{written};
    auto fail = [&](const std::string& what) { return Attempt<GeneratedImage>::Fail(Failure(what, end, stem)); };
    if (end.error) return Attempt<GeneratedImage>::Fail(*end.error);
    if (!end.failure.empty()) return fail(end.failure);
    if (written.empty()) return fail("exited 0 but wrote no image at {out} nor {out_stem}.jpg, .jpeg or .webp");
    if (written.size() > 1)
      return fail(fmt::format("wrote {} images ({} and {} in the scratch folder): expected one", written.size(),
                              written[0].filename().string(), written[1].filename().string()));
    auto bytes = ReadFile(written[0]);
    if (!bytes.ok()) return fail("wrote an unreadable image: " + bytes.status().what());
    auto ext = ValidateImageBytes(*bytes, "{out} of " + args[0]);
    if (!ext.ok()) return fail("wrote an invalid image: " + ext.error.message);
    return Attempt<GeneratedImage>::Ok({std::move(*bytes), *ext.value});
  }

 private:
  // A failed command (kCommand): "command <what>; stderr: <tail>", with the exit and the last
  // stderr line as the signature (progress output before it differs from item to item).
  AttemptError Failure(const std::string& what, const CommandEnd& end, const std::string& stem) const {
    const std::string tail = Tail(end.stderr_text, options_.stderr_tail_bytes, stem, "{out_stem}");
    AttemptError e{ErrorKind::kCommand, "command " + what + (tail.empty() ? "" : "; stderr: " + tail), {}};
    const std::string last = Tail(LastLine(end.stderr_text), options_.stderr_tail_bytes, stem, "{out_stem}");
    e.signature = "command " + what + (last.empty() ? "" : "; last stderr line: " + last);
    return e;
  }

  // Runs argv with stdin/stdout on /dev/null and stderr captured (its end kept).
  CommandEnd Run(const std::vector<std::string>& args, const std::atomic<bool>& cancel) {
    CommandEnd end;
    auto local = [&](std::string msg) {
      end.error = AttemptError{ErrorKind::kLocal, std::move(msg), {}};
      return end;
    };
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return local(std::string("pipe: ") + std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    posix_spawnattr_t attr;
    InitChildSpawnAttr(&attr);
    std::vector<char*> cargv;
    for (const std::string& a : args) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, cargv[0], &actions, &attr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      return local(fmt::format("cannot start \"{}\": {}", args[0], std::strerror(rc)));
    }
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    const size_t keep = options_.stderr_tail_bytes * 2;
    auto drain = [&] {
      char buf[4096];
      ssize_t n;
      while ((n = ::read(fds[0], buf, sizeof buf)) > 0) {
        end.stderr_text.append(buf, static_cast<size_t>(n));
        if (end.stderr_text.size() > keep) end.stderr_text.erase(0, end.stderr_text.size() - keep);
      }
    };
    auto deadline = Clock::now() + options_.timeout;
    int wstatus = 0;
    bool cancelled = false, timed_out = false;
    for (;;) {
      pollfd p{fds[0], POLLIN, 0};
      ::poll(&p, 1, kPollMs);
      drain();
      pid_t w = ::waitpid(pid, &wstatus, WNOHANG);
      if (w == pid) break;
      if (!cancelled && !timed_out && (cancel.load() || Clock::now() >= deadline)) {
        (cancel.load() ? cancelled : timed_out) = true;
        ::kill(-pid, SIGKILL);
      }
    }
    // Whatever the command left running in its process group goes too.
    ::kill(-pid, SIGKILL);
    drain();
    ::close(fds[0]);
    if (cancelled)
      end.error = AttemptError{ErrorKind::kCancelled, "command cancelled", {}};
    else if (timed_out)
      end.failure = fmt::format("timed out after {} ms", options_.timeout.count());
    else if (WIFSIGNALED(wstatus))
      end.failure = fmt::format("killed by signal {}", WTERMSIG(wstatus));
    else if (WEXITSTATUS(wstatus) != 0)
      end.failure = fmt::format("exited with status {}", WEXITSTATUS(wstatus));
    return end;
  }

  CommandOptions options_;
  std::vector<std::string> argv_;
  std::atomic<uint64_t> counter_{0};
};

}  // namespace

Result<std::vector<std::string>> SplitCommandTemplate(std::string_view t) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (c == '\'') {
      size_t close = t.find('\'', i + 1);
      if (close == std::string_view::npos)
        return Status::InvalidArgument("unterminated single quote", "command template", "matching quotes");
      word.append(t.substr(i + 1, close - i - 1));
      in_word = true;
      i = close;
    } else if (c == '"') {
      size_t j = i + 1;
      for (; j < t.size() && t[j] != '"'; ++j) {
        if (t[j] == '\\' && j + 1 < t.size() && (t[j + 1] == '"' || t[j + 1] == '\\')) ++j;
        word += t[j];
      }
      if (j >= t.size())
        return Status::InvalidArgument("unterminated double quote", "command template", "matching quotes");
      in_word = true;
      i = j;
    } else if (c == '\\') {
      if (i + 1 >= t.size())
        return Status::InvalidArgument("trailing backslash", "command template", "a character after '\\'");
      word += t[++i];
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return Status::InvalidArgument("empty command", "command template", "a program and its arguments");
  return words;
}

Result<std::unique_ptr<GenerationBackend>> MakeCommandBackend(CommandOptions options) {
  VISALIGN_ASSIGN_OR_RETURN(std::vector<std::string> argv, SplitCommandTemplate(options.command_template));
  std::vector<std::string> used;
  Placeholders probe;
  for (const std::string& a : argv) VISALIGN_RETURN_IF_ERROR(Substitute(a, probe, &used).status());
  if (std::find(used.begin(), used.end(), "out") == used.end() &&
      std::find(used.begin(), used.end(), "out_stem") == used.end())
    return Status::InvalidArgument("the command template has no {out} placeholder", "command template",
                                   "an argument with {out} (the .png file the command must write) or {out_stem} "
                                   "(the same path without extension; the command adds .png, .jpg or .webp)");
  if (argv[0].find('{') != std::string::npos)
    return Status::InvalidArgument("the program name may not contain placeholders", "command template",
                                   "a fixed program");
  if (options.timeout.count() <= 0)
    return Status::InvalidArgument("timeout must be positive", "command timeout", "seconds > 0");
  return std::unique_ptr<GenerationBackend>(std::make_unique<CommandBackend>(std::move(options), std::move(argv)));
}

}  // namespace visalign::backends
