#include "testing/commands.h"

#include <gtest/gtest.h>

#include <sstream>

#include "testing/cli_runner.h"

namespace visalign::testing {
namespace {

// The lines of a "Title:" section of the help text (indented by two spaces, up to a blank line).
std::vector<std::string> Section(const std::string& help, const std::string& title) {
  std::istringstream lines(help);
  std::vector<std::string> out;
  bool inside = false;
  for (std::string line; std::getline(lines, line);) {
    if (line == title) {
      inside = true;
    } else if (inside && line.rfind("  ", 0) == 0) {
      out.push_back(line.substr(2));
    } else if (inside) {
      break;
    }
  }
  return out;
}

void Walk(const CommandPath& path, CommandTree& tree) {
  std::vector<std::string> subs;
  for (const std::string& line : Section(HelpText(path), "Subcommands:"))
    if (!line.empty() && line[0] != ' ') subs.push_back(line.substr(0, line.find(' ')));
  (subs.empty() ? tree.leaves : tree.groups).push_back(path);
  for (const std::string& s : subs) {
    CommandPath child = path;
    child.push_back(s);
    Walk(child, tree);
  }
}

}  // namespace

CommandTree ListCommands() {
  CommandTree tree;
  Walk({}, tree);
  return tree;
}

std::string HelpText(const CommandPath& path) {
  std::vector<std::string> args = path;
  args.push_back("--help");
  RunResult r = RunVisalign(args);
  EXPECT_EQ(r.exit_code, 0) << CommandText(path) << ": " << r.err;
  return r.out;
}

std::string CommandText(const CommandPath& path) {
  std::string out = "visalign";
  for (const std::string& p : path) out += " " + p;
  return out;
}

std::vector<HelpOption> ListOptions(const CommandPath& path) {
  std::vector<HelpOption> out;
  for (const std::string& line : Section(HelpText(path), "Options:")) {
    if (line.empty() || line[0] != '-') {
      if (!out.empty() && !line.empty()) out.back().description += " " + line.substr(line.find_first_not_of(' '));
      continue;
    }
    // CLI11: "NAMES TYPE[=DEFAULT] [REQUIRED] [...]" then spaces and the description.
    HelpOption o;
    const size_t gap = line.find("  ");
    std::istringstream head(line.substr(0, gap));
    std::string names;
    head >> names;
    for (size_t start = 0; start <= names.size();) {
      const size_t comma = names.find(',', start);
      o.names.push_back(names.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      start = comma == std::string::npos ? names.size() + 1 : comma + 1;
    }
    for (std::string word; head >> word;) {
      if (word == "REQUIRED")
        o.required = true;
      else if (o.type.empty() && word != "...")
        o.type = word;
    }
    if (gap != std::string::npos) {
      const size_t text = line.find_first_not_of(' ', gap);
      if (text != std::string::npos) o.description = line.substr(text);
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace visalign::testing
