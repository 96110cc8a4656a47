// The example commands users copy: those in the fenced code blocks of README.md and docs/*.md and
// those in every `visalign ... --help`, so tests/examples_test.cc and help_examples_test.cc can run
// each one and a new example is covered the day it is written (docs/cli.md, "Examples are tested").
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace visalign::testing {

struct Example {
  std::string where;                 // "README.md:47" or "visalign violin generate --help, example 2"
  std::string group;                 // examples of one group run in order in one sandbox: the file or the --help
  std::string command;               // one shell line, backslash continuations joined, trailing "# comment" cut
  std::vector<std::string> exports;  // the "export X=..." lines before it in its code block or --help
  // Why it is a synopsis, not a command ("[--", "|", "..."): listed, never run. Empty otherwise.
  std::string synopsis;
};

// Lines starting with "visalign " or "$ visalign " in the fenced code blocks of `file`, which is
// named `name` in Example::where.
std::vector<Example> MarkdownExamples(const std::filesystem::path& file, const std::string& name);
// The lines starting with "visalign " after an "Example" in the --help of every command of the tree
// (the "export " lines among them run before the later ones, as in a code block).
std::vector<Example> HelpExamples();

// `line` without a trailing "# comment" (a '#' outside quotes after a blank or at the start).
std::string StripComment(const std::string& line);

}  // namespace visalign::testing
