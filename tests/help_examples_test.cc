// Runs the examples of every `visalign ... --help` (the lines starting with "visalign " after an
// "Example:"; collected by testing/examples.h, which walks the command tree) in a prepared sandbox
// (examples_runner.h, examples_sandbox.h) and fails on a non-zero exit or an "error:" line, listing
// every failing example at once. The examples of README.md and docs/*.md run in examples_test.cc.
// How to add an example: docs/cli.md, "Examples are tested".
#include <gtest/gtest.h>

#include "examples_runner.h"
#include "testing/examples.h"

namespace visalign::testing {
namespace {

using examples::ExamplesTest;

TEST_F(ExamplesTest, EveryHelpExampleRuns) { ExpectEveryExampleRuns(HelpExamples(), "the commands' --help"); }

}  // namespace
}  // namespace visalign::testing
