#include "testing/examples.h"

#include <fstream>
#include <sstream>

#include "testing/commands.h"

namespace visalign::testing {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Why `command` is a synopsis rather than a runnable example, or "".
std::string SynopsisReason(const std::string& command) {
  char quote = 0;
  for (size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"')
      quote = c;
    else if (c == '[' && i + 1 < command.size() && command[i + 1] == '-')
      return "optional flags in [...]";
    else if (c == '|' && i > 0 && command[i - 1] != ' ')
      return "alternatives a|b";
    else if (command.compare(i, 3, "...") == 0 && (i == 0 || command[i - 1] == ' '))
      return "elided arguments (...)";
  }
  return "";
}

// Logical lines of `text` (backslash and pipe continuations joined), each with the number of its first line.
std::vector<std::pair<int, std::string>> LogicalLines(const std::vector<std::string>& lines, int first_number) {
  std::vector<std::pair<int, std::string>> out;
  std::string pending;
  int pending_line = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = StripComment(Trim(lines[i]));
    if (pending.empty()) pending_line = first_number + static_cast<int>(i);
    if (!line.empty() && line.back() == '\\') {
      pending += Trim(line.substr(0, line.size() - 1)) + " ";
      continue;
    }
    if (!line.empty() && line.back() == '|') {  // a pipeline continued on the next line
      pending += line + " ";
      continue;
    }
    out.push_back({pending_line, Trim(pending + line)});
    pending.clear();
  }
  if (!pending.empty()) out.push_back({pending_line, Trim(pending)});
  return out;
}

Example Make(const std::string& where, const std::string& group, std::string command,
             const std::vector<std::string>& exports) {
  if (StartsWith(command, "$ ")) command = command.substr(2);
  Example e{where, group, command, exports, ""};
  e.synopsis = SynopsisReason(command);
  return e;
}

}  // namespace

std::string StripComment(const std::string& line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      return Trim(line.substr(0, i));
    }
  }
  return line;
}

std::vector<Example> MarkdownExamples(const std::filesystem::path& file, const std::string& name) {
  std::ifstream in(file);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::vector<Example> out;
  for (size_t i = 0; i < all.size(); ++i) {
    if (!StartsWith(Trim(all[i]), "```")) continue;
    size_t end = i + 1;
    while (end < all.size() && !StartsWith(Trim(all[end]), "```")) ++end;
    std::vector<std::string> block(all.begin() + i + 1, all.begin() + end);
    std::vector<std::string> exports;
    for (const auto& [number, line] : LogicalLines(block, static_cast<int>(i) + 2)) {
      if (StartsWith(line, "export "))
        exports.push_back(line);
      else if (StartsWith(line, "visalign ") || StartsWith(line, "$ visalign "))
        out.push_back(Make(name + ":" + std::to_string(number), name, line, exports));
    }
    i = end;
  }
  return out;
}

std::vector<Example> HelpExamples() {
  std::vector<Example> out;
  CommandTree tree = ListCommands();
  std::vector<CommandPath> all = tree.groups;
  all.insert(all.end(), tree.leaves.begin(), tree.leaves.end());
  for (const CommandPath& path : all) {
    std::string where = CommandText(path) + " --help";
    std::vector<std::string> lines;
    bool in_examples = false;
    std::istringstream help(HelpText(path));
    for (std::string line; std::getline(help, line);) {
      std::string t = Trim(line);
      size_t at = t.find("Example");
      if (at != std::string::npos && t.find(':', at) != std::string::npos) {
        in_examples = true;
        size_t v = t.find("visalign ", t.find(':', at));
        if (v == std::string::npos) continue;
        t = t.substr(v);  // "Example: visalign ..." on one line
      }
      if (!in_examples) continue;
      bool continued = !lines.empty() && (lines.back().back() == '\\' || lines.back().back() == '|');
      if (StartsWith(t, "visalign ") || StartsWith(t, "export ") || continued || (!t.empty() && t.back() == '|'))
        lines.push_back(t);
    }
    int n = 0;
    std::vector<std::string> exports;
    for (const auto& [number, command] : LogicalLines(lines, 0)) {
      if (StartsWith(command, "export "))
        exports.push_back(command);
      else
        out.push_back(Make(where + ", example " + std::to_string(++n), where, command, exports));
    }
  }
  return out;
}

}  // namespace visalign::testing
