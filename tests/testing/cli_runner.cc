#include "testing/cli_runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

extern char** environ;

namespace visalign::testing {
namespace fs = std::filesystem;

namespace {
std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Starts `argv` (found on PATH or by path) with stdin from /dev/null and stdout/stderr to files.
Child Spawn(const std::vector<std::string>& argv, const fs::path& out_path, const fs::path& err_path,
            const std::map<std::string, std::string>& env) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);

  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string key = kv.substr(0, kv.find('='));
    if (!env.count(key)) env_strings.push_back(kv);
  }
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  pid_t pid = 0;
  Child child{-1, out_path, err_path};
  if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data()) == 0) child.pid = pid;
  posix_spawn_file_actions_destroy(&actions);
  return child;
}

// True when `err` holds a sanitizer report: ASan, LeakSanitizer, UBSan and TSan end every report
// with a line "SUMMARY: <Name>Sanitizer: ...".
bool HasSanitizerReport(const std::string& err) {
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("SUMMARY: ") && line.find("Sanitizer: ") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

Child StartVisalign(const std::vector<std::string>& args, const fs::path& dir, const std::string& name,
                    const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv{VISALIGN_TEST_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return Spawn(argv, dir / (name + ".out"), dir / (name + ".err"), env);
}

RunResult Wait(const Child& child) {
  RunResult r;
  if (child.pid < 0) {
    r.err = "spawn failed";
    return r;
  }
  int status = 0;
  waitpid(child.pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = Slurp(child.out);
  r.err = Slurp(child.err);
  // In a sanitizer build (docs/fuzzing.md) the children run with the same runtime: a report in one
  // (a leak at exit, undefined behaviour) fails the test, whatever exit code the test expected.
  if (HasSanitizerReport(r.err)) ADD_FAILURE() << "sanitizer report from a child process:\n" << r.err;
  return r;
}

RunResult RunProgram(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  TempDir tmp;
  RunResult r = Wait(Spawn(argv, tmp / "stdout", tmp / "stderr", env));
  if (r.exit_code == -1) r.err = "spawn failed: " + argv[0];
  return r;
}

RunResult RunVisalign(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv{VISALIGN_TEST_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv, env);
}

}  // namespace visalign::testing
