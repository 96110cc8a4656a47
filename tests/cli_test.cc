// The command line's global contract: help, version, error format and exit codes.
#include <gtest/gtest.h>

#include <algorithm>

#include "testing/cli_runner.h"

namespace visalign {
namespace {
using testing::RunVisalign;

TEST(Cli, HelpListsCommandGroupsAndExitsZero) {
  auto r = RunVisalign({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("color"), std::string::npos);
  EXPECT_NE(r.out.find("--threads"), std::string::npos);
  EXPECT_NE(r.out.find("--json"), std::string::npos);
}

TEST(Cli, VersionPrintsVersion) {
  auto r = RunVisalign({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("visalign 0."), std::string::npos);
}

TEST(Cli, UnknownCommandIsAOneLineErrorWithExitCode2) {
  auto r = RunVisalign({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(Cli, MissingSubcommandIsAnError) {
  auto r = RunVisalign({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
}

TEST(Cli, BadGlobalOptionValueIsAnError) {
  auto r = RunVisalign({"--log-level", "loud", "color", "convert", "red"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("log-level"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace visalign
