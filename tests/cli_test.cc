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

// Start-up stays small (docs/performance.md "Start-up"): libcurl and libpq, with their Kerberos,
// LDAP, SASL and TLS dependencies, are opened on first use, so `--version` maps neither and at
// most 30 shared libraries in all (the dynamic loader's own trace, LD_DEBUG=files, lists them).
TEST(Cli, VersionLoadsNeitherLibcurlNorLibpqAndAtMost30Libraries) {
  auto r = RunVisalign({"--version"}, {{"LD_DEBUG", "files"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("libcurl.so"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("libpq.so"), std::string::npos) << r.err;
  size_t loaded = 0;  // one "generating link map" line per library mapped
  for (size_t at = r.err.find("generating link map"); at != std::string::npos;
       at = r.err.find("generating link map", at + 1))
    ++loaded;
  EXPECT_GT(loaded, 0u) << r.err;
  EXPECT_LE(loaded, 30u) << r.err;
}

// A run builds only the command groups of the top-level command it names (CommandGroup, cli.h):
// global options and their values before it, old hidden names, --help without a command (every
// group) and --version (none) all still work.
TEST(Cli, OnlyTheNamedCommandsGroupsAreBuiltAndEveryWayOfNamingOneStillWorks) {
  auto color = RunVisalign({"--log-level", "warn", "--threads", "1", "color", "convert", "red", "--json"});
  EXPECT_EQ(color.exit_code, 0) << color.err;
  EXPECT_NE(color.out.find("\"hex\""), std::string::npos) << color.out;
  auto help = RunVisalign({"--log-level", "warn", "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  for (const char* command : {"color", "violin", "store", "hues", "clip", "acva", "report", "serve"})
    EXPECT_NE(help.out.find(std::string("  ") + command), std::string::npos) << command << "\n" << help.out;
  auto violin = RunVisalign({"violin", "--help"});
  EXPECT_EQ(violin.exit_code, 0) << violin.err;
  for (const char* sub : {"dataset", "probes", "score", "evaluate", "generate", "reference-server"})
    EXPECT_NE(violin.out.find(sub), std::string::npos) << sub << "\n" << violin.out;
  auto old_name = RunVisalign({"reference-generator", "--help"});
  EXPECT_EQ(old_name.exit_code, 0) << old_name.err;
  EXPECT_NE(old_name.err.find("use `visalign violin reference-server`"), std::string::npos) << old_name.err;
  auto version = RunVisalign({"--threads", "2", "--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.out.rfind("visalign 0.", 0), 0u) << version.out;
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
