// visalign: thin command-line front end over libvisalign.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/cli.h"
#include "visalign/parallel.h"
#include "visalign/progress.h"
#include "visalign/version.h"

namespace visalign::cli {

CLI::App* Cli::Group(const std::string& name, const std::string& description) {
  for (CLI::App* sub : app_.get_subcommands(nullptr))
    if (sub->get_name() == name) return sub;
  CLI::App* g = app_.add_subcommand(name, description);
  g->require_subcommand(1);
  return g;
}

namespace {
std::vector<std::pair<int, std::function<void(Cli&)>>>& Registry() {
  static std::vector<std::pair<int, std::function<void(Cli&)>>> groups;
  return groups;
}
}  // namespace

CommandGroup::CommandGroup(int order, std::function<void(Cli&)> add) {
  Registry().emplace_back(order, std::move(add));
}

void CommandGroup::AddAll(Cli& cli) {
  auto groups = Registry();
  std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [order, add] : groups) add(cli);
}

void Cli::Bind(CLI::App* sub, std::function<Status()> fn) {
  sub->callback([this, fn = std::move(fn)] { action_ = fn; });
}

Status Cli::RunAction() { return action_ ? action_() : Status::Ok(); }

void PrintJson(const nlohmann::json& j) { std::cout << j.dump(2) << std::endl; }

namespace {

int ExitCodeFor(const Status& st) {
  if (st.ok()) return 0;
  if (st.code() == StatusCode::kInterrupted) return 130;
  return 2;
}

int Main(int argc, char** argv) {
  CLI::App app{
      "visalign - measure how vision-language and text-to-image models align with human perception of "
      "color and concepts (VIOLIN, Hues and Cues, ACVA-Bench).",
      "visalign"};
  app.set_version_flag("--version", std::string("visalign ") + kVersion);
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the subcommand: `visalign color convert red --json`
  Cli cli(app);
  GlobalOptions& g = cli.mutable_global();
  app.add_flag("--json", g.json, "Machine-readable JSON output on stdout");
  app.add_option("--log-level", g.log_level, "Logging: trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
  app.add_option("--threads", g.threads, "Worker threads (0 = all cores)")->check(CLI::NonNegativeNumber);
  app.footer(
      "Errors print one line `error: <what> (<where>): <expected>` and exit with code 2.\n"
      "Run `visalign <command> --help` for a command's options.");

  CommandGroup::AddAll(cli);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s (command line): see `visalign --help` or `visalign <command> --help`\n",
                 e.what());
    return 2;
  }

  spdlog::set_default_logger(spdlog::stderr_color_mt("visalign"));
  spdlog::set_pattern("%^%l%$: %v");
  spdlog::set_level(spdlog::level::from_str(g.log_level));
  SetThreadCount(g.threads);
  if (g.log_level == "off" || g.log_level == "error") Progress::SetGloballyEnabled(false);

  Status st;
  try {
    st = cli.RunAction();
  } catch (const std::exception& e) {
    st = Status::Internal(std::string("unexpected exception: ") + e.what());
  }
  if (!st.ok()) std::fprintf(stderr, "error: %s\n", st.ToString().c_str());
  return ExitCodeFor(st);
}

}  // namespace
}  // namespace visalign::cli

int main(int argc, char** argv) { return visalign::cli::Main(argc, argv); }
