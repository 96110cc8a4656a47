// The test runner's own contract (tests/testing/cli_runner.h): in a sanitizer build every visalign
// command a test runs carries the sanitizer runtime, and its report must fail the test even when
// the command's exit code is the one the test expected.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "testing/cli_runner.h"

namespace visalign {
namespace {

using testing::RunProgram;

TEST(CliRunner, ASanitizerReportInAChildsStderrFailsTheTest) {
  EXPECT_NONFATAL_FAILURE(
      RunProgram({"/bin/sh", "-c", "echo 'SUMMARY: AddressSanitizer: 77 byte(s) leaked in 1 allocation(s).' >&2"}),
      "sanitizer report from a child process");
  EXPECT_NONFATAL_FAILURE(
      RunProgram(
          {"/bin/sh", "-c", "echo 'SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior a.cc:3:48 in' >&2; exit 2"}),
      "undefined-behavior a.cc:3:48");
}

TEST(CliRunner, AnErrorLineIsNotASanitizerReport) {
  const testing::RunResult r =
      RunProgram({"/bin/sh", "-c", "echo 'SUMMARY: 2 errors' >&2; echo 'error: x (y): z' >&2; exit 2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "SUMMARY: 2 errors\nerror: x (y): z\n");
}

}  // namespace
}  // namespace visalign
