// `hues run` with native models: board pixels shared by models with the same preprocessing are
// prepared once, and the predictions equal those of each model run on its own.
#include <gtest/gtest.h>

#include "benchmarks/hues/test_support.h"
#include "visalign/core/parallel.h"

namespace visalign::hues {
namespace {

using testing::SamePredictions;

clip::ClipModel Fixture(const std::string& name) {
  Result<clip::ClipModel> m = clip::LoadClipModel(std::filesystem::path(VISALIGN_TEST_SHARED_DIR) / "fixtures" / name);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).value();
}

TEST(HuesRunBoardPixels, ModelsWithOnePreprocessingPrepareTheBoardOnceAndPredictAsAlone) {
  SetThreadCount(1);
  const Board board = testing::TestBoard();
  const std::vector<std::string> words = {"red", "forest green", "banana"};
  // clip-tiny (ViT) and clip-rn-tiny (ResNet): 64 px, shortest side, bicubic, OpenAI mean/std;
  // siglip-tiny: 64 px squashed, mean = std = 0.5.
  const clip::ClipModel vit = Fixture("clip-tiny");
  const clip::ClipModel resnet = Fixture("clip-rn-tiny");
  const clip::ClipModel siglip = Fixture("siglip-tiny");
  ASSERT_EQ(clip::PreprocessFingerprintText(vit.config().preprocess),
            clip::PreprocessFingerprintText(resnet.config().preprocess));
  ASSERT_NE(clip::PreprocessFingerprintText(vit.config().preprocess),
            clip::PreprocessFingerprintText(siglip.config().preprocess));

  BoardPixels shared;
  ClipRunOptions with_shared;
  with_shared.board_pixels = &shared;
  const ClipRunOptions alone;
  struct Step {
    const clip::ClipModel* model;
    bool prepared;
    int preparations;
  };
  for (const Step& step : {Step{&vit, true, 1}, Step{&resnet, false, 1}, Step{&siglip, true, 2}}) {
    SCOPED_TRACE(step.model->config().config_file.string());
    const Result<ClipRunResult> together = PredictWithClip(*step.model, board, words, with_shared);
    ASSERT_TRUE(together.ok()) << together.status().ToString();
    EXPECT_EQ(together->board_pixels_prepared, std::optional<bool>(step.prepared));
    EXPECT_EQ(shared.preparations(), step.preparations);
    const Result<ClipRunResult> by_itself = PredictWithClip(*step.model, board, words, alone);
    ASSERT_TRUE(by_itself.ok()) << by_itself.status().ToString();
    EXPECT_FALSE(by_itself->board_pixels_prepared.has_value());
    EXPECT_EQ(together->board_embeddings.data, by_itself->board_embeddings.data);
    EXPECT_TRUE(SamePredictions(together->words, by_itself->words));
  }
}

TEST(HuesRunBoardPixels, SharedPixelsAreThePreprocessedPatches) {
  const Board board = testing::TestBoard();
  const clip::ClipModel vit = Fixture("clip-tiny");
  BoardPixels shared;
  const Result<const clip::Matrix*> pixels = shared.For(board, vit.config().preprocess);
  ASSERT_TRUE(pixels.ok()) << pixels.status().ToString();
  const clip::Matrix expected =
      clip::PreprocessImages(BoardPatchImages(board, vit.image_size()), vit.config().preprocess).value();
  EXPECT_EQ((*pixels)->data, expected.data);
  EXPECT_EQ(shared.For(board, vit.config().preprocess).value(), *pixels);  // the same, not prepared again
  EXPECT_EQ(shared.preparations(), 1);
}

}  // namespace
}  // namespace visalign::hues
