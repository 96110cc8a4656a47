#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "clip/config.h"
#include "clip/sentencepiece_tokenizer.h"
#include "clip/towers.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"
#include "visalign/core/progress.h"

namespace visalign::clip {

struct ClipModel::Impl {
  ClipConfig config;
  ClipWeights weights;
  std::unique_ptr<SentencePieceTokenizer> sentencepiece;  // TokenizerKind::kSentencePiece only
  ClipLoadOptions options;
  mutable std::mutex fingerprint_mutex;
  mutable std::optional<std::string> fingerprint;
  bool ShowProgress(int count) const { return options.show_progress && count > options.max_batch; }
};

namespace {

// With at least this many items per thread, a batch is split across threads (each encoding its own
// items single-threaded) instead of running every operation on all threads. The bound keeps the
// imbalance of uneven splits small.
constexpr int kMinItemsPerThread = 4;

// Encodes `count` items with ThreadCount() threads in chunks totalling at most max_batch items at a
// time. Large batches are split into one contiguous slice per thread: whole forward passes run
// independently, with no synchronisation per operation (barriers dominate on a busy machine, where
// threads are descheduled at different times) and single-threaded GEMMs at full efficiency. Small
// batches run each operation on all threads (oneDNN and the OpenMP loops of kernels.cc).
template <typename EncodeChunk>
Matrix Chunked(int count, int embed_dim, int max_batch, EncodeChunk encode_chunk, Progress& progress) {
  const int threads = ThreadCount();
  const int slices = count >= kMinItemsPerThread * threads ? threads : 1;
  const int threads_per_slice = slices > 1 ? 1 : threads;
  const int slice_batch = std::max(1, max_batch / slices);
  Matrix out(count, embed_dim);
  ParallelFor(
      static_cast<size_t>(slices),
      [&](size_t slice) {
        omp_set_num_threads(threads_per_slice);
        const int slice_begin = static_cast<int>(static_cast<int64_t>(count) * static_cast<int64_t>(slice) / slices);
        const int slice_end = static_cast<int>(static_cast<int64_t>(count) * static_cast<int64_t>(slice + 1) / slices);
        for (int begin = slice_begin; begin < slice_end; begin += slice_batch) {
          const int end = std::min(slice_end, begin + slice_batch);
          const Matrix part = encode_chunk(begin, end);
          std::copy(part.data.begin(), part.data.end(), out.row(begin));
          progress.Add(static_cast<uint64_t>(end - begin));
        }
      },
      slices);
  return out;
}

}  // namespace

void NormalizeRows(Matrix& m) {
  constexpr double kMinNorm = 1e-12;
  for (int r = 0; r < m.rows; ++r) {
    float* row = m.row(r);
    double sq = 0.0;
    for (int c = 0; c < m.cols; ++c) sq += static_cast<double>(row[c]) * row[c];
    const auto norm = static_cast<float>(std::max(std::sqrt(sq), kMinNorm));
    for (int c = 0; c < m.cols; ++c) row[c] /= norm;
  }
}

Matrix CosineSimilarity(const Matrix& a, const Matrix& b) {
  Matrix na = a;
  Matrix nb = b;
  NormalizeRows(na);
  NormalizeRows(nb);
  Matrix out(a.rows, b.rows);
  for (int i = 0; i < a.rows; ++i) {
    for (int j = 0; j < b.rows; ++j) {
      double dot = 0.0;
      for (int c = 0; c < a.cols; ++c) dot += static_cast<double>(na.at(i, c)) * nb.at(j, c);
      out.row(i)[j] = static_cast<float>(dot);
    }
  }
  return out;
}

ClipModel::ClipModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClipModel::ClipModel(ClipModel&&) noexcept = default;
ClipModel& ClipModel::operator=(ClipModel&&) noexcept = default;
ClipModel::~ClipModel() = default;

const ClipConfig& ClipModel::config() const { return impl_->config; }

float ClipModel::LogitScale() const { return std::exp(impl_->weights.logit_scale_log); }

float ClipModel::LogitBias() const { return impl_->weights.logit_bias; }

Result<std::string> ClipModel::Fingerprint() const {
  std::lock_guard<std::mutex> lock(impl_->fingerprint_mutex);
  if (!impl_->fingerprint) {
    VISALIGN_ASSIGN_OR_RETURN(std::string weights_hash, Sha256File(impl_->config.weights_file));
    impl_->fingerprint = Sha256Hex(weights_hash + "\n" + PreprocessFingerprintText(impl_->config.preprocess));
  }
  return *impl_->fingerprint;
}

Result<std::vector<int32_t>> ClipModel::Tokenize(std::string_view text) const {
  if (impl_->sentencepiece) return impl_->sentencepiece->Tokenize(text, context_length());
  return clip::Tokenize(text, context_length());
}

Result<Matrix> ClipModel::EncodeTexts(const std::vector<std::string>& texts) const {
  std::vector<std::vector<int32_t>> ids;
  ids.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    Result<std::vector<int32_t>> t = Tokenize(texts[i]);
    if (!t.ok()) return t.status().WithContext("text " + std::to_string(i + 1));
    ids.push_back(std::move(t).value());
  }
  return EncodeTokens(ids);
}

Result<Matrix> ClipModel::EncodeTokens(const std::vector<std::vector<int32_t>>& ids) const {
  const TextConfig& t = impl_->config.text;
  std::vector<std::vector<int32_t>> padded(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string where = "token ids of text " + std::to_string(i + 1);
    if (ids[i].empty() || ids[i].size() > static_cast<size_t>(t.context_length)) {
      return Status::InvalidArgument(fmt::format("{} token ids", ids[i].size()), where,
                                     fmt::format("1 to {} ids (as Tokenize returns them)", t.context_length));
    }
    for (int32_t id : ids[i]) {
      if (id < 0 || id >= t.vocab_size) {
        return Status::InvalidArgument(fmt::format("token id {}", id), where,
                                       fmt::format("ids in [0, {})", t.vocab_size));
      }
    }
    padded[i] = ids[i];
    padded[i].resize(static_cast<size_t>(t.context_length), t.pad_id);
  }
  const int count = static_cast<int>(padded.size());
  Progress progress("clip texts", static_cast<uint64_t>(count), impl_->ShowProgress(count));
  return Chunked(
      count, embed_dim(), impl_->options.max_batch,
      [&](int begin, int end) {
        const std::vector<std::vector<int32_t>> chunk(padded.begin() + begin, padded.begin() + end);
        return EncodeText(impl_->config, impl_->weights, chunk, ForwardOptions{});
      },
      progress);
}

Result<Matrix> ClipModel::EncodeImages(const std::vector<imaging::Image>& images) const {
  const int count = static_cast<int>(images.size());
  const int max_batch = impl_->options.max_batch;
  // Preprocess per chunk so memory stays bounded for long image lists (each chunk is one
  // EncodePixels call, too small for a display of its own).
  Progress progress("clip images", static_cast<uint64_t>(count), impl_->ShowProgress(count));
  Matrix out(count, embed_dim());
  for (int begin = 0; begin < count; begin += max_batch) {
    const int end = std::min(count, begin + max_batch);
    const std::vector<imaging::Image> chunk(images.begin() + begin, images.begin() + end);
    Result<Matrix> pixels = PreprocessImages(chunk, impl_->config.preprocess);
    if (!pixels.ok()) return pixels.status();
    VISALIGN_ASSIGN_OR_RETURN(Matrix part, EncodePixels(*pixels));
    std::copy(part.data.begin(), part.data.end(), out.row(begin));
    progress.Add(static_cast<uint64_t>(end - begin));
  }
  return out;
}

Result<Matrix> ClipModel::EncodePixels(const Matrix& pixels) const {
  const int s = image_size();
  if (pixels.cols != 3 * s * s || pixels.data.size() != static_cast<size_t>(pixels.rows) * pixels.cols) {
    return Status::InvalidArgument(fmt::format("pixel matrix has {} columns", pixels.cols), "EncodePixels",
                                   fmt::format("3 * {} * {} = {} floats per image (CHW)", s, s, 3 * s * s));
  }
  Progress progress("clip images", static_cast<uint64_t>(pixels.rows), impl_->ShowProgress(pixels.rows));
  return Chunked(
      pixels.rows, embed_dim(), impl_->options.max_batch,
      [&](int begin, int end) {
        Matrix chunk(end - begin, pixels.cols);
        std::copy(pixels.row(begin), pixels.row(begin) + static_cast<size_t>(end - begin) * pixels.cols,
                  chunk.data.begin());
        return EncodeVision(impl_->config, impl_->weights, chunk, ForwardOptions{});
      },
      progress);
}

Result<ClipModel> LoadClipModel(const std::filesystem::path& dir, const ClipLoadOptions& options) {
  if (options.max_batch < 1) {
    return Status::InvalidArgument(fmt::format("max_batch {}", options.max_batch), "ClipLoadOptions", "at least 1");
  }
  auto impl = std::make_unique<ClipModel::Impl>();
  impl->options = options;
  VISALIGN_ASSIGN_OR_RETURN(impl->config, ReadClipConfig(dir));
  VISALIGN_ASSIGN_OR_RETURN(impl->weights, LoadClipWeights(impl->config));
  if (impl->config.tokenizer.kind == TokenizerKind::kSentencePiece) {
    VISALIGN_ASSIGN_OR_RETURN(impl->sentencepiece, SentencePieceTokenizer::Load(impl->config.tokenizer));
  }
  return ClipModel(std::move(impl));
}

}  // namespace visalign::clip
