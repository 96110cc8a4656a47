// Hugging Face transformers checkpoints (`config.json` with vision_config/text_config): CLIPModel
// and SiglipModel, mapped onto the same towers as the OpenCLIP layouts (docs/clip.md).
#include <fmt/format.h>

#include <string>

#include "clip/config.h"
#include "clip/config_fields.h"

namespace visalign::clip {
namespace {

using namespace config_internal;

constexpr std::array<float, 3> kSiglipMeanStd{0.5f, 0.5f, 0.5f};

// hidden_act; `fallback` when absent (CLIPConfig: quick_gelu, SiglipConfig: gelu_pytorch_tanh).
Result<Activation> HfActivation(Fields& f, const std::string& fallback) {
  VISALIGN_ASSIGN_OR_RETURN(std::string act, f.String("hidden_act", fallback));
  if (act == "quick_gelu") return Activation::kQuickGelu;
  if (act == "gelu") return Activation::kGelu;
  // transformers' gelu_pytorch_tanh and gelu_new compute the same tanh approximation.
  if (act == "gelu_pytorch_tanh" || act == "gelu_new") return Activation::kGeluTanh;
  return Status::Unsupported("unsupported activation " + QuoteText(act), f.where(),
                             "gelu, quick_gelu or gelu_pytorch_tanh");
}

// Keys of transformers' PretrainedConfig that do not affect a CLIP forward pass.
void IgnoreHfCommon(Fields& f) {
  f.Ignore({"_name_or_path",
            "model_type",
            "architectures",
            "torch_dtype",
            "transformers_version",
            "initializer_range",
            "initializer_factor",
            "attention_dropout",
            "dropout",
            "projection_dim",
            "bos_token_id",
            "eos_token_id",
            "pad_token_id",
            "return_dict",
            "output_hidden_states",
            "output_attentions",
            "torchscript",
            "use_bfloat16",
            "tie_word_embeddings",
            "is_encoder_decoder",
            "is_decoder",
            "add_cross_attention",
            "tie_encoder_decoder",
            "chunk_size_feed_forward",
            "pruned_heads",
            "id2label",
            "label2id",
            "problem_type",
            "tokenizer_class",
            "prefix",
            "sep_token_id",
            "decoder_start_token_id",
            "task_specific_params",
            "finetuning_task",
            "cross_attention_hidden_size",
            "max_length",
            "min_length",
            "do_sample",
            "early_stopping",
            "num_beams",
            "num_beam_groups",
            "diversity_penalty",
            "temperature",
            "top_k",
            "top_p",
            "typical_p",
            "repetition_penalty",
            "length_penalty",
            "no_repeat_ngram_size",
            "encoder_no_repeat_ngram_size",
            "bad_words_ids",
            "num_return_sequences",
            "output_scores",
            "return_dict_in_generate",
            "forced_bos_token_id",
            "forced_eos_token_id",
            "remove_invalid_values",
            "exponential_decay_length_penalty",
            "suppress_tokens",
            "begin_suppress_tokens",
            "gradient_checkpointing"});
}

// A tower's defaults where config.json leaves fields out (nullopt: required). transformers'
// CLIPVisionConfig/CLIPTextConfig fields are all written by the CLIP conversions; SigLIP hub configs
// list only what differs from SiglipVisionConfig/SiglipTextConfig.
struct HfTowerDefaults {
  std::optional<int> width, mlp_width, heads, layers;
  double layer_norm_eps;
  std::string activation;
};
constexpr double kHfClipLayerNormEps = 1e-5;
const HfTowerDefaults kHfClipTower{std::nullopt, std::nullopt,        std::nullopt,
                                   std::nullopt, kHfClipLayerNormEps, "quick_gelu"};
const HfTowerDefaults kHfSiglipTower{768, 3072, 12, 12, 1e-6, "gelu_pytorch_tanh"};
constexpr int kHfSiglipImageSize = 224;
constexpr int kHfSiglipPatchSize = 16;
constexpr int kHfSiglipContextLength = 64;
constexpr int kHfSiglipVocabSize = 32000;

Result<TowerConfig> ParseHfTower(Fields& f, Activation* activation, const HfTowerDefaults& d) {
  TowerConfig t;
  VISALIGN_ASSIGN_OR_RETURN(t.width, f.Int("hidden_size", d.width));
  VISALIGN_ASSIGN_OR_RETURN(t.mlp_width, f.Int("intermediate_size", d.mlp_width));
  VISALIGN_ASSIGN_OR_RETURN(t.heads, f.Int("num_attention_heads", d.heads));
  VISALIGN_ASSIGN_OR_RETURN(t.layers, f.Int("num_hidden_layers", d.layers));
  VISALIGN_ASSIGN_OR_RETURN(t.layer_norm_eps, f.Epsilon("layer_norm_eps", static_cast<float>(d.layer_norm_eps)));
  VISALIGN_ASSIGN_OR_RETURN(*activation, HfActivation(f, d.activation));
  VISALIGN_RETURN_IF_ERROR(CheckHeads(t, f.where()));
  IgnoreHfCommon(f);
  return t;
}

// Both towers' activation must agree (ClipConfig has one).
Status SameActivation(Activation vision, Activation text, const std::string& source) {
  if (vision == text) return Status::Ok();
  return Status::Unsupported("different activations in the vision and text towers", source,
                             "the same hidden_act in vision_config and text_config");
}

// Both towers of a transformers config (`vision_config`, `text_config`) with the fields every tower
// has (ParseHfTower with `d`); `vision_fields` and `text_fields` read the rest of each, and every
// field must then be used. The towers' activation becomes c.activation.
template <typename VisionFields, typename TextFields>
Status ParseHfTowers(const Json& j, const std::string& source, const HfTowerDefaults& d, ClipConfig& c,
                     VisionFields vision_fields, TextFields text_fields) {
  VISALIGN_ASSIGN_OR_RETURN(const Json* vision, Object(j, "vision_config", source));
  VISALIGN_ASSIGN_OR_RETURN(const Json* text, Object(j, "text_config", source));
  Activation vision_act{}, text_act{};
  {
    Fields f(*vision, source + " vision_config");
    VISALIGN_ASSIGN_OR_RETURN(TowerConfig t, ParseHfTower(f, &vision_act, d));
    static_cast<TowerConfig&>(c.vision) = t;
    VISALIGN_RETURN_IF_ERROR(vision_fields(f));
    VISALIGN_RETURN_IF_ERROR(CheckPatchGrid(c.vision, f.where()));
    VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  }
  {
    Fields f(*text, source + " text_config");
    VISALIGN_ASSIGN_OR_RETURN(TowerConfig t, ParseHfTower(f, &text_act, d));
    static_cast<TowerConfig&>(c.text) = t;
    VISALIGN_RETURN_IF_ERROR(text_fields(f));
    VISALIGN_RETURN_IF_ERROR(f.CheckAllUsed());
  }
  VISALIGN_RETURN_IF_ERROR(SameActivation(vision_act, text_act, source));
  c.activation = vision_act;
  return Status::Ok();
}

Status ParseHfPreprocessor(const Json& preprocessor, PreprocessConfig& p) {
  if (!preprocessor.is_object()) return Status::Ok();
  const std::string where = "preprocessor_config.json";
  VISALIGN_ASSIGN_OR_RETURN(p.mean, Triple(preprocessor, "image_mean", p.mean, where));
  VISALIGN_ASSIGN_OR_RETURN(p.std, Triple(preprocessor, "image_std", p.std, where));
  if (preprocessor.contains("resample") && preprocessor["resample"] != 3) {
    return Status::Unsupported("unsupported resample " + QuoteJson(preprocessor["resample"]), where, "3 (PIL bicubic)");
  }
  return CheckPreprocess(p, where);
}

// transformers SiglipModel onto the OpenCLIP SigLIP towers: the vision tower is timm's (no class
// token, no pre-norm, post_layernorm on all tokens, the MultiheadAttention pooling head = timm's
// AttentionPoolLatent), the text tower bidirectional and pooled at the LAST position (HF pools
// last_hidden_state[:, -1]; with the processor's padding="max_length" that is OpenCLIP's row
// context_length - 1), then its head (Linear with bias). Preprocessing: SiglipImageProcessor's
// resize to size x size (squash), bicubic, mean = std = 0.5.
Result<ClipConfig> ParseHfSiglip(const Json& j, const Json& preprocessor, const std::string& source) {
  ClipConfig c;
  c.layout = CheckpointLayout::kHuggingFace;
  c.sigmoid_logits = true;
  auto vision_fields = [&c](Fields& f) -> Status {
    VISALIGN_ASSIGN_OR_RETURN(c.vision.image_size, f.Int("image_size", kHfSiglipImageSize));
    VISALIGN_ASSIGN_OR_RETURN(c.vision.patch_size, f.Int("patch_size", kHfSiglipPatchSize));
    VISALIGN_RETURN_IF_ERROR(f.Require("num_channels", {3}, "non-RGB input"));
    VISALIGN_RETURN_IF_ERROR(f.Require("vision_use_head", {true}, "SigLIP vision tower without its pooling head"));
    c.vision.pooling = Pooling::kAttentionPool;
    c.vision.ln_pre = false;
    c.vision.class_token = false;
    c.vision.projection = false;
    return Status::Ok();
  };
  auto text_fields = [&c](Fields& f) -> Status {
    VISALIGN_ASSIGN_OR_RETURN(c.text.context_length, f.Int("max_position_embeddings", kHfSiglipContextLength));
    VISALIGN_ASSIGN_OR_RETURN(c.text.vocab_size, f.Int("vocab_size", kHfSiglipVocabSize));
    VISALIGN_ASSIGN_OR_RETURN(c.embed_dim, f.Int("projection_size", c.text.width));
    c.text.pooling = Pooling::kLast;
    c.text.causal = false;
    c.text.projection_bias = true;
    return Status::Ok();
  };
  VISALIGN_RETURN_IF_ERROR(ParseHfTowers(j, source, kHfSiglipTower, c, vision_fields, text_fields));
  if (c.embed_dim != c.vision.width) {
    return Status::InvalidArgument(
        fmt::format("text projection_size {} differs from the vision hidden_size {}", c.embed_dim, c.vision.width),
        source, "equal widths (the vision head has no projection)");
  }
  c.tokenizer.kind = TokenizerKind::kSentencePiece;  // the checkpoint's spiece.model (ReadClipConfig resolves it)
  c.preprocess.image_size = c.vision.image_size;
  c.preprocess.resize_mode = ResizeMode::kSquash;
  c.preprocess.mean = kSiglipMeanStd;
  c.preprocess.std = kSiglipMeanStd;
  VISALIGN_RETURN_IF_ERROR(ParseHfPreprocessor(preprocessor, c.preprocess));
  VISALIGN_RETURN_IF_ERROR(CheckSizesFit(c, source));
  return c;
}

}  // namespace

Result<ClipConfig> ParseHuggingFaceConfig(const Json& j, const Json& preprocessor, const std::string& source) {
  Fields top(j, source);
  VISALIGN_ASSIGN_OR_RETURN(std::string model_type, top.String("model_type", "clip"));
  if (model_type == "siglip") return ParseHfSiglip(j, preprocessor, source);
  if (model_type == "siglip2") {
    return Status::Unsupported(
        "unsupported Hugging Face siglip2 checkpoint (Siglip2Model: NaFlex patch embedding, Gemma "
        "tokenizer)",
        source, "a CLIPModel or SiglipModel checkpoint, or hues run --embeddings");
  }
  ClipConfig c;
  c.layout = CheckpointLayout::kHuggingFace;
  VISALIGN_ASSIGN_OR_RETURN(c.embed_dim, top.Int("projection_dim", 512));
  auto vision_fields = [&c](Fields& f) -> Status {
    VISALIGN_ASSIGN_OR_RETURN(c.vision.image_size, f.Int("image_size", std::nullopt));
    VISALIGN_ASSIGN_OR_RETURN(c.vision.patch_size, f.Int("patch_size", std::nullopt));
    VISALIGN_RETURN_IF_ERROR(f.Require("num_channels", {3}, "non-RGB input"));
    c.vision.pooling = Pooling::kClassToken;
    return Status::Ok();
  };
  auto text_fields = [&c](Fields& f) -> Status {
    VISALIGN_ASSIGN_OR_RETURN(c.text.context_length, f.Int("max_position_embeddings", kDefaultContextLength));
    VISALIGN_ASSIGN_OR_RETURN(c.text.vocab_size, f.Int("vocab_size", kDefaultVocabSize));
    c.text.pooling = Pooling::kArgmax;
    return Status::Ok();
  };
  VISALIGN_RETURN_IF_ERROR(ParseHfTowers(j, source, kHfClipTower, c, vision_fields, text_fields));
  c.preprocess.image_size = c.vision.image_size;
  c.preprocess.mean = kOpenAiMean;
  c.preprocess.std = kOpenAiStd;
  VISALIGN_RETURN_IF_ERROR(ParseHfPreprocessor(preprocessor, c.preprocess));
  VISALIGN_RETURN_IF_ERROR(CheckSizesFit(c, source));
  return c;
}

}  // namespace visalign::clip
