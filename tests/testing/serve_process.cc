#include "testing/serve_process.h"

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <thread>

#include <httplib.h>

#include "visalign/core/io.h"

namespace visalign::testing {
namespace fs = std::filesystem;

constexpr auto kStartTimeout = std::chrono::seconds(30);

ServeProcess::ServeProcess(const std::vector<std::string>& args, const fs::path& dir,
                           const std::map<std::string, std::string>& env) {
  const fs::path port_file = dir / "serve.port";
  std::vector<std::string> argv = {"serve", "--port", "0", "--port-file", port_file.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  child_ = StartVisalign(argv, dir, "serve", env);
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (child_.pid < 0 || waitpid(child_.pid, &status, WNOHANG) == child_.pid) {
      stopped_ = true;
      auto err = ReadFile(child_.err);
      error_ = "visalign serve exited: " + (err.ok() ? *err : std::string());
      return;
    }
    auto text = ReadFile(port_file);
    if (text.ok() && !text->empty() && text->back() == '\n') {
      const int port = std::stoi(*text);
      httplib::Client client("127.0.0.1", port);
      if (auto res = client.Get("/health"); res && res->status == 200) {
        port_ = port;
        return;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  error_ = "visalign serve did not start within 30 s";
}

ServeProcess::~ServeProcess() { Stop(); }

RunResult ServeProcess::Stop() {
  if (stopped_ || child_.pid < 0) return {};
  stopped_ = true;
  kill(child_.pid, SIGTERM);
  return Wait(child_);
}

fs::path TestingDir() { return fs::path(VISALIGN_TEST_SOURCE_DIR) / "tests" / "testing"; }

BrowserRun RunBrowserScenario(const fs::path& scenarios, const std::string& name, const std::string& base_url,
                              const Json& args, const fs::path& out_dir) {
  BrowserRun run;
  const fs::path args_file = out_dir / (name + ".args.json");
  (void)WriteFileAtomic(args_file, args.dump());
  RunResult r = RunProgram({"node", (TestingDir() / "serve_browser.cjs").string(), VISALIGN_REPORT_NODE_MODULES,
                            scenarios.string(), name, base_url, args_file.string(), out_dir.string()});
  run.exit_code = r.exit_code;
  run.stderr_text = r.err;
  auto parsed = Json::parse(r.out, nullptr, false);
  if (parsed.is_object()) {
    run.result = parsed["result"];
    run.errors = parsed["errors"].get<std::vector<std::string>>();
    run.external_requests = parsed["external_requests"].get<std::vector<std::string>>();
  }
  return run;
}

}  // namespace visalign::testing
