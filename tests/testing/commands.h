// The command tree and each command's options as `visalign ... --help` lists them, so tests can
// hold every command to a rule (errors, vocabulary) and cover a new command the day it is added.
#pragma once

#include <string>
#include <vector>

namespace visalign::testing {

using CommandPath = std::vector<std::string>;  // {"violin", "score"}; {} is visalign itself

struct CommandTree {
  std::vector<CommandPath> groups;  // commands with subcommands, visalign itself first
  std::vector<CommandPath> leaves;  // commands that run something
};
CommandTree ListCommands();

// "visalign violin score".
std::string CommandText(const CommandPath& path);

// What `visalign <path> --help` prints (its exit code checked).
std::string HelpText(const CommandPath& path);

// One line of a command's "Options:" section.
struct HelpOption {
  std::vector<std::string> names;  // "-h", "--help"
  std::string type;                // "TEXT", "INT=0", "UINT:POSITIVE=3", "" for flags
  bool required = false;
  std::string description;
};
std::vector<HelpOption> ListOptions(const CommandPath& path);

}  // namespace visalign::testing
