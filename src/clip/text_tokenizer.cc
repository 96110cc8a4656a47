#include "clip/text_tokenizer.h"

#include "clip/hf_bpe_tokenizer.h"
#include "clip/sentencepiece_tokenizer.h"
#include "clip/wordpiece_tokenizer.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip {

Result<std::string> SpecialTokenString(const Json& cfg, const std::string& key, const std::string& fallback,
                                       const std::string& where) {
  if (!cfg.contains(key) || cfg[key].is_null()) return fallback;
  const Json& v = cfg[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return Status::InvalidArgument("field " + QuoteText(key) + " is " + QuoteJson(v), where, "a token string");
}

Result<std::unique_ptr<TextTokenizer>> LoadTextTokenizer(const TokenizerConfig& config) {
  switch (config.kind) {
    case TokenizerKind::kClipBpe:
      return std::unique_ptr<TextTokenizer>();
    case TokenizerKind::kSentencePiece: {
      VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<SentencePieceTokenizer> t, SentencePieceTokenizer::Load(config));
      return std::unique_ptr<TextTokenizer>(std::move(t));
    }
    case TokenizerKind::kHfBpe: {
      VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<HfBpeTokenizer> t, HfBpeTokenizer::Load(config));
      return std::unique_ptr<TextTokenizer>(std::move(t));
    }
    case TokenizerKind::kWordPiece: {
      VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<WordPieceTokenizer> t, WordPieceTokenizer::Load(config));
      return std::unique_ptr<TextTokenizer>(std::move(t));
    }
  }
  return Status::Internal("unknown tokenizer kind");
}

}  // namespace visalign::clip
