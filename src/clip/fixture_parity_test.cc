// Parity with open_clip on the reference fixtures (../shared/fixtures): clip-tiny (ViT), clip-rn-tiny
// (ModifiedResNet), clip-convnext-tiny (timm ConvNeXt), siglip-tiny (SigLIP: timm ViT with MAP head,
// bidirectional text pooled at the last position, sigmoid logits), siglip-tiny rewritten as a
// transformers SiglipModel checkpoint (hf_siglip_testing.h), siglip2-tiny (SigLIP2: tanh-GELU
// text tower, Gemma tokenizer), eva02-tiny / eva01-tiny (EVA-CLIP), clipa-tiny (CLIPA: mean-pooled
// patches, BERT WordPiece) and metaclip2-tiny (MetaCLIP 2: eos pooling; token ids only, its
// tokenizer is not in the fixture, so the string checks verify the refusal), pe-core-tiny (PE-Core: 'xy'
// RoPE, MAP head) and coca-tiny (CoCa: attentional pooler, appended cls token) vitamin-tiny (ViTamin:
// conv stem and MbConv stages before a GeGLU ViT), mobileclip-s-tiny (FastViT MCi) and mobileclip-b-tiny
// (MCi ViT). One suite, the same checks for every
// model: tokens exact, embeddings from the exact model inputs and from strings, cosines / logits /
// probabilities, every traced intermediate activation, end to end from the PNGs, and independence of
// threads and batching. Model-specific behaviour lives beside it (model_test.cc, hf_siglip_test.cc,
// convnext_test.cc, config_test.cc).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <regex>

#include "clip/config.h"
#include "clip/fixture_testing.h"
#include "clip/hf_siglip_testing.h"
#include "clip/towers.h"
#include "testing/dirs.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"

namespace visalign::clip {
namespace {

using testing::MaxAbsDiff;

// fp32 forward passes against open_clip's (PyTorch, fp32): the two differ in GEMM blocking and
// summation order, which oneDNN chooses per CPU (AVX2, AVX-512), so results agree to a few fp32 ulps
// per dot product (epsilon 6e-8 x sqrt(width 64..128) x layers ~ 1e-6 relative) times the
// activations' magnitude. Unnormalised embeddings and activations are O(1..10) (the ResNet's reach
// |x| ~ 12; the fixture README measures 1.6e-5 between torch's own 1- and 2-thread runs): 1e-4
// absolute. Normalised embeddings and cosines are <= 1: 1e-5. Logits are cosines times
// exp(logit_scale) (100/7 ~ 14.3; SigLIP exp(2.5) = 12.18, plus a bias): 2e-4. Sigmoid
// probabilities have slope <= 1/4 in the logit: 1e-5.
constexpr float kNormalizedTolerance = 1e-5f;
constexpr float kUnnormalizedTolerance = 1e-4f;
constexpr float kActivationTolerance = 1e-4f;
constexpr float kLogitTolerance = 2e-4f;
constexpr float kProbabilityTolerance = 1e-5f;
constexpr float kThreadingTolerance = 1e-5f;

struct ParityCase {
  const char* name;
  const char* fixture;  // ../shared/fixtures/<fixture>
  bool hf_siglip;       // the fixture rewritten as a transformers SiglipModel directory
  VisionTower tower;
  int activations;  // traced tensors of debug_activations.safetensors (besides inputs and the mask)
};

// One case's model folder, model, expected outputs and debug tensors, loaded once per process.
struct Loaded {
  std::unique_ptr<visalign::testing::TempDir> hf_dir;  // hf_siglip only
  std::filesystem::path dir;
  std::unique_ptr<ClipModel> model;
  Json expected;
  std::unique_ptr<SafetensorsFile> debug;
};

const Loaded& Load(const ParityCase& c) {
  static std::map<std::string, Loaded> cache;
  if (auto it = cache.find(c.name); it != cache.end()) return it->second;
  Loaded l;
  l.dir = testing::FixtureDir(c.fixture);
  if (c.hf_siglip) {
    l.hf_dir = std::make_unique<visalign::testing::TempDir>();
    std::vector<std::string> unmapped;
    const Status written = testing::WriteHfSiglipFixture(l.hf_dir->path(), unmapped);
    EXPECT_TRUE(written.ok()) << written.ToString();
    EXPECT_TRUE(unmapped.empty()) << "no HF name for " << unmapped.front();
    l.dir = l.hf_dir->path();
  }
  Result<ClipModel> model = LoadClipModel(l.dir);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (model.ok()) l.model = std::make_unique<ClipModel>(std::move(model).value());
  l.expected = testing::ReadFixtureJson("expected.json", c.fixture);
  l.debug = std::make_unique<SafetensorsFile>(
      SafetensorsFile::Open(testing::FixtureDir(c.fixture) / "debug_activations.safetensors").value());
  return cache.emplace(c.name, std::move(l)).first->second;
}

class FixtureParityTest : public ::testing::TestWithParam<ParityCase> {
 protected:
  static void SetUpTestSuite() {
    setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0);
    // Tiny models gain nothing from threads (hand-offs dominate on a loaded machine); the threaded
    // paths have their own test below.
    SetThreadCount(1);
  }
  void SetUp() override { ASSERT_NE(loaded().model, nullptr); }

  const Loaded& loaded() const { return Load(GetParam()); }
  const ClipModel& model() const { return *loaded().model; }
  const Json& expected() const { return loaded().expected; }
  Matrix DebugPixels() const { return testing::DebugPixels(*loaded().debug); }
  std::vector<std::vector<int32_t>> DebugTokenIds() const { return testing::DebugTokenIds(*loaded().debug); }

  // transformers' SiglipTokenizer encodes the empty text differently from open_clip (a lone "▁";
  // hf_siglip_test.cc): string-based checks skip it there.
  bool StringsComparable(const Json& text) const {
    return !(GetParam().hf_siglip && text["text"].get<std::string>().empty());
  }
  // metaclip2-tiny gives token ids only (its XLM-V tokenizer is not obtainable offline).
  bool HasTokenizer() const { return model().config().tokenizer.missing.empty(); }
  void ExpectNoTokenizer() const {
    const Status st = model().Tokenize("a red apple").status();
    EXPECT_EQ(st.code(), StatusCode::kNotFound);
    EXPECT_NE(st.expected().find("--token-ids"), std::string::npos) << st.ToString();
  }
  std::vector<std::string> Texts() const {
    std::vector<std::string> texts;
    for (const auto& t : expected()["texts"]) texts.push_back(t["text"].get<std::string>());
    return texts;
  }

  void ExpectEmbeddings(const Matrix& got, const std::string& tower, bool from_strings = false) const {
    const Json& rows = expected()[tower];
    Matrix normalized = got;
    NormalizeRows(normalized);
    ASSERT_EQ(static_cast<size_t>(got.rows), rows.size());
    for (int i = 0; i < got.rows; ++i) {
      if (from_strings && !StringsComparable(rows[i])) continue;
      SCOPED_TRACE(tower + " " + std::to_string(i));
      EXPECT_LE(MaxAbsDiff(got.row(i), rows[i]["embedding"].get<std::vector<float>>()), kUnnormalizedTolerance);
      EXPECT_LE(MaxAbsDiff(normalized.row(i), rows[i]["embedding_normalized"].get<std::vector<float>>()),
                kNormalizedTolerance);
    }
  }
};

TEST_P(FixtureParityTest, ReadsTheFixtureShapeAndStoredLogitScale) {
  EXPECT_EQ(model().config().vision.tower, GetParam().tower);
  EXPECT_EQ(static_cast<size_t>(model().embed_dim()), expected()["images"][0]["embedding"].size());
  EXPECT_EQ(3 * model().image_size() * model().image_size(), DebugPixels().cols);
  // The weights' values, never the config's init_* values.
  EXPECT_NEAR(model().LogitScale(), expected()["logit_scale_exp"].get<float>(), 1e-5);
  if (model().config().sigmoid_logits) EXPECT_EQ(model().LogitBias(), expected()["logit_bias"].get<float>());
}

TEST_P(FixtureParityTest, TokenizesTheFixtureTextsExactly) {
  if (!HasTokenizer()) return ExpectNoTokenizer();
  for (const auto& t : expected()["texts"]) {
    if (!StringsComparable(t)) continue;
    EXPECT_EQ(model().Tokenize(t["text"].get<std::string>()).value(), t["token_ids"].get<std::vector<int32_t>>())
        << t["text"];
  }
}

TEST_P(FixtureParityTest, ImageEmbeddingsFromPixelValuesMatchOpenClip) {
  ExpectEmbeddings(model().EncodePixels(DebugPixels()).value(), "images");
}

TEST_P(FixtureParityTest, TextEmbeddingsFromTokenIdsMatchOpenClip) {
  std::vector<std::vector<int32_t>> unpadded;
  for (const auto& t : expected()["texts"]) unpadded.push_back(t["token_ids"].get<std::vector<int32_t>>());
  ExpectEmbeddings(model().EncodeTokens(unpadded).value(), "texts");
  ExpectEmbeddings(model().EncodeTokens(DebugTokenIds()).value(), "texts");  // padded as the fixture ran them
}

TEST_P(FixtureParityTest, TextEmbeddingsFromStringsMatchOpenClip) {
  if (!HasTokenizer()) return ExpectNoTokenizer();
  ExpectEmbeddings(model().EncodeTexts(Texts()).value(), "texts", /*from_strings=*/true);
}

TEST_P(FixtureParityTest, CosinesLogitsAndProbabilitiesMatchOpenClip) {
  const Matrix cos =
      CosineSimilarity(model().EncodePixels(DebugPixels()).value(), model().EncodeTokens(DebugTokenIds()).value());
  const Json& expected_cos = expected()["cosine_similarity"]["values"];
  const Json& expected_logits = expected()["logits_per_image"];
  const Json& logits = expected_logits.is_object() ? expected_logits["values"] : expected_logits;
  ASSERT_EQ(static_cast<size_t>(cos.rows), expected_cos.size());
  for (int i = 0; i < cos.rows; ++i) {
    SCOPED_TRACE(i);
    EXPECT_LE(MaxAbsDiff(cos.row(i), expected_cos[i].get<std::vector<float>>()), kNormalizedTolerance);
    std::vector<float> logit(cos.row(i), cos.row(i) + cos.cols);
    for (float& v : logit) v = model().LogitScale() * v + model().LogitBias();
    EXPECT_LE(MaxAbsDiff(logit.data(), logits[i].get<std::vector<float>>()), kLogitTolerance);
    if (!model().config().sigmoid_logits) continue;
    std::vector<float> probability(logit.size());
    for (size_t j = 0; j < logit.size(); ++j) probability[j] = 1.0f / (1.0f + std::exp(-logit[j]));
    EXPECT_LE(
        MaxAbsDiff(probability.data(), expected()["sigmoid_probabilities"]["values"][i].get<std::vector<float>>()),
        kProbabilityTolerance);
  }
}

TEST_P(FixtureParityTest, IntermediateActivationsMatchOpenClip) {
  std::map<std::string, std::vector<float>> traced;
  const TraceFn trace = [&](const std::string& name, const float* data, size_t size) {
    traced[name].assign(data, data + size);
  };
  ForwardOptions options;
  options.trim_text_to_eot = false;  // the fixtures traced every position
  options.trace = &trace;
  const Result<ClipConfig> config = ReadClipConfig(loaded().dir);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const Result<ClipWeights> weights = LoadClipWeights(*config);
  ASSERT_TRUE(weights.ok()) << weights.status().ToString();
  const Matrix image_embeddings = EncodeVision(*config, *weights, DebugPixels(), options);
  const Matrix text_embeddings = EncodeText(*config, *weights, DebugTokenIds(), options);
  // Some debug files end with the towers' outputs (siglip2-tiny: *.embedding, EVA: *.projected).
  for (const char* name : {"visual.embedding", "visual.projected"}) traced[name] = image_embeddings.data;
  for (const char* name : {"text.embedding", "text.projected"}) traced[name] = text_embeddings.data;
  // siglip-tiny names timm's blocks "blocks.<i>_out"; the shared block loop traces "block<i>_out".
  static const std::regex kTimmBlock("blocks\\.([0-9]+)_out$");
  int compared = 0;
  for (const auto& t : loaded().debug->tensors()) {
    if (t.name.rfind("inputs.", 0) == 0 || t.name == "text.attn_mask") continue;
    SCOPED_TRACE(t.name);
    const std::string name =
        t.name.rfind("visual.trunk.blocks.", 0) == 0 ? std::regex_replace(t.name, kTimmBlock, "block$1_out") : t.name;
    // Branch outputs inside a block (EVA's attn_out, mlp.norm_out, ...) are not traced; the count
    // below pins how many of the file's tensors are compared.
    if (!traced.count(name)) continue;
    const std::vector<float> want = SafetensorsFile::ToFloat(t, "debug").value();
    ASSERT_EQ(traced[name].size(), want.size());
    // Relative to the activation's scale where it exceeds 1 (the fixtures' READMEs: "atol 1e-4
    // relative to their scale"; mobileclip-s-tiny's FastViT stages reach |x| ~ 80).
    float scale = 1.0f;
    for (float v : want) scale = std::max(scale, std::abs(v));
    EXPECT_LE(MaxAbsDiff(traced[name].data(), want), kActivationTolerance * scale);
    ++compared;
  }
  EXPECT_EQ(compared, GetParam().activations);
}

TEST_P(FixtureParityTest, ImagesEndToEndFromPngsMatchOpenClip) {
  std::vector<imaging::Image> images;
  for (const auto& img : expected()["images"]) {
    Result<imaging::Image> im =
        imaging::ReadImage(testing::FixtureDir(GetParam().fixture) / img["file"].get<std::string>());
    ASSERT_TRUE(im.ok()) << im.status().ToString();
    images.push_back(std::move(im).value());
  }
  // Preprocessing alone reproduces the model input bit for bit, including the resampled images.
  EXPECT_EQ(PreprocessImages(images, model().config().preprocess).value().data, DebugPixels().data);
  ExpectEmbeddings(model().EncodeImages(images).value(), "images");
}

TEST_P(FixtureParityTest, ResultsDoNotDependOnThreadsOrBatching) {
  // 3 copies of the images and 18 texts on 2 threads in chunks of 4: one slice per thread (whole
  // forward passes per thread), and the unsliced batch with every operation on 2 threads.
  constexpr int kCopies = 3;
  const Matrix pixels = DebugPixels();
  Matrix many(pixels.rows * kCopies, pixels.cols);
  for (int copy = 0; copy < kCopies; ++copy)
    std::copy(pixels.data.begin(), pixels.data.end(), many.row(copy * pixels.rows));
  const std::vector<std::string> texts = {"a red apple",
                                          "BANANA",
                                          "the sky at dusk",
                                          "a photo of a cat",
                                          "ochre",
                                          "x",
                                          "hello world",
                                          "turquoise water",
                                          "moss",
                                          "green",
                                          "blue",
                                          "violet",
                                          "a b c d e f g",
                                          "magenta",
                                          "sand",
                                          "rust",
                                          "pale pink hue",
                                          "black"};
  // Without a tokenizer: the fixture's token rows, each of its 12 with 1 to 12 trailing positions cut.
  std::vector<std::vector<int32_t>> ids;
  for (const std::vector<int32_t>& row : DebugTokenIds()) {
    for (int cut = 0; !HasTokenizer() && cut < 12; cut += 6) ids.emplace_back(row.begin(), row.end() - cut);
  }
  const auto encode_texts = [&](const ClipModel& m) {
    return HasTokenizer() ? m.EncodeTexts(texts).value() : m.EncodeTokens(ids).value();
  };
  const Matrix images_one_thread = model().EncodePixels(many).value();
  const Matrix texts_one_thread = encode_texts(model());
  SetThreadCount(2);
  ClipLoadOptions small_batches;
  small_batches.max_batch = 4;
  const ClipModel chunked = LoadClipModel(loaded().dir, small_batches).value();
  const Matrix images_sliced = chunked.EncodePixels(many).value();
  const Matrix texts_sliced = encode_texts(chunked);
  const Matrix images_whole = model().EncodePixels(pixels).value();
  SetThreadCount(1);
  EXPECT_LE(MaxAbsDiff(images_one_thread.data.data(), images_sliced.data), kThreadingTolerance);
  EXPECT_LE(MaxAbsDiff(texts_one_thread.data.data(), texts_sliced.data), kThreadingTolerance);
  EXPECT_LE(MaxAbsDiff(images_one_thread.data.data(), images_whole.data), kThreadingTolerance);
  // The copies of an image land in their own rows.
  for (int c = 0; c < images_sliced.cols; ++c)
    EXPECT_NEAR(images_sliced.at(pixels.rows, c), images_sliced.at(0, c), 1e-5f);
}

// A patch grid with a remainder (ViT-SO400M-14-SigLIP-384: 384 px, patch 14) is floored, the last
// pixels dropped, as PyTorch's stride-P convolution does: siglip-tiny declared at 70 px (grid still
// 4 x 4) on 70 x 70 inputs whose top-left 64 x 64 are the fixture's pixel_values gives the fixture's
// image embeddings, whatever the 6-pixel margin holds.
TEST(PatchGridRemainder, IsDroppedAsTorchsConvolutionDropsIt) {
  setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0);
  constexpr int kFixtureSize = 64;
  constexpr int kSize = 70;
  visalign::testing::TempDir dir;
  Json config = testing::ReadFixtureJson("config.json", "siglip-tiny");
  config["model_cfg"]["vision_cfg"]["image_size"] = kSize;
  config["model_cfg"]["vision_cfg"]["timm_model_kwargs"]["img_size"] = kSize;
  config["preprocess_cfg"]["size"] = kSize;
  ASSERT_TRUE(WriteFileAtomic(dir / "open_clip_config.json", config.dump()).ok());
  std::filesystem::create_directory_symlink(testing::FixtureDir("siglip-tiny") / "tokenizer", dir / "tokenizer");
  std::filesystem::create_symlink(testing::FixtureDir("siglip-tiny") / "model.safetensors",
                                  dir / "open_clip_model.safetensors");
  Result<ClipModel> model = LoadClipModel(dir.path());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ(model->config().vision.grid(), 4);
  const SafetensorsFile debug =
      SafetensorsFile::Open(testing::FixtureDir("siglip-tiny") / "debug_activations.safetensors").value();
  const Matrix fixture_pixels = testing::DebugPixels(debug);
  Matrix pixels(fixture_pixels.rows, 3 * kSize * kSize);
  for (int i = 0; i < pixels.rows; ++i) {
    for (int c = 0; c < 3; ++c) {
      for (int y = 0; y < kSize; ++y) {
        for (int x = 0; x < kSize; ++x) {
          const bool inside = y < kFixtureSize && x < kFixtureSize;
          pixels.row(i)[(c * kSize + y) * kSize + x] =
              inside ? fixture_pixels.row(i)[(c * kFixtureSize + y) * kFixtureSize + x] : 7.0f * (c + 1);
        }
      }
    }
  }
  const Matrix got = model->EncodePixels(pixels).value();
  const Json expected = testing::ReadFixtureJson("expected.json", "siglip-tiny");
  for (int i = 0; i < got.rows; ++i) {
    EXPECT_LE(MaxAbsDiff(got.row(i), expected["images"][i]["embedding"].get<std::vector<float>>()),
              kUnnormalizedTolerance)
        << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, FixtureParityTest,
    ::testing::Values(ParityCase{"clip_tiny", "clip-tiny", false, VisionTower::kViT, 6 + 5},
                      ParityCase{"clip_rn_tiny", "clip-rn-tiny", false, VisionTower::kModifiedResNet, 12 + 5},
                      ParityCase{"clip_convnext_tiny", "clip-convnext-tiny", false, VisionTower::kConvNext, 12 + 5},
                      ParityCase{"siglip_tiny", "siglip-tiny", false, VisionTower::kViT, 7 + 5},
                      ParityCase{"siglip_tiny_hf_layout", "siglip-tiny", true, VisionTower::kViT, 7 + 5},
                      // SigLIP2: tanh-GELU text tower, the Gemma tokenizer from tokenizer.json.
                      ParityCase{"siglip2_tiny", "siglip2-tiny", false, VisionTower::kViT, 7 + 5 + 2},
                      // EVA02: RoPE, sub-LN, SwiGLU; EVA01: fused qkv with q/v biases.
                      ParityCase{"eva02_tiny", "eva02-tiny", false, VisionTower::kViT, 8 + 6},
                      ParityCase{"eva01_tiny", "eva01-tiny", false, VisionTower::kViT, 8 + 6},
                      // CLIPA: no ln_pre, mean-pooled patches with ln_post after pooling; unmasked
                      // text pooled at the last position; BERT WordPiece with strip_sep_token.
                      ParityCase{"clipa_tiny", "clipa-tiny", false, VisionTower::kViT, 8 + 6},
                      // MetaCLIP 2: text pooled at the first eos_id; token ids given (no tokenizer).
                      ParityCase{"metaclip2_tiny", "metaclip2-tiny", false, VisionTower::kViT, 7 + 6},
                      // ViTamin: conv stem + MbConv-LN stages, ViT with GeGLU MLPs, mean pooling
                      // and fc_norm; CustomTextCLIP text tower.
                      ParityCase{"vitamin_tiny", "vitamin-tiny", false, VisionTower::kViT, 11 + 6},
                      // PE-Core: 'xy' RoPE with offset 1, norm_pre, MAP head of 8 heads over all tokens.
                      ParityCase{"pe_core_tiny", "pe-core-tiny", false, VisionTower::kViT, 10 + 6},
                      // CoCa: attentional pooler (query 0); appended cls with the legacy key mask.
                      ParityCase{"coca_tiny", "coca-tiny", false, VisionTower::kViT, 8 + 6},

                      // MobileCLIP-S (timm FastViT MCi, un-fused branches folded at load) with a
                      // bidirectional text tower; MobileCLIP-B (MCi ViT: ConvStem, no_embed_class).
                      ParityCase{"mobileclip_s_tiny", "mobileclip-s-tiny", false, VisionTower::kFastVit, 21 + 6},
                      ParityCase{"mobileclip_b_tiny", "mobileclip-b-tiny", false, VisionTower::kViT, 6 + 6}),
    [](const ::testing::TestParamInfo<ParityCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace visalign::clip
