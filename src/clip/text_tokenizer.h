// The tokenizer a model's config names (TokenizerConfig::kind), behind one interface so the model
// holds one pointer whatever the kind: the checkpoint's SentencePiece model (SigLIP) or a Hugging
// Face tokenizers BPE read from tokenizer.json (SigLIP2's Gemma tokenizer). CLIP's bundled BPE is the
// process-wide BpeTokenizer::Default() (tokenizer.h), not loaded per model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/clip.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::clip {

class TextTokenizer {
 public:
  virtual ~TextTokenizer() = default;
  // Unpadded ids for a text tower of `context_length` positions (cleaning, encoding, the
  // tokenizer's special tokens, truncation); fails only on invalid UTF-8 or context_length < 1.
  virtual Result<std::vector<int32_t>> Tokenize(std::string_view text, int context_length) const = 0;
};

// A special token of a Hugging Face tokenizer_config.json (`cfg[key]`): a string or an AddedToken
// object {"content": ...}; `fallback` when absent or null. `where` names the file in errors.
Result<std::string> SpecialTokenString(const Json& cfg, const std::string& key, const std::string& fallback,
                                       const std::string& where);

// The tokenizer of `config` (as ReadClipConfig resolved it): nullptr for kClipBpe.
Result<std::unique_ptr<TextTokenizer>> LoadTextTokenizer(const TokenizerConfig& config);

}  // namespace visalign::clip
