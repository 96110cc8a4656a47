// Model directories: both checkpoint layouts, and refusal of every feature the native towers do not implement.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "clip/config.h"
#include "clip/fixture_testing.h"
#include "clip/safetensors.h"
#include "testing/dirs.h"
#include "visalign/clip.h"
#include "visalign/core/parallel.h"

namespace visalign::clip {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class ModelDirTest : public ::testing::Test {
 protected:
  void SetUp() override { SetThreadCount(1); }

  void WriteJson(const std::string& name, const Json& j) { std::ofstream(dir_ / name) << j.dump(); }
  void LinkFixtureWeights() { fs::copy_file(testing::FixtureDir() / "model.safetensors", dir_ / "model.safetensors"); }
  Status LoadStatus() { return LoadClipModel(dir_).status(); }
  Json FixtureConfig() { return testing::ReadFixtureJson("config.json"); }

  visalign::testing::TempDir scratch_;
  const fs::path dir_ = scratch_.path();
};

TEST_F(ModelDirTest, RefusesOtherArchitecturesNamingTheFeature) {
  LinkFixtureWeights();
  struct Case {
    std::string pointer;
    Json value;
    std::string feature;
  };
  const std::vector<Case> cases = {
      {"/model_cfg/vision_cfg/timm_model_name", "eva02_small_patch14_224", "EVA / PE-Core / timm ViT vision tower"},
      {"/model_cfg/vision_cfg/timm_model_name", "vit_pe_core_gigantic_patch14_448",
       "EVA / PE-Core / timm ViT vision tower"},
      {"/model_cfg/vision_cfg/timm_model_name", "vit_large_patch14_clip_336", "ViT timm vision tower"},
      {"/model_cfg/vision_cfg/timm_model_name", "vitamin_tiny_224", "ViTamin timm vision tower"},
      {"/model_cfg/vision_cfg/timm_model_name", "fastvit_sa12",
       "MobileCLIP (FastViT) timm vision tower"},  // not an MCi
      {"/model_cfg/text_cfg/hf_model_name", "roberta-base", "Hugging Face text tower"},
      {"/model_cfg/vision_cfg/attentional_pool", "parallel", "attentional pooler variant (CoCa: true)"},
      {"/model_cfg/vision_cfg/pool_type", "none", "vision pool_type"},
      {"/model_cfg/vision_cfg/ls_init_value", 1e-5, "LayerScale"},
      {"/model_cfg/text_cfg/pool_type", "mean", "text pool_type"},
      {"/model_cfg/text_cfg/act_kwargs", {{"approximate", "sigmoid"}}, "unsupported text activation options"},
      {"/model_cfg/vision_cfg/timm_model_name", "vit_base_patch16_siglip_gap_224", "timm vision tower"},
      {"/model_cfg/vision_cfg/fancy_new_option", 1, "unknown config field \"fancy_new_option\""},
      {"/preprocess_cfg/resize_mode", "longest", "resize_mode"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.pointer);
    Json cfg = FixtureConfig();
    cfg[Json::json_pointer(c.pointer)] = c.value;
    WriteJson("open_clip_config.json", cfg);
    const Status st = LoadStatus();
    EXPECT_EQ(st.code(), StatusCode::kUnsupported) << st.ToString();
    EXPECT_THAT(st.what(), HasSubstr(c.feature)) << c.value;
    // Measured against what runs natively, not only "a standard ViT CLIP" (ResNet, ConvNeXt and SigLIP run too).
    EXPECT_THAT(st.expected(), Not(HasSubstr("standard ViT CLIP"))) << st.ToString();
  }
  // An option a tower could have but does not implement names the native towers.
  Json cfg = FixtureConfig();
  cfg["model_cfg"]["vision_cfg"]["global_average_pool"] = true;
  WriteJson("open_clip_config.json", cfg);
  EXPECT_EQ(LoadStatus().expected(),
            "an option the native towers implement (ViT, ModifiedResNet, ConvNeXt, SigLIP; "
            "docs/clip.md)");
}

// OpenCLIP's SigLIP layout (timm_model_name vit_*_siglip_*, custom_text, init_logit_bias) read from
// the siglip-tiny fixture: timm's tower options, not the CLIP defaults.
TEST(SiglipConfig, ReadsTheTimmTowerAndBidirectionalTextOfTheFixture) {
  const Result<ClipConfig> config = ReadClipConfig(testing::FixtureDir("siglip-tiny"));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const ClipConfig& c = *config;
  EXPECT_TRUE(c.sigmoid_logits);
  EXPECT_TRUE(c.custom_text);
  EXPECT_EQ(c.vision.pooling, Pooling::kAttentionPool);
  EXPECT_FALSE(c.vision.class_token);
  EXPECT_FALSE(c.vision.ln_pre);
  EXPECT_EQ(c.vision.image_size, 64);
  EXPECT_EQ(c.vision.patch_size, 16);
  EXPECT_EQ(c.vision.width, 64);
  EXPECT_EQ(c.vision.layers, 2);
  EXPECT_EQ(c.vision.heads, 4);
  EXPECT_EQ(c.vision.mlp_width, 256);
  EXPECT_FLOAT_EQ(c.vision.layer_norm_eps, 1e-6f);
  EXPECT_EQ(c.text.pooling, Pooling::kLast);
  EXPECT_FALSE(c.text.causal);
  EXPECT_TRUE(c.text.projection_bias);
  EXPECT_FLOAT_EQ(c.text.layer_norm_eps, 1e-6f);
  EXPECT_EQ(c.tokenizer.kind, TokenizerKind::kSentencePiece);
  EXPECT_EQ(c.tokenizer.cleaning, TextCleaning::kOpenClipCanonicalize);
  EXPECT_EQ(c.preprocess.resize_mode, ResizeMode::kSquash);
  EXPECT_EQ(c.preprocess.mean[0], 0.5f);
  EXPECT_EQ(c.preprocess.std[2], 0.5f);
}

// SigLIP checkpoints that are not supported natively are refused naming what is missing.
TEST_F(ModelDirTest, RefusesSiglipVariantsWithoutANativePath) {
  const fs::path siglip = testing::FixtureDir("siglip-tiny");
  fs::copy_file(siglip / "model.safetensors", dir_ / "model.safetensors");
  const Json config = testing::ReadFixtureJson("config.json", "siglip-tiny");
  WriteJson("open_clip_config.json", config);
  fs::create_directory(dir_ / "tokenizer");
  WriteJson("tokenizer/tokenizer.json", Json::object());
  EXPECT_THAT(LoadStatus().what(),
              HasSubstr("tokenizer.json of class \"T5Tokenizer\" without a SentencePiece model file"));

  fs::copy_file(siglip / "tokenizer" / "spiece.model", dir_ / "tokenizer" / "spiece.model");
  WriteJson("tokenizer/tokenizer_config.json", {{"tokenizer_class", "CamembertTokenizer"}});
  Status st = LoadStatus();
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_THAT(st.what(), HasSubstr("tokenizer_class \"CamembertTokenizer\""));
  // GemmaTokenizer reads tokenizer.json (hf_bpe_tokenizer_test.cc); this one is not a BPE model.
  WriteJson("tokenizer/tokenizer_config.json", {{"tokenizer_class", "GemmaTokenizer"}});
  EXPECT_THAT(LoadStatus().what(), HasSubstr("no \"model\" object"));

  // A hub file with a field of another type is refused naming it, never an exception.
  WriteJson("tokenizer/tokenizer_config.json", {{"tokenizer_class", 5}});
  st = LoadStatus();
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_EQ(st.what(), "unsupported tokenizer_class 5");
  WriteJson("tokenizer/tokenizer_config.json", {{"pad_token", Json::array({"\x1b[2J"})}});
  EXPECT_EQ(LoadStatus().what(), "field \"pad_token\" is [\"\\u001b[2J\"]");
  std::ofstream(dir_ / "tokenizer" / "tokenizer_config.json") << std::string(100, '[') + std::string(100, ']');
  EXPECT_EQ(LoadStatus().what(), "JSON nested deeper than 64 levels");

  WriteJson("tokenizer/tokenizer_config.json", {{"tokenizer_class", "T5Tokenizer"}, {"pad_token", "</s>"}});
  EXPECT_TRUE(LoadStatus().ok()) << LoadStatus().ToString();

  Json no_clean = config;
  no_clean["model_cfg"]["text_cfg"].erase("tokenizer_kwargs");
  WriteJson("open_clip_config.json", no_clean);
  // Without tokenizer_kwargs open_clip's HFTokenizer cleans with clean='whitespace'.
  EXPECT_TRUE(LoadStatus().ok()) << LoadStatus().ToString();
  EXPECT_EQ(ReadClipConfig(dir_).value().tokenizer.cleaning, TextCleaning::kOpenClipWhitespace);

  fs::remove(dir_ / "open_clip_config.json");
  // transformers' SiglipModel runs (hf_siglip_test.cc); its Siglip2Model (NaFlex, Gemma) does not.
  WriteJson("config.json",
            {{"model_type", "siglip2"}, {"vision_config", Json::object()}, {"text_config", Json::object()}});
  st = LoadStatus();
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_THAT(st.what(), HasSubstr("Hugging Face siglip2 checkpoint"));
  EXPECT_THAT(st.expected(), HasSubstr("hues run --embeddings"));
}

TEST_F(ModelDirTest, RefusesConvTowerOptionsNotImplemented) {
  struct Case {
    std::string fixture;
    std::string pointer;
    Json value;
    StatusCode code;
    std::string what;
  };
  const std::vector<Case> cases = {
      {"clip-convnext-tiny", "/model_cfg/vision_cfg/timm_pool", "max", StatusCode::kUnsupported, "timm pooling"},
      {"clip-convnext-tiny", "/model_cfg/vision_cfg/timm_proj", "none", StatusCode::kUnsupported, "timm_proj \"none\""},
      {"clip-convnext-tiny", "/model_cfg/vision_cfg/timm_model_name", "convnext_atto", StatusCode::kUnsupported,
       "ConvNeXt variant timm vision tower"},
      {"clip-convnext-tiny", "/model_cfg/vision_cfg/timm_model_kwargs/conv_mlp", true, StatusCode::kUnsupported,
       "unknown config field \"conv_mlp\""},
      {"clip-convnext-tiny", "/model_cfg/vision_cfg/image_size", 3, StatusCode::kInvalidArgument, "image_size 3"},
      {"clip-rn-tiny", "/model_cfg/vision_cfg/layers", {3, 4, 6}, StatusCode::kInvalidArgument, "field \"layers\""},
      {"clip-rn-tiny", "/model_cfg/vision_cfg/image_size", 48, StatusCode::kInvalidArgument, "image_size 48"},
      {"clip-rn-tiny", "/model_cfg/vision_cfg/attentional_pool", true, StatusCode::kUnsupported,
       "unknown config field \"attentional_pool\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.fixture + c.pointer);
    Json cfg = testing::ReadFixtureJson("config.json", c.fixture);
    cfg[Json::json_pointer(c.pointer)] = c.value;
    const Result<ClipConfig> parsed = ParseOpenClipConfig(cfg, "config.json");
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), c.code) << parsed.status().ToString();
    EXPECT_THAT(parsed.status().what(), HasSubstr(c.what));
  }
}

TEST_F(ModelDirTest, ConvTowerConfigsWithViTWeightsNameTheFirstWrongTensor) {
  LinkFixtureWeights();  // clip-tiny's ViT weights
  for (const std::string fixture : {"clip-rn-tiny", "clip-convnext-tiny"}) {
    SCOPED_TRACE(fixture);
    WriteJson("open_clip_config.json", testing::ReadFixtureJson("config.json", fixture));
    const Status st = LoadStatus();
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
    // The ViT's patch embedding is visual.conv1 too, with another shape.
    EXPECT_THAT(st.what(),
                HasSubstr(fixture == "clip-rn-tiny" ? "tensor \"visual.conv1.weight\" has shape [64, 3, 16, 16]"
                                                    : "missing tensor \"visual.trunk.stem.0.weight\""));
  }
}

TEST_F(ModelDirTest, ReadsOpenClipConvNeXtDefaultsFromTheTimmModelName) {
  // OpenCLIP's convnext_large_d.json: depths and dims from timm's convnext_large, MLP projection.
  const Json cfg = {
      {"embed_dim", 768},
      {"vision_cfg",
       {{"timm_model_name", "convnext_large"},
        {"timm_model_pretrained", false},
        {"timm_pool", ""},
        {"timm_proj", "mlp"},
        {"timm_drop", 0.0},
        {"timm_drop_path", 0.1},
        {"image_size", 256}}},
      {"text_cfg", {{"context_length", 77}, {"vocab_size", 49408}, {"width", 768}, {"heads", 12}, {"layers", 16}}}};
  const ClipConfig c = ParseOpenClipConfig(cfg, "convnext_large_d.json").value();
  EXPECT_EQ(c.vision.tower, VisionTower::kConvNext);
  EXPECT_EQ(c.vision.convnext.depths, (std::array<int, 4>{3, 3, 27, 3}));
  EXPECT_EQ(c.vision.convnext.dims, (std::array<int, 4>{192, 384, 768, 1536}));
  EXPECT_EQ(c.vision.convnext.projection, ConvNextProjection::kMlp);
  EXPECT_FLOAT_EQ(c.vision.convnext.norm_eps, 1e-6f);
  EXPECT_EQ(c.vision.image_size, 256);
  // RN50x4: heads = width * 32 / head_width (default 64).
  const Json rn = {
      {"embed_dim", 640},
      {"vision_cfg", {{"image_size", 288}, {"layers", {4, 6, 10, 6}}, {"width", 80}, {"patch_size", nullptr}}},
      {"text_cfg", {{"width", 640}, {"heads", 10}, {"layers", 12}}}};
  const ClipConfig r = ParseOpenClipConfig(rn, "RN50x4.json").value();
  EXPECT_EQ(r.vision.tower, VisionTower::kModifiedResNet);
  EXPECT_EQ(r.vision.resnet.layers, (std::array<int, 4>{4, 6, 10, 6}));
  EXPECT_EQ(r.vision.resnet.heads, 40);
  EXPECT_EQ(r.vision.resnet.feature_width(), 2560);
}

TEST_F(ModelDirTest, ShapesAreCheckedAgainstTheConfig) {
  LinkFixtureWeights();
  Json cfg = FixtureConfig();
  cfg["model_cfg"]["text_cfg"]["layers"] = 3;
  WriteJson("open_clip_config.json", cfg);
  EXPECT_THAT(LoadStatus().what(), HasSubstr("missing tensor \"transformer.resblocks.2.ln_1.weight\""));
  cfg = FixtureConfig();
  cfg["model_cfg"]["embed_dim"] = 32;
  WriteJson("open_clip_config.json", cfg);
  const Status st = LoadStatus();
  EXPECT_THAT(st.what(), HasSubstr("tensor \"visual.proj\" has shape [64, 64]"));
  EXPECT_THAT(st.expected(), HasSubstr("shape [64, 32]"));
  cfg = FixtureConfig();
  cfg["model_cfg"]["text_cfg"]["layers"] = 1;
  WriteJson("open_clip_config.json", cfg);
  EXPECT_THAT(LoadStatus().what(), HasSubstr("unexpected tensor \"transformer.resblocks.1."));
}

// Reproducers from fuzzing: each was a crash or undefined behaviour, each must be one clear error.
TEST_F(ModelDirTest, AConfigNestedTooDeepIsRefusedWhileParsing) {
  LinkFixtureWeights();
  // {"model_cfg":{"embed_dim":[[[...]]]}}, 100,000 deep: quoting it in the error overflowed the stack.
  std::string text = R"({"model_cfg":{"embed_dim":)";
  text += std::string(100000, '[') + std::string(100000, ']') + "}}";
  std::ofstream(dir_ / "open_clip_config.json") << text;
  const Status st = LoadStatus();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.what(), "JSON nested deeper than 64 levels");
  EXPECT_THAT(st.where(), HasSubstr("open_clip_config.json"));
}

TEST_F(ModelDirTest, AValueInAnErrorIsQuotedShortly) {
  LinkFixtureWeights();
  Json cfg = FixtureConfig();
  Json deep = 1;
  for (int i = 0; i < 60; ++i) deep = Json::array({deep});
  cfg["model_cfg"]["embed_dim"] = deep;
  WriteJson("open_clip_config.json", cfg);
  const Status st = LoadStatus();
  EXPECT_EQ(st.what(), "field \"embed_dim\" is " + std::string(60, '[') + "1" + std::string(59, ']') + "...");
}

TEST_F(ModelDirTest, MlpRatioMustBePositiveAndAtMost64) {
  LinkFixtureWeights();
  for (const char* tower : {"vision_cfg", "text_cfg"}) {
    for (double ratio : {1e300, 0.0, -4.0, 64.5}) {
      SCOPED_TRACE(std::string(tower) + " mlp_ratio " + std::to_string(ratio));
      Json cfg = FixtureConfig();
      cfg["model_cfg"][tower]["mlp_ratio"] = ratio;
      WriteJson("open_clip_config.json", cfg);
      const Status st = LoadStatus();
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
      EXPECT_THAT(st.what(), HasSubstr("\"mlp_ratio\" is "));
      EXPECT_EQ(st.expected(), "a number above 0 and at most 64");
    }
  }
  Json cfg = FixtureConfig();
  cfg["model_cfg"]["text_cfg"]["mlp_ratio"] = 0.001;  // int(width * ratio) == 0
  WriteJson("open_clip_config.json", cfg);
  EXPECT_THAT(LoadStatus().what(), HasSubstr("gives an MLP of width 0"));
}

TEST_F(ModelDirTest, SizesWhoseProductsOverflowInt32AreRefused) {
  LinkFixtureWeights();
  struct Case {
    std::vector<std::pair<std::string, Json>> edits;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{{"/model_cfg/text_cfg/vocab_size", 1 << 24}, {"/model_cfg/text_cfg/width", 256}},
       "token embedding (vocab_size x width) is 16777216 x 256 elements"},
      {{{"/model_cfg/vision_cfg/patch_size", 1},
        {"/model_cfg/vision_cfg/image_size", 4096},
        {"/preprocess_cfg/size", 4096}},
       "vision tokens x width is 16777217 x 256 elements"},
      {{{"/model_cfg/text_cfg/context_length", 1 << 20}}, "text attention scores"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.says);
    Json cfg = FixtureConfig();
    for (const auto& [pointer, value] : c.edits) cfg[Json::json_pointer(pointer)] = value;
    WriteJson("open_clip_config.json", cfg);
    const Status st = LoadStatus();
    EXPECT_EQ(st.code(), StatusCode::kUnsupported) << st.ToString();
    EXPECT_THAT(st.what(), HasSubstr(c.says));
    EXPECT_EQ(st.expected(), "a model whose tensors have fewer than 2^31 elements");
  }
}

// Sizes are ints: a larger number is refused, never cut to its low 32 bits (2^32 + 224 is not 224),
// and digits in a timm model name are a size like any other. Floats beyond float's range would be
// infinite: refused too.
TEST_F(ModelDirTest, NumbersBeyondTheirTypeAreRefusedNotTruncated) {
  LinkFixtureWeights();
  struct Case {
    std::string pointer;
    Json value;
    StatusCode code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"/model_cfg/vision_cfg/image_size", Json::array({4294967520, 4294967520}), StatusCode::kUnsupported,
       "non-square or invalid image_size [4294967520,4294967520]"},
      {"/model_cfg/vision_cfg/width", 4294967552, StatusCode::kInvalidArgument, "field \"width\" is 4294967552"},
      {"/model_cfg/vision_cfg/timm_model_name", "vit_base_patch99999999999_siglip_224", StatusCode::kInvalidArgument,
       "timm_model_name \"vit_base_patch99999999999_siglip_224\" has patch or image size 0 or above 2^24"},
      {"/model_cfg/vision_cfg/timm_model_name", "vit_base_patch16_siglip_0", StatusCode::kInvalidArgument,
       "has patch or image size 0 or above 2^24"},
      {"/preprocess_cfg/std", Json::array({1e300, 1, 1}), StatusCode::kInvalidArgument,
       "field \"std\" is [1e+300,1,1]"},
      {"/preprocess_cfg/mean", 1e39, StatusCode::kInvalidArgument, "field \"mean\" is 1e+39"},
      {"/model_cfg/text_cfg/norm_kwargs", {{"eps", 1e39}}, StatusCode::kUnsupported, "norm_kwargs = {\"eps\":1e+39}"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pointer + " = " + c.value.dump());
    Json cfg = FixtureConfig();
    cfg[Json::json_pointer(c.pointer)] = c.value;
    WriteJson("open_clip_config.json", cfg);
    const Status st = LoadStatus();
    EXPECT_EQ(st.code(), c.code) << st.ToString();
    EXPECT_THAT(st.what(), HasSubstr(c.says));
  }
}

TEST_F(ModelDirTest, MissingFilesAreNamed) {
  EXPECT_THAT(LoadStatus().what(), HasSubstr("no config in model directory"));
  WriteJson("open_clip_config.json", FixtureConfig());
  const Status st = LoadStatus();
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_THAT(st.expected(), HasSubstr("open_clip_model.safetensors or model.safetensors"));
  EXPECT_EQ(LoadClipModel(dir_ / "nope").status().code(), StatusCode::kNotFound);
}

// Re-expresses the fixture model in Hugging Face transformers' CLIPModel layout: it must load and
// give the same embeddings as the OpenCLIP layout.
TEST_F(ModelDirTest, HuggingFaceLayoutGivesTheSameEmbeddings) {
  const SafetensorsFile oc = SafetensorsFile::Open(testing::FixtureDir() / "model.safetensors").value();
  auto values = [&](const std::string& name) { return SafetensorsFile::ToFloat(*oc.Find(name), "fixture").value(); };
  auto shape = [&](const std::string& name) { return oc.Find(name)->shape; };
  std::vector<NamedTensor> hf;
  auto copy = [&](const std::string& from, const std::string& to) { hf.push_back({to, shape(from), values(from)}); };
  auto transpose = [&](const std::string& from, const std::string& to) {
    const auto s = shape(from);
    const auto v = values(from);
    std::vector<float> t(v.size());
    for (int64_t i = 0; i < s[0]; ++i) {
      for (int64_t j = 0; j < s[1]; ++j) t[j * s[0] + i] = v[i * s[1] + j];
    }
    hf.push_back({to, {s[1], s[0]}, t});
  };
  const std::vector<std::pair<std::string, std::string>> renames = {
      {R"(^visual\.transformer\.resblocks\.(\d+)\.)", "vision_model.encoder.layers.$1."},
      {R"(^transformer\.resblocks\.(\d+)\.)", "text_model.encoder.layers.$1."},
      {R"(ln_1)", "layer_norm1"},
      {R"(ln_2)", "layer_norm2"},
      {R"(attn\.out_proj)", "self_attn.out_proj"},
      {R"(mlp\.c_fc)", "mlp.fc1"},
      {R"(mlp\.c_proj)", "mlp.fc2"},
      {R"(^visual\.class_embedding$)", "vision_model.embeddings.class_embedding"},
      {R"(^visual\.conv1\.weight$)", "vision_model.embeddings.patch_embedding.weight"},
      {R"(^visual\.positional_embedding$)", "vision_model.embeddings.position_embedding.weight"},
      {R"(^visual\.ln_pre)", "vision_model.pre_layrnorm"},
      {R"(^visual\.ln_post)", "vision_model.post_layernorm"},
      {R"(^token_embedding)", "text_model.embeddings.token_embedding"},
      {R"(^positional_embedding$)", "text_model.embeddings.position_embedding.weight"},
      {R"(^ln_final)", "text_model.final_layer_norm"}};
  for (const auto& t : oc.tensors()) {
    if (t.name == "visual.proj") {
      transpose(t.name, "visual_projection.weight");
    } else if (t.name == "text_projection") {
      transpose(t.name, "text_projection.weight");
    } else if (t.name.find("in_proj_") != std::string::npos) {
      std::string prefix = t.name.substr(0, t.name.find("attn.in_proj_"));
      for (const auto& [from, to] : renames) prefix = std::regex_replace(prefix, std::regex(from), to);
      const bool weight = t.name.find("in_proj_weight") != std::string::npos;
      const auto v = values(t.name);
      const int64_t w = t.shape[0] / 3;
      const size_t part = v.size() / 3;
      const char* names[] = {"q_proj", "k_proj", "v_proj"};
      for (int k = 0; k < 3; ++k) {
        hf.push_back({prefix + "self_attn." + names[k] + (weight ? ".weight" : ".bias"),
                      weight ? std::vector<int64_t>{w, t.shape[1]} : std::vector<int64_t>{w},
                      std::vector<float>(v.begin() + k * part, v.begin() + (k + 1) * part)});
      }
    } else {
      std::string name = t.name;
      for (const auto& [from, to] : renames) name = std::regex_replace(name, std::regex(from), to);
      copy(t.name, name);
    }
  }
  ASSERT_TRUE(WriteSafetensors(dir_ / "model.safetensors", hf).ok());
  const Json tower = {{"hidden_size", 64},      {"intermediate_size", 256}, {"num_attention_heads", 4},
                      {"num_hidden_layers", 2}, {"hidden_act", "gelu"},     {"layer_norm_eps", 1e-5}};
  Json vision = tower;
  vision["image_size"] = 64;
  vision["patch_size"] = 16;
  Json text = tower;
  text["max_position_embeddings"] = 77;
  text["vocab_size"] = 49408;
  WriteJson("config.json", {{"model_type", "clip"},
                            {"projection_dim", 64},
                            {"architectures", {"CLIPModel"}},
                            {"vision_config", vision},
                            {"text_config", text}});

  Result<ClipModel> hf_model = LoadClipModel(dir_);
  ASSERT_TRUE(hf_model.ok()) << hf_model.status().ToString();
  EXPECT_EQ(hf_model->config().layout, CheckpointLayout::kHuggingFace);
  const ClipModel oc_model = LoadClipModel(testing::FixtureDir()).value();
  const std::vector<std::vector<int32_t>> ids = {{kStartOfText, 320, 1125, kEndOfText}};
  const Matrix a = hf_model->EncodeTokens(ids).value();
  const Matrix b = oc_model.EncodeTokens(ids).value();
  for (size_t i = 0; i < a.data.size(); ++i) EXPECT_NEAR(a.data[i], b.data[i], 1e-6);
  Matrix pixels(1, 3 * 64 * 64);
  for (size_t i = 0; i < pixels.data.size(); ++i) pixels.data[i] = static_cast<float>(i % 97) / 50.0f - 1.0f;
  const Matrix c = hf_model->EncodePixels(pixels).value();
  const Matrix d = oc_model.EncodePixels(pixels).value();
  for (size_t i = 0; i < c.data.size(); ++i) EXPECT_NEAR(c.data[i], d.data[i], 1e-6);
}

// A SiglipModel folder needs the checkpoint's own spiece.model beside config.json.
TEST_F(ModelDirTest, HuggingFaceSiglipNeedsItsSentencePieceModel) {
  LinkFixtureWeights();
  WriteJson("config.json",
            {{"model_type", "siglip"}, {"vision_config", Json::object()}, {"text_config", Json::object()}});
  const Status st = LoadStatus();
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.ToString();
  EXPECT_THAT(st.what(), HasSubstr("no SentencePiece model for the Hugging Face SigLIP checkpoint"));
  EXPECT_THAT(st.expected(), HasSubstr("spiece.model"));
}

}  // namespace
}  // namespace visalign::clip
