// SigLIP's tokenizer as OpenCLIP runs it (HFTokenizer(clean='canonicalize') over the checkpoint's
// T5 tokenizer): CanonicalizeText, then SentencePiece (libsentencepiece) with the checkpoint's own
// spiece.model, then ids = pieces[:context_length - 1] + [eos]; right padding is the text tower's
// (TextConfig::pad_id). Exact procedure: ../shared/fixtures/siglip-tiny/README.md, docs/clip.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "clip/text_tokenizer.h"
#include "visalign/clip.h"
#include "visalign/core/status.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace visalign::clip {

class SentencePieceTokenizer : public TextTokenizer {
 public:
  // Loads config.tokenizer.model_file (as ResolveHfTokenizer set it).
  static Result<std::unique_ptr<SentencePieceTokenizer>> Load(const TokenizerConfig& config);
  ~SentencePieceTokenizer();

  // Ids of already cleaned text (no eos, no truncation), and their vocabulary pieces ("<unk>" for
  // a run of unknown characters).
  std::vector<int32_t> EncodeCleaned(std::string_view cleaned) const;
  std::vector<std::string> PiecesOfCleaned(std::string_view cleaned) const;
  // The full pipeline; fails only on invalid UTF-8.
  Result<std::vector<int32_t>> Tokenize(std::string_view text, int context_length) const override;
  // The id of a piece, or nullopt when it is not in the vocabulary.
  std::optional<int32_t> PieceId(const std::string& piece) const;

 private:
  SentencePieceTokenizer(std::unique_ptr<sentencepiece::SentencePieceProcessor> processor,
                         const TokenizerConfig& config);
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  TokenizerConfig config_;
};

// For an OpenCLIP config whose text_cfg names a Hugging Face tokenizer (config.tokenizer.hf_name),
// or an HF SigLIP checkpoint (hf_name ""): finds its folder (model_dir / hf_name when that is a
// directory, else model_dir itself: hub downloads ship the tokenizer files beside the weights) and
// its tokenizer_config.json (if present). Class GemmaTokenizer(Fast) (SigLIP2) goes to
// ResolveHfBpeTokenizer (tokenizer.json). Otherwise it requires spiece.model there and a class
// T5Tokenizer (open_clip cleaning) or SiglipTokenizer (transformers' cleaning; do_lower_case true),
// and sets config.tokenizer (kind, model_file, eos_id, cleaning) and config.text.pad_id from its
// eos/pad tokens; class XLMRobertaTokenizer(Fast) (MetaCLIP 2) reads sentencepiece.bpe.model there
// in the XLM-R layout (TokenizerConfig::id_offset). A text_cfg naming a Hugging Face tokenizer of
// which the folder holds no file at all loads without a tokenizer (TokenizerConfig::missing). A folder with only
// tokenizer.json of another class, or another tokenizer class, is kUnsupported naming it.
Status ResolveHfTokenizer(const std::filesystem::path& model_dir, ClipConfig& config);

}  // namespace visalign::clip
