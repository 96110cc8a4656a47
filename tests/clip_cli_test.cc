// `visalign clip tokenize | embed | info` against the clip-tiny and siglip-tiny fixtures (open_clip
// outputs), `hues run` on SigLIP and MobileCLIP, and `clip random-model`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "testing/cli_runner.h"

#include "visalign/core/json.h"

namespace visalign {
namespace {

using ::testing::HasSubstr;
using testing::RunVisalign;

std::string FixtureFile(const std::string& fixture, const std::string& rel) {
  return (testing::SharedDir() / "fixtures" / fixture / rel).string();
}
std::string Fixture(const std::string& rel = "") { return FixtureFile("clip-tiny", rel); }
std::string Siglip(const std::string& rel = "") { return FixtureFile("siglip-tiny", rel); }

Json Expected(const std::string& fixture = "clip-tiny") {
  std::ifstream in(FixtureFile(fixture, "expected.json"));
  return Json::parse(in);
}

double MaxAbsDiff(const Json& a, const Json& b) {
  double m = 0;
  for (size_t i = 0; i < b.size(); ++i) m = std::max(m, std::abs(a[i].get<double>() - b[i].get<double>()));
  return m;
}

TEST(ClipCli, TokenizePrintsIdsWithSotAndEot) {
  auto r = RunVisalign({"clip", "tokenize", "a photo of a banana", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["ids"], Json({49406, 320, 1125, 539, 320, 8922, 49407}));
  r = RunVisalign({"clip", "tokenize", "BANANA"});
  EXPECT_EQ(r.out, "49406 8922 49407\n");
}

TEST(ClipCli, EmbedMatchesOpenClipInArgumentOrder) {
  const Json e = Expected();
  auto r = RunVisalign({"--threads", "1", "clip", "embed", "--clip-model", Fixture(), "--text", "BANANA", "--image",
                        Fixture("inputs/img_05_noise_80x100.png"), "--text", "a photo of a banana", "--image",
                        Fixture("inputs/img_00_red.png"), "--normalize", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
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
  const Json e = Expected();
  auto r = RunVisalign(
      {"--threads", "1", "clip", "embed", "--clip-model", Fixture(), "--text", "a photo of a banana", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LE(MaxAbsDiff(Json::parse(r.out)["texts"][0]["embedding"], e["texts"][0]["embedding"]), 1e-4);
}

TEST(ClipCli, InfoDescribesTheModel) {
  auto r = RunVisalign({"clip", "info", "--clip-model", Fixture(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["embed_dim"], 64);
  EXPECT_EQ(j["layout"], "open_clip");
  EXPECT_EQ(j["vision"]["heads"], 4);
  EXPECT_EQ(j["fingerprint"].get<std::string>().size(), 64u);
}

TEST(ClipCli, InfoShowsThePrecisionInUseAndWhy) {
  auto r = RunVisalign({"clip", "info", "--clip-model", Fixture(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["precision"]["in_use"], "fp32");
  EXPECT_THAT(j["precision"]["reason"].get<std::string>(), HasSubstr("default"));
  // Without AVX512_BF16/AMX (here forced through oneDNN's ISA limit) auto falls back to fp32 ...
  const std::map<std::string, std::string> no_bf16 = {{"ONEDNN_MAX_CPU_ISA", "AVX512_CORE"}};
  r = RunVisalign({"clip", "info", "--clip-model", Fixture(), "--precision", "auto"}, no_bf16);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("precision     fp32 (auto: no AVX512_BF16 or AMX on this CPU"));
  // ... and bf16 / bf16x3 are refused in one line.
  for (const std::string precision : {"bf16", "bf16x3"}) {
    r = RunVisalign({"clip", "embed", "--clip-model", Fixture(), "--text", "red", "--precision", precision}, no_bf16);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("error: precision " + precision + " (--precision"));
    // (AVX-512 without BF16 here; AVX2 on CPUs without AVX-512, where the limit changes nothing.)
    EXPECT_THAT(r.err, HasSubstr("this CPU, where oneDNN uses AVX"));
    EXPECT_THAT(r.err, HasSubstr("a CPU with AVX512_BF16 or AMX"));
  }
  r = RunVisalign({"clip", "embed", "--clip-model", Fixture(), "--text", "red", "--precision", "fp16"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("fp32, bf16, bf16x3 or auto"));
}

TEST(ClipCli, NonImageFileIsAClearError) {
  auto r = RunVisalign({"clip", "embed", "--clip-model", Fixture(), "--image", Fixture("config.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("error: cannot decode image (--image " + Fixture("config.json") + ")"));
}

TEST(ClipCli, MissingModelIsAClearError) {
  testing::TempDir dir;
  auto r = RunVisalign({"clip", "info", "--clip-model", dir.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no config in model directory"));
}

TEST(ClipCli, EmbedNeedsSomethingToEmbed) {
  auto r = RunVisalign({"clip", "embed", "--clip-model", Fixture()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("at least one --text, --image or --token-ids"));
}

// MetaCLIP 2's fixture has no tokenizer (XLM-V is not obtainable offline): `clip info` says so, texts
// are refused in one line naming the option to use, and --token-ids embeds the fixture's rows
// (its {"rows": [{"ids"}]} file) as open_clip did, end to end with its PNGs.
TEST(ClipCli, EmbedTokenIdsWhereTheTokenizerIsAbsent) {
  const std::string model = FixtureFile("metaclip2-tiny", "");
  const Json e = Expected("metaclip2-tiny");
  auto info = RunVisalign({"clip", "info", "--clip-model", model, "--json"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const Json tokenizer = Json::parse(info.out)["text"]["tokenizer"];
  EXPECT_EQ(tokenizer["kind"], "missing");
  EXPECT_THAT(tokenizer["reason"].get<std::string>(), HasSubstr("facebook/xlm-v-base"));
  auto text = RunVisalign({"clip", "embed", "--clip-model", model, "--text", "a red square"});
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_THAT(text.err, HasSubstr("--token-ids"));
  auto r = RunVisalign({"--threads", "1", "clip", "embed", "--clip-model", model, "--token-ids",
                        FixtureFile("metaclip2-tiny", "inputs/token_ids.json"), "--image",
                        FixtureFile("metaclip2-tiny", "inputs/img_05_noise_70x87.png"), "--normalize", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  ASSERT_EQ(j["token_ids"].size(), e["texts"].size());
  for (size_t i = 0; i < e["texts"].size(); ++i) {
    EXPECT_EQ(j["token_ids"][i]["ids"], e["texts"][i]["token_ids_padded"]) << i;
    EXPECT_LE(MaxAbsDiff(j["token_ids"][i]["embedding"], e["texts"][i]["embedding_normalized"]), 1e-5) << i;
  }
  EXPECT_LE(MaxAbsDiff(j["images"][0]["embedding"], e["images"][5]["embedding_normalized"]), 1e-5);

  testing::TempDir dir;
  std::ofstream(dir / "ids.json") << "[[0, 7, 2], [0, -1]]";
  auto bad = RunVisalign({"clip", "embed", "--clip-model", model, "--token-ids", (dir / "ids.json").string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("token id -1 (--token-ids " + (dir / "ids.json").string() + " row 2)"));
  std::ofstream(dir / "ids.json") << "[[0, 7, 5000]]";
  bad = RunVisalign({"clip", "embed", "--clip-model", model, "--token-ids", (dir / "ids.json").string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("token id 5000"));
}

// ViTamin (conv stem + GeGLU ViT) through `clip info`, `clip embed` (PNGs and texts, as open_clip
// computed them) and `hues run` (acva analyze: acva_pipeline_test.cc).
TEST(ClipCli, VitaminFixtureRunsThroughInfoEmbedAndHuesRun) {
  const std::string model = FixtureFile("vitamin-tiny", "");
  const nlohmann::json e = Expected("vitamin-tiny");
  auto info = RunVisalign({"clip", "info", "--clip-model", model, "--json"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const nlohmann::json vision = nlohmann::json::parse(info.out)["vision"];
  EXPECT_THAT(vision["tower"].get<std::string>(), HasSubstr("ViTamin"));
  EXPECT_EQ(vision["vitamin"]["grid"], 4);
  EXPECT_EQ(vision["vitamin"]["stage_widths"], nlohmann::json({64, 128}));
  auto text_info = RunVisalign({"clip", "info", "--clip-model", model});
  ASSERT_EQ(text_info.exit_code, 0) << text_info.err;
  EXPECT_THAT(text_info.out, HasSubstr("MbConv stages 2x64 and 4x128, 4x4 tokens of width 384"));

  auto r = RunVisalign({"--threads", "1", "clip", "embed", "--clip-model", model, "--image",
                        FixtureFile("vitamin-tiny", "inputs/img_01_board_057_101x77.png"), "--text",
                        e["texts"][2]["text"], "--normalize", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_LE(MaxAbsDiff(j["images"][0]["embedding"], e["images"][1]["embedding_normalized"]), 1e-5);
  EXPECT_LE(MaxAbsDiff(j["texts"][0]["embedding"], e["texts"][2]["embedding_normalized"]), 1e-5);

  testing::TempDir dir;
  auto hues = RunVisalign({"hues", "run", "--clip-model", model, "--no-cache", "--out", dir.path().string(), "--json"});
  ASSERT_EQ(hues.exit_code, 0) << hues.err;
  std::ifstream results(dir / "vitamin-tiny" / "results.csv");
  const std::string csv((std::istreambuf_iterator<char>(results)), std::istreambuf_iterator<char>());
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 100 * 5) << "header + 100 cues x 5 predictions";
}

// Issue 31's PE-Core and CoCa fixtures through the commands that load a CLIP model: `clip info` names
// the tower, `clip embed` reproduces open_clip's embeddings from a string and a PNG, `hues run` plays
// the board (acva analyze: acva_pipeline_test.cc).
TEST(ClipCli, PeCoreAndCocaFixturesLoadInEveryCommand) {
  const std::map<std::string, std::string> towers = {
      {"pe-core-tiny", "timm PE-Core ViT ('xy' RoPE), MAP attention-pool head"},
      {"coca-tiny", "ViT, attentional pooler (CoCa), first query"}};
  for (const auto& [fixture, tower] : towers) {
    SCOPED_TRACE(fixture);
    const std::string model = FixtureFile(fixture, "");
    auto info = RunVisalign({"clip", "info", "--clip-model", model, "--json"});
    ASSERT_EQ(info.exit_code, 0) << info.err;
    EXPECT_EQ(nlohmann::json::parse(info.out)["vision"]["tower"], tower);
    const nlohmann::json e = Expected(fixture);
    auto r = RunVisalign({"--threads", "1", "clip", "embed", "--clip-model", model, "--text", e["texts"][3]["text"],
                          "--image", FixtureFile(fixture, e["images"][1]["file"]), "--normalize", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_LE(MaxAbsDiff(j["texts"][0]["embedding"], e["texts"][3]["embedding_normalized"]), 1e-5);
    EXPECT_LE(MaxAbsDiff(j["images"][0]["embedding"], e["images"][1]["embedding_normalized"]), 1e-5);
    testing::TempDir dir;
    auto hues =
        RunVisalign({"hues", "run", "--clip-model", model, "--no-cache", "--out", (dir / "runs").string(), "--json"});
    ASSERT_EQ(hues.exit_code, 0) << hues.err;
    EXPECT_EQ(nlohmann::json::parse(hues.out)["words"], 100);
    EXPECT_TRUE(std::filesystem::exists(dir / "runs" / fixture / "results.csv"));
  }
}

TEST(ClipCli, RandomModelIsWrittenReproduciblyAndLabelledRandom) {
  testing::TempDir dir;
  const std::string model = (dir / "clip-random").string();
  auto made = RunVisalign({"clip", "random-model", "--out", model, "--seed", "7"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_EQ(made.out,
            "wrote " + model + " (tiny, seed 7: 3425857 parameters, RANDOM weights: its numbers mean nothing)\n");

  auto info = RunVisalign({"clip", "info", "--clip-model", model});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("weights       " + model +
                                  "/open_clip_model.safetensors\n"
                                  "              RANDOM (visalign clip random-model, arch tiny, seed 7): its numbers "
                                  "mean nothing\n"));
  auto info_json = RunVisalign({"clip", "info", "--clip-model", model, "--json"});
  ASSERT_EQ(info_json.exit_code, 0) << info_json.err;
  const Json j = Json::parse(info_json.out);
  EXPECT_EQ(j["random_weights"]["arch"], "tiny");
  EXPECT_EQ(j["random_weights"]["seed"], 7);
  EXPECT_EQ(j["text"]["vocab_size"], 49408);
  EXPECT_EQ(j["text"]["context_length"], 77);
  // The fixture is a real open_clip model: not labelled.
  auto fixture = RunVisalign({"clip", "info", "--clip-model", Fixture(), "--json"});
  ASSERT_EQ(fixture.exit_code, 0) << fixture.err;
  EXPECT_TRUE(Json::parse(fixture.out)["random_weights"].is_null());

  // Same seed: the same model (fingerprint = weights hash + preprocessing); --force rewrites in place.
  auto again = RunVisalign({"clip", "random-model", "--out", (dir / "again").string(), "--seed", "7", "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Json::parse(again.out)["parameters"], 3425857);
  auto again_info = RunVisalign({"clip", "info", "--clip-model", (dir / "again").string(), "--json"});
  EXPECT_EQ(Json::parse(again_info.out)["fingerprint"], j["fingerprint"]);
  auto other = RunVisalign({"clip", "random-model", "--out", model, "--seed", "8", "--force"});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  auto other_info = RunVisalign({"clip", "info", "--clip-model", model, "--json"});
  EXPECT_NE(Json::parse(other_info.out)["fingerprint"], j["fingerprint"]);

  auto embed = RunVisalign({"clip", "embed", "--clip-model", model, "--text", "a red square", "--image",
                            Fixture("inputs/img_05_noise_80x100.png"), "--normalize", "--json"});
  ASSERT_EQ(embed.exit_code, 0) << embed.err;
  const Json embeddings = Json::parse(embed.out);
  for (const char* kind : {"images", "texts"}) {
    double sq = 0;
    for (const auto& v : embeddings[kind][0]["embedding"]) sq += v.get<double>() * v.get<double>();
    EXPECT_NEAR(sq, 1.0, 1e-5) << kind;
  }
}

TEST(ClipCli, RandomModelErrorsAreOneLineWithExitCode2) {
  testing::TempDir dir;
  const std::string model = (dir / "m").string();
  auto arch = RunVisalign({"clip", "random-model", "--out", model, "--arch", "ViT-L-14"});
  EXPECT_EQ(arch.exit_code, 2);
  EXPECT_EQ(arch.err,
            "error: unknown architecture \"ViT-L-14\" (--arch): tiny, ViT-B-32, RN50, convnext_base, ViTamin-S, "
            "MobileCLIP2-S0 or MobileCLIP-B\n");
  EXPECT_FALSE(std::filesystem::exists(model));

  std::ofstream(dir / "notes.txt") << "x";
  auto full = RunVisalign({"clip", "random-model", "--out", dir.path().string()});
  EXPECT_EQ(full.exit_code, 2);
  EXPECT_EQ(full.err,
            "error: directory is not empty (--out " + dir.path().string() +
                "): a new or empty directory (or overwrite, e.g. --force, to replace the model files in it)\n");

  auto below_file = RunVisalign({"clip", "random-model", "--out", (dir / "notes.txt" / "m").string()});
  EXPECT_EQ(below_file.exit_code, 2);
  EXPECT_THAT(below_file.err, HasSubstr("error: cannot create directory"));
  EXPECT_EQ(std::count(below_file.err.begin(), below_file.err.end(), '\n'), 1);

  for (const char* bad : {"-1", "18446744073709551616", "7x"}) {
    auto seed = RunVisalign({"clip", "random-model", "--out", model, "--seed", bad});
    EXPECT_EQ(seed.exit_code, 2);
    EXPECT_EQ(seed.err,
              std::string("error: seed \"") + bad + "\" (--seed): an integer from 0 to 18446744073709551615\n");
  }
  EXPECT_FALSE(std::filesystem::exists(model));
}

// ---- SigLIP (siglip-tiny: OpenCLIP SigLIP with its SentencePiece tokenizer) ----

TEST(SiglipCli, TokenizeUsesTheModelsSentencePieceTokenizer) {
  const Json text = Expected("siglip-tiny")["texts"][0];
  auto r = RunVisalign({"clip", "tokenize", text["text"], "--clip-model", Siglip(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["ids"], text["token_ids"]);
}

TEST(SiglipCli, EmbedMatchesOpenClipForTextsAndPngs) {
  const Json e = Expected("siglip-tiny");
  auto r = RunVisalign({"clip", "embed", "--clip-model", Siglip(), "--text", e["texts"][2]["text"], "--image",
                        Siglip(e["images"][1]["file"]), "--normalize", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_LE(MaxAbsDiff(j["texts"][0]["embedding"], e["texts"][2]["embedding_normalized"]), 1e-5);
  EXPECT_LE(MaxAbsDiff(j["images"][0]["embedding"], e["images"][1]["embedding_normalized"]), 1e-5);
}

TEST(SiglipCli, InfoNamesTowersTokenizerAndSigmoidScore) {
  auto r = RunVisalign({"clip", "info", "--clip-model", Siglip(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["vision"]["tower"], "timm ViT, MAP attention-pool head (SigLIP)");
  EXPECT_EQ(j["text"]["tower"], "transformer, bidirectional, pooled at the last position");
  EXPECT_EQ(j["text"]["tokenizer"]["kind"], "sentencepiece");
  EXPECT_EQ(j["text"]["tokenizer"]["pad_id"], 1);
  EXPECT_EQ(j["score"], "sigmoid");
  EXPECT_EQ(j["logit_bias"], -6.25);
  EXPECT_EQ(j["preprocess"]["resize_mode"], "squash");
  auto text = RunVisalign({"clip", "info", "--clip-model", Siglip()});
  EXPECT_THAT(text.out, HasSubstr("logit_bias    -6.25 (score: sigmoid(logit_scale * cos + logit_bias))"));
}

TEST(SiglipCli, HuesRunPlaysTheBoard) {
  testing::TempDir dir;
  auto r =
      RunVisalign({"hues", "run", "--clip-model", Siglip(), "--no-cache", "--out", (dir / "runs").string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["model"], "siglip-tiny");
  EXPECT_EQ(j["words"], 100);
  EXPECT_TRUE(std::filesystem::exists(dir / "runs" / "siglip-tiny" / "results.csv"));
}

// ---- MobileCLIP (mobileclip-s-tiny: timm FastViT MCi; mobileclip-b-tiny: MCi ViT) ----

TEST(MobileClipCli, InfoEmbedAndHuesRunLoadBothFixtures) {
  const std::map<std::string, std::string> towers = {
      {"mobileclip-s-tiny", "FastViT MCi (timm)"},
      {"mobileclip-b-tiny", "timm MCi ViT, ConvStem patch embedding, class token (MobileCLIP-B)"}};
  for (const auto& [fixture, tower] : towers) {
    SCOPED_TRACE(fixture);
    const std::string model = FixtureFile(fixture, "");
    auto info = RunVisalign({"clip", "info", "--clip-model", model, "--json"});
    ASSERT_EQ(info.exit_code, 0) << info.err;
    EXPECT_EQ(nlohmann::json::parse(info.out)["vision"]["tower"], tower);
    const nlohmann::json e = Expected(fixture);
    auto r = RunVisalign({"clip", "embed", "--clip-model", model, "--text", e["texts"][3]["text"], "--image",
                          FixtureFile(fixture, e["images"][6]["file"]), "--normalize", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_LE(MaxAbsDiff(j["texts"][0]["embedding"], e["texts"][3]["embedding_normalized"]), 1e-5);
    EXPECT_LE(MaxAbsDiff(j["images"][0]["embedding"], e["images"][6]["embedding_normalized"]), 1e-5);
    testing::TempDir dir;
    auto run =
        RunVisalign({"hues", "run", "--clip-model", model, "--no-cache", "--out", (dir / "runs").string(), "--json"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(nlohmann::json::parse(run.out)["model"], fixture);
    EXPECT_TRUE(std::filesystem::exists(dir / "runs" / fixture / "results.csv"));
  }
  auto text = RunVisalign({"clip", "info", "--clip-model", FixtureFile("mobileclip-s-tiny", "")});
  EXPECT_THAT(
      text.out,
      HasSubstr(
          "FastViT MCi (timm fastvit_mci1) 96px: depths 1-1-2-1a (a: attention), dims 8-16-32-64, final conv 128"));
}

}  // namespace
}  // namespace visalign
