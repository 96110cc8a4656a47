#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "clip/batching.h"
#include "clip/config.h"
#include "clip/text_tokenizer.h"
#include "clip/towers.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"
#include "visalign/core/progress.h"

namespace visalign::clip {

struct ClipModel::Impl {
  ClipConfig config;
  ClipWeights weights;
  std::unique_ptr<TextTokenizer> tokenizer;  // null for TokenizerKind::kClipBpe (the shared BpeTokenizer)
  ClipLoadOptions options;
  Precision precision = Precision::kFp32;
  std::string precision_reason;
  std::string hub_source;  // the config's visalign_hub_source (a model fetched by name), part of the fingerprint
  mutable std::mutex fingerprint_mutex;
  mutable std::optional<std::string> fingerprint;
  bool ShowProgress(int count) const { return options.show_progress && count > options.max_batch; }
};

namespace {

// Runs encode_chunk(chunk) for every chunk as `plan` says and writes row r of its result to output
// row order[chunk.begin + r] (order: the input index of each position of the encoding order).
// Chunks are handed to threads in the given sequence, one at a time.
template <typename EncodeChunk>
Matrix EncodeChunks(int count, int embed_dim, const std::vector<Chunk>& chunks, const std::vector<int>& order,
                    const ThreadPlan& plan, EncodeChunk encode_chunk, Progress& progress) {
  const int threads = ThreadCount();
  Matrix out(count, embed_dim);
  ParallelFor(
      chunks.size(),
      [&](size_t c) {
        omp_set_num_threads(plan.across_threads ? 1 : threads);
        const Chunk& chunk = chunks[c];
        const Matrix part = encode_chunk(chunk);
        for (int r = 0; r < part.rows; ++r)
          std::copy(part.row(r), part.row(r) + embed_dim, out.row(order[chunk.begin + r]));
        progress.Add(static_cast<uint64_t>(chunk.end - chunk.begin));
      },
      plan.across_threads ? threads : 1);
  return out;
}

std::vector<int> IdentityOrder(int count) {
  std::vector<int> order(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) order[i] = i;
  return order;
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
    std::string text = weights_hash + "\n" + PreprocessFingerprintText(impl_->config.preprocess);
    if (impl_->precision != Precision::kFp32) text += fmt::format("\nprecision {}", PrecisionName(impl_->precision));
    if (!impl_->hub_source.empty()) text += "\nsource " + impl_->hub_source;
    impl_->fingerprint = Sha256Hex(text);
  }
  return *impl_->fingerprint;
}

Result<std::vector<int32_t>> ClipModel::Tokenize(std::string_view text) const {
  if (!impl_->config.tokenizer.missing.empty())
    return Status::NotFound("no tokenizer", "", impl_->config.tokenizer.missing);
  if (impl_->tokenizer) return impl_->tokenizer->Tokenize(text, context_length());
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
  std::vector<int> lengths(padded.size());
  for (size_t i = 0; i < padded.size(); ++i) lengths[i] = TextPositions(t, padded[i]);
  const ThreadPlan plan = PlanThreads(count, impl_->options.max_batch, ThreadCount());
  const TextBatches buckets = BucketByLength(lengths, plan.chunk_items);
  Progress progress("clip texts", static_cast<uint64_t>(count), impl_->ShowProgress(count));
  return EncodeChunks(
      count, embed_dim(), buckets.batches, buckets.order, plan,
      [&](const Chunk& c) {
        std::vector<std::vector<int32_t>> batch;
        for (int p = c.begin; p < c.end; ++p) batch.push_back(padded[buckets.order[p]]);
        return EncodeText(impl_->config, impl_->weights, batch, ForwardOptions{});
      },
      progress);
}

// EncodeImages and EncodePreprocessedImages: chunks of max_batch images, chunk_pixels(begin, end)
// giving each chunk's pixel rows, one EncodePixels call per chunk (too small for a display of its own).
template <typename ChunkPixels>
Result<Matrix> ClipModel::EncodeImageChunks(int count, ChunkPixels chunk_pixels) const {
  const int max_batch = impl_->options.max_batch;
  Progress progress("clip images", static_cast<uint64_t>(count), impl_->ShowProgress(count));
  Matrix out(count, embed_dim());
  for (int begin = 0; begin < count; begin += max_batch) {
    const int end = std::min(count, begin + max_batch);
    Result<Matrix> pixels = chunk_pixels(begin, end);
    if (!pixels.ok()) return pixels.status();
    VISALIGN_ASSIGN_OR_RETURN(Matrix part, EncodePixels(*pixels));
    std::copy(part.data.begin(), part.data.end(), out.row(begin));
    progress.Add(static_cast<uint64_t>(end - begin));
  }
  return out;
}

Result<Matrix> ClipModel::EncodeImages(const std::vector<imaging::Image>& images) const {
  // Preprocess per chunk so memory stays bounded for long image lists.
  return EncodeImageChunks(static_cast<int>(images.size()), [&](int begin, int end) {
    return PreprocessImages({images.begin() + begin, images.begin() + end}, impl_->config.preprocess);
  });
}

Result<Matrix> ClipModel::EncodePreprocessedImages(const Matrix& pixels) const {
  const size_t row_floats = size_t{3} * image_size() * image_size();
  if (static_cast<size_t>(pixels.cols) != row_floats ||
      pixels.data.size() != static_cast<size_t>(pixels.rows) * pixels.cols) {
    return Status::InvalidArgument(fmt::format("pixel matrix has {} columns", pixels.cols), "EncodePreprocessedImages",
                                   fmt::format("{} floats per image (CHW)", row_floats));
  }
  return EncodeImageChunks(pixels.rows, [&](int begin, int end) -> Result<Matrix> {
    Matrix chunk(end - begin, pixels.cols);
    std::copy(pixels.row(begin), pixels.row(end), chunk.data.begin());
    return chunk;
  });
}

Result<Matrix> ClipModel::EncodePixels(const Matrix& pixels) const {
  const int s = image_size();
  if (pixels.cols != 3 * s * s || pixels.data.size() != static_cast<size_t>(pixels.rows) * pixels.cols) {
    return Status::InvalidArgument(fmt::format("pixel matrix has {} columns", pixels.cols), "EncodePixels",
                                   fmt::format("3 * {} * {} = {} floats per image (CHW)", s, s, 3 * s * s));
  }
  Progress progress("clip images", static_cast<uint64_t>(pixels.rows), impl_->ShowProgress(pixels.rows));
  const int threads = ThreadCount();
  const ThreadPlan plan = PlanThreads(pixels.rows, impl_->options.max_batch, threads);
  return EncodeChunks(
      pixels.rows, embed_dim(), EvenChunks(pixels.rows, plan, threads), IdentityOrder(pixels.rows), plan,
      [&](const Chunk& c) {
        Matrix chunk(c.end - c.begin, pixels.cols);
        std::copy(pixels.row(c.begin), pixels.row(c.begin) + static_cast<size_t>(c.end - c.begin) * pixels.cols,
                  chunk.data.begin());
        return EncodeVision(impl_->config, impl_->weights, chunk, ForwardOptions{});
      },
      progress);
}

Result<Precision> ParsePrecision(std::string_view name) {
  for (Precision p : {Precision::kFp32, Precision::kBf16, Precision::kBf16x3, Precision::kAuto}) {
    if (name == PrecisionName(p)) return p;
  }
  return Status::InvalidArgument(fmt::format("precision \"{}\"", name), "precision", "fp32, bf16, bf16x3 or auto");
}

std::string_view PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kBf16:
      return "bf16";
    case Precision::kBf16x3:
      return "bf16x3";
    case Precision::kAuto:
      return "auto";
  }
  return "fp32";
}

Status CheckPrecisionSupported(Precision precision) {
  const Bf16Capability& cpu = Bf16Support();
  if ((precision != Precision::kBf16 && precision != Precision::kBf16x3) || cpu.available) return Status::Ok();
  return Status::Unsupported(fmt::format("precision {}", PrecisionName(precision)),
                             "this CPU, where oneDNN uses " + cpu.isa,
                             "a CPU with AVX512_BF16 or AMX; use fp32, or auto (bf16 only where available)");
}

namespace {

// The precision a model runs in for a requested one, and why; kUnsupported for bf16 without the
// instructions.
Result<std::pair<Precision, std::string>> ResolvePrecision(Precision requested) {
  const Bf16Capability& cpu = Bf16Support();
  switch (requested) {
    case Precision::kFp32:
      return std::pair{Precision::kFp32, std::string("requested (fp32 is the default)")};
    case Precision::kBf16:
    case Precision::kBf16x3:
      VISALIGN_RETURN_IF_ERROR(CheckPrecisionSupported(requested));
      return std::pair{requested, "requested; this CPU has " + cpu.isa};
    case Precision::kAuto:
      if (cpu.amx) return std::pair{Precision::kBf16, "auto: this CPU has " + cpu.isa};
      if (cpu.available) {
        return std::pair{Precision::kFp32,
                         "auto: this CPU has " + cpu.isa +
                             " but no AMX, where bf16 GEMMs are slower than fp32 (docs/performance.md)"};
      }
      return std::pair{Precision::kFp32, "auto: no AVX512_BF16 or AMX on this CPU (oneDNN uses " + cpu.isa + ")"};
  }
  return std::pair{Precision::kFp32, std::string("requested")};
}

}  // namespace

Precision ClipModel::precision() const { return impl_->precision; }
const std::string& ClipModel::precision_reason() const { return impl_->precision_reason; }

Result<ClipModel> LoadClipModel(const std::filesystem::path& dir, const ClipLoadOptions& options) {
  if (options.max_batch < 1) {
    return Status::InvalidArgument(fmt::format("max_batch {}", options.max_batch), "ClipLoadOptions", "at least 1");
  }
  auto impl = std::make_unique<ClipModel::Impl>();
  impl->options = options;
  VISALIGN_ASSIGN_OR_RETURN(auto precision, ResolvePrecision(options.precision));
  std::tie(impl->precision, impl->precision_reason) = std::move(precision);
  VISALIGN_ASSIGN_OR_RETURN(impl->config, ReadClipConfig(dir));
  impl->hub_source = HubSourceOf(impl->config.config_file);
  VISALIGN_ASSIGN_OR_RETURN(impl->weights, LoadClipWeights(impl->config, impl->precision));
  VISALIGN_ASSIGN_OR_RETURN(impl->tokenizer, LoadTextTokenizer(impl->config.tokenizer));
  return ClipModel(std::move(impl));
}

}  // namespace visalign::clip
