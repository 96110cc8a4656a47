// Predictions from embeddings: the file layout round trip and its checks, and that the native run,
// the same embeddings read back from a file, and RankCells all give identical predictions.
#include "visalign/benchmarks/hues/embeddings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "benchmarks/hues/test_support.h"
#include "visalign/core/parallel.h"

namespace visalign::hues {
namespace {

using ::testing::HasSubstr;
using testing::SamePredictions;
using testing::Scratch;

std::filesystem::path SiglipTiny() {
  return std::filesystem::path(VISALIGN_TEST_SHARED_DIR) / "fixtures" / "siglip-tiny";
}

// Deterministic embeddings: cell i and word j of width 3.
HuesEmbeddings Synthetic(const std::vector<std::string>& words) {
  HuesEmbeddings e;
  e.board = clip::Matrix(kCells, 3);
  for (int i = 0; i < kCells; ++i) {
    e.board.row(i)[0] = 1.0f;
    e.board.row(i)[1] = static_cast<float>(i % 37);
    e.board.row(i)[2] = static_cast<float>(i % 11);
  }
  e.texts = clip::Matrix(static_cast<int>(words.size()), 3);
  for (int j = 0; j < e.texts.rows; ++j) {
    e.texts.row(j)[0] = 2.0f;
    e.texts.row(j)[1] = static_cast<float>(j);
    e.texts.row(j)[2] = 1.0f;
  }
  e.words = words;
  e.prompt_template = "the color {}";
  e.model = "synthetic";
  return e;
}

TEST(HuesEmbeddings, FileRoundTripsAndPredictsLikeRankCells) {
  Scratch dir;
  const HuesEmbeddings e = Synthetic({"red", "sky blue", "mud"});
  ASSERT_TRUE(WriteEmbeddingsFile(dir / "e.safetensors", e).ok());
  const Result<HuesEmbeddings> back = ReadEmbeddingsFile(dir / "e.safetensors");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->words, e.words);
  EXPECT_EQ(back->prompt_template, "the color {}");
  EXPECT_EQ(back->model, "synthetic");
  EXPECT_EQ(back->board.data, e.board.data);
  EXPECT_EQ(back->texts.data, e.texts.data);
  // A subset in another order picks the rows by word.
  const auto some = PredictFromEmbeddings(*back, {"mud", "red"}, "the color {}");
  ASSERT_TRUE(some.ok()) << some.status().ToString();
  const std::vector<WordPredictions> all = RankCells(e.board, e.texts, e.words);
  EXPECT_TRUE(SamePredictions(*some, {all[2], all[0]}));
}

TEST(HuesEmbeddings, RefusesMissingWordsAndAnotherTemplate) {
  const HuesEmbeddings e = Synthetic({"red"});
  const auto missing = PredictFromEmbeddings(e, {"red", "teal"}, "the color {}");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().what(), HasSubstr("no embedding of the word \"teal\""));
  const auto other = PredictFromEmbeddings(e, {"red"}, "{}");
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(other.status().what(), HasSubstr("made with template \"the color {}\""));
}

TEST(HuesEmbeddings, ReadingChecksTheLayout) {
  Scratch dir;
  const HuesEmbeddings e = Synthetic({"red", "mud"});
  clip::MatrixFile good;
  good.matrices = {{"board", e.board}, {"words", e.texts}};
  good.metadata = {{"format", kEmbeddingsFormat}, {"words", "[\"red\", \"mud\"]"}};
  struct Case {
    std::string name;
    clip::MatrixFile file;
    std::string message;
  };
  std::vector<Case> cases;
  cases.push_back({"no format", good, "metadata \"format\" is missing"});
  cases.back().file.metadata.erase("format");
  cases.push_back({"words not a list", good, "not a JSON array of strings"});
  cases.back().file.metadata["words"] = "{\"red\": 1}";
  cases.push_back({"word count", good, "with 3 words"});
  cases.back().file.metadata["words"] = "[\"red\", \"mud\", \"sky\"]";
  cases.push_back({"missing board", good, "missing tensor \"board\""});
  cases.back().file.matrices.erase("board");
  cases.push_back({"short board", good, "board [479, 3]"});
  cases.back().file.matrices["board"] = clip::Matrix(kCells - 1, 3);
  cases.push_back({"format with a terminal escape", good, "metadata \"format\" is \"\\x1B[31mv1\""});
  cases.back().file.metadata["format"] = "\x1b[31mv1";
  cases.push_back({"words not JSON", good, "not a JSON array of strings"});
  cases.back().file.metadata["words"] = "[\"red\", \"mud\"";
  cases.push_back({"no dimensions", good, "embeddings of 0 dimensions"});
  cases.back().file.matrices = {{"board", clip::Matrix(kCells, 0)}, {"words", clip::Matrix(2, 0)}};
  cases.push_back({"an infinite cell", good, "tensor \"board\" row 7 holds inf"});
  cases.back().file.matrices["board"].row(7)[1] = std::numeric_limits<float>::infinity();
  cases.push_back({"a NaN word", good, "tensor \"words\" row 1 holds nan"});
  cases.back().file.matrices["words"].row(1)[2] = std::numeric_limits<float>::quiet_NaN();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(clip::WriteMatrixFile(dir / "bad.safetensors", c.file).ok());
    const auto read = ReadEmbeddingsFile(dir / "bad.safetensors");
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(read.status().what(), HasSubstr(c.message));
    EXPECT_EQ(read.status().where(), (dir / "bad.safetensors").string());
  }
}

// The native SigLIP run, and its embeddings saved and read back, give identical predictions.
TEST(HuesEmbeddings, NativeRunAndItsSavedEmbeddingsPredictIdentically) {
  SetThreadCount(1);
  Scratch dir;
  const Result<clip::ClipModel> model = clip::LoadClipModel(SiglipTiny());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Board board = testing::TestBoard();
  const std::vector<std::string> words = {"red", "forest green", "banana", "sky"};
  ClipRunOptions options;
  options.prompt_template = "a photo of {}";
  const Result<ClipRunResult> native = PredictWithClip(*model, board, words, options);
  ASSERT_TRUE(native.ok()) << native.status().ToString();
  const HuesEmbeddings saved{native->board_embeddings, words, native->text_embeddings, options.prompt_template,
                             "siglip-tiny"};
  ASSERT_TRUE(WriteEmbeddingsFile(dir / "siglip.safetensors", saved).ok());
  const auto from_file =
      PredictFromEmbeddings(ReadEmbeddingsFile(dir / "siglip.safetensors").value(), words, options.prompt_template);
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  EXPECT_TRUE(SamePredictions(native->words, *from_file));
}

}  // namespace
}  // namespace visalign::hues
