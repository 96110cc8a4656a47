// `visalign clip tokenize | embed | info` and `hues run` on the siglip-tiny fixture (OpenCLIP SigLIP).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/cli_runner.h"

namespace visalign {
namespace {

using ::testing::HasSubstr;
using testing::RunVisalign;

std::string Fixture(const std::string& rel = "") {
  return (testing::SharedDir() / "fixtures" / "siglip-tiny" / rel).string();
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

TEST(SiglipCli, TokenizeUsesTheModelsSentencePieceTokenizer) {
  const nlohmann::json text = Expected()["texts"][0];
  auto r = RunVisalign({"clip", "tokenize", text["text"], "--clip-model", Fixture(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["ids"], text["token_ids"]);
}

TEST(SiglipCli, EmbedMatchesOpenClipForTextsAndPngs) {
  const nlohmann::json e = Expected();
  auto r = RunVisalign({"clip", "embed", "--clip-model", Fixture(), "--text", e["texts"][2]["text"], "--image",
                        Fixture(e["images"][1]["file"]), "--normalize", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_LE(MaxAbsDiff(j["texts"][0]["embedding"], e["texts"][2]["embedding_normalized"]), 1e-5);
  EXPECT_LE(MaxAbsDiff(j["images"][0]["embedding"], e["images"][1]["embedding_normalized"]), 1e-5);
}

TEST(SiglipCli, InfoNamesTowersTokenizerAndSigmoidScore) {
  auto r = RunVisalign({"clip", "info", "--clip-model", Fixture(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["vision"]["tower"], "timm ViT, MAP attention-pool head (SigLIP)");
  EXPECT_EQ(j["text"]["tower"], "transformer, bidirectional, pooled at the last position");
  EXPECT_EQ(j["text"]["tokenizer"]["kind"], "sentencepiece");
  EXPECT_EQ(j["text"]["tokenizer"]["pad_id"], 1);
  EXPECT_EQ(j["score"], "sigmoid");
  EXPECT_EQ(j["logit_bias"], -6.25);
  EXPECT_EQ(j["preprocess"]["resize_mode"], "squash");
  auto text = RunVisalign({"clip", "info", "--clip-model", Fixture()});
  EXPECT_THAT(text.out, HasSubstr("logit_bias    -6.25 (score: sigmoid(logit_scale * cos + logit_bias))"));
}

TEST(SiglipCli, HuesRunPlaysTheBoard) {
  testing::TempDir dir;
  auto r = RunVisalign({"hues", "run", "--clip-model", Fixture(), "--no-cache", "--out", (dir / "runs").string(),
                        "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], "siglip-tiny");
  EXPECT_EQ(j["words"], 100);
  EXPECT_TRUE(std::filesystem::exists(dir / "runs" / "siglip-tiny" / "results.csv"));
}

}  // namespace
}  // namespace visalign
