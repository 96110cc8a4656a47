// Shared plumbing for the `visalign` command line: global options, how a command group registers
// itself, and output helpers. Each group lives in its own <group>_cmd.cc and registers with
//   static const CommandGroup kGroup(order, {"violin"}, [](Cli& cli) { ... add subcommands ... });
// so adding a group touches no other file. Groups appear in --help in `order`; the list names the
// top-level commands the group adds to, so that a run builds only the groups of the command it names
// (start-up: docs/performance.md).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/store.h"
#include "visalign/store/study_store.h"

namespace visalign::clip {
struct ClipConfig;
struct ClipLoadOptions;
}  // namespace visalign::clip

namespace visalign::cli {

struct GlobalOptions {
  bool json = false;  // machine-readable output on stdout
  std::string log_level = "info";
  int threads = 0;       // 0 = all hardware threads
  bool offline = false;  // models by name from the cache only (as HF_HUB_OFFLINE=1)
};

class Cli {
 public:
  explicit Cli(CLI::App& app) : app_(app) {}
  CLI::App& app() { return app_; }
  const GlobalOptions& global() const { return global_; }
  GlobalOptions& mutable_global() { return global_; }

  // Returns the top-level group `name` (creating it with `description` on first use), so that
  // several files may add subcommands to one group (e.g. `hues run` beside `hues evaluate`).
  CLI::App* Group(const std::string& name, const std::string& description);
  // Makes `fn` the action run when subcommand `sub` is selected.
  void Bind(CLI::App* sub, std::function<Status()> fn);
  // Runs the selected action (after parsing); OK if none.
  Status RunAction();

  // `old_name` of command `cmd` was renamed to `new_name` (docs/cli.md): for one release the old
  // spelling still works and prints a warning. A value without '=' goes to `new_name_for_bare`
  // when that is given (an option that took NAME=DIR or NAME becoming two).
  void DeprecateOption(CLI::App* cmd, std::string old_name, std::string new_name, std::string new_name_for_bare = {});
  // Command `old_cmd` was renamed to `new_path` ("visalign violin generate"): register the old
  // name as a hidden command with the same options; using it prints a one-line warning.
  void DeprecateCommand(const CLI::App* old_cmd, std::string new_path);
  // Adds command `name` to `group` and, hidden from --help, the same command under its old
  // top-level name `old_name` (DeprecateCommand); `add` gives each its options and action.
  void AddRenamedCommand(CLI::App* group, const std::string& name, const std::string& old_name,
                         const std::string& description, const std::function<void(CLI::App*)>& add);
  // argv with deprecated spellings of the selected command replaced (warnings on stderr, also for
  // a deprecated command).
  std::vector<std::string> RewriteDeprecated(int argc, char** argv) const;

 private:
  struct Renamed {
    const CLI::App* cmd;
    std::string old_name, new_name, new_name_for_bare;
  };
  CLI::App& app_;
  GlobalOptions global_;
  std::function<Status()> action_;
  std::vector<Renamed> renamed_;
  std::vector<std::pair<const CLI::App*, std::string>> renamed_commands_;
};

class CommandGroup {
 public:
  // `commands`: every top-level command `add` creates or adds to (hidden old names included).
  CommandGroup(int order, std::vector<std::string> commands, std::function<void(Cli&)> add);
  // Runs, in `order`, the groups declaring top-level `command` (every group for ""). kInternal when a
  // group adds a top-level command it does not declare.
  static Status Add(Cli& cli, const std::string& command);
  // Whether some group declares top-level `command`.
  static bool Declared(const std::string& command);
};

// Prints JSON to stdout (indent 2); doubles are printed as the shortest text that round-trips.
void PrintJson(const Json& j);
// A float as a JSON number: the shortest decimal that round-trips the float (not the double it
// widens to, e.g. 0.1f is 0.1, not 0.10000000149011612).
Json FloatJson(float v);

// `--precision fp32|bf16|bf16x3|auto` of every command that loads a CLIP model (stored in *precision), and
// its value applied to the load options (a bad value is an error naming --precision).
void AddClipPrecisionOption(CLI::App* cmd, std::string* precision);
Status ApplyClipPrecision(const std::string& precision, clip::ClipLoadOptions& options);

// Where a command's run store is: --store, with --store-password-env and --image-root for a
// PostgreSQL store. Every command that takes --store registers all three with AddStoreOptions.
struct StoreFlags {
  std::string location = "./visalign-store";
  store::StoreOptions options;
  // The location as messages and text outputs show it: never with a password.
  std::string Display() const { return store::DisplayLocation(location); }
  // The same for JSON outputs, a folder made absolute.
  std::string ForJson() const;
};
// What a command keeps in its --store: runs (and their images), or only what `visalign serve`
// collected (the study store, which has no images: no --image-root).
enum class StoreUse { kRuns, kStudy };
// Adds --store (described by `what`, e.g. "Run store of the --run runs"), --store-password-env and,
// for kRuns, --image-root to `cmd`.
void AddStoreOptions(CLI::App* cmd, StoreFlags* flags, const std::string& what, StoreUse use = StoreUse::kRuns);
// store::OpenStore(flags.location, flags.options).
Result<std::unique_ptr<store::RunStore>> OpenStore(const StoreFlags& flags);
// The study store at flags.location, for commands that read what a study collected: creates
// nothing, NotFound at "store location" (expecting `expected`) when there is none.
Result<std::unique_ptr<store::StudyStore>> OpenExistingStudyStore(const StoreFlags& flags, const std::string& expected);

}  // namespace visalign::cli
