// Every command's bad invocations end the same way: one line on stderr, `error: <what> (<where>):
// <expected>`, naming the command, and exit code 2 — never CLI11's own wording, a second line or a
// 300-digit range. The commands are enumerated from `--help`, so a new command is covered the day
// it is added.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "testing/cli_runner.h"

namespace visalign {
namespace {

using testing::RunVisalign;
using Path = std::vector<std::string>;

std::string Joined(const Path& path) {
  std::string out = "visalign";
  for (const std::string& p : path) out += " " + p;
  return out;
}

// The subcommands `visalign PATH --help` lists (empty for a leaf command).
std::vector<std::string> Subcommands(const Path& path) {
  Path args = path;
  args.push_back("--help");
  auto r = RunVisalign(args);
  EXPECT_EQ(r.exit_code, 0) << Joined(path) << ": " << r.err;
  std::istringstream lines(r.out);
  std::vector<std::string> names;
  bool listing = false;
  for (std::string line; std::getline(lines, line);) {
    if (line == "Subcommands:") {
      listing = true;
    } else if (listing && line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ') {
      names.push_back(line.substr(2, line.find(' ', 2) - 2));
    } else if (listing) {
      listing = false;
    }
  }
  return names;
}

void Enumerate(const Path& path, std::vector<Path>& groups, std::vector<Path>& leaves) {
  const std::vector<std::string> subs = Subcommands(path);
  (subs.empty() ? leaves : groups).push_back(path);
  for (const std::string& s : subs) {
    Path child = path;
    child.push_back(s);
    Enumerate(child, groups, leaves);
  }
}

// One line starting with `prefix` and containing `where` (" (visalign CMD): "), exit code 2.
void ExpectOneLine(const testing::RunResult& r, const std::string& prefix, const std::string& what,
                   const std::string& where = "") {
  EXPECT_EQ(r.exit_code, 2) << what;
  EXPECT_TRUE(r.out.empty()) << what << ": " << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << ": " << r.err;
  EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << what << ": " << r.err;
  EXPECT_NE(r.err.find(where), std::string::npos) << what << ": " << r.err;
  EXPECT_LT(r.err.size(), 400u) << what << ": " << r.err;
}

TEST(CliErrors, EveryCommandAnswersBadInvocationsInOneLine) {
  std::vector<Path> groups, leaves;
  Enumerate({}, groups, leaves);
  ASSERT_GE(groups.size(), 6u);   // visalign, color, violin, hues, clip, acva, store, ...
  ASSERT_GE(leaves.size(), 25u);
  for (const Path& group : groups) {
    Path unknown = group;
    unknown.push_back("frobnicate");
    ExpectOneLine(RunVisalign(unknown), "error: unknown command \"frobnicate\" (" + Joined(group) + "): one of ",
                  Joined(unknown));
    ExpectOneLine(RunVisalign(group), "error: missing command (" + Joined(group) + "): one of ", Joined(group));
  }
  // A leaf names the unknown option (even when a required argument is missing too) and itself,
  // and points at its help; a bad global value fails with the command named.
  for (const Path& leaf : leaves) {
    const std::string where = " (" + Joined(leaf) + "): see `" + Joined(leaf) + " --help`";
    Path bad = leaf;
    bad.push_back("--no-such-option");
    ExpectOneLine(RunVisalign(bad), "error: unknown option --no-such-option" + where, Joined(bad));
    Path threads = leaf;
    threads.insert(threads.end(), {"--threads", "-1"});
    ExpectOneLine(RunVisalign(threads), "error: ", Joined(threads), where);
  }
}

TEST(CliErrors, ValuesOfTheWrongKindSayWhatIsWrongWithThem) {
  auto threads = RunVisalign({"color", "convert", "red", "--threads", "-1"});
  ExpectOneLine(threads, "error: --threads: value -1 is negative: expected 0 or more (visalign color convert)",
                "--threads -1");
  auto word = RunVisalign({"color", "convert", "red", "--threads", "many"});
  ExpectOneLine(word, "error: --threads: value \"many\" is not a number (visalign color convert)", "--threads many");
  auto zero = RunVisalign({"acva", "generate", "--samples", "0"});
  ExpectOneLine(zero, "error: --samples: value 0 is not positive: expected a number above 0 (visalign acva generate)",
                "--samples 0");
}

}  // namespace
}  // namespace visalign
