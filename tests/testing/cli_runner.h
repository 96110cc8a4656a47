// Runs the built `visalign` binary (or any program) as a child process and captures its exit code,
// stdout and stderr, so CLI tests read like specifications: args in, exit code and text out.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "testing/dirs.h"  // TempDir, DataDir, SharedDir: most CLI tests need them

namespace visalign::testing {

struct RunResult {
  int exit_code = -1;  // 128+signal when killed by a signal
  std::string out;     // stdout
  std::string err;     // stderr
};

// A child process started by StartVisalign: `pid` is the visalign process itself (no shell
// around it), so a signal sent to it reaches visalign.
struct Child {
  int pid = -1;
  std::filesystem::path out, err;  // where its stdout and stderr go
};
// Starts VISALIGN_TEST_BINARY with `args` without waiting; its output goes to <dir>/<name>.out
// and .err. pid stays -1 if it could not be started.
Child StartVisalign(const std::vector<std::string>& args, const std::filesystem::path& dir, const std::string& name,
                    const std::map<std::string, std::string>& env = {});
// Waits for `child` to end: its exit code (128+signal) and output. A sanitizer report in its stderr
// (a leak, undefined behaviour: the children of a sanitizer build run with its runtime) fails the
// current test, whatever exit code the test expects. RunVisalign and RunProgram wait through it.
RunResult Wait(const Child& child);

// Runs VISALIGN_TEST_BINARY with `args` (no shell). `env` entries are added to the environment.
RunResult RunVisalign(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {});
// Runs `argv[0]` found on PATH or by path.
RunResult RunProgram(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});

}  // namespace visalign::testing
