// store::RunJson and store::ExportRun on a real SQLite store: the export holds every row, the done
// images byte for byte, and refuses an image that changed on disk.
#include "visalign/store/run_export.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>

#include "testing/dirs.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::store {
namespace {
namespace fs = std::filesystem;

constexpr char kBytes[] = "the image bytes";

class ExportRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenStore((dir_ / "store").string()).value();
    ASSERT_TRUE(store_->OpenRun({"r", "violin", "manifest-sha", {{"backend", "test"}}, ""}).ok());
    ASSERT_TRUE(store_->AddItems("r", {{"red", 0, "a red square", 7}, {"blue", 0, "a blue square", 8}}).ok());
    ASSERT_TRUE(store_->ClaimRows("r", "me", {{"red", 0}}, std::chrono::minutes(1), false).ok());
    Result<StoredImage> image = store_->WriteImage("r", "red", 0, kBytes, "png");
    ASSERT_TRUE(image.ok()) << image.status().ToString();
    ASSERT_TRUE(store_->MarkDone("r", "red", 0, "me", *image, 2.5).ok());
    info_ = store_->FindRun("r").value().value();
  }

  visalign::testing::TempDir dir_;
  std::unique_ptr<RunStore> store_;
  RunInfo info_;
};

TEST_F(ExportRunTest, RunJsonDescribesTheRunAndItsRowCounts) {
  Result<Json> j = RunJson(*store_, info_);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)["name"], "r");
  EXPECT_EQ((*j)["benchmark"], "violin");
  EXPECT_EQ((*j)["dataset_fingerprint"], "manifest-sha");
  EXPECT_EQ((*j)["identity"]["backend"], "test");
  EXPECT_EQ((*j)["rows"]["done"], 1);
  EXPECT_EQ((*j)["rows"]["pending"], 1);
  EXPECT_EQ((*j)["rows"]["attempts"], 1);
}

TEST_F(ExportRunTest, ExportsEveryRowAndTheDoneImagesByteForByte) {
  const fs::path out = dir_ / "export";
  Result<RunExportCounts> counts = ExportRun(*store_, info_, out);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->rows, 2u);
  EXPECT_EQ(counts->images, 1u);
  const std::string text = ReadFile(out / "rows.jsonl").value();
  const std::vector<std::string_view> lines = SplitLines(text);
  ASSERT_EQ(lines.size(), 2u);
  std::map<std::string, Json> rows;
  for (std::string_view line : lines) {
    Json row = ParseJson(line).value();
    rows[row["item_id"].get<std::string>()] = row;
  }
  EXPECT_EQ(rows["red"]["status"], "done");
  EXPECT_EQ(rows["red"]["seed"], 7);
  EXPECT_EQ(rows["red"]["sha256"], Sha256Hex(kBytes));
  EXPECT_EQ(ReadFile(out / rows["red"]["image"].get<std::string>()).value(), kBytes);
  EXPECT_EQ(rows["blue"]["status"], "pending");
  EXPECT_TRUE(rows["blue"]["image"].is_null());
  EXPECT_EQ(ParseJson(ReadFile(out / "run.json").value()).value(), RunJson(*store_, info_).value());
}

TEST_F(ExportRunTest, AnImageThatChangedOnDiskIsCorruptNamingIt) {
  const std::vector<DoneImage> done = store_->DoneImages("r").value();
  ASSERT_EQ(done.size(), 1u);
  std::ofstream(done[0].image_path, std::ios::binary) << "other bytes";
  Result<RunExportCounts> counts = ExportRun(*store_, info_, dir_ / "export");
  ASSERT_FALSE(counts.ok());
  EXPECT_EQ(counts.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(counts.status().what(), "image of item red sample 0 differs from its recorded SHA-256");
  EXPECT_EQ(fs::path(counts.status().where()), done[0].image_path);
}

}  // namespace
}  // namespace visalign::store
