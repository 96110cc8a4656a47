// For tests of `visalign serve`: the real server started on 127.0.0.1 (any free port, read from its
// port file) and stopped with SIGTERM, and the shared headless-Chromium driver (serve_browser.cjs)
// that runs a scenario against it.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "testing/cli_runner.h"

#include "visalign/core/json.h"

namespace visalign::testing {

class ServeProcess {
 public:
  // Starts `visalign serve --port 0 --port-file ... <args>` with output in `dir`, and waits (up to
  // 30 s) until it answers /health. ok() says whether it did; error() says why not.
  ServeProcess(const std::vector<std::string>& args, const std::filesystem::path& dir,
               const std::map<std::string, std::string>& env = {});
  ~ServeProcess();  // Stop()
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;
  bool ok() const { return port_ > 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // SIGTERM, then waits: the exit code and output (exit code -1 when it was not running).
  RunResult Stop();

 private:
  Child child_;
  int port_ = -1;
  bool stopped_ = false;
  std::string error_;
};

// What a browser scenario did: the scenario's own result, every console error and uncaught
// exception, and every request to another origin than the server's.
struct BrowserRun {
  int exit_code = -1;
  Json result;
  std::vector<std::string> errors;
  std::vector<std::string> external_requests;
  std::string stderr_text;
};
// Runs scenario `name` of the CommonJS module `scenarios` (exports {name: async (page, ctx) => result};
// ctx = {base, args, outDir, chromium context}) in headless Chromium (/usr/bin/chromium --no-sandbox
// --disable-gpu --disable-background-networking, a fresh profile) via tests/testing/serve_browser.cjs
// and playwright-core from the build's npm install.
BrowserRun RunBrowserScenario(const std::filesystem::path& scenarios, const std::string& name,
                              const std::string& base_url, const Json& args, const std::filesystem::path& out_dir);

// tests/testing/ in the source tree (where the scenario modules live).
std::filesystem::path TestingDir();

}  // namespace visalign::testing
