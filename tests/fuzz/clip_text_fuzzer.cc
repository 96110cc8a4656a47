// CLIP text cleaning and tokenization, as prompts and concept words from collaborators' files
// reach them. Tokenize fails only on invalid UTF-8; its ids are sot ... eot, within the context
// length and the vocabulary; valid UTF-8 round-trips through code points.
#include <string>

#include "clip/text_clean.h"
#include "clip/tokenizer.h"
#include "fuzz/fuzz_support.h"
#include "visalign/clip.h"

namespace clip = visalign::clip;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = visalign::fuzz::AsText(data, size);
  const auto code_points = clip::DecodeUtf8(text);
  visalign::fuzz::CheckErrorLine(code_points.status());
  const auto ids = clip::Tokenize(text, clip::kDefaultContextLength);
  VISALIGN_FUZZ_CHECK(ids.ok() == code_points.ok());
  if (!code_points.ok()) return 0;
  VISALIGN_FUZZ_CHECK(clip::EncodeUtf8(*code_points) == text, "UTF-8 does not round-trip");

  const auto tokenizer = clip::BpeTokenizer::Default();
  VISALIGN_FUZZ_CHECK(tokenizer.ok(), tokenizer.status().ToString());
  VISALIGN_FUZZ_CHECK(ids->size() >= 2 && ids->size() <= static_cast<size_t>(clip::kDefaultContextLength));
  const size_t vocab = (*tokenizer)->vocab_size();
  for (const int32_t id : *ids) VISALIGN_FUZZ_CHECK(id >= 0 && static_cast<size_t>(id) < vocab);
  VISALIGN_FUZZ_CHECK(ids->front() == static_cast<int32_t>(vocab) - 2 && ids->back() == static_cast<int32_t>(vocab) - 1,
                      "not wrapped in sot ... eot");

  const std::u32string cleaned = clip::CleanText(*code_points);
  for (const int32_t id : (*tokenizer)->EncodeCleaned(cleaned))
    VISALIGN_FUZZ_CHECK(id >= 0 && static_cast<size_t>(id) < vocab);
  return 0;
}
