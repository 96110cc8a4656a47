// `hues run`: a native CLIP model plays Hues and Cues. Board patch embeddings are cached on disk,
// so runs after the first cost only the text tower. Ranking is embeddings.cc's RankCells.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstring>

#include "visalign/benchmarks/hues/embeddings.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"

namespace visalign::hues {
namespace {

constexpr std::string_view kCacheMagic = "visalign-hues-board-embeddings v1";

std::string BoardRgbBytes(const Board& board) {
  std::string bytes;
  for (const Cell& c : board.cells())
    bytes += {static_cast<char>(c.rgb.r), static_cast<char>(c.rgb.g), static_cast<char>(c.rgb.b)};
  return bytes;
}

// File layout: "<magic> <rows> <cols>\n" then rows·cols float32 (native little-endian).
std::string SerializeMatrix(const clip::Matrix& m) {
  std::string out = fmt::format("{} {} {}\n", kCacheMagic, m.rows, m.cols);
  out.append(reinterpret_cast<const char*>(m.data.data()), m.data.size() * sizeof(float));
  return out;
}

std::optional<clip::Matrix> DeserializeMatrix(const std::string& bytes, int rows, int cols) {
  const std::string header = fmt::format("{} {} {}\n", kCacheMagic, rows, cols);
  const size_t payload = static_cast<size_t>(rows) * cols * sizeof(float);
  if (bytes.size() != header.size() + payload || bytes.compare(0, header.size(), header) != 0) return std::nullopt;
  clip::Matrix m(rows, cols);
  std::memcpy(m.data.data(), bytes.data() + header.size(), payload);
  return m;
}

Result<clip::Matrix> EncodeBoard(const clip::ClipModel& model, const Board& board, BoardPixels* shared,
                                 ClipRunResult& result) {
  if (shared == nullptr) return model.EncodeImages(BoardPatchImages(board, model.image_size()));
  const int before = shared->preparations();
  VISALIGN_ASSIGN_OR_RETURN(const clip::Matrix* pixels, shared->For(board, model.config().preprocess));
  result.board_pixels_prepared = shared->preparations() != before;
  return model.EncodePreprocessedImages(*pixels);
}

}  // namespace

Result<const clip::Matrix*> BoardPixels::For(const Board& board, const clip::PreprocessConfig& preprocess) {
  const std::string key = Sha256Hex(BoardRgbBytes(board)) + "|" + clip::PreprocessFingerprintText(preprocess);
  if (key != key_) {
    key_.clear();
    pixels_ = clip::Matrix();
    VISALIGN_ASSIGN_OR_RETURN(pixels_,
                              clip::PreprocessImages(BoardPatchImages(board, preprocess.image_size), preprocess));
    key_ = key;
    ++preparations_;
  }
  return &pixels_;
}

Result<ClipRunResult> PredictWithClip(const clip::ClipModel& model, const Board& board,
                                      const std::vector<std::string>& words, const ClipRunOptions& options) {
  if (words.empty()) return Status::InvalidArgument("no words to predict", "word list", "at least one word");
  std::vector<std::string> prompts;
  for (const std::string& w : words) {
    VISALIGN_ASSIGN_OR_RETURN(std::string prompt, ApplyTemplate(options.prompt_template, w));
    prompts.push_back(std::move(prompt));
  }

  ClipRunResult result;
  std::optional<clip::Matrix> board_embeddings;
  if (!options.cache_dir.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(std::string fingerprint, model.Fingerprint());
    const std::string key = Sha256Hex(
        fmt::format("{}|board:{}|patch:{}", fingerprint, Sha256Hex(BoardRgbBytes(board)), model.image_size()));
    result.cache_file = options.cache_dir / "hues-board" / (key + ".f32");
    std::error_code ec;
    if (std::filesystem::exists(result.cache_file, ec)) {
      VISALIGN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(result.cache_file));
      board_embeddings = DeserializeMatrix(bytes, kCells, model.embed_dim());
      if (!board_embeddings)
        spdlog::warn("ignoring corrupt board-embedding cache {} (recomputing)", result.cache_file.string());
      result.cache_hit = board_embeddings.has_value();
    }
  }
  if (!board_embeddings) {
    VISALIGN_ASSIGN_OR_RETURN(clip::Matrix encoded, EncodeBoard(model, board, options.board_pixels, result));
    if (!result.cache_file.empty()) {
      VISALIGN_RETURN_IF_ERROR(EnsureDirectory(result.cache_file.parent_path()));
      VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(result.cache_file, SerializeMatrix(encoded)));
    }
    board_embeddings = std::move(encoded);
  }

  VISALIGN_ASSIGN_OR_RETURN(result.text_embeddings, model.EncodeTexts(prompts));
  result.board_embeddings = std::move(*board_embeddings);
  result.words = RankCells(result.board_embeddings, result.text_embeddings, words);
  return result;
}

}  // namespace visalign::hues
