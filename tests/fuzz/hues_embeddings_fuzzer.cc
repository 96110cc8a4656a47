// The `hues run --embeddings FILE` reader, as a file another program (or another person) wrote
// reaches it: ReadEmbeddingsFile checks the safetensors layout and metadata. An accepted file has
// 480 board rows, one row per word, at least one dimension and only finite values; predicting its
// words from it gives five cells each, on the board, with finite similarities.
#include <cmath>
#include <string>

#include "fuzz/fuzz_support.h"
#include "visalign/benchmarks/hues/embeddings.h"

namespace hues = visalign::hues;

namespace {

void CheckFinite(const visalign::clip::Matrix& m) {
  for (float v : m.data) VISALIGN_FUZZ_CHECK(std::isfinite(v));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = visalign::fuzz::WriteScratchFile("embeddings.safetensors", visalign::fuzz::AsText(data, size));
  const auto e = hues::ReadEmbeddingsFile(path);
  visalign::fuzz::CheckErrorLine(e.status());
  if (!e.ok()) return 0;
  VISALIGN_FUZZ_CHECK(e->board.rows == hues::kCells && e->board.cols >= 1);
  VISALIGN_FUZZ_CHECK(e->texts.rows == static_cast<int>(e->words.size()) && e->texts.cols == e->board.cols);
  CheckFinite(e->board);
  CheckFinite(e->texts);
  if (e->words.empty()) return 0;
  const auto predictions = hues::PredictFromEmbeddings(*e, e->words, e->prompt_template);
  VISALIGN_FUZZ_CHECK(predictions.ok(), predictions.status().ToString());
  VISALIGN_FUZZ_CHECK(predictions->size() == e->words.size());
  for (const hues::WordPredictions& p : *predictions) {
    VISALIGN_FUZZ_CHECK(p.top.size() == static_cast<size_t>(hues::kTopK));
    for (const auto& cell : p.top) {
      VISALIGN_FUZZ_CHECK(cell.cell >= 0 && cell.cell < hues::kCells);
      VISALIGN_FUZZ_CHECK(std::isfinite(cell.similarity), std::to_string(cell.similarity));
    }
  }
  return 0;
}
