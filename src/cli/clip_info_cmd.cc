// `visalign clip info`: the architecture, tokenizer, preprocessing, precision and fingerprint of a
// CLIP model, as JSON or one line per part.
#include <fmt/format.h>

#include <array>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>

#include "cli/cli.h"
#include "cli/clip_model_option.h"
#include "visalign/clip.h"

namespace visalign::cli {
namespace {

using namespace visalign::clip;

std::string_view ActivationName(Activation a) {
  switch (a) {
    case Activation::kGelu:
      return "gelu";
    case Activation::kQuickGelu:
      return "quick_gelu";
    case Activation::kGeluTanh:
      return "gelu_tanh";
  }
  return "gelu";
}

Json TowerJson(const TowerConfig& t) {
  Json j = {{"width", t.width},
            {"layers", t.layers},
            {"heads", t.heads},
            {"mlp_width", t.mlp_width},
            {"layer_norm_eps", FloatJson(t.layer_norm_eps)}};
  // Where the tower fixes its own activation (SigLIP2's tanh GELU), else the model's "activation".
  if (t.activation) j["activation"] = ActivationName(*t.activation);
  return j;
}

// The tower type a model uses, as `clip info` names it.
std::string VisionTowerText(const VisionConfig& v) {
  if (v.tower != VisionTower::kViT) return std::string(VisionTowerName(v.tower));
  if (v.eva.enabled) {
    if (v.pooling == Pooling::kAttentionPool) return "timm PE-Core ViT ('xy' RoPE), MAP attention-pool head";
    if (v.eva.post_norm) return "timm EVA02-E ViT (residual post-norm), class token";
    if (v.eva.rope) return "timm EVA02 ViT (RoPE, sub-LN, SwiGLU), class token";
    return v.ln_pre ? "timm ViT (CLIP layout, norm_pre), class token" : "timm EVA01 ViT, class token";
  }
  if (v.attentional_pool) return "ViT, attentional pooler (CoCa), first query";
  if (v.vitamin.enabled) {
    return std::string("timm ViTamin: conv stem, MbConv-LN stages, ViT with GeGLU MLPs, mean of the tokens, fc_norm") +
           (v.vitamin.pos_embed ? "" : ", no positional embedding");
  }
  if (v.pooling == Pooling::kAttentionPool) return "timm ViT, MAP attention-pool head (SigLIP)";
  if (v.mci_conv_stem) return "timm MCi ViT, ConvStem patch embedding, class token (MobileCLIP-B)";
  if (v.pooling == Pooling::kAverage) {
    return v.final_ln_after_pool ? "ViT, mean of the patch tokens, ln_post after pooling (CLIPA)"
                                 : "ViT, mean of the patch tokens";
  }
  return "ViT, class token";
}

// The vision tower: its type ("tower") and its shape.
Json VisionJson(const VisionConfig& v) {
  Json j;
  switch (v.tower) {
    case VisionTower::kViT:
      j = TowerJson(v);
      j["patch_size"] = v.patch_size;
      j["ln_pre"] = v.ln_pre;
      if (v.vitamin.enabled) {
        j["vitamin"] = {{"stem_width", v.vitamin.stem_width},
                        {"stage_widths", v.vitamin.stage_widths},
                        {"stage_depths", v.vitamin.stage_depths},
                        {"grid", v.grid()},
                        {"pos_embed", v.vitamin.pos_embed}};
      }
      break;
    case VisionTower::kModifiedResNet:
      j = {{"layers", v.resnet.layers},
           {"width", v.resnet.width},
           {"heads", v.resnet.heads},
           {"feature_width", v.resnet.feature_width()}};
      break;
    case VisionTower::kConvNext:
      j = {{"timm_model_name", v.convnext.timm_model_name},
           {"depths", v.convnext.depths},
           {"dims", v.convnext.dims},
           {"norm_eps", FloatJson(v.convnext.norm_eps)},
           {"projection", v.convnext.projection == ConvNextProjection::kLinear ? "linear" : "mlp"},
           {"projection_bias", v.convnext.projection_bias}};
      break;
    case VisionTower::kFastVit: {
      Json stages = Json::array();
      for (const FastVitStageConfig& s : v.fastvit.stages) {
        stages.push_back({{"depth", s.depth},
                          {"dim", s.dim},
                          {"mlp_ratio", s.mlp_ratio},
                          {"token_mixer", s.attention ? "attention" : "repmixer"}});
      }
      j = {{"timm_model_name", v.fastvit.timm_model_name},
           {"stages", stages},
           {"final_features", v.fastvit.final_features},
           {"attention_norm", v.fastvit.attention_layer_norm ? "layernorm2d" : "batchnorm"}};
      break;
    }
  }
  j["tower"] = VisionTowerText(v);
  j["image_size"] = v.image_size;
  return j;
}

std::string Stages(const std::array<int, 4>& v) { return fmt::format("{}-{}-{}-{}", v[0], v[1], v[2], v[3]); }

std::string VisionText(const VisionConfig& v) {
  switch (v.tower) {
    case VisionTower::kViT:
      if (v.vitamin.enabled) {
        return fmt::format(
            "{} {}px: stem {}, MbConv stages {}x{} and {}x{}, {}x{} tokens of width {}, {} layers, {} heads, "
            "GeGLU mlp {}",
            VisionTowerText(v), v.image_size, v.vitamin.stem_width, v.vitamin.stage_depths[0],
            v.vitamin.stage_widths[0], v.vitamin.stage_depths[1], v.vitamin.stage_widths[1], v.grid(), v.grid(),
            v.width, v.layers, v.heads, v.mlp_width);
      }
      return fmt::format("{} {}px patch {}: width {}, {} layers, {} heads, mlp {}", VisionTowerText(v), v.image_size,
                         v.patch_size, v.width, v.layers, v.heads, v.mlp_width);
    case VisionTower::kModifiedResNet:
      return fmt::format("ModifiedResNet {}px: Bottlenecks {}, width {}, attention pool {} heads on {} channels",
                         v.image_size, Stages(v.resnet.layers), v.resnet.width, v.resnet.heads,
                         v.resnet.feature_width());
    case VisionTower::kConvNext:
      return fmt::format("ConvNeXt (timm {}) {}px: depths {}, dims {}, {} projection", v.convnext.timm_model_name,
                         v.image_size, Stages(v.convnext.depths), Stages(v.convnext.dims),
                         v.convnext.projection == ConvNextProjection::kLinear ? "linear" : "MLP");
    case VisionTower::kFastVit: {
      std::string depths, dims;
      for (const FastVitStageConfig& s : v.fastvit.stages) {
        depths += (depths.empty() ? "" : "-") + std::to_string(s.depth) + (s.attention ? "a" : "");
        dims += (dims.empty() ? "" : "-") + std::to_string(s.dim);
      }
      return fmt::format("FastViT MCi (timm {}) {}px: depths {} (a: attention), dims {}, final conv {}",
                         v.fastvit.timm_model_name, v.image_size, depths, dims, v.fastvit.final_features);
    }
  }
  return "";
}

// The tower types a model uses, as `clip info` names them.
std::string TextTowerName(const TextConfig& t) {
  const std::string pooled = t.pooling == Pooling::kLast  ? "last position"
                             : t.pooling == Pooling::kEos ? fmt::format("first eos (id {})", t.eos_id)
                                                          : "first end-of-text (argmax)";
  return fmt::format("transformer, {}, pooled at the {}", t.causal ? "causal" : "bidirectional", pooled);
}

// "canonicalize" (open_clip's), "whitespace" (open_clip HFTokenizer's default) or "siglip_hf"
// (transformers' SiglipTokenizer).
std::string_view CleaningName(const TokenizerConfig& t) {
  switch (t.cleaning) {
    case TextCleaning::kHfSiglip:
      return "siglip_hf";
    case TextCleaning::kOpenClipWhitespace:
      return "whitespace";
    case TextCleaning::kOpenClipCanonicalize:
      break;
  }
  return "canonicalize";
}

Json TokenizerJson(const ClipConfig& c) {
  if (!c.tokenizer.missing.empty())
    return {{"kind", "missing"}, {"reason", c.tokenizer.missing}, {"pad_id", c.text.pad_id}};
  if (c.tokenizer.kind == TokenizerKind::kWordPiece) {
    return {{"kind", "wordpiece"},
            {"model_file", c.tokenizer.model_file.string()},
            {"clean", CleaningName(c.tokenizer)},
            {"lowercase", c.tokenizer.lowercase},
            {"strip_accents", c.tokenizer.strip_accents},
            {"cls_id", c.tokenizer.bos_id},
            {"add_sep", c.tokenizer.add_eos},
            {"sep_id", c.tokenizer.eos_id},
            {"unk_id", c.tokenizer.unk_id},
            {"pad_id", c.text.pad_id}};
  }
  if (c.tokenizer.kind == TokenizerKind::kClipBpe) {
    return {{"kind", "clip_bpe"}, {"clean", "lower"}, {"eos_id", kEndOfText}, {"pad_id", c.text.pad_id}};
  }
  if (c.tokenizer.kind == TokenizerKind::kHfBpe) {
    return {{"kind", "hf_bpe"},
            {"model_file", c.tokenizer.model_file.string()},
            {"clean", CleaningName(c.tokenizer)},
            {"add_bos", c.tokenizer.add_bos},
            {"bos_id", c.tokenizer.bos_id},
            {"add_eos", c.tokenizer.add_eos},
            {"eos_id", c.tokenizer.eos_id},
            {"pad_id", c.text.pad_id}};
  }
  return {{"kind", "sentencepiece"},
          {"model_file", c.tokenizer.model_file.string()},
          {"clean", CleaningName(c.tokenizer)},
          {"eos_id", c.tokenizer.eos_id},
          {"pad_id", c.text.pad_id}};
}

struct InfoArgs {
  std::string model;
  std::string precision = std::string(PrecisionName(ClipLoadOptions{}.precision));
};

Status RunInfo(const Cli& cli, const InfoArgs& a) {
  ClipLoadOptions options;
  VISALIGN_RETURN_IF_ERROR(ApplyClipPrecision(a.precision, options));
  Result<ClipModel> model = LoadClipModelFlag(cli, a.model, options);
  if (!model.ok()) return model.status().WithContext("--clip-model");
  const ClipConfig& c = model->config();
  VISALIGN_ASSIGN_OR_RETURN(std::string fingerprint, model->Fingerprint());
  Json vision = VisionJson(c.vision);
  Json text = TowerJson(c.text);
  text["context_length"] = c.text.context_length;
  text["vocab_size"] = c.text.vocab_size;
  text["tower"] = TextTowerName(c.text);
  text["tokenizer"] = TokenizerJson(c);
  const auto& p = c.preprocess;
  Json j = {{"config_file", c.config_file.string()},
            {"weights_file", c.weights_file.string()},
            {"layout", c.layout == CheckpointLayout::kOpenClip ? "open_clip" : "huggingface"},
            {"embed_dim", c.embed_dim},
            {"activation", ActivationName(c.activation)},
            {"vision", vision},
            {"text", text},
            {"preprocess",
             {{"image_size", p.image_size},
              {"resize_mode", p.resize_mode == ResizeMode::kShortest ? "shortest" : "squash"},
              {"interpolation", p.interpolation == Interpolation::kBicubic ? "bicubic" : "bilinear"},
              {"mean", {FloatJson(p.mean[0]), FloatJson(p.mean[1]), FloatJson(p.mean[2])}},
              {"std", {FloatJson(p.std[0]), FloatJson(p.std[1]), FloatJson(p.std[2])}}}},
            {"logit_scale", FloatJson(model->LogitScale())},
            {"logit_bias", c.sigmoid_logits ? Json(FloatJson(model->LogitBias())) : Json()},
            {"score", c.sigmoid_logits ? "sigmoid" : "softmax"},
            {"precision", {{"in_use", PrecisionName(model->precision())}, {"reason", model->precision_reason()}}},
            {"fingerprint", fingerprint},
            {"random_weights", clip::RandomWeightsJson(c)}};
  if (cli.global().json) {
    PrintJson(j);
    return Status::Ok();
  }
  std::cout << fmt::format("config        {}\nweights       {}\n", j["config_file"].get<std::string>(),
                           j["weights_file"].get<std::string>());
  if (c.random) std::cout << fmt::format("              {}\n", RandomWeightsLabel(c));
  std::cout << fmt::format("layout        {}\n", j["layout"].get<std::string>());
  std::cout << fmt::format("embed_dim     {}\nactivation    {}\n", c.embed_dim, j["activation"].get<std::string>());
  std::cout << "vision        " << VisionText(c.vision) << "\n";
  std::cout << fmt::format("text          {}; context {}, vocab {}: width {}, {} layers, {} heads, mlp {}\n",
                           TextTowerName(c.text), c.text.context_length, c.text.vocab_size, c.text.width, c.text.layers,
                           c.text.heads, c.text.mlp_width);
  const std::string tokenizer_kind =
      c.tokenizer.kind == TokenizerKind::kHfBpe
          ? fmt::format("Hugging Face BPE (tokenizer.json), bos {}",
                        c.tokenizer.add_bos ? std::to_string(c.tokenizer.bos_id) : "none")
      : c.tokenizer.kind == TokenizerKind::kWordPiece
          ? fmt::format("BERT WordPiece (vocab.txt), cls {}, {}", c.tokenizer.bos_id,
                        c.tokenizer.lowercase ? "lowercase" : "cased")
          : "SentencePiece";
  std::cout << fmt::format(
      "tokenizer     {}\n",
      !c.tokenizer.missing.empty() ? "none: " + c.tokenizer.missing
      : c.tokenizer.kind == TokenizerKind::kClipBpe
          ? "CLIP BPE (bundled vocabulary), clean lower"
          : fmt::format("{} {}, clean {}, eos {}, pad {}", tokenizer_kind, c.tokenizer.model_file.string(),
                        CleaningName(c.tokenizer), c.tokenizer.add_eos ? std::to_string(c.tokenizer.eos_id) : "none",
                        c.text.pad_id));
  std::cout << fmt::format("preprocess    resize {} ({}) to {}{}, mean {} std {}\n",
                           j["preprocess"]["resize_mode"].get<std::string>(),
                           j["preprocess"]["interpolation"].get<std::string>(), p.image_size,
                           p.resize_mode == ResizeMode::kShortest ? ", center crop" : "",
                           j["preprocess"]["mean"].dump(), j["preprocess"]["std"].dump());
  std::cout << fmt::format("precision     {} ({})\n", PrecisionName(model->precision()), model->precision_reason());
  std::cout << fmt::format("logit_scale   {} (exp of the stored value)\n", model->LogitScale());
  if (c.sigmoid_logits) {
    std::cout << fmt::format("logit_bias    {} (score: sigmoid(logit_scale * cos + logit_bias))\n", model->LogitBias());
  }
  std::cout << fmt::format("fingerprint   {}\n", fingerprint);
  return Status::Ok();
}

const CommandGroup kClipInfo(51, {"clip"}, [](Cli& cli) {
  CLI::App* g = cli.Group("clip", "");
  CLI::App* info = g->add_subcommand("info", "Architecture, preprocessing and fingerprint of a CLIP model directory");
  auto ia = std::make_shared<InfoArgs>();
  info->add_option("--clip-model", ia->model, ClipModelFolderHelp())->required();
  cli.DeprecateOption(info, "--model", "--clip-model");
  AddClipPrecisionOption(info, &ia->precision);
  info->footer(
      "The fingerprint (SHA-256 of the weights file hash + preprocessing) identifies cached embeddings.\n"
      "Example:\n  visalign clip random-model --out clip-random && visalign clip info --clip-model clip-random --json");
  cli.Bind(info, [&cli, ia]() { return RunInfo(cli, *ia); });
});

}  // namespace
}  // namespace visalign::cli
