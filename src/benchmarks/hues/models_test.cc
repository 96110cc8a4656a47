// The model zoo's support column comes from the clip loader's own parser applied to each model's
// OpenCLIP config (data/clip/open_clip_model_configs.json, open_clip's model_configs at the commit
// the catalog was made from).
#include "visalign/benchmarks/hues/models.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "benchmarks/hues/test_support.h"
#include "visalign/core/io.h"

namespace visalign::hues {
namespace {

using ::testing::HasSubstr;

std::map<std::string, CatalogModel> ByName(const std::vector<CatalogModel>& models) {
  std::map<std::string, CatalogModel> out;
  for (const CatalogModel& m : models) out.emplace(m.model, m);
  return out;
}

std::map<std::string, CatalogModel> Shipped() {
  std::vector<std::string> sources;
  Result<std::vector<CatalogModel>> models = ListCatalogModels("", sources);
  EXPECT_TRUE(models.ok()) << models.status().ToString();
  return models.ok() ? ByName(*models) : std::map<std::string, CatalogModel>{};
}

TEST(ModelCatalog, EveryPublishedModelHasAnOpenClipConfigAndASupportClass) {
  const std::map<std::string, CatalogModel> models = Shipped();
  EXPECT_EQ(models.size(), 162u);
  for (const auto& [name, m] : models) {
    SCOPED_TRACE(name);
    EXPECT_EQ(name, m.entry.open_clip_model + "-" + m.entry.pretrained);
    EXPECT_NE(m.support, ModelSupport::kNone) << m.reason;
    if (m.support == ModelSupport::kNative) {
      EXPECT_FALSE(m.vision_tower.empty());
      EXPECT_TRUE(m.reason.empty()) << m.reason;
    } else {
      EXPECT_THAT(m.reason, HasSubstr("unsupported")) << "a refusal names the missing feature";
    }
  }
}

// Architectures docs/clip.md lists as native, and refusals naming what is missing.
TEST(ModelCatalog, SupportFollowsTheLoaderOfEachArchitecture) {
  const std::map<std::string, CatalogModel> models = Shipped();
  struct Case {
    std::string model;
    ModelSupport support;
    std::string tower_or_reason;
  };
  const std::vector<Case> cases = {
      {"RN50-openai", ModelSupport::kNative, "ModifiedResNet"},
      {"RN50x64-openai", ModelSupport::kNative, "ModifiedResNet"},
      {"ViT-B-32-openai", ModelSupport::kNative, "ViT"},
      {"ViT-bigG-14-laion2b_s39b_b160k", ModelSupport::kNative, "ViT"},
      {"convnext_base_w-laion2b_s13b_b82k", ModelSupport::kNative, "ConvNeXt (timm)"},
      {"convnext_large_d-laion2b_s26b_b102k_augreg", ModelSupport::kNative, "ConvNeXt (timm)"},  // timm_proj mlp
      {"ViT-B-16-SigLIP-webli", ModelSupport::kNative, "ViT"},
      {"ViT-SO400M-14-SigLIP-webli", ModelSupport::kNative, "ViT"},
      {"ViT-B-16-SigLIP2-webli", ModelSupport::kNative, "ViT"},           // Gemma tokenizer
      {"ViT-SO400M-16-SigLIP2-384-webli", ModelSupport::kNative, "ViT"},  // and timm's gelu_tanh tower
      {"EVA02-B-16-merged2b_s8b_b131k", ModelSupport::kNative, "ViT"},
      {"EVA01-g-14-plus-merged2b_s11b_b114k", ModelSupport::kNative, "ViT"},
      {"EVA02-E-14-laion2b_s4b_b115k", ModelSupport::kNative, "ViT"},  // residual post-norm blocks
      {"ViTamin-B-datacomp1b", ModelSupport::kNative, "ViT"},          // conv stem + GeGLU ViT
      {"ViTamin-XL-256-datacomp1b", ModelSupport::kNative, "ViT"},     // and pos_embed 'none'
      // issue 31, PE-Core / CoCa / EVA02-E / timm CLIP ViT step:
      {"PE-Core-T-16-384-meta", ModelSupport::kNative, "ViT"},
      {"PE-Core-L-14-336-meta", ModelSupport::kNative, "ViT"},
      {"coca_ViT-B-32-laion2b_s13b_b90k", ModelSupport::kNative, "ViT"},
      {"coca_ViT-L-14-mscoco_finetuned_laion2b_s13b_b90k", ModelSupport::kNative, "ViT"},
      {"MobileCLIP2-L-14-dfndr2b", ModelSupport::kNative, "ViT"},  // timm vit_large_patch14_clip_224
      {"MobileCLIP-S1-datacompdr", ModelSupport::kNative, "FastViT MCi (timm)"},
      {"MobileCLIP2-S4-dfndr2b", ModelSupport::kNative, "FastViT MCi (timm)"},  // 5 stages, LayerNorm2d attention
      {"MobileCLIP-B-datacompdr", ModelSupport::kNative, "ViT"},                // MCi ViT: ConvStem
      {"xlm-roberta-base-ViT-B-32-laion5b_s13b_b90k", ModelSupport::kEmbeddings, "Hugging Face text tower"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model);
    ASSERT_TRUE(models.count(c.model));
    const CatalogModel& m = models.at(c.model);
    EXPECT_EQ(ModelSupportName(m.support), ModelSupportName(c.support));
    EXPECT_THAT(m.support == ModelSupport::kNative ? m.vision_tower : m.reason, HasSubstr(c.tower_or_reason));
  }
}

// The counts docs/hues.md states: every SigLIP2 and EVA-CLIP model runs natively since the Gemma
// tokenizer and the EVA trunks exist (EVA02-E's post-norm blocks since issue 31's third step); CLIPA
// (WordPiece), MetaCLIP 2 (eos pooling) and the SigLIP i18n text tower without projection since its second
// step; PE-Core, CoCa and MobileCLIP2-L-14 (timm's CLIP-layout ViT) since its third;
// ViTamin and the MobileCLIP family's FastViT MCi and MCi ViT towers since its last.
TEST(ModelCatalog, CountsOfNativeAndEmbeddingsModels) {
  std::map<std::string, int> native_by_family, embeddings_by_family;
  for (const auto& [name, m] : Shipped()) {
    (m.support == ModelSupport::kNative ? native_by_family : embeddings_by_family)[m.entry.architecture]++;
  }
  int native = 0;
  for (const auto& [family, n] : native_by_family) native += n;
  // 124 before issue 31's last steps: PE-Core / CoCa / EVA02-E / MobileCLIP2-L-14 add 11, ViTamin 9,
  // MobileCLIP's FastViT MCi and MCi ViT 9; left: the 9 with Hugging Face text towers.
  EXPECT_EQ(native, 124 + 11 + 9 + 9);
  EXPECT_EQ(native_by_family["SigLIP"], 26);
  EXPECT_EQ(native_by_family["CLIPA"], 7);     // the catalog's seven CLIPA checkpoints (ViT-L/H/bigG-14, 224 and 336)
  EXPECT_EQ(native_by_family["EVA-CLIP"], 7);  // EVA02-E's two with their post-norm blocks
  EXPECT_EQ(embeddings_by_family["EVA-CLIP"], 0);
  EXPECT_EQ(native_by_family["PE-Core"], 4);
  EXPECT_EQ(embeddings_by_family["PE-Core"], 0);
  EXPECT_EQ(native_by_family["CoCa"], 4);
  EXPECT_EQ(embeddings_by_family["CoCa"], 0);
  EXPECT_EQ(native_by_family["ViTamin"], 9);  // all nine since the ViTamin trunk (issue 31)
  EXPECT_EQ(embeddings_by_family["ViTamin"], 0);
  EXPECT_EQ(native_by_family["MobileCLIP"], 10);  // FastViT MCi S0..S4, MCi ViT B, and L-14's timm ViT
  EXPECT_EQ(embeddings_by_family["MobileCLIP"], 0);
}

TEST(ModelCatalog, UserRowsWithoutAKnownConfigAreNone) {
  testing::Scratch scratch;
  const std::filesystem::path csv = scratch.Write("mine.csv",
                                                  "model,architecture,dataset,open_clip_model,pretrained\n"
                                                  "my-model,Mine,Private,my-arch,v1\n"
                                                  "RN50-openai,ResNet,OpenAI-WIT,,\n");
  std::vector<std::string> sources;
  Result<std::vector<CatalogModel>> list = ListCatalogModels(csv, sources);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(sources.size(), 2u);
  const std::map<std::string, CatalogModel> models = ByName(*list);
  EXPECT_EQ(models.size(), 163u);
  EXPECT_EQ(models.at("my-model").support, ModelSupport::kNone);
  EXPECT_THAT(models.at("my-model").reason, HasSubstr("no OpenCLIP config for \"my-arch\""));
  // A replaced row without open_clip_model keeps the shipped one, so its support is unchanged.
  EXPECT_EQ(models.at("RN50-openai").support, ModelSupport::kNative);
  EXPECT_EQ(models.at("RN50-openai").entry.open_clip_model, "RN50");
}

}  // namespace
}  // namespace visalign::hues
