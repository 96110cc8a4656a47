// Random-weight models: they load and run like any CLIP, the files depend only on (arch, seed),
// the values follow the documented distributions exactly, and bad output directories are refused.
#include "clip/random_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <map>

#include "clip/config.h"
#include "clip/fixture_testing.h"
#include "testing/dirs.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"

namespace visalign::clip {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int64_t kTinyParameters = 3'425'857;      // as the clip-tiny fixture
constexpr int64_t kViTB32Parameters = 151'277'313;  // OpenCLIP ViT-B-32
// SHA-256 of open_clip_model.safetensors for --arch tiny --seed 0. The files must be byte-identical
// on every machine and compiler; if this changes, every output of the demo changes too.
constexpr const char* kTinySeed0WeightsSha256 = "67e8207842507328f0b66e906a9ac81eab8b11263bab08d0832d28da04364875";

imaging::Image Solid(int width, int height, uint8_t r, uint8_t g, uint8_t b) {
  imaging::Image image(width, height);
  for (size_t i = 0; i < image.rgb.size(); i += 3) {
    image.rgb[i] = r;
    image.rgb[i + 1] = g;
    image.rgb[i + 2] = b;
  }
  return image;
}

double Cosine(const Matrix& m, int a, int b) {
  double dot = 0, na = 0, nb = 0;
  for (int c = 0; c < m.cols; ++c) {
    dot += static_cast<double>(m.at(a, c)) * m.at(b, c);
    na += static_cast<double>(m.at(a, c)) * m.at(a, c);
    nb += static_cast<double>(m.at(b, c)) * m.at(b, c);
  }
  return dot / std::sqrt(na * nb);
}

void ExpectFiniteUnitNormalisable(Matrix m) {
  for (float v : m.data) ASSERT_TRUE(std::isfinite(v));
  NormalizeRows(m);
  for (int r = 0; r < m.rows; ++r) {
    double sq = 0;
    for (int c = 0; c < m.cols; ++c) sq += static_cast<double>(m.at(r, c)) * m.at(r, c);
    EXPECT_NEAR(sq, 1.0, 1e-5) << "row " << r;
  }
}

class RandomModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0);
    SetThreadCount(1);
  }
  static RandomClipModelOptions Options(uint64_t seed, bool overwrite = false) {
    RandomClipModelOptions o;
    o.seed = seed;
    o.overwrite = overwrite;
    return o;
  }

  visalign::testing::TempDir scratch_;
  const fs::path dir_ = scratch_.path();
};

TEST_F(RandomModelTest, TinyModelLoadsAndEmbedsTextsAndImages) {
  Result<RandomClipModelFiles> files = WriteRandomClipModel(dir_ / "m", Options(0));
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(files->config_file, dir_ / "m" / "open_clip_config.json");
  EXPECT_EQ(files->weights_file, dir_ / "m" / "open_clip_model.safetensors");
  EXPECT_EQ(files->parameters, kTinyParameters);

  Result<ClipModel> model = LoadClipModel(dir_ / "m");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const ClipConfig& c = model->config();
  EXPECT_TRUE(c.random);
  EXPECT_EQ(c.random_seed, 0u);
  EXPECT_EQ(c.random_arch, "tiny");
  EXPECT_EQ(RandomWeightsLabel(c), "RANDOM (visalign clip random-model, arch tiny, seed 0): its numbers mean nothing");
  EXPECT_EQ(c.embed_dim, 64);
  EXPECT_EQ(c.vision.image_size, 64);
  EXPECT_EQ(c.vision.heads, 4);
  EXPECT_EQ(c.text.vocab_size, 49408);
  EXPECT_EQ(c.text.context_length, kDefaultContextLength);
  EXPECT_NEAR(model->LogitScale(), 1 / 0.07, 1e-4);

  // The real tokenizer: 49408 ids, sot/eot, and a text long enough to be cut at 77.
  Result<Matrix> texts = model->EncodeTexts({"a red square", "a photo of a banana", std::string(400, 'a') + " b"});
  ASSERT_TRUE(texts.ok()) << texts.status().ToString();
  ASSERT_EQ(texts->rows, 3);
  ASSERT_EQ(texts->cols, 64);
  ExpectFiniteUnitNormalisable(*texts);
  EXPECT_LT(Cosine(*texts, 0, 1), 0.9999);
  // 64x64 needs no resampling; 100x80 goes through the bicubic resize and crop.
  Result<Matrix> images = model->EncodeImages({Solid(64, 64, 255, 0, 0), Solid(100, 80, 0, 0, 255)});
  ASSERT_TRUE(images.ok()) << images.status().ToString();
  ExpectFiniteUnitNormalisable(*images);
  EXPECT_LT(Cosine(*images, 0, 1), 0.9999);
}

TEST_F(RandomModelTest, SameSeedGivesByteIdenticalFilesOtherSeedsOtherWeights) {
  ASSERT_TRUE(WriteRandomClipModel(dir_ / "a", Options(5)).ok());
  ASSERT_TRUE(WriteRandomClipModel(dir_ / "b", Options(5)).ok());
  ASSERT_TRUE(WriteRandomClipModel(dir_ / "c", Options(6)).ok());
  const auto read = [&](const std::string& model, const char* file) { return ReadFile(dir_ / model / file).value(); };
  EXPECT_EQ(read("a", "open_clip_model.safetensors"), read("b", "open_clip_model.safetensors"));
  EXPECT_EQ(read("a", "open_clip_config.json"), read("b", "open_clip_config.json"));
  EXPECT_NE(read("a", "open_clip_model.safetensors"), read("c", "open_clip_model.safetensors"));
  // The configs differ in the recorded seed only.
  Json a = Json::parse(read("a", "open_clip_config.json"));
  a[kRandomModelConfigKey]["seed"] = 6;
  EXPECT_EQ(a, Json::parse(read("c", "open_clip_config.json")));
}

TEST_F(RandomModelTest, TinySeed0WeightsArePinned) {
  Result<RandomClipModelFiles> files = WriteRandomClipModel(dir_ / "m", Options(0));
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(Sha256File(files->weights_file).value(), kTinySeed0WeightsSha256);
}

TEST_F(RandomModelTest, RefusesANonEmptyDirectoryUnlessOverwriting) {
  std::ofstream(dir_ / "notes.txt") << "keep me";
  Result<RandomClipModelFiles> refused = WriteRandomClipModel(dir_, Options(0));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().what(), "directory is not empty");
  EXPECT_EQ(refused.status().where(), dir_.string());
  EXPECT_FALSE(fs::exists(dir_ / "open_clip_model.safetensors"));

  ASSERT_TRUE(WriteRandomClipModel(dir_, Options(0, /*overwrite=*/true)).ok());
  ASSERT_TRUE(WriteRandomClipModel(dir_, Options(1, /*overwrite=*/true)).ok());
  EXPECT_TRUE(fs::exists(dir_ / "notes.txt"));
  Result<ClipModel> model = LoadClipModel(dir_);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->config().random_seed, 1u);
}

TEST_F(RandomModelTest, RefusesAFileAndReportsPlacesThatCannotBeCreated) {
  std::ofstream(dir_ / "file") << "x";
  Result<RandomClipModelFiles> file = WriteRandomClipModel(dir_ / "file", Options(0, /*overwrite=*/true));
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().what(), HasSubstr("not a directory"));

  Result<RandomClipModelFiles> below_file = WriteRandomClipModel(dir_ / "file" / "model", Options(0));
  ASSERT_FALSE(below_file.ok());
  EXPECT_EQ(below_file.status().code(), StatusCode::kIoError);
  EXPECT_EQ(below_file.status().where(), (dir_ / "file" / "model").string());
}

TEST_F(RandomModelTest, TheConfigRecordIsValidated) {
  ASSERT_TRUE(WriteRandomClipModel(dir_, Options(3)).ok());
  const Json original = Json::parse(ReadFile(dir_ / "open_clip_config.json").value());
  const auto load_with = [&](const Json& record) {
    Json j = original;
    if (record.is_null()) {
      j.erase(kRandomModelConfigKey);
    } else {
      j[kRandomModelConfigKey] = record;
    }
    std::ofstream(dir_ / "open_clip_config.json") << j.dump();
    return LoadClipModel(dir_);
  };
  Result<ClipModel> plain = load_with(nullptr);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_FALSE(plain->config().random);
  EXPECT_EQ(RandomWeightsLabel(plain->config()), "");

  Result<ClipModel> negative = load_with({{"arch", "tiny"}, {"seed", -1}});
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.status().ToString(),
              HasSubstr("field \"seed\" is -1 (" + (dir_ / "open_clip_config.json").string() +
                        " visalign_random_model): a non-negative integer"));
  EXPECT_FALSE(load_with({{"seed", 1}}).ok());
  EXPECT_FALSE(load_with("tiny").ok());
  Result<ClipModel> extra = load_with({{"arch", "tiny"}, {"seed", 1}, {"layers", 3}});
  ASSERT_FALSE(extra.ok());
  EXPECT_THAT(extra.status().what(), HasSubstr("unknown config field \"layers\""));
}

TEST(RandomClipArch, NamesRoundTripAndUnknownNamesAreRefused) {
  for (RandomClipArch arch :
       {RandomClipArch::kTiny, RandomClipArch::kViTB32, RandomClipArch::kRN50, RandomClipArch::kConvNextBase,
        RandomClipArch::kViTaminS, RandomClipArch::kMobileClip2S0, RandomClipArch::kMobileClipB}) {
    EXPECT_EQ(ParseRandomClipArch(RandomClipArchName(arch)).value(), arch);
  }
  Result<RandomClipArch> bad = ParseRandomClipArch("ViT-L-14");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().ToString(),
            "unknown architecture \"ViT-L-14\": tiny, ViT-B-32, RN50, convnext_base, ViTamin-S, MobileCLIP2-S0 or "
            "MobileCLIP-B");
}

TEST(RandomTensorSpecs, FixtureTowersHaveExactlyOpenClipsTensors) {
  // The fixtures' model.safetensors are OpenCLIP state_dicts: the specs for their configs must name
  // the same tensors with the same shapes (BatchNorm's unused num_batches_tracked and CoCa's captioning
  // decoder, which the embeddings do not load, aside; MobileCLIP's in the un-fused training-time form
  // timm's modules have). The benchmarks write real-size models of these
  // families from the specs (bench/conv_towers_benchmark.cc).
  for (const std::string fixture :
       {"clip-tiny", "clip-rn-tiny", "clip-convnext-tiny", "eva01-tiny", "eva02-tiny", "pe-core-tiny", "coca-tiny",
        "clipa-tiny", "metaclip2-tiny", "vitamin-tiny", "mobileclip-s-tiny", "mobileclip-b-tiny"}) {
    SCOPED_TRACE(fixture);
    const ClipConfig config = ParseOpenClipConfig(testing::ReadFixtureJson("config.json", fixture), fixture).value();
    std::map<std::string, std::vector<int64_t>> expected;
    const SafetensorsFile file = SafetensorsFile::Open(testing::FixtureDir(fixture) / "model.safetensors").value();
    for (const TensorInfo& t : file.tensors()) {
      if (t.name.find("num_batches_tracked") == std::string::npos && t.name.rfind("text_decoder.", 0) != 0) {
        expected[t.name] = t.shape;
      }
    }
    std::map<std::string, std::vector<int64_t>> specs;
    for (const RandomTensorSpec& s : RandomTensorSpecs(config)) {
      specs[s.tensor.name] = s.tensor.shape;
      EXPECT_TRUE(RandomInitFitsGrid(s.init)) << s.tensor.name;
    }
    EXPECT_EQ(specs, expected);
  }
}

TEST(RandomClipConfigJson, ConvArchsParseAsOpenClipsRN50ConvNextBaseAndVitaminS) {
  const ClipConfig rn = ParseOpenClipConfig(RandomClipConfigJson(RandomClipArch::kRN50, 0), "RN50").value();
  EXPECT_EQ(rn.vision.tower, VisionTower::kModifiedResNet);
  EXPECT_EQ(rn.vision.resnet.layers, (std::array<int, 4>{3, 4, 6, 3}));
  EXPECT_EQ(rn.vision.resnet.heads, 32);
  EXPECT_EQ(rn.embed_dim, 1024);
  const ClipConfig cn = ParseOpenClipConfig(RandomClipConfigJson(RandomClipArch::kConvNextBase, 0), "convnext").value();
  EXPECT_EQ(cn.vision.tower, VisionTower::kConvNext);
  EXPECT_EQ(cn.vision.convnext.dims, (std::array<int, 4>{128, 256, 512, 1024}));
  EXPECT_EQ(cn.embed_dim, 512);
  const ClipConfig vt = ParseOpenClipConfig(RandomClipConfigJson(RandomClipArch::kViTaminS, 0), "ViTamin-S").value();
  EXPECT_TRUE(vt.vision.vitamin.enabled);
  EXPECT_TRUE(vt.custom_text);
  EXPECT_EQ(vt.vision.width, 384);
  EXPECT_EQ(vt.vision.grid(), 14);
  EXPECT_EQ(vt.embed_dim, 384);
}

TEST(RandomClipConfigJson, MobileClipArchsParseAsTheirOpenClipConfigs) {
  const ClipConfig s0 = ParseOpenClipConfig(RandomClipConfigJson(RandomClipArch::kMobileClip2S0, 0), "S0").value();
  EXPECT_EQ(s0.vision.tower, VisionTower::kFastVit);
  EXPECT_EQ(s0.vision.fastvit.timm_model_name, "fastvit_mci0");
  ASSERT_EQ(s0.vision.fastvit.stages.size(), 4u);
  EXPECT_EQ(s0.vision.fastvit.stages[2].depth, 10);
  EXPECT_TRUE(s0.vision.fastvit.stages[3].attention);
  EXPECT_EQ(s0.vision.fastvit.final_features, 1024);
  EXPECT_EQ(s0.vision.image_size, 256);
  const ClipConfig b = ParseOpenClipConfig(RandomClipConfigJson(RandomClipArch::kMobileClipB, 0), "B").value();
  EXPECT_EQ(b.vision.tower, VisionTower::kViT);
  EXPECT_TRUE(b.vision.mci_conv_stem);
  EXPECT_EQ(b.vision.grid(), 14);
  EXPECT_EQ(b.vision.width, 768);
}

TEST(RandomTensorSpecs, ViTB32HasOpenClipsParametersAndFitsTheGrid) {
  Result<ClipConfig> config = ParseOpenClipConfig(RandomClipConfigJson(RandomClipArch::kViTB32, 0), "ViT-B-32");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->embed_dim, 512);
  EXPECT_EQ(config->vision.heads, 12);
  EXPECT_EQ(config->text.heads, 8);
  const std::vector<RandomTensorSpec> specs = RandomTensorSpecs(*config);
  constexpr size_t kTensorsPerBlock = 12;
  constexpr size_t kOtherTensors = 14;
  EXPECT_EQ(specs.size(), 2 * 12 * kTensorsPerBlock + kOtherTensors);
  int64_t parameters = 0;
  for (const RandomTensorSpec& s : specs) {
    parameters += s.tensor.NumElements();
    EXPECT_TRUE(RandomInitFitsGrid(s.init)) << s.tensor.name;
  }
  EXPECT_EQ(parameters, kViTB32Parameters);
}

TEST(FillRandomTensor, ValuesAreExactGridPointsWithTheStatedMeanAndVariance) {
  constexpr int64_t kCount = 200'000;
  constexpr int64_t kVarianceDenominator = 400;  // std 0.05
  const double variance = 1.0 / kVarianceDenominator;
  for (bool around_one : {false, true}) {
    const RandomTensorSpec spec{{"t", {kCount}}, {RandomInit::Kind::kUniform, kVarianceDenominator, around_one, 0.0f}};
    std::vector<float> v(kCount);
    FillRandomTensor(spec, 1, v.data());
    double sum = 0, sq = 0, max_abs = 0;
    for (float x : v) {
      const double grid = std::ldexp(static_cast<double>(x), kRandomGridBits);
      ASSERT_EQ(grid, std::round(grid)) << x;
      const double d = x - (around_one ? 1.0 : 0.0);
      sum += d;
      sq += d * d;
      max_abs = std::max(max_abs, std::abs(d));
    }
    const double mean = sum / kCount;
    EXPECT_LT(std::abs(mean), 4 * std::sqrt(variance / kCount));
    EXPECT_NEAR(sq / kCount - mean * mean, variance, 0.02 * variance);
    EXPECT_LE(max_abs, std::sqrt(3 * variance));  // uniform on [-sqrt(3 var), sqrt(3 var)]
  }
}

TEST(FillRandomTensor, StreamsDependOnSeedAndNameOnly) {
  const auto fill = [](const std::string& name, uint64_t seed) {
    const RandomTensorSpec spec{{name, {64}}, {RandomInit::Kind::kUniform, 64, false, 0.0f}};
    std::vector<float> v(64);
    FillRandomTensor(spec, seed, v.data());
    return v;
  };
  EXPECT_EQ(fill("a", 1), fill("a", 1));
  EXPECT_NE(fill("a", 1), fill("b", 1));
  EXPECT_NE(fill("a", 1), fill("a", 2));
  const RandomTensorSpec constant{{"logit_scale", {}}, {RandomInit::Kind::kConstant, 1, false, 2.5f}};
  float value = 0;
  FillRandomTensor(constant, 1, &value);
  EXPECT_EQ(value, 2.5f);
}

}  // namespace
}  // namespace visalign::clip
