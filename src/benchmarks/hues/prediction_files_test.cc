// Several prediction inputs at once, and where `hues run` writes its outputs.
#include <gtest/gtest.h>

#include <cstdlib>

#include "benchmarks/hues/test_support.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"

namespace visalign::hues {
namespace {

namespace fs = std::filesystem;
using testing::Scratch;

TEST(PredictionOutputFiles, AFileAsItIsElseAFolderPerModel) {
  EXPECT_EQ(PredictionOutputFiles("out/run.jsonl", "m"), (std::vector<fs::path>{"out/run.jsonl"}));
  EXPECT_EQ(PredictionOutputFiles("run.csv", "m"), (std::vector<fs::path>{"run.csv"}));
  EXPECT_EQ(PredictionOutputFiles("runs", "ViT-B-32"),
            (std::vector<fs::path>{"runs/ViT-B-32/results.csv", "runs/ViT-B-32/predictions.jsonl"}));
}

TEST(WritePredictionFiles, WritesEachFormatByExtensionAndCreatesFolders) {
  const Board board = testing::TestBoard();
  Scratch dir;
  const std::vector<WordPredictions> words = {{"SALMON", {{0, 0.5}, {1, 0.4}, {2, 0.3}, {3, 0.2}, {4, 0.1}}}};
  const std::vector<fs::path> files = PredictionOutputFiles(dir.path() / "runs", "m");
  ASSERT_TRUE(WritePredictionFiles(files, "m", words, board).ok());
  EXPECT_EQ(*ReadFile(files[0]), PeerCsv(words, board));
  EXPECT_EQ(*ReadFile(files[1]), PredictionsJsonl("m", words));
  const fs::path single = dir.path() / "a" / "b" / "m.jsonl";
  ASSERT_TRUE(WritePredictionFiles({single}, "m", words, board).ok());
  EXPECT_EQ(*ReadFile(single), PredictionsJsonl("m", words));
}

// A folder's earlier run decides what `hues run` does: resume (--models), replace or refuse.
TEST(DecidePredictionRun, SkipsWhatIsDoneWhenResumingAndNeverReplacesAnotherRunWithoutOverwrite) {
  const Board board = testing::TestBoard();
  Scratch dir;
  const fs::path folder = dir.path() / "runs" / "m";
  const std::vector<fs::path> files = PredictionOutputFiles(dir.path() / "runs", "m");
  const fs::path record_file = folder / "hues-run.json";
  const PredictionRunRecord played{"model A", "{word}", {"SALMON", "FOREST"}};
  auto decide = [&](const PredictionRunRecord& now, bool resumable, bool overwrite) {
    return DecidePredictionRun(folder, files, record_file, now, resumable, overwrite, "--out runs");
  };
  // An empty folder: play.
  Result<PredictionRunDecision> empty = decide(played, true, false);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_FALSE(empty->skip);
  EXPECT_EQ(empty->earlier.kind, EarlierPredictions::kNone);

  const std::vector<WordPredictions> words = {{"SALMON", {{0, 0.5}, {1, 0.4}, {2, 0.3}, {3, 0.2}, {4, 0.1}}},
                                              {"FOREST", {{5, 0.5}, {6, 0.4}, {7, 0.3}, {8, 0.2}, {9, 0.1}}}};
  ASSERT_TRUE(WritePredictionFiles(files, "m", words, board).ok());
  ASSERT_TRUE(WriteFileAtomic(record_file, played.ToJson().dump(2) + "\n").ok());
  // The same run: skipped when resuming, played again (identical files) otherwise.
  EXPECT_TRUE(decide(played, true, false)->skip);
  EXPECT_FALSE(decide(played, false, false)->skip);
  // A run of fewer words that were all played: done when resuming, never shrunk without --overwrite.
  const PredictionRunRecord fewer{"model A", "{word}", {"SALMON"}};
  Result<PredictionRunDecision> covered = decide(fewer, true, false);
  ASSERT_TRUE(covered.ok());
  EXPECT_TRUE(covered->skip);
  EXPECT_EQ(covered->earlier.kind, EarlierPredictions::kCovers);
  Result<PredictionRunDecision> shrink = decide(fewer, false, false);
  ASSERT_FALSE(shrink.ok());
  EXPECT_EQ(shrink.status().what(), folder.string() +
                                        " holds the predictions of another run (more words, e.g. "
                                        "--nonsense)");
  EXPECT_TRUE(decide(fewer, false, true).ok());
  // Another model: refused even when resuming, naming what differs, unless --overwrite.
  const PredictionRunRecord other{"model B", "{word}", {"SALMON", "FOREST"}};
  Result<PredictionRunDecision> refused = decide(other, true, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().what(), folder.string() + " holds the predictions of another run (another model)");
  EXPECT_EQ(refused.status().where(), "--out runs");
  Result<PredictionRunDecision> replaced = decide(other, true, true);
  ASSERT_TRUE(replaced.ok());
  EXPECT_FALSE(replaced->skip);
  EXPECT_EQ(replaced->earlier.kind, EarlierPredictions::kOther);
}

TEST(LoadPredictionSets, ConcatenatesInOrderAndRejectsADuplicateModel) {
  const Board board = testing::TestBoard();
  const Vocabulary vocabulary = testing::TestVocabulary();
  const std::vector<NonsenseWord> nonsense = testing::TestNonsense();
  Scratch dir;
  std::string a, b;
  for (const Word& w : vocabulary.words()) {
    a += R"({"model":"a","word":")" + w.en +
         R"(","top":[{"cell":"A1","similarity":0.5},{"cell":"A2","similarity":0.4},)"
         R"({"cell":"A3","similarity":0.3},{"cell":"A4","similarity":0.2},{"cell":"A5","similarity":0.1}]})"
         "\n";
  }
  b = a;
  for (size_t at = b.find(R"("model":"a")"); at != std::string::npos; at = b.find(R"("model":"a")", at))
    b.replace(at, 11, R"("model":"b")");
  const std::string pa = dir.Write("a.jsonl", a).string(), pb = dir.Write("b.jsonl", b).string();
  auto both = LoadPredictionSets({pb, pa}, PredictionFormat::kAuto, vocabulary, board, nonsense);
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ((*both)[0].name, "b");
  EXPECT_EQ((*both)[1].name, "a");
  auto twice = LoadPredictionSets({pa, pa}, PredictionFormat::kAuto, vocabulary, board, nonsense);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().ToString().find("model \"a\" appears twice"), std::string::npos)
      << twice.status().ToString();
}

TEST(DefaultBoardCacheDir, VisalignCacheThenXdgThenHome) {
  const auto restore = [](const char* name, const char* old) {
    if (old)
      ::setenv(name, old, 1);
    else
      ::unsetenv(name);
  };
  const char* vc = std::getenv("VISALIGN_CACHE");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string vc_old = vc ? vc : "", xdg_old = xdg ? xdg : "", home_old = home ? home : "";
  ::setenv("VISALIGN_CACHE", "/c", 1);
  ::setenv("XDG_CACHE_HOME", "/x", 1);
  ::setenv("HOME", "/h", 1);
  EXPECT_EQ(DefaultBoardCacheDir(), fs::path("/c"));
  ::setenv("VISALIGN_CACHE", "", 1);
  EXPECT_EQ(DefaultBoardCacheDir(), fs::path("/x/visalign"));
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(DefaultBoardCacheDir(), fs::path("/h/.cache/visalign"));
  ::unsetenv("HOME");
  ::unsetenv("VISALIGN_CACHE");
  EXPECT_EQ(DefaultBoardCacheDir(), fs::path());
  restore("VISALIGN_CACHE", vc ? vc_old.c_str() : nullptr);
  restore("XDG_CACHE_HOME", xdg ? xdg_old.c_str() : nullptr);
  restore("HOME", home ? home_old.c_str() : nullptr);
}

}  // namespace
}  // namespace visalign::hues
