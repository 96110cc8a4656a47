#include "visalign/benchmarks/hues/embeddings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "visalign/core/json.h"
#include "visalign/core/untrusted.h"

namespace visalign::hues {
namespace {

constexpr const char* kBoardTensor = "board";
constexpr const char* kWordsTensor = "words";

clip::Matrix FromRows(const std::vector<std::vector<float>>& rows, size_t begin, size_t end) {
  clip::Matrix m(static_cast<int>(end - begin), rows.empty() ? 0 : static_cast<int>(rows.front().size()));
  for (size_t r = begin; r < end; ++r) std::copy(rows[r].begin(), rows[r].end(), m.row(static_cast<int>(r - begin)));
  return m;
}

// Cosine above which two embeddings count as the same input's (float noise of one tower).
constexpr double kSameEmbeddingCosine = 0.999;

double Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0;
}

// An image embedder decodes pixels: the probe (cell 0's colour at twice the size: the same pixels
// after any resize, another data URL) embeds as cell 0 does, and the board's colours do not all
// embed alike. A server that embeds the data URL as text breaks one of the two.
Status CheckImagesWereSeenAsImages(const std::vector<std::vector<float>>& rows, const std::string& endpoint) {
  const auto refuse = [&](const std::string& what) {
    return Status::InvalidArgument("the server embeds images as text: " + what, endpoint,
                                   "an embedding server that decodes data:image/png;base64 inputs as images (a CLIP or "
                                   "SigLIP image tower; see docs/hues.md), or --embeddings FILE");
  };
  double least = 1;
  for (size_t i = 1; i < kCells; ++i) least = std::min(least, Cosine(rows[0], rows[i]));
  if (least > kSameEmbeddingCosine)
    return refuse(
        fmt::format("all {} board colours got the same embedding (least cosine to cell 0: {:.6f})", kCells, least));
  const double probe = Cosine(rows[0], rows[kCells]);
  if (probe < kSameEmbeddingCosine)
    return refuse(
        fmt::format("one solid colour sent at two sizes got different embeddings (cosine {:.6f}, expected "
                    "above {})",
                    probe, kSameEmbeddingCosine));
  return Status::Ok();
}

}  // namespace

std::vector<imaging::Image> BoardPatchImages(const Board& board, int size) {
  std::vector<imaging::Image> patches;
  patches.reserve(kCells);
  for (const Cell& c : board.cells()) {
    imaging::Image image(size, size);
    for (size_t i = 0; i < image.rgb.size(); i += 3) {
      image.rgb[i] = c.rgb.r;
      image.rgb[i + 1] = c.rgb.g;
      image.rgb[i + 2] = c.rgb.b;
    }
    patches.push_back(std::move(image));
  }
  return patches;
}

std::vector<WordPredictions> RankCells(const clip::Matrix& board, const clip::Matrix& texts,
                                       const std::vector<std::string>& words) {
  const clip::Matrix similarity = clip::CosineSimilarity(texts, board);
  std::vector<WordPredictions> out;
  std::vector<int> order(static_cast<size_t>(board.rows));
  for (size_t w = 0; w < words.size(); ++w) {
    const float* row = similarity.row(static_cast<int>(w));
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + kTopK, order.end(),
                      [&](int a, int b) { return row[a] != row[b] ? row[a] > row[b] : a < b; });
    WordPredictions wp{words[w], {}};
    for (int k = 0; k < kTopK; ++k) wp.top.push_back({order[k], static_cast<double>(row[order[k]])});
    out.push_back(std::move(wp));
  }
  return out;
}

Result<std::vector<WordPredictions>> PredictFromEmbeddings(const HuesEmbeddings& e,
                                                           const std::vector<std::string>& words,
                                                           const std::string& prompt_template) {
  if (words.empty()) return Status::InvalidArgument("no words to predict", "word list", "at least one word");
  if (prompt_template != e.prompt_template) {
    return Status::InvalidArgument("the embeddings were made with template \"" + e.prompt_template + "\"",
                                   "--template \"" + prompt_template + "\"",
                                   "the template the word embeddings were computed with");
  }
  std::map<std::string, int> row_of;
  for (size_t i = 0; i < e.words.size(); ++i) row_of.emplace(e.words[i], static_cast<int>(i));
  clip::Matrix texts(static_cast<int>(words.size()), e.texts.cols);
  for (size_t w = 0; w < words.size(); ++w) {
    const auto it = row_of.find(words[w]);
    if (it == row_of.end()) {
      return Status::InvalidArgument(
          "no embedding of the word \"" + words[w] + "\"", "embeddings",
          fmt::format("embeddings of every word to predict ({} words given)", e.words.size()));
    }
    std::copy(e.texts.row(it->second), e.texts.row(it->second) + e.texts.cols, texts.row(static_cast<int>(w)));
  }
  return RankCells(e.board, texts, words);
}

Status WriteEmbeddingsFile(const std::filesystem::path& path, const HuesEmbeddings& e) {
  clip::MatrixFile file;
  file.matrices.emplace(kBoardTensor, e.board);
  file.matrices.emplace(kWordsTensor, e.texts);
  file.metadata = {{"format", kEmbeddingsFormat},
                   {"words", Json(e.words).dump()},
                   {"prompt_template", e.prompt_template},
                   {"model", e.model}};
  return clip::WriteMatrixFile(path, file);
}

Result<HuesEmbeddings> ReadEmbeddingsFile(const std::filesystem::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(clip::MatrixFile file, clip::ReadMatrixFile(path));
  const std::string where = path.string();
  const auto meta = [&](const std::string& key) -> const std::string* {
    const auto it = file.metadata.find(key);
    return it == file.metadata.end() ? nullptr : &it->second;
  };
  if (meta("format") == nullptr || *meta("format") != kEmbeddingsFormat) {
    return Status::InvalidArgument(
        "metadata \"format\" is " + (meta("format") ? QuoteText(*meta("format")) : "missing"), where,
        std::string("\"") + kEmbeddingsFormat + "\" (layout in docs/hues.md)");
  }
  HuesEmbeddings e;
  if (meta("prompt_template") != nullptr) e.prompt_template = *meta("prompt_template");
  if (meta("model") != nullptr) e.model = *meta("model");
  const Result<Json> words = meta("words") ? ParseJson(*meta("words")) : Result<Json>(Json());
  if (!words.ok() || !words->is_array() ||
      !std::all_of(words->begin(), words->end(), [](const Json& w) { return w.is_string(); })) {
    return Status::InvalidArgument("metadata \"words\" is not a JSON array of strings", where,
                                   "the words of the \"words\" rows, in order");
  }
  e.words = words->get<std::vector<std::string>>();
  for (const char* name : {kBoardTensor, kWordsTensor}) {
    if (!file.matrices.count(name)) {
      return Status::InvalidArgument(std::string("missing tensor \"") + name + "\"", where,
                                     "tensors \"board\" [480, D] and \"words\" [W, D]");
    }
  }
  e.board = std::move(file.matrices[kBoardTensor]);
  e.texts = std::move(file.matrices[kWordsTensor]);
  if (e.board.rows != kCells || e.texts.rows != static_cast<int>(e.words.size()) || e.texts.cols != e.board.cols) {
    return Status::InvalidArgument(fmt::format("tensors board [{}, {}] and words [{}, {}] with {} words", e.board.rows,
                                               e.board.cols, e.texts.rows, e.texts.cols, e.words.size()),
                                   where, fmt::format("board [{}, D] and words [W, D] with W words", kCells));
  }
  if (file.matrices.size() != 2) {
    return Status::InvalidArgument(fmt::format("{} tensors", file.matrices.size()), where,
                                   "exactly the tensors \"board\" and \"words\"");
  }
  // Embeddings of no dimensions, or with an infinite or NaN value, would rank cells by NaN (or all
  // alike): predictions that look like numbers and mean nothing.
  if (e.board.cols == 0) {
    return Status::InvalidArgument("embeddings of 0 dimensions", where, "board [480, D] and words [W, D] with D >= 1");
  }
  for (const auto& [name, m] : {std::pair{kBoardTensor, &e.board}, std::pair{kWordsTensor, &e.texts}}) {
    const auto bad = std::find_if(m->data.begin(), m->data.end(), [](float v) { return !std::isfinite(v); });
    if (bad != m->data.end()) {
      const auto at = static_cast<size_t>(bad - m->data.begin());
      return Status::InvalidArgument(
          fmt::format("tensor \"{}\" row {} holds {}", name, at / static_cast<size_t>(m->cols), *bad), where,
          "finite embeddings");
    }
  }
  return e;
}

Result<HuesEmbeddings> FetchHuesEmbeddings(const backends::EmbeddingsOptions& options,
                                           std::shared_ptr<backends::HttpTransport> transport, const Board& board,
                                           const std::vector<std::string>& words, const std::string& prompt_template,
                                           const std::atomic<bool>& stop) {
  std::vector<std::string> prompts;
  for (const std::string& w : words) {
    VISALIGN_ASSIGN_OR_RETURN(std::string prompt, ApplyTemplate(prompt_template, w));
    prompts.push_back(std::move(prompt));
  }
  std::vector<std::string> inputs;
  for (const imaging::Image& patch : BoardPatchImages(board, kEndpointPatchSize)) {
    VISALIGN_ASSIGN_OR_RETURN(std::string png, imaging::EncodePng(patch));
    inputs.push_back(backends::PngDataUrl(png));
  }
  {
    imaging::Image probe = BoardPatchImages(board, 2 * kEndpointPatchSize).front();
    VISALIGN_ASSIGN_OR_RETURN(std::string png, imaging::EncodePng(probe));
    inputs.push_back(backends::PngDataUrl(png));
  }
  inputs.insert(inputs.end(), prompts.begin(), prompts.end());
  VISALIGN_ASSIGN_OR_RETURN(std::vector<std::vector<float>> rows,
                            backends::FetchEmbeddings(options, std::move(transport), inputs, stop));
  VISALIGN_RETURN_IF_ERROR(CheckImagesWereSeenAsImages(rows, options.endpoint.base_url));
  HuesEmbeddings e;
  e.board = FromRows(rows, 0, kCells);
  e.texts = FromRows(rows, kCells + 1, rows.size());
  e.words = words;
  e.prompt_template = prompt_template;
  e.model = options.model.empty() ? options.endpoint.base_url : options.model + " at " + options.endpoint.base_url;
  return e;
}

Result<std::string> ApplyTemplate(const std::string& prompt_template, const std::string& word) {
  const size_t at = prompt_template.find("{}");
  if (at == std::string::npos)
    return Status::InvalidArgument("template \"" + prompt_template + "\" has no {}", "word prompt template",
                                   "a template containing {} where the word goes, e.g. \"a photo of {}\"");
  return prompt_template.substr(0, at) + word + prompt_template.substr(at + 2);
}

}  // namespace visalign::hues
