// Runs the built `visalign` binary (or any program) as a child process and captures its exit code,
// stdout and stderr, so CLI tests read like specifications: args in, exit code and text out.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

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

// A fresh empty directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& rel) const { return path_ / rel; }

 private:
  std::filesystem::path path_;
};

// Paths of the shipped data folder and the read-only reference fixtures beside the project.
std::filesystem::path DataDir();
std::filesystem::path SharedDir();

}  // namespace visalign::testing
