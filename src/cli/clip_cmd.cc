// `visalign clip ...`: CLIP tokenization, embeddings and model information with the native
// implementation (src/clip), and random-weight model directories for demos and tests. Hues and
// Cues adds `hues run` on the same API.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/clip_model_option.h"
#include "visalign/clip.h"
#include "visalign/imaging/image.h"

namespace visalign::cli {

void AddClipPrecisionOption(CLI::App* cmd, std::string* precision) {
  cmd->add_option(
         "--precision", *precision,
         "Arithmetic of the CLIP linear layers: fp32 (matches open_clip), bf16 (oneDNN bf16 matmul with fp32 "
         "accumulation; needs AVX512_BF16 or AMX, refused elsewhere; embeddings within ~1e-3 cosine distance), "
         "bf16x3 (the same units on operands split into two bf16 terms: ~16 significant bits at about 3x "
         "bf16's cost, for rankings such as Hues and Cues top-5), auto (bf16 where the CPU has AMX, else fp32)")
      ->capture_default_str();
}

Status ApplyClipPrecision(const std::string& precision, clip::ClipLoadOptions& options) {
  Result<clip::Precision> p = clip::ParsePrecision(precision);
  if (!p.ok()) return p.status().WithContext("--precision");
  VISALIGN_RETURN_IF_ERROR(clip::CheckPrecisionSupported(*p).WithContext("--precision"));
  options.precision = *p;
  return Status::Ok();
}

namespace {

using namespace visalign::clip;

// The shortest decimal that round-trips the float, as a JSON number (avoids float->double noise
// such as 0.10000000149011612).
Json FloatJson(float v) { return std::stod(fmt::format("{}", v)); }

Json VectorJson(const float* v, int n) {
  Json out = Json::array();
  for (int i = 0; i < n; ++i) out.push_back(FloatJson(v[i]));
  return out;
}

std::string VectorText(const float* v, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += (i ? " " : "") + fmt::format("{}", v[i]);
  return out;
}

const char* ModelHelp() {
  return "CLIP model directory: open_clip_config.json or config.json (OpenCLIP CLIP or SigLIP, or Hugging Face "
         "transformers CLIP) "
         "plus open_clip_model.safetensors or model.safetensors";
}

struct EmbedArgs {
  std::string model;
  std::vector<std::string> texts;
  std::vector<std::string> images;
  std::string token_ids;
  bool normalize = false;
  int batch = ClipLoadOptions{}.max_batch;
  std::string precision = std::string(PrecisionName(ClipLoadOptions{}.precision));
};

Status RunEmbed(const Cli& cli, const EmbedArgs& a) {
  if (a.texts.empty() && a.images.empty() && a.token_ids.empty()) {
    return Status::InvalidArgument("nothing to embed", "arguments", "at least one --text, --image or --token-ids");
  }
  std::vector<std::vector<int32_t>> token_rows;
  if (!a.token_ids.empty()) {
    Result<std::vector<std::vector<int32_t>>> rows = ReadTokenIdsFile(a.token_ids);
    if (!rows.ok()) return rows.status().WithContext("--token-ids");
    token_rows = std::move(rows).value();
  }
  ClipLoadOptions options;
  options.max_batch = a.batch;
  options.show_progress = !cli.global().json;
  VISALIGN_RETURN_IF_ERROR(ApplyClipPrecision(a.precision, options));
  Result<ClipModel> model = LoadClipModelFlag(cli, a.model, options);
  if (!model.ok()) return model.status().WithContext("--clip-model");
  std::vector<imaging::Image> images;
  for (const auto& path : a.images) {
    Result<imaging::Image> im = imaging::ReadImage(path);
    if (!im.ok()) return im.status().WithContext("--image");
    images.push_back(std::move(im).value());
  }
  VISALIGN_ASSIGN_OR_RETURN(Matrix image_emb, model->EncodeImages(images));
  VISALIGN_ASSIGN_OR_RETURN(Matrix text_emb, model->EncodeTexts(a.texts));
  Matrix token_emb(0, model->embed_dim());
  if (!token_rows.empty()) {
    Result<Matrix> encoded = model->EncodeTokens(token_rows);
    if (!encoded.ok()) return encoded.status().WithContext("--token-ids " + a.token_ids);
    token_emb = std::move(encoded).value();
  }
  if (a.normalize) {
    NormalizeRows(image_emb);
    NormalizeRows(text_emb);
    NormalizeRows(token_emb);
  }
  if (cli.global().json) {
    Json j = {{"model", a.model}, {"normalized", a.normalize}, {"images", Json::array()}, {"texts", Json::array()}};
    if (!token_rows.empty()) j["token_ids"] = Json::array();
    for (size_t i = 0; i < token_rows.size(); ++i) {
      j["token_ids"].push_back(
          {{"ids", token_rows[i]}, {"embedding", VectorJson(token_emb.row(static_cast<int>(i)), token_emb.cols)}});
    }
    for (size_t i = 0; i < a.images.size(); ++i) {
      j["images"].push_back(
          {{"path", a.images[i]}, {"embedding", VectorJson(image_emb.row(static_cast<int>(i)), image_emb.cols)}});
    }
    for (size_t i = 0; i < a.texts.size(); ++i) {
      j["texts"].push_back(
          {{"text", a.texts[i]}, {"embedding", VectorJson(text_emb.row(static_cast<int>(i)), text_emb.cols)}});
    }
    PrintJson(j);
    return Status::Ok();
  }
  for (size_t i = 0; i < a.images.size(); ++i) {
    std::cout << "image\t" << a.images[i] << "\t" << VectorText(image_emb.row(static_cast<int>(i)), image_emb.cols)
              << "\n";
  }
  for (size_t i = 0; i < a.texts.size(); ++i) {
    std::cout << "text\t" << a.texts[i] << "\t" << VectorText(text_emb.row(static_cast<int>(i)), text_emb.cols) << "\n";
  }
  for (size_t i = 0; i < token_rows.size(); ++i) {
    std::cout << "tokens\t" << a.token_ids << ":" << i + 1 << "\t"
              << VectorText(token_emb.row(static_cast<int>(i)), token_emb.cols) << "\n";
  }
  return Status::Ok();
}

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

struct RandomModelArgs {
  std::string out;
  std::string arch = std::string(RandomClipArchName(RandomClipModelOptions{}.arch));
  std::string seed = std::to_string(RandomClipModelOptions{}.seed);
  bool force = false;
};

Status RunRandomModel(const Cli& cli, const RandomModelArgs& a) {
  RandomClipModelOptions options;
  Result<RandomClipArch> arch = ParseRandomClipArch(a.arch);
  if (!arch.ok()) return arch.status().WithContext("--arch");
  options.arch = *arch;
  const auto [end, error] = std::from_chars(a.seed.data(), a.seed.data() + a.seed.size(), options.seed);
  if (error != std::errc() || end != a.seed.data() + a.seed.size()) {
    return Status::InvalidArgument("seed \"" + a.seed + "\"", "--seed", "an integer from 0 to 18446744073709551615");
  }
  options.overwrite = a.force;
  Result<RandomClipModelFiles> files = WriteRandomClipModel(a.out, options);
  if (!files.ok()) return files.status().WithContext("--out");
  if (cli.global().json) {
    PrintJson({{"model", a.out},
               {"arch", a.arch},
               {"seed", options.seed},
               {"parameters", files->parameters},
               {"files", {files->config_file.string(), files->weights_file.string()}}});
    return Status::Ok();
  }
  std::cout << fmt::format("wrote {} ({}, seed {}: {} parameters, RANDOM weights: its numbers mean nothing)\n", a.out,
                           a.arch, options.seed, files->parameters);
  return Status::Ok();
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

const CommandGroup kClip(50, {"clip"}, [](Cli& cli) {
  CLI::App* g =
      cli.Group("clip", "Native CLIP (ViT, SigLIP, ModifiedResNet, ConvNeXt towers): tokenize, embed, inspect models");

  CLI::App* tok = g->add_subcommand(
      "tokenize",
      "Token ids of a text with CLIP's BPE tokenizer (open_clip SimpleTokenizer) or a model's own tokenizer");
  auto text = std::make_shared<std::string>();
  auto context = std::make_shared<int>(kDefaultContextLength);
  auto tok_model = std::make_shared<std::string>();
  tok->add_option("TEXT", *text,
                  "Text to tokenize (UTF-8); cleaned like open_clip: ftfy fixes, HTML unescape, "
                  "whitespace collapse, lowercase")
      ->required();
  CLI::Option* context_option =
      tok->add_option("--context-length", *context, "Truncate to this many ids, keeping <end_of_text> last")
          ->capture_default_str()
          ->check(CLI::Range(2, 1 << 20));
  tok->add_option("--clip-model", *tok_model,
                  "Tokenize as this model does, at its context length (SigLIP: its SentencePiece model, clean "
                  "canonicalize, ids + </s>)")
      ->excludes(context_option);
  tok->footer(
      "Output: ids with <start_of_text> 49406 first and <end_of_text> 49407 last, unpadded (with --clip-model: the "
      "model's own ids, unpadded; `clip info` names its pad id).\n"
      "Examples:\n  visalign clip tokenize \"a photo of a banana\" --json   # {\"ids\": [49406, 320, 1125, 539, 320, "
      "8922, 49407]}\n"
      "  visalign clip tokenize \"a photo of a banana\" --clip-model models/ViT-B-16-SigLIP");
  cli.Bind(tok, [&cli, text, context, tok_model]() -> Status {
    Result<std::vector<int32_t>> ids = Status::Internal("not tokenized");
    if (tok_model->empty()) {
      ids = Tokenize(*text, *context);
    } else {
      Result<ClipModel> model = LoadClipModelFlag(cli, *tok_model);
      if (!model.ok()) return model.status().WithContext("--clip-model");
      ids = model->Tokenize(*text);
    }
    if (!ids.ok()) return ids.status().WithContext("argument TEXT");
    if (cli.global().json) {
      PrintJson({{"ids", *ids}});
    } else {
      std::string line;
      for (int32_t id : *ids) line += (line.empty() ? "" : " ") + std::to_string(id);
      std::cout << line << "\n";
    }
    return Status::Ok();
  });

  CLI::App* embed = g->add_subcommand("embed", "Image and/or text embeddings from a CLIP model");
  auto ea = std::make_shared<EmbedArgs>();
  embed->add_option("--clip-model", ea->model, ModelHelp())->required();
  cli.DeprecateOption(embed, "--model", "--clip-model");
  embed->add_option("--text", ea->texts, "Text to embed (repeatable)");
  embed->add_option("--image", ea->images,
                    "Image file to embed: PNG, JPEG, WebP (repeatable); preprocessed like "
                    "open_clip's eval transform (PIL bicubic resize, center crop or squash, normalize)");
  embed->add_option("--token-ids", ea->token_ids,
                    "JSON file of token id rows to embed as given, without the tokenizer: [[id, ...], ...] or "
                    "{\"rows\": [{\"ids\": [...]}]}; each row at most the context length, right-padded with the "
                    "model's pad id (for models whose tokenizer is not in the folder, e.g. MetaCLIP 2)");
  embed->add_flag("--normalize", ea->normalize, "L2-normalise the embeddings (default: raw projections)");
  embed->add_option("--batch", ea->batch, "Encode at most this many inputs at once (bounds memory)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  AddClipPrecisionOption(embed, &ea->precision);
  embed->footer(
      "Outputs are in argument order: JSON {\"images\": [{\"path\", \"embedding\"}], \"texts\": [{\"text\", "
      "\"embedding\"}], \"token_ids\": [{\"ids\", \"embedding\"}]}, or tab-separated lines "
      "`image|text|tokens <TAB> input <TAB> values` (tokens: FILE:row). Use --threads N.\n"
      "Example:\n  visalign clip embed --clip-model clip-random --image a.png --text \"a red square\" --normalize "
      "--json");
  cli.Bind(embed, [&cli, ea]() { return RunEmbed(cli, *ea); });

  CLI::App* info = g->add_subcommand("info", "Architecture, preprocessing and fingerprint of a CLIP model directory");
  auto ia = std::make_shared<InfoArgs>();
  info->add_option("--clip-model", ia->model, ModelHelp())->required();
  cli.DeprecateOption(info, "--model", "--clip-model");
  AddClipPrecisionOption(info, &ia->precision);
  info->footer(
      "The fingerprint (SHA-256 of the weights file hash + preprocessing) identifies cached embeddings.\n"
      "Example:\n  visalign clip random-model --out clip-random && visalign clip info --clip-model clip-random --json");
  cli.Bind(info, [&cli, ia]() { return RunInfo(cli, *ia); });

  CLI::App* random =
      g->add_subcommand("random-model", "Write a CLIP model directory with deterministic random weights");
  auto ra = std::make_shared<RandomModelArgs>();
  random
      ->add_option("--out", ra->out, "Model directory to create (open_clip_config.json + open_clip_model.safetensors)")
      ->required();
  random
      ->add_option(
          "--arch", ra->arch,
          "tiny (13.7 MB, fast), or OpenCLIP's shapes ViT-B-32 (605 MB), RN50 (408 MB), convnext_base (606 MB), "
          "ViTamin-S (250 MB), MobileCLIP2-S0 (300 MB) or MobileCLIP-B (599 MB)")
      ->capture_default_str();
  random->add_option("--seed", ra->seed, "Seed of the weights, 0 to 2^64 - 1")->capture_default_str();
  random->add_flag("--force", ra->force, "Write into a non-empty --out, replacing the model files");
  random->footer(
      "For demos and tests without downloading weights: the model loads and runs like any OpenCLIP ViT (real "
      "tokenizer, vocabulary 49408, context 77) but its numbers mean nothing; `clip info`, `hues run` and "
      "`acva analyze` label it RANDOM. The same --arch and --seed give byte-identical files on every machine.\n"
      "Example:\n  visalign clip random-model --out clip-random --seed 0\n"
      "  visalign hues run --clip-model clip-random --out runs/");
  cli.Bind(random, [&cli, ra]() { return RunRandomModel(cli, *ra); });
});

}  // namespace
}  // namespace visalign::cli
