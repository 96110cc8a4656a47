// BERT WordPiece (CLIPA's tokenizer, src/clip/wordpiece_tokenizer.h) with the clipa-tiny fixture's
// bert-base-uncased vocabulary, as prompts and concept words from collaborators' files reach it:
// Tokenize fails only on invalid UTF-8; its ids start with [CLS], fit the context and the
// vocabulary; the body of the cleaned text holds vocabulary ids only.
#include <memory>
#include <string>

#include "clip/config.h"
#include "clip/text_clean.h"
#include "clip/wordpiece_tokenizer.h"
#include "fuzz/fuzz_support.h"
#include "testing/dirs.h"

namespace clip = visalign::clip;

namespace {
constexpr int kContext = 32;

const clip::WordPieceTokenizer& Tokenizer() {
  static const std::unique_ptr<clip::WordPieceTokenizer> tokenizer = [] {
    const auto config = clip::ReadClipConfig(visalign::testing::SharedDir() / "fixtures" / "clipa-tiny");
    VISALIGN_FUZZ_CHECK(config.ok(), config.status().ToString());
    auto t = clip::WordPieceTokenizer::Load(config->tokenizer);
    VISALIGN_FUZZ_CHECK(t.ok(), t.status().ToString());
    return std::move(t).value();
  }();
  return *tokenizer;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = visalign::fuzz::AsText(data, size);
  const auto code_points = clip::DecodeUtf8(text);
  const auto ids = Tokenizer().Tokenize(text, kContext);
  VISALIGN_FUZZ_CHECK(ids.ok() == code_points.ok());
  if (!ids.ok()) {
    visalign::fuzz::CheckErrorLine(ids.status());
    return 0;
  }
  const size_t vocab = Tokenizer().vocab_size();
  VISALIGN_FUZZ_CHECK(!ids->empty() && ids->size() <= static_cast<size_t>(kContext));
  VISALIGN_FUZZ_CHECK(ids->front() == 101, "not started with [CLS]");
  for (const int32_t id : *ids) VISALIGN_FUZZ_CHECK(id >= 0 && static_cast<size_t>(id) < vocab);
  for (const int32_t id : Tokenizer().EncodeCleaned(clip::WhitespaceCleanText(*code_points))) {
    VISALIGN_FUZZ_CHECK(id >= 0 && static_cast<size_t>(id) < vocab);
  }
  return 0;
}
