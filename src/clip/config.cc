#include "clip/config.h"

#include <cmath>
#include <regex>
#include <set>
#include <string>

#include <fmt/format.h>

#include "clip/config_fields.h"
#include "clip/sentencepiece_tokenizer.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip {

namespace {

using namespace config_internal;

namespace fs = std::filesystem;

constexpr int kOpenClipDefaultHeadWidth = 64;
constexpr double kDefaultMlpRatio = 4.0;
constexpr int kOpenClipDefaultTextHeads = 8;
constexpr int kOpenClipDefaultTextWidth = 512;
constexpr int kOpenClipDefaultTextLayers = 12;
constexpr int kOpenClipDefaultResNetWidth = 64;
constexpr int kOpenClipDefaultPoolerQueries = 256;  // CLIPVisionCfg attn_pooler_queries
constexpr int kOpenClipDefaultPoolerHeads = 8;      // CLIPVisionCfg attn_pooler_heads
constexpr int kResNetTotalStride = 32;              // stem 4, stages 2..4 x2 each

Result<PreprocessConfig> ParseOpenClipPreprocess(const Json* cfg, int image_size, const std::string& where) {
  PreprocessConfig p;
  p.image_size = image_size;
  p.mean = kOpenAiMean;
  p.std = kOpenAiStd;
  if (cfg == nullptr) return p;
  Fields f(*cfg, where);
  VISALIGN_ASSIGN_OR_RETURN(p.image_size, f.SquareSize("size", image_size));
  VISALIGN_ASSIGN_OR_RETURN(p.mean, Triple(*cfg, "mean", kOpenAiMean, where));
  VISALIGN_ASSIGN_OR_RETURN(p.std, Triple(*cfg, "std", kOpenAiStd, where));
  f.Ignore({"mean", "std", "fill_color"});
  VISALIGN_RETURN_IF_ERROR(f.Require("mode", {"RGB"}, "image mode"));
  VISALIGN_ASSIGN_OR_RETURN(std::string interpolation, f.String("interpolation", "bicubic"));
  if (interpolation == "bicubic") {
    p.interpolation = Interpolation::kBicubic;
  } else if (interpolation == "bilinear") {
    p.interpolation = Interpolation::kBilinear;
  } else {
    return Status::Unsupported("unsupported interpolation " + QuoteText(interpolation), where, "bicubic or bilinear");
  }
  VISALIGN_ASSIGN_OR_RETURN(std::string resize_mode, f.String("resize_mode", "shortest"));
  if (resize_mode == "shortest") {
    p.resize_mode = ResizeMode::kShortest;
  } else if (resize_mode == "squash") {
    p.resize_mode = ResizeMode::kSquash;
  } else {
    return Status::Unsupported("unsupported resize_mode " + QuoteText(resize_mode), where, "shortest or squash");
  }
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  VISALIGN_RETURN_IF_ERROR(CheckPreprocess(p, where));
  if (p.image_size != image_size) {
    return Status::InvalidArgument(
        fmt::format("preprocess size {} differs from the model image size {}", p.image_size, image_size), where,
        "the vision tower's image_size");
  }
  return p;
}

// OpenCLIP's ModifiedResNet: vision_cfg.layers is a list of four Bottleneck counts.
Result<VisionConfig> ParseOpenClipResNet(const Json& v, const std::string& where) {
  Fields f(v, where);
  VisionConfig c;
  c.tower = VisionTower::kModifiedResNet;
  f.Ignore({"layers"});
  VISALIGN_ASSIGN_OR_RETURN(c.resnet.layers, FourInts(v["layers"], "layers", where));
  VISALIGN_ASSIGN_OR_RETURN(c.image_size, f.SquareSize("image_size", 224));
  VISALIGN_ASSIGN_OR_RETURN(c.resnet.width, f.Int("width", kOpenClipDefaultResNetWidth));
  VISALIGN_ASSIGN_OR_RETURN(int head_width, f.Int("head_width", kOpenClipDefaultHeadWidth));
  if (c.resnet.feature_width() % head_width != 0 || c.resnet.width % 2 != 0) {
    return Status::InvalidArgument(fmt::format("width {} with head_width {}", c.resnet.width, head_width), where,
                                   "an even width with width * 32 divisible by head_width");
  }
  c.resnet.heads = c.resnet.feature_width() / head_width;
  if (c.image_size % kResNetTotalStride != 0) {
    return Status::InvalidArgument(fmt::format("image_size {}", c.image_size), where,
                                   fmt::format("a multiple of {} (the ResNet's total stride)", kResNetTotalStride));
  }
  // patch_size is null in OpenCLIP's RN configs and unused by the tower.
  f.Ignore({"patch_size", "patch_dropout", "output_tokens", "output_dim"});
  VISALIGN_RETURN_IF_ERROR(f.Require("act_kwargs", {}, "activation options"));
  VISALIGN_RETURN_IF_ERROR(f.Require("norm_kwargs", {}, "normalization options"));
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  return c;
}

Result<VisionConfig> ParseOpenClipVision(const Json& v, const std::string& where) {
  Fields f(v, where);
  if (f.Has("timm_model_name")) {
    // timm's SigLIP ViTs here, every other timm trunk (ConvNeXt, or a refusal naming its family) below.
    const std::string name = v["timm_model_name"].is_string() ? v["timm_model_name"].get<std::string>() : "";
    if (name.rfind("vit_", 0) == 0 && name.find("_siglip") != std::string::npos) return ParseTimmSiglipVision(v, where);
    if (name.rfind("eva", 0) == 0 || name.rfind("vit_pe_", 0) == 0 || IsTimmEvaName(name))
      return ParseTimmEva(v, where);
    if (name.rfind("vitamin", 0) == 0) return ParseTimmVitamin(v, where);
    if (name.rfind("fastvit_", 0) == 0) return ParseTimmFastVit(v, where);
    if (name == "vit_base_mci_224") return ParseTimmMciVit(v, where);
    return ParseOpenClipTimm(v, where);
  }
  if (f.Has("layers") && v["layers"].is_array()) return ParseOpenClipResNet(v, where);
  VisionConfig c;
  VISALIGN_ASSIGN_OR_RETURN(c.image_size, f.SquareSize("image_size", 224));
  VISALIGN_ASSIGN_OR_RETURN(c.layers, f.Int("layers", 12));
  VISALIGN_ASSIGN_OR_RETURN(c.width, f.Int("width", 768));
  VISALIGN_ASSIGN_OR_RETURN(int head_width, f.Int("head_width", kOpenClipDefaultHeadWidth));
  VISALIGN_ASSIGN_OR_RETURN(c.patch_size, f.SquareSize("patch_size", 16));
  VISALIGN_ASSIGN_OR_RETURN(double mlp_ratio, f.Number("mlp_ratio", kDefaultMlpRatio));
  VISALIGN_ASSIGN_OR_RETURN(bool no_ln_pre, f.Bool("no_ln_pre", false));
  c.ln_pre = !no_ln_pre;
  if (c.width % head_width != 0) {
    return Status::InvalidArgument(fmt::format("width {} is not divisible by head_width {}", c.width, head_width),
                                   where, "width = heads * head_width");
  }
  c.heads = c.width / head_width;
  VISALIGN_ASSIGN_OR_RETURN(c.mlp_width, MlpWidth(c.width, mlp_ratio, where));
  VISALIGN_ASSIGN_OR_RETURN(std::string pool_type, f.String("pool_type", "tok"));
  if (pool_type != "tok" && pool_type != "avg") {
    return Status::Unsupported("unsupported vision pool_type " + QuoteText(pool_type), where, "tok or avg");
  }
  c.pooling = pool_type == "avg" ? Pooling::kAverage : Pooling::kClassToken;
  VISALIGN_ASSIGN_OR_RETURN(c.final_ln_after_pool, f.Bool("final_ln_after_pool", false));
  VISALIGN_RETURN_IF_ERROR(CheckPatchGrid(c, where));
  VISALIGN_RETURN_IF_ERROR(f.Require("ls_init_value", {}, "LayerScale"));
  // CoCa: OpenCLIP's original attentional pooler (true); the 'parallel' / 'cascade' variants are not.
  VISALIGN_RETURN_IF_ERROR(f.Require("attentional_pool", {false, true}, "attentional pooler variant (CoCa: true)"));
  c.attentional_pool = f.Has("attentional_pool") && v["attentional_pool"] == true;
  if (c.attentional_pool) {
    VISALIGN_ASSIGN_OR_RETURN(c.pool_queries, f.Int("attn_pooler_queries", kOpenClipDefaultPoolerQueries));
    VISALIGN_ASSIGN_OR_RETURN(c.pool_heads, f.Int("attn_pooler_heads", kOpenClipDefaultPoolerHeads));
    if (c.pooling != Pooling::kClassToken) {
      return Status::Unsupported("unsupported vision pool_type " + QuoteText(pool_type) + " with attentional_pool",
                                 where, "tok (CoCa's embedding is the pooler's first query)");
    }
  }
  VISALIGN_RETURN_IF_ERROR(f.Require("global_average_pool", {false}, "global average pooling"));
  VISALIGN_RETURN_IF_ERROR(f.Require("pos_embed_type", {"learnable"}, "positional embedding type"));
  VISALIGN_RETURN_IF_ERROR(f.Require("proj_type", {"linear"}, "vision projection type"));
  VISALIGN_RETURN_IF_ERROR(f.Require("proj_bias", {false}, "vision projection bias"));
  VISALIGN_RETURN_IF_ERROR(f.Require("input_patchnorm", {false}, "input patch norm"));
  VISALIGN_RETURN_IF_ERROR(f.Require("act_kwargs", {}, "activation options"));
  VISALIGN_RETURN_IF_ERROR(f.Require("norm_kwargs", {}, "normalization options"));
  // final_ln_after_pool is ignored by OpenCLIP with the attentional pooler (ln_post follows the pooler).
  f.Ignore({"patch_dropout", "output_tokens", "attn_pooler_queries", "attn_pooler_heads", "n_queries", "embed_cls",
            "output_dim"});
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  return c;
}

// norm_kwargs: absent (eps 1e-5) or {"eps": x}.
Result<float> LayerNormEps(const Json& cfg, const std::string& where) {
  if (!cfg.contains("norm_kwargs") || cfg["norm_kwargs"].is_null()) return 1e-5f;
  const Json& n = cfg["norm_kwargs"];
  const std::optional<float> eps =
      n.is_object() && n.size() == 1 && n.contains("eps") ? FloatValue(n["eps"]) : std::nullopt;
  if (!eps || !(*eps > 0)) {
    return Status::Unsupported("unsupported normalization options (norm_kwargs = " + QuoteJson(n) + ")", where,
                               "{\"eps\": positive number}");
  }
  return *eps;
}

// act_kwargs: absent / {} (the model's activation), or nn.GELU's {"approximate": "tanh" | "none"}.
Result<std::optional<Activation>> TextActivation(const Json& cfg, const std::string& where) {
  if (!cfg.contains("act_kwargs") || cfg["act_kwargs"].is_null() || cfg["act_kwargs"] == Json::object()) {
    return std::optional<Activation>();
  }
  const Json& a = cfg["act_kwargs"];
  const std::string approximate = a.is_object() && a.size() == 1 ? StringMember(a, "approximate") : "";
  if (approximate == "tanh") return std::optional<Activation>(Activation::kGeluTanh);
  if (approximate == "none") return std::optional<Activation>(Activation::kGelu);
  return Status::Unsupported("unsupported text activation options (act_kwargs = " + QuoteJson(a) + ")", where,
                             "{\"approximate\": \"tanh\"} (SigLIP2) or {\"approximate\": \"none\"}");
}

// open_clip HFTokenizer's tokenizer_kwargs: clean ('whitespace', its default, or 'canonicalize') and
// strip_sep_token (tokenizer->add_eos false).
Status ParseHfTokenizerKwargs(const Json& t, const std::string& where, TokenizerConfig* tokenizer) {
  tokenizer->cleaning = TextCleaning::kOpenClipWhitespace;
  if (!t.contains("tokenizer_kwargs") || t["tokenizer_kwargs"].is_null()) return Status::Ok();
  const std::string kwargs_where = where + " tokenizer_kwargs";
  if (!t["tokenizer_kwargs"].is_object()) {
    return Status::InvalidArgument("field \"tokenizer_kwargs\" is " + QuoteJson(t["tokenizer_kwargs"]), where,
                                   "an object");
  }
  Fields f(t["tokenizer_kwargs"], kwargs_where);
  VISALIGN_ASSIGN_OR_RETURN(std::string clean, f.String("clean", "whitespace"));
  if (clean == "canonicalize") {
    tokenizer->cleaning = TextCleaning::kOpenClipCanonicalize;
  } else if (clean != "whitespace") {
    return Status::Unsupported("unsupported tokenizer clean " + QuoteText(clean), kwargs_where,
                               "whitespace (HFTokenizer's default) or canonicalize (SigLIP)");
  }
  VISALIGN_ASSIGN_OR_RETURN(bool strip_sep, f.Bool("strip_sep_token", false));
  tokenizer->add_eos = !strip_sep;
  return f.CheckAllUsed();
}

// `tokenizer` receives the text_cfg's Hugging Face tokenizer name ("" = CLIP's BPE) and options.
Result<TextConfig> ParseOpenClipText(const Json& t, const std::string& where, TokenizerConfig* tokenizer) {
  Fields f(t, where);
  if (f.Has("hf_model_name")) {
    return Status::Unsupported(
        "unsupported Hugging Face text tower (hf_model_name = " + QuoteJson(t["hf_model_name"]) + ")", where,
        "OpenCLIP's own text transformer (CLIP or SigLIP)");
  }
  TextConfig c;
  VISALIGN_ASSIGN_OR_RETURN(c.context_length, f.Int("context_length", kDefaultContextLength));
  VISALIGN_ASSIGN_OR_RETURN(c.vocab_size, f.Int("vocab_size", kDefaultVocabSize));
  VISALIGN_ASSIGN_OR_RETURN(c.width, f.Int("width", kOpenClipDefaultTextWidth));
  VISALIGN_ASSIGN_OR_RETURN(c.heads, f.Int("heads", kOpenClipDefaultTextHeads));
  VISALIGN_ASSIGN_OR_RETURN(c.layers, f.Int("layers", kOpenClipDefaultTextLayers));
  VISALIGN_ASSIGN_OR_RETURN(double mlp_ratio, f.Number("mlp_ratio", kDefaultMlpRatio));
  VISALIGN_ASSIGN_OR_RETURN(c.mlp_width, MlpWidth(c.width, mlp_ratio, where));
  VISALIGN_RETURN_IF_ERROR(CheckHeads(c, where));
  VISALIGN_RETURN_IF_ERROR(f.Require("ls_init_value", {}, "LayerScale"));
  VISALIGN_ASSIGN_OR_RETURN(std::string pool_type, f.String("pool_type", "argmax"));
  if (pool_type == "argmax") {
    c.pooling = Pooling::kArgmax;
  } else if (pool_type == "last") {
    c.pooling = Pooling::kLast;
  } else if (pool_type == "eos") {  // MetaCLIP 2: the first eos_id
    c.pooling = Pooling::kEos;
    if (!f.Has("eos_id"))
      return Status::InvalidArgument("pool_type \"eos\" without eos_id", where, "an integer eos_id");
  } else {
    return Status::Unsupported("unsupported text pool_type " + QuoteText(pool_type), where, "argmax, last or eos");
  }
  VISALIGN_ASSIGN_OR_RETURN(c.eos_id, f.Int("eos_id", kEndOfText));
  VISALIGN_ASSIGN_OR_RETURN(c.final_ln_after_pool, f.Bool("final_ln_after_pool", false));
  VISALIGN_ASSIGN_OR_RETURN(bool no_causal_mask, f.Bool("no_causal_mask", false));
  c.causal = !no_causal_mask;
  VISALIGN_ASSIGN_OR_RETURN(c.projection_bias, f.Bool("proj_bias", false));
  // CoCa: a cls embedding appended and pooled, LayerNorm after pooling; pool_type is then ignored.
  VISALIGN_ASSIGN_OR_RETURN(c.embed_cls, f.Bool("embed_cls", false));
  if (c.embed_cls) {
    if (!c.causal) {
      return Status::Unsupported("unsupported embed_cls with no_causal_mask", where, "CoCa's causal text tower");
    }
    c.pooling = Pooling::kLast;
    c.final_ln_after_pool = true;
  }
  VISALIGN_RETURN_IF_ERROR(f.Require("proj_type", {"linear", "none"}, "text projection type"));
  c.projection = !(f.Has("proj_type") && t["proj_type"] == "none");
  VISALIGN_RETURN_IF_ERROR(f.Require("pad_id", {0}, "pad_id other than 0"));
  VISALIGN_ASSIGN_OR_RETURN(tokenizer->hf_name, f.String("hf_tokenizer_name", ""));
  if (!tokenizer->hf_name.empty()) {
    VISALIGN_RETURN_IF_ERROR(ParseHfTokenizerKwargs(t, where, tokenizer));
    f.Ignore({"tokenizer_kwargs"});
  } else {
    VISALIGN_RETURN_IF_ERROR(f.Require("tokenizer_kwargs", {}, "tokenizer options"));
  }
  // SigLIP2 sets act_kwargs {approximate: tanh}: nn.GELU(approximate='tanh') in the text blocks.
  VISALIGN_ASSIGN_OR_RETURN(c.activation, TextActivation(t, where));
  VISALIGN_ASSIGN_OR_RETURN(c.layer_norm_eps, LayerNormEps(t, where));
  f.Ignore({"output_tokens", "output_dim", "norm_kwargs", "act_kwargs"});
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  return c;
}

// The record WriteRandomClipModel leaves in the config: {"arch": name, "seed": N, "note": text}.
Status ParseRandomModelRecord(const Json& record, const std::string& where, ClipConfig& c) {
  if (!record.is_object()) {
    return Status::InvalidArgument("field is " + QuoteJson(record), where, "an object {\"arch\", \"seed\"}");
  }
  Fields f(record, where);
  VISALIGN_ASSIGN_OR_RETURN(c.random_arch, f.String("arch", ""));
  if (c.random_arch.empty()) return Status::InvalidArgument("missing field \"arch\"", where, "the architecture name");
  if (!record.contains("seed") || !record["seed"].is_number_unsigned()) {
    return Status::InvalidArgument("field \"seed\" is " + QuoteJson(record.value("seed", Json())), where,
                                   "a non-negative integer");
  }
  c.random_seed = record["seed"].get<uint64_t>();
  c.random = true;
  f.Ignore({"seed", "note"});
  return f.CheckAllUsed();
}

Result<std::filesystem::path> FirstExisting(const fs::path& dir, std::initializer_list<const char*> names,
                                            const std::string& what) {
  for (const char* n : names) {
    if (fs::is_regular_file(dir / n)) return dir / n;
  }
  std::string list;
  for (const char* n : names) list += (list.empty() ? "" : " or ") + std::string(n);
  return Status::NotFound("no " + what + " in model directory", dir.string(), list);
}

Result<Json> ReadJson(const fs::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  auto j = ParseJson(text);
  if (!j.ok()) return Status::InvalidArgument(j.status().what(), path.string(), "a valid JSON config file");
  if (!j->is_object()) return Status::InvalidArgument("not a JSON object", path.string(), "a valid JSON config file");
  return std::move(*j);
}

}  // namespace

Result<ClipConfig> ParseOpenClipConfig(const Json& j, const std::string& source) {
  const bool wrapped = j.contains("model_cfg");
  const Json& model = wrapped ? j["model_cfg"] : j;
  const std::string where = source + (wrapped ? " model_cfg" : "");
  if (!model.is_object()) return Status::InvalidArgument("model_cfg is not an object", source, "a JSON object");
  Fields f(model, where);
  ClipConfig c;
  c.sigmoid_logits = f.Has("init_logit_bias");
  c.layout = CheckpointLayout::kOpenClip;
  VISALIGN_ASSIGN_OR_RETURN(c.embed_dim, f.Int("embed_dim", std::nullopt));
  VISALIGN_ASSIGN_OR_RETURN(bool quick_gelu, f.Bool("quick_gelu", false));
  c.activation = quick_gelu ? Activation::kQuickGelu : Activation::kGelu;
  VISALIGN_ASSIGN_OR_RETURN(const Json* vision, Object(model, "vision_cfg", where));
  VISALIGN_ASSIGN_OR_RETURN(const Json* text, Object(model, "text_cfg", where));
  // CoCa's multimodal_cfg describes its captioning decoder, which no embedding uses (docs/clip.md, CoCa);
  // its weights (text_decoder.*) are skipped at load.
  if (f.Has("multimodal_cfg") && !model["multimodal_cfg"].is_object()) {
    return Status::InvalidArgument("field \"multimodal_cfg\" is " + QuoteJson(model["multimodal_cfg"]), where,
                                   "an object (CoCa's decoder config)");
  }
  f.Ignore({"vision_cfg", "text_cfg", "cast_dtype", "init_logit_scale", "nonscalar_logit_scale", "init_logit_bias",
            "multimodal_cfg"});
  VISALIGN_ASSIGN_OR_RETURN(c.custom_text, f.Bool("custom_text", false));
  VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  VISALIGN_ASSIGN_OR_RETURN(c.vision, ParseOpenClipVision(*vision, where + " vision_cfg"));
  VISALIGN_ASSIGN_OR_RETURN(c.text, ParseOpenClipText(*text, where + " text_cfg", &c.tokenizer));
  if (!c.text.projection && c.text.width != c.embed_dim) {
    return Status::InvalidArgument(
        fmt::format("text width {} without a projection differs from embed_dim {}", c.text.width, c.embed_dim), where,
        "embed_dim equal to the text width (proj_type none)");
  }
  if (!c.vision.projection && c.vision.width != c.embed_dim) {
    return Status::InvalidArgument(
        fmt::format("vision width {} without a projection differs from embed_dim {}", c.vision.width, c.embed_dim),
        where, "embed_dim equal to the timm tower's width (timm_proj none)");
  }
  if (c.vision.attentional_pool && c.embed_dim % c.vision.pool_heads != 0) {
    return Status::InvalidArgument(
        fmt::format("embed_dim {} is not divisible by attn_pooler_heads {}", c.embed_dim, c.vision.pool_heads),
        where + " vision_cfg", "attn_pooler_heads dividing embed_dim (the pooler's width)");
  }
  const Json* pre =
      wrapped && j.contains("preprocess_cfg") && j["preprocess_cfg"].is_object() ? &j["preprocess_cfg"] : nullptr;
  VISALIGN_ASSIGN_OR_RETURN(c.preprocess,
                            ParseOpenClipPreprocess(pre, c.vision.image_size, source + " preprocess_cfg"));
  if (wrapped && j.contains(kRandomModelConfigKey)) {
    VISALIGN_RETURN_IF_ERROR(ParseRandomModelRecord(j[kRandomModelConfigKey], source + " " + kRandomModelConfigKey, c));
  }
  VISALIGN_RETURN_IF_ERROR(CheckSizesFit(c, where));
  return c;
}

Result<ClipConfig> ParseOpenClipConfigJson(std::string_view config_json, const std::string& source) {
  auto j = ParseJson(config_json);
  if (!j.ok()) return Status::InvalidArgument(j.status().what(), source, "an OpenCLIP model config (JSON)");
  if (!j->is_object()) return Status::InvalidArgument("not a JSON object", source, "an OpenCLIP model config (JSON)");
  return ParseOpenClipConfig(*j, source);
}

Result<ClipConfig> ReadClipConfig(const fs::path& dir) {
  if (!fs::is_directory(dir)) {
    return Status::NotFound("model directory does not exist", dir.string(),
                            "a directory with open_clip_config.json or config.json and *.safetensors or *.bin weights");
  }
  VISALIGN_ASSIGN_OR_RETURN(fs::path config_file,
                            FirstExisting(dir, {"open_clip_config.json", "config.json"}, "config"));
  VISALIGN_ASSIGN_OR_RETURN(fs::path weights_file, FirstExisting(dir,
                                                                 {"open_clip_model.safetensors", "model.safetensors",
                                                                  "open_clip_pytorch_model.bin", "pytorch_model.bin"},
                                                                 "weights"));
  VISALIGN_ASSIGN_OR_RETURN(Json j, ReadJson(config_file));
  Result<ClipConfig> config = Status::Internal("unparsed");
  if (j.contains("vision_config") || j.contains("text_config")) {
    Json preprocessor;
    if (fs::is_regular_file(dir / "preprocessor_config.json")) {
      VISALIGN_ASSIGN_OR_RETURN(preprocessor, ReadJson(dir / "preprocessor_config.json"));
    }
    config = ParseHuggingFaceConfig(j, preprocessor, config_file.string());
  } else {
    config = ParseOpenClipConfig(j, config_file.string());
  }
  if (!config.ok()) return config.status();
  if (config->tokenizer.kind == TokenizerKind::kSentencePiece || !config->tokenizer.hf_name.empty()) {
    VISALIGN_RETURN_IF_ERROR(ResolveHfTokenizer(dir, *config));
  }
  config->config_file = config_file;
  config->weights_file = weights_file;
  return config;
}

Result<ClipConfig> ReadClipModelConfig(const fs::path& dir) { return ReadClipConfig(dir); }

std::string HubSourceOf(const fs::path& config_file) {
  Result<Json> j = ReadJson(config_file);
  if (!j.ok()) return "";
  const auto source = j->find(kHubSourceConfigKey);
  return source != j->end() && source->is_string() ? source->get<std::string>() : "";
}

std::string_view VisionTowerName(VisionTower tower) {
  switch (tower) {
    case VisionTower::kViT:
      return "ViT";
    case VisionTower::kModifiedResNet:
      return "ModifiedResNet";
    case VisionTower::kConvNext:
      return "ConvNeXt (timm)";
    case VisionTower::kFastVit:
      return "FastViT MCi (timm)";
  }
  return "unknown";
}

std::string RandomWeightsLabel(const ClipConfig& config) {
  if (!config.random) return "";
  return fmt::format("RANDOM (visalign clip random-model, arch {}, seed {}): its numbers mean nothing",
                     config.random_arch, config.random_seed);
}

Json RandomWeightsJson(const ClipConfig& config) {
  if (!config.random) return nullptr;
  return {{"arch", config.random_arch}, {"seed", config.random_seed}, {"label", RandomWeightsLabel(config)}};
}

std::string PreprocessFingerprintText(const PreprocessConfig& p) {
  return fmt::format("size={};resize={};interpolation={};mean={:.9g},{:.9g},{:.9g};std={:.9g},{:.9g},{:.9g}",
                     p.image_size, p.resize_mode == ResizeMode::kShortest ? "shortest" : "squash",
                     p.interpolation == Interpolation::kBicubic ? "bicubic" : "bilinear", p.mean[0], p.mean[1],
                     p.mean[2], p.std[0], p.std[1], p.std[2]);
}

}  // namespace visalign::clip
