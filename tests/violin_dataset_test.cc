// `visalign violin dataset` end to end: files written, determinism through the CLI, and refusals
// of bad arguments with exit code 2 and a one-line error.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "testing/cli_runner.h"
#include "visalign/benchmarks/violin/manifest.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/imaging/image.h"

namespace visalign {
namespace {

namespace fs = std::filesystem;
using testing::RunVisalign;
using testing::TempDir;

// The smallest run that still has every variation: 96 items.
constexpr const char* kTinyScale = "0.002";

void ExpectUserError(const testing::RunResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
}

TEST(ViolinDatasetCli, WritesManifestImagesAndSummary) {
  TempDir tmp;
  const fs::path out = tmp / "ds";
  auto r =
      RunVisalign({"violin", "dataset", "--out", out.string(), "--scale", kTinyScale, "--image-size", "17", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["items"], 96);
  EXPECT_EQ(j["images"], 96);
  EXPECT_EQ(j["summary"]["counts"]["variation"],
            (Json{{"1", 6}, {"2", 24}, {"3", 36}, {"4", 6}, {"5", 12}, {"6", 12}}));

  auto items = violin::LoadManifest(out);
  ASSERT_TRUE(items.ok()) << items.status().ToString();
  ASSERT_EQ(items->size(), 96u);
  const violin::ManifestItem& q4 =
      *std::find_if(items->begin(), items->end(), [](const auto& it) { return it.layout == violin::Layout::kQ4; });
  auto img = imaging::ReadImage(out / *q4.image);
  ASSERT_TRUE(img.ok()) << img.status().ToString();
  ASSERT_EQ(img->width, 17);
  // 17x17 splits at 8: pixel (7, 7) is top-left, (8, 8) bottom-right.
  const uint8_t* tl = img->pixel(7, 7);
  const uint8_t* br = img->pixel(8, 8);
  EXPECT_EQ((color::Srgb8{tl[0], tl[1], tl[2]}), q4.targets[0]);
  EXPECT_EQ((color::Srgb8{br[0], br[1], br[2]}), q4.targets[3]);

  auto summary = ReadFile(out / "summary.json");
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(Json::parse(*summary)["counts"]["items"], 96);
}

TEST(ViolinDatasetCli, SameSeedIsByteIdenticalAndAnotherSeedIsNot) {
  TempDir tmp;
  auto run = [&](const std::string& name, const std::string& seed) {
    auto r = RunVisalign({"violin", "dataset", "--out", (tmp / name).string(), "--scale", kTinyScale, "--seed", seed,
                          "--no-images", "--log-level", "off"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return ReadFile(tmp / name / "manifest.jsonl").value() + ReadFile(tmp / name / "summary.json").value();
  };
  const std::string a = run("a", "7");
  EXPECT_EQ(a, run("b", "7"));
  EXPECT_NE(a, run("c", "8"));
}

TEST(ViolinDatasetCli, RefusesBadArgumentsWithExitCode2) {
  TempDir tmp;
  const std::string out = (tmp / "ds").string();
  ExpectUserError(RunVisalign({"violin", "dataset", "--out", out, "--variations", "7"}),
                  "variation 7 does not exist (--variations)");
  ExpectUserError(RunVisalign({"violin", "dataset", "--out", out, "--variations", "1,7"}), "variation 7");
  ExpectUserError(RunVisalign({"violin", "dataset", "--out", out, "--scale", "0"}), "scale 0 out of range (--scale)");
  ExpectUserError(RunVisalign({"violin", "dataset", "--out", out, "--scale", "-0.5"}), "out of range");
  ExpectUserError(RunVisalign({"violin", "dataset", "--out", out, "--image-size", "1"}), "image size 1");
  ExpectUserError(RunVisalign({"violin", "dataset", "--out", out, "--scale", "lots"}), "--scale");
  ExpectUserError(RunVisalign({"violin", "dataset", "--scale", "0.01"}), "--out");
  EXPECT_FALSE(fs::exists(out));  // nothing written by a refused run
}

TEST(ViolinDatasetCli, RefusesAnUnwritableDirectory) {
  TempDir tmp;
  ASSERT_TRUE(WriteFileAtomic(tmp / "file", "x").ok());
  // A directory below a regular file cannot be created, even by root.
  ExpectUserError(RunVisalign({"violin", "dataset", "--out", (tmp / "file" / "ds").string(), "--scale", kTinyScale}),
                  (tmp / "file").string());
  ExpectUserError(RunVisalign({"violin", "dataset", "--out", (tmp / "file").string(), "--scale", kTinyScale}),
                  "not a directory");
}

TEST(ViolinDatasetCli, RefusesANonEmptyDirectoryWithoutForce) {
  TempDir tmp;
  const std::string out = (tmp / "ds").string();
  ASSERT_EQ(RunVisalign({"violin", "dataset", "--out", out, "--scale", kTinyScale, "--no-images"}).exit_code, 0);
  ExpectUserError(RunVisalign({"violin", "dataset", "--out", out, "--scale", kTinyScale, "--no-images"}),
                  "output directory is not empty");
  EXPECT_EQ(RunVisalign({"violin", "dataset", "--out", out, "--scale", kTinyScale, "--no-images", "--force"}).exit_code,
            0);
}

TEST(ViolinDatasetCli, HelpTeachesOptionsAndExamples) {
  auto r = RunVisalign({"violin", "dataset", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* s : {"--variations", "--seed", "--scale", "--image-size", "--no-images", "--force", "Examples"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

}  // namespace
}  // namespace visalign
