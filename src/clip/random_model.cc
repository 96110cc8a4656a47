// Random-weight CLIP models: an OpenCLIP config per architecture, OpenCLIP's initialisation scales
// with uniform draws on an exact grid, and a SplitMix64 stream per tensor, so the files are
// byte-identical everywhere (no std:: distributions, whose output is implementation-defined).
#include "clip/random_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "clip/config.h"
#include "clip/random_tensors.h"
#include "visalign/core/io.h"

namespace visalign::clip {
namespace {

namespace fs = std::filesystem;

constexpr const char* kConfigFileName = "open_clip_config.json";
constexpr const char* kWeightsFileName = "open_clip_model.safetensors";
constexpr const char* kProducer = "visalign clip random-model";

// Values are (offset + k) · 2^-kRandomGridBits with |offset + k| below this bound (exact floats).
constexpr int64_t kGridLimit = int64_t{1} << 24;
constexpr int64_t kGridOne = int64_t{1} << kRandomGridBits;
constexpr float kGridStep = 1.0f / static_cast<float>(kGridOne);

// OpenCLIP's scales as variances 1/n (the layers' in random_tensors.h): token embedding std 0.02, text
// positional embedding std 0.01.
constexpr int64_t kTokenEmbeddingVarianceDenominator = 2500;
constexpr int64_t kTextPositionalVarianceDenominator = 10000;
// OpenCLIP's initial logit scale, log(1 / 0.07).
constexpr float kInitialLogitScale = 2.65926004f;

// The configs OpenCLIP ships (ViT-B-32.json, RN50.json, convnext_base.json) and the clip-tiny fixture's shape.
struct ArchShape {
  int embed_dim;
  int image_size, patch_size, vision_width, vision_layers, vision_head_width;
  int text_width, text_heads, text_layers;
};
constexpr ArchShape kTinyShape{64, 64, 16, 64, 2, 16, 64, 4, 2};
constexpr ArchShape kViTB32Shape{512, 224, 32, 768, 12, 64, 512, 8, 12};
constexpr ArchShape kRN50Shape{1024, 224, 0, 64, 0, 0, 512, 8, 12};         // vision_width: the stem width
constexpr ArchShape kConvNextBaseShape{512, 224, 0, 0, 0, 0, 512, 8, 12};   // trunk shape from timm_model_name
constexpr ArchShape kViTaminSShape{384, 224, 0, 0, 0, 0, 384, 6, 12};       // ViTamin-S.json (CustomTextCLIP)
constexpr ArchShape kMobileClip2S0Shape{512, 256, 0, 0, 0, 0, 512, 8, 12};  // MobileCLIP2-S0.json, fastvit_mci0
constexpr ArchShape kMobileClipBShape{512, 224, 0, 0, 0, 0, 512, 8, 12};    // MobileCLIP-B.json, vit_base_mci_224
constexpr std::array<int, 4> kRN50Layers = {3, 4, 6, 3};
constexpr int kVocabSize = 49408;

constexpr std::array<double, 3> kOpenAiMean{0.48145466, 0.4578275, 0.40821073};
constexpr std::array<double, 3> kOpenAiStd{0.26862954, 0.26130258, 0.27577711};

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t Fnv1a64(const std::string& text) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001B3ULL;
  return h;
}

// floor(sqrt(x)), digit by digit.
constexpr uint64_t IntegerSqrt(uint64_t x) {
  uint64_t root = 0;
  for (uint64_t bit = uint64_t{1} << 62; bit != 0; bit >>= 2) {
    if (x >= root + bit) {
      x -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
  }
  return root;
}

// Half-width R (in grid steps) of a uniform on [-R, R] with variance 1/n: R² / 3 = 2^(2·bits) / n.
int64_t HalfWidth(int64_t variance_denominator) {
  return static_cast<int64_t>(
      IntegerSqrt(3 * (uint64_t{1} << (2 * kRandomGridBits)) / static_cast<uint64_t>(variance_denominator)));
}

Status CheckOutputDirectory(const fs::path& dir, bool overwrite) {
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (!fs::exists(status)) return EnsureDirectory(dir);
  if (!fs::is_directory(status)) {
    return Status::InvalidArgument("exists and is not a directory", dir.string(),
                                   "a new or empty directory for the model");
  }
  if (!overwrite && !fs::is_empty(dir, ec)) {
    return Status::InvalidArgument(
        "directory is not empty", dir.string(),
        "a new or empty directory (or overwrite, e.g. --force, to replace the model files in it)");
  }
  return Status::Ok();
}

}  // namespace

constexpr std::array<RandomClipArch, 7> kRandomArchs = {RandomClipArch::kTiny,       RandomClipArch::kViTB32,
                                                        RandomClipArch::kRN50,       RandomClipArch::kConvNextBase,
                                                        RandomClipArch::kViTaminS,   RandomClipArch::kMobileClip2S0,
                                                        RandomClipArch::kMobileClipB};

Result<RandomClipArch> ParseRandomClipArch(std::string_view name) {
  std::string names;
  for (RandomClipArch arch : kRandomArchs) {
    if (name == RandomClipArchName(arch)) return arch;
    names += (names.empty() ? "" : arch == kRandomArchs.back() ? " or " : ", ") + std::string(RandomClipArchName(arch));
  }
  return Status::InvalidArgument("unknown architecture \"" + std::string(name) + "\"", "", names);
}

std::string_view RandomClipArchName(RandomClipArch arch) {
  switch (arch) {
    case RandomClipArch::kTiny:
      return "tiny";
    case RandomClipArch::kViTB32:
      return "ViT-B-32";
    case RandomClipArch::kRN50:
      return "RN50";
    case RandomClipArch::kConvNextBase:
      return "convnext_base";
    case RandomClipArch::kViTaminS:
      return "ViTamin-S";
    case RandomClipArch::kMobileClip2S0:
      return "MobileCLIP2-S0";
    case RandomClipArch::kMobileClipB:
      return "MobileCLIP-B";
  }
  return "";
}

namespace {

const ArchShape& Shape(RandomClipArch arch) {
  switch (arch) {
    case RandomClipArch::kTiny:
      return kTinyShape;
    case RandomClipArch::kViTB32:
      return kViTB32Shape;
    case RandomClipArch::kRN50:
      return kRN50Shape;
    case RandomClipArch::kConvNextBase:
      return kConvNextBaseShape;
    case RandomClipArch::kViTaminS:
      return kViTaminSShape;
    case RandomClipArch::kMobileClip2S0:
      return kMobileClip2S0Shape;
    case RandomClipArch::kMobileClipB:
      return kMobileClipBShape;
  }
  return kTinyShape;
}

// vision_cfg of each architecture (OpenCLIP's RN50.json and convnext_base.json for the conv towers).
Json RandomVisionConfig(RandomClipArch arch, const ArchShape& s) {
  switch (arch) {
    case RandomClipArch::kRN50:
      return {
          {"image_size", s.image_size}, {"layers", kRN50Layers}, {"width", s.vision_width}, {"patch_size", nullptr}};
    case RandomClipArch::kConvNextBase:
      return {{"timm_model_name", "convnext_base"},
              {"timm_model_pretrained", false},
              {"timm_pool", ""},
              {"timm_proj", "linear"},
              {"timm_drop", 0.0},
              {"timm_drop_path", 0.1},
              {"image_size", s.image_size}};
    case RandomClipArch::kViTaminS:
      return {{"timm_model_name", "vitamin_small_224"},
              {"timm_model_pretrained", false},
              {"timm_pool", ""},
              {"timm_proj", "linear"},
              {"timm_drop", 0.0},
              {"timm_drop_path", 0.1},
              {"image_size", s.image_size}};
    case RandomClipArch::kMobileClip2S0:
    case RandomClipArch::kMobileClipB:
      return {{"timm_model_name", arch == RandomClipArch::kMobileClipB ? "vit_base_mci_224" : "fastvit_mci0"},
              {"timm_model_pretrained", false},
              {"timm_pool", arch == RandomClipArch::kMobileClipB ? "token" : "avg"},
              {"timm_proj", nullptr},
              {"timm_drop", 0.0},
              {"timm_drop_path", 0.0},
              {"image_size", s.image_size}};
    case RandomClipArch::kTiny:
    case RandomClipArch::kViTB32:
      break;
  }
  return {{"image_size", s.image_size},
          {"layers", s.vision_layers},
          {"width", s.vision_width},
          {"head_width", s.vision_head_width},
          {"patch_size", s.patch_size}};
}

}  // namespace

Json RandomClipConfigJson(RandomClipArch arch, uint64_t seed) {
  const ArchShape& s = Shape(arch);
  Json model_cfg = {{"embed_dim", s.embed_dim},
                    {"quick_gelu", false},
                    {"vision_cfg", RandomVisionConfig(arch, s)},
                    {"text_cfg",
                     {{"context_length", kDefaultContextLength},
                      {"vocab_size", kVocabSize},
                      {"width", s.text_width},
                      {"heads", s.text_heads},
                      {"layers", s.text_layers}}}};
  if (arch == RandomClipArch::kViTaminS) model_cfg["custom_text"] = true;  // the text tower under "text."
  return {{"model_cfg", model_cfg},
          {"preprocess_cfg",
           {{"size", s.image_size},
            {"mode", "RGB"},
            {"mean", kOpenAiMean},
            {"std", kOpenAiStd},
            {"interpolation", "bicubic"},
            {"resize_mode", "shortest"},
            {"fill_color", 0}}},
          {kRandomModelConfigKey,
           {{"arch", std::string(RandomClipArchName(arch))},
            {"seed", seed},
            {"note", std::string("pseudo-random weights written by `") + kProducer + "`: its numbers mean nothing"}}}};
}

std::vector<RandomTensorSpec> RandomTensorSpecs(const ClipConfig& c) {
  const TextConfig& t = c.text;
  const int64_t tw = t.width;
  std::vector<RandomTensorSpec> specs;
  switch (c.vision.tower) {
    case VisionTower::kViT:
      if (c.vision.vitamin.enabled) {
        AddVitamin(specs, c);
      } else if (c.vision.eva.enabled) {
        AddTimmEvaVision(specs, c);
      } else if (c.vision.mci_conv_stem) {
        AddMciVit(specs, c);
      } else {
        AddVitVision(specs, c);
        if (c.vision.attentional_pool) AddAttentionalPooler(specs, c);
      }
      break;
    case VisionTower::kModifiedResNet:
      AddResNet(specs, c);
      break;
    case VisionTower::kConvNext:
      AddConvNext(specs, c);
      break;
    case VisionTower::kFastVit:
      AddFastVit(specs, c);
      break;
  }
  // CustomTextCLIP (custom_text, CoCa) keeps the text tower under "text."; CoCa appends a cls position.
  const std::string tp = c.custom_text ? "text." : "";
  AddTower(specs, tp, t);
  specs.push_back({{tp + "token_embedding.weight", {t.vocab_size, tw}}, Uniform(kTokenEmbeddingVarianceDenominator)});
  specs.push_back({{tp + "positional_embedding", {t.context_length + (t.embed_cls ? 1 : 0), tw}},
                   Uniform(kTextPositionalVarianceDenominator)});
  if (t.embed_cls) specs.push_back({{tp + "cls_emb", {tw}}, Uniform(kTextPositionalVarianceDenominator)});
  AddNorm(specs, tp + "ln_final", tw);
  if (t.projection) specs.push_back({{tp + "text_projection", {tw, c.embed_dim}}, Uniform(tw)});
  specs.push_back({{"logit_scale", {}}, {RandomInit::Kind::kConstant, 1, false, kInitialLogitScale}});
  return specs;
}

bool RandomInitFitsGrid(const RandomInit& init) {
  if (init.kind == RandomInit::Kind::kConstant) return true;
  return init.variance_denominator > 0 &&
         HalfWidth(init.variance_denominator) + (init.around_one ? kGridOne : 0) < kGridLimit;
}

void FillRandomTensor(const RandomTensorSpec& spec, uint64_t seed, float* values) {
  const auto n = static_cast<size_t>(spec.tensor.NumElements());
  if (spec.init.kind == RandomInit::Kind::kConstant) {
    std::fill(values, values + n, spec.init.constant);
    return;
  }
  uint64_t mixer = seed;
  uint64_t state = SplitMix64(mixer) ^ Fnv1a64(spec.tensor.name);
  const int64_t half_width = HalfWidth(spec.init.variance_denominator);
  const auto span = static_cast<uint64_t>(2 * half_width + 1);  // < 2^25, so draw32 · span < 2^57
  const int64_t offset = spec.init.around_one ? kGridOne : 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t draw32 = SplitMix64(state) >> 32;
    const auto k = static_cast<int64_t>((draw32 * span) >> 32) - half_width;  // uniform on [-R, R]
    values[i] = static_cast<float>(static_cast<int32_t>(offset + k)) * kGridStep;
  }
}

Result<RandomClipModelFiles> WriteRandomClipModel(const fs::path& dir, const RandomClipModelOptions& options) {
  const Json config_json = RandomClipConfigJson(options.arch, options.seed);
  RandomClipModelFiles files{dir / kConfigFileName, dir / kWeightsFileName, 0};
  VISALIGN_ASSIGN_OR_RETURN(ClipConfig config, ParseOpenClipConfig(config_json, files.config_file.string()));
  std::vector<RandomTensorSpec> specs = RandomTensorSpecs(config);
  std::map<std::string, const RandomTensorSpec*> by_name;
  std::vector<TensorShape> shapes;
  for (const RandomTensorSpec& spec : specs) {
    if (!RandomInitFitsGrid(spec.init)) {
      return Status::Internal("initialisation of \"" + spec.tensor.name + "\" does not fit the exact value grid");
    }
    by_name[spec.tensor.name] = &spec;
    shapes.push_back(spec.tensor);
    files.parameters += spec.tensor.NumElements();
  }
  VISALIGN_RETURN_IF_ERROR(CheckOutputDirectory(dir, options.overwrite));
  const std::map<std::string, std::string> metadata = {{"format", "pt"},
                                                       {"producer", kProducer},
                                                       {"arch", std::string(RandomClipArchName(options.arch))},
                                                       {"seed", std::to_string(options.seed)}};
  VISALIGN_RETURN_IF_ERROR(WriteSafetensors(
      files.weights_file, std::move(shapes),
      [&](const TensorShape& t, float* values) { FillRandomTensor(*by_name.at(t.name), options.seed, values); },
      metadata));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(files.config_file, config_json.dump(2) + "\n"));
  return files;
}

}  // namespace visalign::clip
