// `visalign clip tokenize` and `clip embed`: CLIP tokenization and embeddings with the native
// implementation (src/clip), and the --precision option of every command that loads a CLIP model.
// The group's other commands: `clip info` (clip_info_cmd.cc), `clip random-model`
// (clip_random_model_cmd.cc), `clip resolve` (clip_resolve_cmd.cc). Hues and Cues adds `hues run`
// on the same API.
#include <fmt/format.h>

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
  embed->add_option("--clip-model", ea->model, ClipModelFolderHelp())->required();
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
});

}  // namespace
}  // namespace visalign::cli
