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
  int exit_code = -1;   // 128+signal when killed by a signal
  std::string out;      // stdout
  std::string err;      // stderr
};

// Runs VISALIGN_TEST_BINARY with `args` (no shell). `env` entries are added to the environment.
RunResult RunVisalign(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {});
// Runs `argv[0]` found on PATH or by path.
RunResult RunProgram(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});

}  // namespace visalign::testing
