// docs/cli.md's vocabulary, held against every command's --help: one meaning per option name, the
// same required/default conventions, and every command documented there.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "testing/cli_runner.h"
#include "testing/commands.h"
#include "visalign/core/io.h"

namespace visalign {
namespace {

using testing::CommandText;
using testing::HelpOption;

bool Named(const HelpOption& o, const std::string& name) {
  return std::find(o.names.begin(), o.names.end(), name) != o.names.end();
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool Mentions(const HelpOption& o, const std::string& word) {
  return Lower(o.description).find(word) != std::string::npos;
}

TEST(CliVocabulary, EveryCommandFollowsDocsCli) {
  const testing::CommandTree tree = testing::ListCommands();
  ASSERT_GE(tree.leaves.size(), 25u);
  Result<std::string> doc = ReadFile(testing::DataDir().parent_path() / "docs" / "cli.md");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  size_t clip_models = 0, outs = 0, seeds = 0;
  for (const testing::CommandPath& leaf : tree.leaves) {
    const std::string command = CommandText(leaf);
    SCOPED_TRACE(command);
    EXPECT_NE(doc->find("`" + command + "`"), std::string::npos) << "not listed in docs/cli.md";
    for (const HelpOption& o : testing::ListOptions(leaf)) {
      SCOPED_TRACE(o.names.back());
      // --model is always an API model name: never a folder.
      if (Named(o, "--model")) {
        EXPECT_FALSE(Mentions(o, "folder") || Mentions(o, "director") || Mentions(o, "dir")) << o.description;
        EXPECT_TRUE(Mentions(o, "model")) << o.description;
      }
      // A CLIP model folder is always --clip-model.
      if (Mentions(o, "clip model")) {
        EXPECT_TRUE(Named(o, "--clip-model")) << o.description;
        clip_models += Named(o, "--clip-model");
      }
      // Image folders are NAME=DIR.
      if (Named(o, "--images")) EXPECT_TRUE(o.description.find("NAME=DIR") != std::string::npos) << o.description;
      // Results go where the user said: --out is always required.
      if (Named(o, "--out")) {
        EXPECT_TRUE(o.required) << o.description;
        ++outs;
      }
      // Seeds always show their default (the same seed, the same output).
      if (Named(o, "--seed") || Named(o, "--bootstrap-seed")) {
        EXPECT_NE(o.type.find('='), std::string::npos) << o.type;
        ++seeds;
      }
      // Bootstrap resamples have one name.
      EXPECT_FALSE(Named(o, "--resamples"));
    }
  }
  EXPECT_GE(clip_models, 5u);  // hues run, clip embed, clip info, acva analyze, acva run
  EXPECT_GE(outs, 8u);
  EXPECT_GE(seeds, 6u);
}

}  // namespace
}  // namespace visalign
