// Hues and Cues: predictions from embeddings computed anywhere. `hues run --embeddings FILE` reads
// board-cell and word embeddings that another program wrote (e.g. docs/hues_embeddings_open_clip.py
// for architectures visalign does not run natively); `--embeddings-endpoint URL` asks an
// OpenAI-compatible /v1/embeddings server; `--save-embeddings FILE` writes what a native run
// computed. Every path ranks cells with the same RankCells, so the same embeddings give the same
// predictions. Layouts in docs/hues.md ("Embeddings from anywhere").
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "visalign/backends/embeddings.h"
#include "visalign/benchmarks/hues/board.h"
#include "visalign/benchmarks/hues/predictions.h"
#include "visalign/clip.h"
#include "visalign/imaging/image.h"

namespace visalign::hues {

// The metadata "format" value of an embeddings file.
inline constexpr const char* kEmbeddingsFormat = "visalign-hues-embeddings v1";
// Side of the solid patch images sent to an embeddings endpoint (the server resizes them; a solid
// colour stays that colour under any resize).
inline constexpr int kEndpointPatchSize = 224;

struct HuesEmbeddings {
  clip::Matrix board;              // [480 x D]: row i = board cell i (`hues board` order) as a solid patch
  std::vector<std::string> words;  // the words, before the template
  clip::Matrix texts;              // [words x D]: row j = the text embedding of template(words[j])
  std::string prompt_template = "{}";
  std::string model;  // who computed them (free text, "" = not said)
};

// One solid image of side `size` per board cell, in cell order.
std::vector<imaging::Image> BoardPatchImages(const Board& board, int size);

// The top-5 cells of each word by cosine similarity of texts row w with every board row (ties:
// the lower cell first). Requires texts.rows == words.size() and equal widths.
std::vector<WordPredictions> RankCells(const clip::Matrix& board, const clip::Matrix& texts,
                                       const std::vector<std::string>& words);

// Predictions for `words` (each must be among e.words) made with `prompt_template` (must be
// e.prompt_template: embeddings of other prompts would be silently wrong).
Result<std::vector<WordPredictions>> PredictFromEmbeddings(const HuesEmbeddings& e,
                                                           const std::vector<std::string>& words,
                                                           const std::string& prompt_template);

// safetensors: F32 tensors "board" [480, D] and "words" [W, D]; metadata "format" =
// kEmbeddingsFormat, "words" = a JSON array of the W words, "prompt_template", "model".
Status WriteEmbeddingsFile(const std::filesystem::path& path, const HuesEmbeddings& e);
// Reads that layout (F16/BF16/F64 tensors are converted), checking every field; errors name the file.
Result<HuesEmbeddings> ReadEmbeddingsFile(const std::filesystem::path& path);

// Embeddings of the board (kEndpointPatchSize PNG data URLs) and of template(word) for each word
// from an OpenAI-compatible endpoint (visalign/backends/embeddings.h). One more image input, after
// the board, checks that the server sees images as images: cell 0's colour at twice the size must
// embed as cell 0 (cosine > 0.999), and the 480 colours must not all embed alike; a server that
// embeds the data URLs as text (an OpenAI or TEI text model) fails one: InvalidArgument.
Result<HuesEmbeddings> FetchHuesEmbeddings(const backends::EmbeddingsOptions& options,
                                           std::shared_ptr<backends::HttpTransport> transport, const Board& board,
                                           const std::vector<std::string>& words, const std::string& prompt_template,
                                           const std::atomic<bool>& stop);

// template with "{}" replaced by the word; kInvalidArgument when the template has no "{}".
Result<std::string> ApplyTemplate(const std::string& prompt_template, const std::string& word);

}  // namespace visalign::hues
