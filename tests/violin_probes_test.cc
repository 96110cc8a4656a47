// `visalign violin probes` and the probe items in `visalign violin evaluate`, end to end through the
// binary: the dataset writer, its ground truth scoring as obedient, the results contract outputs and
// the bad inputs (a malformed probe parameter, an image of the wrong size for a pixel-stated item).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "testing/cli_runner.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/imaging/image.h"

namespace visalign {
namespace {

using testing::RunVisalign;
using testing::TempDir;

class ViolinProbes : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = RunVisalign({"violin", "probes", "--out", Dataset().string(), "--scale", "0.1", "--image-size", "64"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("inertia   percent"), std::string::npos) << r.out;
  }
  std::filesystem::path Dataset() const { return dir_ / "probes"; }
  testing::RunResult Evaluate(const std::filesystem::path& images, const std::string& out, bool strict = false) {
    std::vector<std::string> args = {"violin",      "evaluate",
                                     "--dataset",   Dataset().string(),
                                     "--images",    "gt=" + images.string(),
                                     "--out",       (dir_ / out).string(),
                                     "--bootstrap", "200"};
    if (strict) args.push_back("--strict");
    return RunVisalign(args);
  }
  TempDir dir_;
};

TEST_F(ViolinProbes, GroundTruthIsObedientInEveryFamily) {
  auto r = Evaluate(Dataset() / "images", "out", true);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto summary = Json::parse(ReadFile(dir_ / "out" / "summary.json").value());
  ASSERT_TRUE(summary.contains("probes"));
  std::map<std::string, double> value;
  for (const auto& e : summary["probes"])
    value[e["family"].get<std::string>() + "/" + e["condition"].get<std::string>() + "/" +
          e["measure"].get<std::string>()] = e["value"].is_number() ? e["value"].get<double>() : NAN;
  EXPECT_EQ(value["negation/entity/diff_de00"], 0.0);
  EXPECT_EQ(value["gravity/conflicting/pull"], 0.0);
  EXPECT_NEAR(value["inertia/all/slope"], 1.0, 0.01);
  EXPECT_EQ(value["inertia/all/within_2pp"], 1.0);
  EXPECT_EQ(value["geometry/pixels/iou"], 1.0);
  EXPECT_EQ(value["geometry/pair/failure_rate"], 0.0);
  // probes.csv: the same estimates; items.jsonl: the probe spec and measures on each line.
  auto csv = ReadCsv(dir_ / "out" / "probes.csv");
  ASSERT_TRUE(csv.ok()) << csv.status().ToString();
  EXPECT_EQ(csv->rows.size(), summary["probes"].size());
  auto items = ReadFile(dir_ / "out" / "items.jsonl").value();
  size_t inertia_lines = 0;
  for (std::string_view line : SplitLines(items)) {
    auto j = Json::parse(line);
    ASSERT_TRUE(j.contains("probe")) << line;
    if (j["probe"]["family"] == "inertia") {
      ++inertia_lines;
      EXPECT_FALSE(j.contains("pre_mean"));
      EXPECT_TRUE(j["probe_measures"]["measured_split"].is_number());
    }
  }
  EXPECT_EQ(inertia_lines, 44u);
  EXPECT_NE(ReadFile(dir_ / "out" / "summary.md").value().find("## Probes"), std::string::npos);
}

// Three languages through the binary: each is summarised apart (a `language` in every estimate, the
// column in probes.csv), and ground truth is obedient in each.
TEST(ViolinProbesLanguages, EachLanguageIsSummarisedApart) {
  TempDir dir;
  auto r = RunVisalign({"violin", "probes", "--out", (dir / "p").string(), "--scale", "0.1", "--image-size", "64",
                        "--languages", "en,zh,fr"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunVisalign({"violin", "evaluate", "--dataset", (dir / "p").string(), "--images",
                   "gt=" + (dir / "p" / "images").string(), "--out", (dir / "out").string(), "--bootstrap", "100",
                   "--strict"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto summary = Json::parse(ReadFile(dir / "out" / "summary.json").value());
  std::map<std::string, std::map<std::string, double>> value;  // language -> family/condition/measure -> value
  for (const auto& e : summary["probes"])
    value[e["language"]][e["family"].get<std::string>() + "/" + e["condition"].get<std::string>() + "/" +
                         e["measure"].get<std::string>()] = e["value"].is_number() ? e["value"].get<double>() : NAN;
  ASSERT_EQ(value.size(), 3u);
  for (const auto& [language, v] : value) {
    EXPECT_EQ(v.size(), value["en"].size()) << language;
    EXPECT_NEAR(v.at("inertia/all/slope"), 1.0, 0.01) << language;
    EXPECT_EQ(v.at("geometry/pixels/iou"), 1.0) << language;
    EXPECT_EQ(v.at("negation/entity/diff_de00"), 0.0) << language;
  }
  EXPECT_NE(ReadFile(dir / "out" / "probes.csv").value().find("model,language,family"), std::string::npos);
}

TEST_F(ViolinProbes, AMalformedProbeParameterIsOneLineNamingTheField) {
  const std::filesystem::path manifest = Dataset() / "manifest.jsonl";
  std::string text = ReadFile(manifest).value();
  const size_t at = text.find("\"split\":10.0");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 12, "\"split\":\"ten\"");
  ASSERT_TRUE(WriteFileAtomic(manifest, text).ok());
  auto r = Evaluate(Dataset() / "images", "out");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("field probe.split"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("manifest.jsonl:"), std::string::npos) << r.err;
}

TEST_F(ViolinProbes, AWrongSizedImageForAPixelStatedItemIsARecordedItemError) {
  const std::filesystem::path images = dir_ / "wrong";
  std::filesystem::copy(Dataset() / "images", images);
  std::string id;
  const std::string manifest = ReadFile(Dataset() / "manifest.jsonl").value();
  for (std::string_view line : SplitLines(manifest)) {
    auto j = Json::parse(line);
    if (j["probe"]["family"] == "geometry" && j["probe"]["condition"] == "pixels") id = j["id"];
  }
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(imaging::WritePng(images / (id + ".png"), imaging::Image(96, 96)).ok());
  auto r = Evaluate(images, "out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto summary = Json::parse(ReadFile(dir_ / "out" / "summary.json").value());
  ASSERT_EQ(summary["unreadable"].size(), 1u);
  EXPECT_EQ(summary["unreadable"][0]["id"], id);
  EXPECT_NE(summary["unreadable"][0]["reason"].get<std::string>().find(
                "image 96x96 for a pixel-stated geometry probe (canvas 64x64)"),
            std::string::npos)
      << summary["unreadable"][0].dump();
  EXPECT_EQ(Evaluate(images, "strict", true).exit_code, 2);
}

TEST(ViolinProbesCli, BadOptionsAreOneLineErrors) {
  TempDir dir;
  auto r = RunVisalign({"violin", "probes", "--out", (dir / "p").string(), "--languages", "de"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--languages"), std::string::npos) << r.err;
  r = RunVisalign({"violin", "probes", "--out", (dir / "p").string(), "--image-size", "8"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--image-size"), std::string::npos) << r.err;
  r = RunVisalign({"violin", "reference-server", "--dataset", (dir / "p").string(), "--profile", "split-bias:2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--profile"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace visalign
