// Runs every example command of README.md and docs/*.md (collected by testing/examples.h) in a
// prepared sandbox (examples_runner.h, examples_sandbox.h) and fails on a non-zero exit or an "error:"
// line, listing every failing example at once. Users copy these commands; this is what keeps them
// working. The examples of every `visalign ... --help` run in help_examples_test.cc. How to add an
// example or a substitution: docs/cli.md, "Examples are tested".
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "examples_runner.h"
#include "testing/dirs.h"
#include "testing/examples.h"

namespace visalign::testing {
namespace {

namespace fs = std::filesystem;
using examples::ExamplesTest;

// The fenced code blocks' examples of README.md, then of docs/*.md by file name.
std::vector<Example> DocumentedExamples() {
  const fs::path src = DataDir().parent_path();
  std::vector<fs::path> docs = {src / "README.md"};
  for (const auto& e : fs::directory_iterator(src / "docs"))
    if (e.path().extension() == ".md") docs.push_back(e.path());
  std::sort(docs.begin() + 1, docs.end());
  std::vector<Example> all;
  for (const fs::path& d : docs) {
    std::vector<Example> m = MarkdownExamples(d, fs::relative(d, src).string());
    all.insert(all.end(), m.begin(), m.end());
  }
  return all;
}

TEST_F(ExamplesTest, EveryDocumentedExampleRuns) {
  ExpectEveryExampleRuns(DocumentedExamples(), "README.md and docs/*.md");
}

}  // namespace
}  // namespace visalign::testing
