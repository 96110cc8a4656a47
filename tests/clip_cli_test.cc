// `visalign clip tokenize | embed | info` against the clip-tiny fixture (open_clip outputs).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/cli_runner.h"

namespace visalign {
namespace {

using ::testing::HasSubstr;
using testing::RunVisalign;

std::string Fixture(const std::string& rel = "") {
  return (testing::SharedDir() / "fixtures" / "clip-tiny" / rel).string();
}

nlohmann::json Expected() {
  std::ifstream in(Fixture("expected.json"));
  return nlohmann::json::parse(in);
}

double MaxAbsDiff(const nlohmann::json& a, const nlohmann::json& b) {
  double m = 0;
  for (size_t i = 0; i < b.size(); ++i) m = std::max(m, std::abs(a[i].get<double>() - b[i].get<double>()));
  return m;
}

TEST(ClipCli, TokenizePrintsIdsWithSotAndEot) {
  auto r = RunVisalign({"clip", "tokenize", "a photo of a banana", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["ids"], nlohmann::json({49406, 320, 1125, 539, 320, 8922, 49407}));
  r = RunVisalign({"clip", "tokenize", "BANANA"});
  EXPECT_EQ(r.out, "49406 8922 49407\n");
}

TEST(ClipCli, EmbedMatchesOpenClipInArgumentOrder) {
  const nlohmann::json e = Expected();
  auto r = RunVisalign({"--threads", "1", "clip", "embed", "--model", Fixture(), "--text", "BANANA", "--image",
                        Fixture("inputs/img_05_noise_80x100.png"), "--text", "a photo of a banana", "--image",
                        Fixture("inputs/img_00_red.png"), "--normalize", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["images"].size(), 2u);
  ASSERT_EQ(j["texts"].size(), 2u);
  EXPECT_EQ(j["images"][0]["path"], Fixture("inputs/img_05_noise_80x100.png"));
  EXPECT_EQ(j["texts"][1]["text"], "a photo of a banana");
  EXPECT_LE(MaxAbsDiff(j["images"][0]["embedding"], e["images"][5]["embedding_normalized"]), 1e-5);
  EXPECT_LE(MaxAbsDiff(j["images"][1]["embedding"], e["images"][0]["embedding_normalized"]), 1e-5);
  EXPECT_LE(MaxAbsDiff(j["texts"][0]["embedding"], e["texts"][1]["embedding_normalized"]), 1e-5);
  EXPECT_LE(MaxAbsDiff(j["texts"][1]["embedding"], e["texts"][0]["embedding_normalized"]), 1e-5);
}

TEST(ClipCli, EmbedWithoutNormalizeGivesRawProjections) {
  const nlohmann::json e = Expected();
  auto r = RunVisalign({"--threads", "1", "clip", "embed", "--model", Fixture(), "--text", "a photo of a banana", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LE(MaxAbsDiff(nlohmann::json::parse(r.out)["texts"][0]["embedding"], e["texts"][0]["embedding"]), 1e-4);
}

TEST(ClipCli, InfoDescribesTheModel) {
  auto r = RunVisalign({"clip", "info", "--model", Fixture(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["embed_dim"], 64);
  EXPECT_EQ(j["layout"], "open_clip");
  EXPECT_EQ(j["vision"]["heads"], 4);
  EXPECT_EQ(j["fingerprint"].get<std::string>().size(), 64u);
}

TEST(ClipCli, NonImageFileIsAClearError) {
  auto r = RunVisalign({"clip", "embed", "--model", Fixture(), "--image", Fixture("config.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("error: cannot decode image (--image " + Fixture("config.json") + ")"));
}

TEST(ClipCli, MissingModelIsAClearError) {
  testing::TempDir dir;
  auto r = RunVisalign({"clip", "info", "--model", dir.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no config in model directory"));
}

TEST(ClipCli, EmbedNeedsSomethingToEmbed) {
  auto r = RunVisalign({"clip", "embed", "--model", Fixture()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("at least one --text or --image"));
}

}  // namespace
}  // namespace visalign
