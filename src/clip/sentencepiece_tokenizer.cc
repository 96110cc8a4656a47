#include "clip/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <fmt/format.h>

#include "clip/hf_bpe_tokenizer.h"
#include "clip/text_clean.h"
#include "clip/wordpiece_tokenizer.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip {
namespace {

namespace fs = std::filesystem;

constexpr const char* kModelFile = "spiece.model";
constexpr const char* kTokenizerConfigFile = "tokenizer_config.json";
constexpr const char* kT5DefaultEos = "</s>";
constexpr const char* kT5DefaultPad = "<pad>";
constexpr const char* kSiglipDefaultPad = "</s>";  // transformers' SiglipTokenizer
constexpr const char* kWordBoundary = "\u2581";    // SentencePiece's "▁"

constexpr const char* kXlmRobertaModelFile = "sentencepiece.bpe.model";
// XLMRobertaTokenizer's fairseq layout: four fixed ids, then the SentencePiece pieces shifted by one.
constexpr int32_t kXlmRobertaBos = 0, kXlmRobertaPad = 1, kXlmRobertaEos = 2, kXlmRobertaUnk = 3;
constexpr int32_t kFairseqOffset = 1;

// XLMRobertaTokenizer(Fast) (MetaCLIP 2's facebook/xlm-v-base): sentencepiece.bpe.model in the
// fairseq layout, whatever special-token strings tokenizer_config.json names (the layout fixes the ids).
Status ResolveXlmRobertaTokenizer(const fs::path& dir, ClipConfig& config) {
  TokenizerConfig t;
  t.kind = TokenizerKind::kSentencePiece;
  t.hf_name = config.tokenizer.hf_name;
  t.cleaning = config.tokenizer.cleaning;
  t.model_file = dir / kXlmRobertaModelFile;
  if (!fs::is_regular_file(t.model_file)) {
    return Status::NotFound("no sentencepiece.bpe.model for the XLM-R tokenizer", dir.string(),
                            std::string(kXlmRobertaModelFile) + " beside tokenizer_config.json");
  }
  t.add_bos = true;
  t.bos_id = kXlmRobertaBos;
  t.eos_id = kXlmRobertaEos;
  t.unk_id = kXlmRobertaUnk;
  t.id_offset = kFairseqOffset;
  VISALIGN_RETURN_IF_ERROR(SentencePieceTokenizer::Load(t).status());
  config.tokenizer = t;
  config.text.pad_id = kXlmRobertaPad;
  return Status::Ok();
}

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer(std::unique_ptr<sentencepiece::SentencePieceProcessor> processor,
                                               const TokenizerConfig& config)
    : processor_(std::move(processor)), config_(config) {}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

Result<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::Load(const TokenizerConfig& config) {
  auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = processor->Load(config.model_file.string());
  if (!status.ok()) {
    return Status::InvalidArgument("cannot load SentencePiece model: " + status.ToString(), config.model_file.string(),
                                   "a SentencePiece model file (spiece.model)");
  }
  return std::unique_ptr<SentencePieceTokenizer>(new SentencePieceTokenizer(std::move(processor), config));
}

std::vector<int32_t> SentencePieceTokenizer::EncodeCleaned(std::string_view cleaned) const {
  std::vector<int> ids;
  processor_->Encode(std::string(cleaned), &ids).IgnoreError();  // fails only when no model is loaded
  std::vector<int32_t> out(ids.begin(), ids.end());
  if (config_.id_offset != 0) {  // the XLM-R layout
    for (int32_t& id : out) id = id == processor_->unk_id() ? config_.unk_id : id + config_.id_offset;
  }
  return out;
}

std::vector<std::string> SentencePieceTokenizer::PiecesOfCleaned(std::string_view cleaned) const {
  std::vector<std::string> pieces;
  std::vector<int> ids;
  processor_->Encode(std::string(cleaned), &ids).IgnoreError();
  for (int id : ids) pieces.push_back(processor_->IdToPiece(id));
  return pieces;
}

Result<std::vector<int32_t>> SentencePieceTokenizer::Tokenize(std::string_view text, int context_length) const {
  const int specials = config_.add_bos ? 2 : 1;
  if (context_length < specials) {
    return Status::InvalidArgument("context length " + std::to_string(context_length), "Tokenize",
                                   "at least " + std::to_string(specials));
  }
  VISALIGN_ASSIGN_OR_RETURN(std::u32string decoded, DecodeUtf8(text));
  const std::u32string cleaned = CleanFor(config_.cleaning, decoded);
  std::vector<int32_t> body = EncodeCleaned(EncodeUtf8(cleaned));
  // transformers' SiglipTokenizer encodes "▁" + text with the dummy prefix off: the same pieces for
  // any non-empty cleaned text, but a lone "▁" piece for an empty one (open_clip encodes nothing).
  if (body.empty() && config_.cleaning == TextCleaning::kHfSiglip) body.push_back(processor_->PieceToId(kWordBoundary));
  std::vector<int32_t> ids;
  if (config_.add_bos) ids.push_back(config_.bos_id);
  ids.insert(ids.end(), body.begin(),
             body.begin() + std::min<ptrdiff_t>(static_cast<ptrdiff_t>(body.size()), context_length - specials));
  ids.push_back(config_.eos_id);
  return ids;
}

std::optional<int32_t> SentencePieceTokenizer::PieceId(const std::string& piece) const {
  const int id = processor_->PieceToId(piece);
  if (id == processor_->unk_id() && piece != processor_->IdToPiece(id)) return std::nullopt;
  return id;
}

Status ResolveHfTokenizer(const fs::path& model_dir, ClipConfig& config) {
  const std::string& name = config.tokenizer.hf_name;
  const fs::path dir = fs::is_directory(model_dir / name) ? model_dir / name : model_dir;
  if (!name.empty() && dir == model_dir) {
    bool any = false;
    for (const char* f : {kTokenizerConfigFile, kModelFile, "tokenizer.json", "vocab.txt", "sentencepiece.bpe.model"}) {
      any = any || fs::exists(dir / f);
    }
    if (!any) {
      config.tokenizer.missing = "the Hugging Face tokenizer " + QuoteText(name) +
                                 " (hf_tokenizer_name) has no file in " + QuoteText(model_dir.string()) +
                                 ": give token ids instead (clip embed --token-ids)";
      return Status::Ok();
    }
  }
  Json cfg = Json::object();
  const fs::path cfg_file = dir / kTokenizerConfigFile;
  std::string cls = "T5Tokenizer";
  if (fs::is_regular_file(cfg_file)) {
    VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(cfg_file));
    Result<Json> parsed = ParseJson(text);
    if (!parsed.ok() || !parsed->is_object()) {
      return Status::InvalidArgument(parsed.ok() ? "not a JSON object" : parsed.status().what(), cfg_file.string(),
                                     "a Hugging Face tokenizer_config.json");
    }
    cfg = std::move(*parsed);
    if (cfg.contains("tokenizer_class"))
      cls = cfg["tokenizer_class"].is_string() ? cfg["tokenizer_class"].get<std::string>() : "";
  }
  if (cls == "GemmaTokenizer" || cls == "GemmaTokenizerFast")
    return ResolveHfBpeTokenizer(dir, cfg, cfg_file.string(), config);
  if (cls == "BertTokenizer" || cls == "BertTokenizerFast")
    return ResolveWordPieceTokenizer(dir, cfg, cfg_file.string(), config);
  if (cls == "XLMRobertaTokenizer" || cls == "XLMRobertaTokenizerFast") return ResolveXlmRobertaTokenizer(dir, config);
  const fs::path model_file = dir / kModelFile;
  if (!fs::is_regular_file(model_file)) {
    if (fs::is_regular_file(dir / "tokenizer.json")) {
      return Status::Unsupported(
          "Hugging Face tokenizer.json of class " + QuoteText(cls) + " without a SentencePiece model file",
          dir.string(),
          std::string(kModelFile) +
              " beside it (SigLIP's T5 tokenizer), or a tokenizer_config.json "
              "of class GemmaTokenizer (SigLIP2)");
    }
    if (name.empty()) {
      return Status::NotFound("no SentencePiece model for the Hugging Face SigLIP checkpoint", dir.string(),
                              std::string(kModelFile) + " in the model directory");
    }
    return Status::NotFound("no SentencePiece model for hf_tokenizer_name " + QuoteText(name), dir.string(),
                            std::string(kModelFile) + " in the model directory or in its subfolder " + name);
  }
  TextCleaning cleaning = config.tokenizer.cleaning;  // open_clip's tokenizer_kwargs clean
  if (cls == "SiglipTokenizer") {
    cleaning = TextCleaning::kHfSiglip;
    if (cfg.contains("do_lower_case") && cfg["do_lower_case"] != true) {
      return Status::Unsupported("unsupported do_lower_case " + QuoteJson(cfg["do_lower_case"]), cfg_file.string(),
                                 "true (SiglipTokenizer's default)");
    }
  } else if (cls != "T5Tokenizer" && cls != "T5TokenizerFast") {
    return Status::Unsupported(
        "unsupported tokenizer_class " + QuoteJson(cfg["tokenizer_class"]), cfg_file.string(),
        "T5Tokenizer, SiglipTokenizer (SigLIP), GemmaTokenizer (SigLIP2) or BertTokenizer (CLIPA)");
  }
  if (cfg.contains("extra_ids") && cfg["extra_ids"] != 0) {
    return Status::Unsupported("unsupported extra_ids " + QuoteJson(cfg["extra_ids"]), cfg_file.string(), "0");
  }
  VISALIGN_ASSIGN_OR_RETURN(std::string eos, SpecialTokenString(cfg, "eos_token", kT5DefaultEos, cfg_file.string()));
  const char* default_pad = cleaning == TextCleaning::kHfSiglip ? kSiglipDefaultPad : kT5DefaultPad;
  VISALIGN_ASSIGN_OR_RETURN(std::string pad, SpecialTokenString(cfg, "pad_token", default_pad, cfg_file.string()));
  TokenizerConfig t;
  t.kind = TokenizerKind::kSentencePiece;
  t.hf_name = name;
  t.model_file = model_file;
  t.cleaning = cleaning;
  VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<SentencePieceTokenizer> tokenizer, SentencePieceTokenizer::Load(t));
  const std::optional<int32_t> eos_id = tokenizer->PieceId(eos);
  const std::optional<int32_t> pad_id = tokenizer->PieceId(pad);
  if (!eos_id || !pad_id) {
    return Status::InvalidArgument(
        "eos " + QuoteText(eos) + " or pad " + QuoteText(pad) + " is not in the SentencePiece vocabulary",
        model_file.string(), "the special tokens named by " + std::string(kTokenizerConfigFile));
  }
  t.eos_id = *eos_id;
  config.tokenizer = t;
  config.text.pad_id = *pad_id;
  return Status::Ok();
}

}  // namespace visalign::clip
