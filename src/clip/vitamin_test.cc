// ViTamin beyond the vitamin-tiny parity fixture (fixture_parity_test.cc): every catalog ViTamin
// config (open_clip's model_configs, data/clip/) read into timm's variant shapes, pos_embed 'none'
// (vitamin_xlarge_*) on a fixture derived from vitamin-tiny, the token grid at any image size, timm's
// make_divisible, and the refusals of options the trunk cannot take.
#include "clip/vitamin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clip/fixture_testing.h"
#include "clip/safetensors.h"
#include "testing/dirs.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"

namespace visalign::clip {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kFixture = "vitamin-tiny";

// timm/models/vitamin.py's registrations behind OpenCLIP's ViTamin-*.json, and their text towers.
TEST(VitaminConfig, EveryCatalogVariantHasTimmsShape) {
  struct Variant {
    const char* model;
    int image, stem;
    std::array<int, 2> stages;
    int width, depth, heads, grid;
    bool pos_embed;
    int embed, text_width, text_layers;
  };
  const Variant variants[] = {
      {"ViTamin-S", 224, 64, {64, 128}, 384, 14, 6, 14, true, 384, 384, 12},
      {"ViTamin-S-LTT", 224, 64, {64, 128}, 384, 14, 6, 14, true, 768, 768, 12},
      {"ViTamin-B", 224, 128, {128, 256}, 768, 14, 12, 14, true, 512, 512, 12},
      {"ViTamin-B-LTT", 224, 128, {128, 256}, 768, 14, 12, 14, true, 768, 768, 12},
      {"ViTamin-L", 224, 160, {160, 320}, 1024, 31, 16, 14, true, 768, 768, 12},
      {"ViTamin-L-256", 256, 160, {160, 320}, 1024, 31, 16, 16, true, 768, 768, 12},
      {"ViTamin-L2", 224, 160, {160, 320}, 1024, 31, 16, 14, true, 1024, 1024, 24},
      {"ViTamin-L2-256", 256, 160, {160, 320}, 1024, 31, 16, 16, true, 1024, 1024, 24},
      {"ViTamin-XL-256", 256, 192, {192, 384}, 1152, 32, 16, 16, false, 1152, 1152, 27},
  };
  setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0);
  const Result<fs::path> data = DataFile("clip/open_clip_model_configs.json");
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const json configs = json::parse(ReadFile(*data).value())["configs"];
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.model);
    const Result<ClipConfig> c = ParseOpenClipConfigJson(configs[v.model].dump(), v.model);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    const VisionConfig& vis = c->vision;
    EXPECT_EQ(vis.tower, VisionTower::kViT);
    EXPECT_TRUE(vis.vitamin.enabled);
    EXPECT_EQ(vis.image_size, v.image);
    EXPECT_EQ(vis.vitamin.stem_width, v.stem);
    EXPECT_EQ(vis.vitamin.stage_widths, v.stages);
    EXPECT_EQ(vis.vitamin.stage_depths, (std::array<int, 2>{2, 4}));
    EXPECT_EQ(vis.width, v.width);
    EXPECT_EQ(vis.layers, v.depth);
    EXPECT_EQ(vis.heads, v.heads);
    EXPECT_EQ(vis.mlp_width, 2 * v.width);  // mlp_ratio 2 (GeGLU: two such matrices in, one out)
    EXPECT_EQ(vis.grid(), v.grid);
    EXPECT_EQ(vis.vitamin.pos_embed, v.pos_embed);
    EXPECT_FALSE(vis.class_token);
    EXPECT_EQ(vis.pooling, Pooling::kAverage);
    EXPECT_TRUE(vis.final_ln_after_pool);
    EXPECT_FLOAT_EQ(vis.layer_norm_eps, 1e-6f);
    EXPECT_EQ(c->embed_dim, v.embed);
    EXPECT_TRUE(c->custom_text);
    EXPECT_EQ(c->text.width, v.text_width);
    EXPECT_EQ(c->text.layers, v.text_layers);
    EXPECT_EQ(c->text.context_length, 77);
    EXPECT_EQ(c->preprocess.image_size, v.image);
  }
}

TEST(VitaminConfig, TokenGridIsTheImageSizeHalvedFourTimesRoundingUp) {
  VitaminConfig v;
  EXPECT_EQ(v.grid(224), 14);
  EXPECT_EQ(v.grid(256), 16);
  EXPECT_EQ(v.grid(336), 21);
  EXPECT_EQ(v.grid(64), 4);
  EXPECT_EQ(v.grid(72), 5);  // 36, 18, 9, 5
  EXPECT_EQ(v.grid(65), 5);  // 33, 17, 9, 5
  EXPECT_EQ(v.grid(1), 1);
}

TEST(VitaminConfig, MakeDivisibleIsTimms) {
  EXPECT_EQ(MakeDivisible(256), 256);
  EXPECT_EQ(MakeDivisible(4 * 160.0), 640);
  EXPECT_EQ(MakeDivisible(4 * 384.0), 1536);
  EXPECT_EQ(MakeDivisible(12), 16);  // int(12 + 4) // 8 * 8
  EXPECT_EQ(MakeDivisible(10), 16);  // 8 is below 0.9 · 10
  EXPECT_EQ(MakeDivisible(4), 8);    // at least the divisor
}

class VitaminModelDir : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0);
    SetThreadCount(1);
  }
  json FixtureConfig() const { return testing::ReadFixtureJson("config.json", kFixture); }
  Status WriteConfig(const fs::path& dir, const json& config) const {
    return WriteFileAtomic(dir / "open_clip_config.json", config.dump());
  }
  // The fixture's tensors with pos_embed zeroed, or left out (`drop_pos_embed`).
  Status WriteWeights(const fs::path& dir, bool drop_pos_embed) const {
    const SafetensorsFile file = SafetensorsFile::Open(testing::FixtureDir(kFixture) / "model.safetensors").value();
    std::vector<NamedTensor> tensors;
    for (const TensorInfo& t : file.tensors()) {
      NamedTensor n{t.name, t.shape, SafetensorsFile::ToFloat(t, "fixture").value()};
      if (t.name == "visual.trunk.pos_embed") {
        if (drop_pos_embed) continue;
        std::fill(n.values.begin(), n.values.end(), 0.0f);
      }
      tensors.push_back(std::move(n));
    }
    return WriteSafetensors(dir / "open_clip_model.safetensors", std::move(tensors));
  }
  Matrix FixturePixels() const {
    return testing::DebugPixels(
        SafetensorsFile::Open(testing::FixtureDir(kFixture) / "debug_activations.safetensors").value());
  }
};

// vitamin_xlarge_*'s pos_embed 'none': the trunk has no positional embedding, which is the fixture with
// its pos_embed at zero; the loader asks for the tensor exactly when the config has one.
TEST_F(VitaminModelDir, PosEmbedNoneIsTheTrunkWithoutPositions) {
  visalign::testing::TempDir zeroed, none;
  ASSERT_TRUE(WriteConfig(zeroed.path(), FixtureConfig()).ok());
  ASSERT_TRUE(WriteWeights(zeroed.path(), /*drop_pos_embed=*/false).ok());
  json config = FixtureConfig();
  config["model_cfg"]["vision_cfg"]["timm_model_kwargs"]["pos_embed"] = "none";
  ASSERT_TRUE(WriteConfig(none.path(), config).ok());
  ASSERT_TRUE(WriteWeights(none.path(), /*drop_pos_embed=*/true).ok());

  const ClipModel with_zeros = LoadClipModel(zeroed.path()).value();
  const Result<ClipModel> without = LoadClipModel(none.path());
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  EXPECT_FALSE(without->config().vision.vitamin.pos_embed);
  const Matrix pixels = FixturePixels();
  const Matrix a = with_zeros.EncodePixels(pixels).value();
  const Matrix b = without->EncodePixels(pixels).value();
  EXPECT_EQ(a.data, b.data);
  // ... and the positions did matter: the fixture's own embeddings differ.
  const json expected = testing::ReadFixtureJson("expected.json", kFixture);
  EXPECT_GT(testing::MaxAbsDiff(a.row(0), expected["images"][0]["embedding"].get<std::vector<float>>()), 1e-3);

  // A pos_embed the config does not have is refused, as is a missing one it has.
  std::filesystem::copy_file(zeroed.path() / "open_clip_model.safetensors", none.path() / "open_clip_model.safetensors",
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_THAT(LoadClipModel(none.path()).status().what(), HasSubstr("unexpected tensor \"visual.trunk.pos_embed\""));
  ASSERT_TRUE(WriteWeights(zeroed.path(), /*drop_pos_embed=*/true).ok());
  EXPECT_THAT(LoadClipModel(zeroed.path()).status().what(), HasSubstr("missing tensor \"visual.trunk.pos_embed\""));
}

TEST_F(VitaminModelDir, RefusesWhatTheTrunkCannotTakeNamingIt) {
  struct Case {
    std::string pointer;
    json value;
    StatusCode code;
    std::string what;
  };
  const std::vector<Case> cases = {
      {"/model_cfg/vision_cfg/timm_model_kwargs/embed_dim", 512, StatusCode::kUnsupported, "ViTamin embed_dim"},
      {"/model_cfg/vision_cfg/timm_model_kwargs/patch_size", 2, StatusCode::kUnsupported, "ViTamin patch_size"},
      {"/model_cfg/vision_cfg/timm_model_kwargs/pos_embed", "sincos", StatusCode::kUnsupported, "ViTamin pos_embed"},
      {"/model_cfg/vision_cfg/timm_model_kwargs/class_token", true, StatusCode::kUnsupported, "class_token"},
      {"/model_cfg/vision_cfg/image_size", 96, StatusCode::kInvalidArgument, "image_size 96 differs"},
      {"/model_cfg/vision_cfg/timm_proj", "mlp", StatusCode::kUnsupported, "timm projection (ViTamin: linear)"},
      {"/model_cfg/vision_cfg/timm_pool", "token", StatusCode::kUnsupported, "timm pooling"},
      {"/model_cfg/vision_cfg/timm_model_name", "vitamin_huge_224", StatusCode::kUnsupported,
       "unsupported ViTamin timm vision tower"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pointer);
    json config = FixtureConfig();
    config[json::json_pointer(c.pointer)] = c.value;
    const Result<ClipConfig> parsed = ParseOpenClipConfigJson(config.dump(), "config.json");
    EXPECT_EQ(parsed.status().code(), c.code) << parsed.status().ToString();
    EXPECT_THAT(parsed.status().what(), HasSubstr(c.what)) << parsed.status().ToString();
  }
}

}  // namespace
}  // namespace visalign::clip
