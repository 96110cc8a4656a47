// The CSV parser and the Hues and Cues loaders, as files from collaborators reach them. The first
// byte picks the loader (modulo the number of loaders), the rest is the file:
//   0 ParseCsv             1 words.csv (Vocabulary)   2 human answers      3 board.csv
//   4 macro-region map     5 nonsense words           6 model catalog      7 predictions (results.csv)
//   8 predictions (JSONL)  9 word list (.csv)        10 word list (text)
// Loaders read the shipped vocabulary, board and nonsense words ($VISALIGN_DATA) where they need
// them. Parsed CSV rows have as many fields as the header.
#include <string>

#include "fuzz/fuzz_support.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"

namespace hues = visalign::hues;
using visalign::fuzz::CheckErrorLine;
using visalign::fuzz::WriteScratchFile;

namespace {

constexpr uint8_t kLoaders = 11;

struct Shipped {
  hues::Vocabulary vocabulary;
  hues::Board board;
  std::vector<hues::NonsenseWord> nonsense;
};

const Shipped& ShippedData() {
  static const Shipped shipped = [] {
    auto vocabulary = hues::Vocabulary::Default();
    auto board = hues::Board::Default(hues::Chromaticity::kDisplay);
    auto nonsense = hues::DefaultNonsenseVocabulary();
    VISALIGN_FUZZ_CHECK(vocabulary.ok() && board.ok() && nonsense.ok(), "the shipped Hues data ($VISALIGN_DATA)");
    return Shipped{std::move(vocabulary).value(), std::move(board).value(), std::move(nonsense).value()};
  }();
  return shipped;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [selector, text] = visalign::fuzz::Select(data, size);
  const Shipped& shipped = ShippedData();
  switch (selector % kLoaders) {
    case 0: {
      const auto table = visalign::ParseCsv(text, "input.csv");
      CheckErrorLine(table.status());
      if (table.ok()) {
        VISALIGN_FUZZ_CHECK(table->rows.size() == table->line_numbers.size());
        for (const auto& row : table->rows) VISALIGN_FUZZ_CHECK(row.size() == table->header.size());
      }
      break;
    }
    case 1:
      CheckErrorLine(hues::Vocabulary::Load(WriteScratchFile("words.csv", text)).status());
      break;
    case 2:
      CheckErrorLine(hues::LoadHumans(WriteScratchFile("humans.csv", text), shipped.vocabulary).status());
      break;
    case 3:
      CheckErrorLine(hues::Board::Load(WriteScratchFile("board.csv", text), hues::Chromaticity::kDisplay).status());
      break;
    case 4:
      CheckErrorLine(hues::MacroMap::Load(WriteScratchFile("macro_regions.csv", text)).status());
      break;
    case 5:
      CheckErrorLine(hues::LoadNonsenseVocabulary(WriteScratchFile("nonsense.csv", text)).status());
      break;
    case 6:
      CheckErrorLine(hues::LoadCatalog(WriteScratchFile("catalog.csv", text)).status());
      break;
    case 7:
    case 8: {
      const bool jsonl = selector % kLoaders == 8;
      const auto path = WriteScratchFile(jsonl ? "predictions.jsonl" : "results.csv", text);
      const auto loaded =
          hues::LoadPredictions(path, jsonl ? hues::PredictionFormat::kJsonl : hues::PredictionFormat::kPeer,
                                shipped.vocabulary, shipped.board, shipped.nonsense);
      CheckErrorLine(loaded.status());
      if (loaded.ok())
        for (const auto& model : *loaded)
          for (const auto& word : model.words)
            VISALIGN_FUZZ_CHECK(word.empty() || word.size() == static_cast<size_t>(hues::kTopK));
      break;
    }
    case 9:
      CheckErrorLine(
          hues::ReadWordList(WriteScratchFile("words_list.csv", text).string(), shipped.vocabulary).status());
      break;
    default:
      CheckErrorLine(hues::ReadWordList(WriteScratchFile("words.txt", text).string(), shipped.vocabulary).status());
  }
  return 0;
}
