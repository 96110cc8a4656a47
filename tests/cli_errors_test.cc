// Every command's bad invocations end the same way: one line on stderr, `error: <what> (<where>):
// <expected>`, naming the command, and exit code 2 — never CLI11's own wording, a second line or a
// 300-digit range. The commands are enumerated from `--help`, so a new command is covered the day
// it is added.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "testing/cli_runner.h"
#include "testing/commands.h"

namespace visalign {
namespace {

using testing::CommandText;
using testing::RunVisalign;
using Path = testing::CommandPath;

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
  const testing::CommandTree tree = testing::ListCommands();
  const std::vector<Path>& groups = tree.groups;
  const std::vector<Path>& leaves = tree.leaves;
  ASSERT_GE(groups.size(), 6u);  // visalign, color, violin, hues, clip, acva, store, ...
  ASSERT_GE(leaves.size(), 25u);
  for (const Path& group : groups) {
    Path unknown = group;
    unknown.push_back("frobnicate");
    ExpectOneLine(RunVisalign(unknown), "error: unknown command \"frobnicate\" (" + CommandText(group) + "): one of ",
                  CommandText(unknown));
    ExpectOneLine(RunVisalign(group), "error: missing command (" + CommandText(group) + "): one of ",
                  CommandText(group));
  }
  // A leaf names the unknown option (even when a required argument is missing too) and itself,
  // and points at its help; a bad global value fails with the command named.
  for (const Path& leaf : leaves) {
    const std::string where = " (" + CommandText(leaf) + "): see `" + CommandText(leaf) + " --help`";
    Path bad = leaf;
    bad.push_back("--no-such-option");
    ExpectOneLine(RunVisalign(bad), "error: unknown option --no-such-option" + where, CommandText(bad));
    Path threads = leaf;
    threads.insert(threads.end(), {"--threads", "-1"});
    ExpectOneLine(RunVisalign(threads), "error: ", CommandText(threads), where);
  }
}

TEST(CliErrors, ValuesOfTheWrongKindSayWhatIsWrongWithThem) {
  auto threads = RunVisalign({"color", "convert", "red", "--threads", "-1"});
  ExpectOneLine(threads, "error: --threads: value -1 is negative: expected 0 or more (visalign color convert)",
                "--threads -1");
  auto word = RunVisalign({"color", "convert", "red", "--threads", "many"});
  ExpectOneLine(word, "error: --threads: value \"many\" is not a number (visalign color convert)", "--threads many");
  auto normalization =
      RunVisalign({"violin", "evaluate", "--dataset", "d", "--images", "i", "--out", "o", "--normalization", "zscore"});
  ExpectOneLine(normalization, "error: --normalization", "--normalization zscore", "minmax");
  auto weights = RunVisalign({"violin", "score", "a.png", "--target", "red", "--weights", "1,1,1,1,1,1,0,0,0"});
  ExpectOneLine(weights, "error: ", "--weights with zero purity weights", "--weights");
  auto zero = RunVisalign({"acva", "generate", "--samples", "0"});
  ExpectOneLine(zero, "error: --samples: value 0 is not positive: expected a number above 0 (visalign acva generate)",
                "--samples 0");
}

// The library names its inputs ("run name", "store location", "image folder"); the command line
// prints the flag the user typed instead.
TEST(CliErrors, LibraryErrorsNameTheFlagThatCarriedTheInput) {
  testing::TempDir t;
  auto server = RunVisalign({"store", "show", "--store", "mysql://visalign:s3cret@db.example/visalign"});
  EXPECT_EQ(server.exit_code, 2);
  EXPECT_EQ(server.err,
            "error: unknown store scheme \"mysql://\" (--store): a folder (the embedded SQLite store) or "
            "postgres://user@host:port/database\n");
  auto run = RunVisalign({"acva", "generate", "--store", (t / "store").string(), "--run", "a b", "--backend",
                          "directory", "--path", t.path().string()});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err.rfind("error: invalid run name \"a b\" (--run): ", 0), 0u) << run.err;
}

// `hues run` takes exactly one source of embeddings; `clip tokenize` either a context length or a model.
TEST(CliErrors, HuesRunSourcesAndClipTokenizeModel) {
  testing::TempDir t;
  const std::string out = (t / "x.csv").string();
  ExpectOneLine(RunVisalign({"hues", "run", "--out", out}),
                "error: no model (visalign hues run): one of --clip-model DIR, --models DIR, --embeddings FILE or "
                "--embeddings-endpoint URL",
                "no model");
  ExpectOneLine(RunVisalign({"hues", "run", "--clip-model", "m", "--embeddings", "e", "--out", out}),
                "error: --clip-model excludes --embeddings (visalign hues run)", "two sources");
  ExpectOneLine(RunVisalign({"hues", "run", "--embeddings-model", "m", "--clip-model", "m", "--out", out}),
                "error: --embeddings-model requires --embeddings-endpoint (visalign hues run)",
                "model without endpoint");
  ExpectOneLine(RunVisalign({"hues", "run", "--embeddings", (t / "none.safetensors").string(), "--out", out}),
                "error: cannot open safetensors file", "missing file", "(--embeddings ");
  ExpectOneLine(RunVisalign({"clip", "tokenize", "hi", "--clip-model", "m", "--context-length", "5"}),
                "error: --context-length excludes --clip-model (visalign clip tokenize)", "two tokenizers");
}

}  // namespace
}  // namespace visalign
