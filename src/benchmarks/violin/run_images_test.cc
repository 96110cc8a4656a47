// violin::CollectRunImages on a real SQLite run store: a VIOLIN run of this dataset version gives
// its done images as a model; a run of another benchmark or another dataset version, or no run,
// is refused saying which.
#include "visalign/benchmarks/violin/run_images.h"

#include <gtest/gtest.h>

#include <chrono>

#include "testing/dirs.h"

namespace visalign::violin {
namespace {

constexpr char kManifest[] = "manifest-sha";

class CollectRunImagesTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = store::OpenStore((dir_ / "store").string()).value(); }

  // A run of `benchmark` made from `fingerprint` with item "red" done (sample 0) and "blue" pending.
  void MakeRun(const std::string& run, const std::string& benchmark, const std::string& fingerprint) {
    ASSERT_TRUE(store_->OpenRun({run, benchmark, fingerprint, {{"backend", "test"}}, ""}).ok());
    ASSERT_TRUE(store_->AddItems(run, {{"red", 0, "red", std::nullopt}, {"blue", 0, "blue", std::nullopt}}).ok());
    ASSERT_TRUE(store_->ClaimRows(run, "me", {{"red", 0}}, std::chrono::minutes(1), false).ok());
    Result<store::StoredImage> image = store_->WriteImage(run, "red", 0, "not really a png", "png");
    ASSERT_TRUE(image.ok()) << image.status().ToString();
    ASSERT_TRUE(store_->MarkDone(run, "red", 0, "me", *image, 1.0).ok());
  }

  visalign::testing::TempDir dir_;
  std::unique_ptr<store::RunStore> store_;
};

TEST_F(CollectRunImagesTest, AViolinRunOfThisDatasetGivesItsDoneImagesAsAModel) {
  MakeRun("gen", "violin", kManifest);
  Result<ModelImages> images = CollectRunImages(*store_, "gen", kManifest, "store s", "./s/../s");
  ASSERT_TRUE(images.ok()) << images.status().ToString();
  EXPECT_EQ(images->model, "gen");
  ASSERT_EQ(images->sources.size(), 1u);  // the pending row has no image
  EXPECT_EQ(images->sources[0].item_id, "red");
  EXPECT_EQ(images->sources[0].k, 0);
  EXPECT_TRUE(std::filesystem::is_regular_file(images->sources[0].path));
  EXPECT_EQ(images->origin.kind, "run");
  EXPECT_EQ(images->origin.run, "gen");
  EXPECT_EQ(images->origin.path, "s");
  EXPECT_EQ(images->origin.identity["backend"], "test");
}

TEST_F(CollectRunImagesTest, NoRunAnotherBenchmarkOrAnotherDatasetVersionIsRefusedSayingWhich) {
  MakeRun("concepts", "acva", "concept-set");
  MakeRun("old", "violin", "an older manifest");
  Result<ModelImages> none = CollectRunImages(*store_, "missing", kManifest, "store s", "s");
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(none.status().ToString(),
            "no run named \"missing\" (store s): a run created by `visalign generate --run missing`");
  Result<ModelImages> acva = CollectRunImages(*store_, "concepts", kManifest, "store s", "s");
  EXPECT_EQ(acva.status().what(), "run \"concepts\" was made for the acva benchmark, not VIOLIN");
  EXPECT_EQ(acva.status().expected().rfind("`visalign acva analyze --run concepts`", 0), 0u);
  Result<ModelImages> old = CollectRunImages(*store_, "old", kManifest, "store s", "s");
  EXPECT_EQ(old.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(old.status().what(), "run \"old\" was generated from another dataset version");
  EXPECT_NE(old.status().expected().find("an older manifest"), std::string::npos);
}

}  // namespace
}  // namespace visalign::violin
