// Hues and Cues: Model predictions: the published formats and native CLIP runs (`hues run`). Part of the Hues and Cues
// module; the benchmark as a whole is described in visalign/benchmarks/hues/hues.h.
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include "visalign/clip.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"

#include "visalign/benchmarks/hues/humans.h"

namespace visalign::hues {

// ---- Model predictions --------------------------------------------------------------------------

struct Prediction {
  int cell = 0;
  double similarity = 0;
};

struct ModelPredictions {
  std::string name;
  std::string source;                                       // file the predictions came from
  std::vector<std::vector<Prediction>> words;               // per vocabulary word, best first (empty = missing)
  std::map<std::string, std::vector<Prediction>> nonsense;  // nonsense words, keyed upper-case
};

enum class PredictionFormat { kAuto, kPeer, kJsonl };
Result<PredictionFormat> ParsePredictionFormat(std::string_view text);

// Loads predictions from `path`:
//   - a folder of `<model>/results.csv` (published format; the folder name is the model's name;
//     sub-folders without results.csv are skipped with a warning), or a folder holding
//     results.csv itself;
//   - a published-format CSV file: word,coordenada_x,coordenada_y,R,G,B,distance, 5 rows per word
//     best first (model name: the parent folder for results.csv, else the file stem);
//   - JSONL: one object per line {"model": NAME, "word": WORD, "top": [{"cell": "G10",
//     "similarity": 0.21}, ...5]}; "model" may be omitted (then the file stem is the name).
// Words are matched to the vocabulary (English or Spanish) or the nonsense vocabulary, ASCII
// case-insensitive. Errors name the file, line and value: unknown cells or words, RGB that is not
// the board's, non-numeric similarities, a word without exactly 5 predictions, an empty file.
Result<std::vector<ModelPredictions>> LoadPredictions(const std::filesystem::path& path, PredictionFormat format,
                                                      const Vocabulary& vocabulary, const Board& board,
                                                      const std::vector<NonsenseWord>& nonsense);

// LoadPredictions over several paths, in order; a model name seen twice is an error naming its
// source.
Result<std::vector<ModelPredictions>> LoadPredictionSets(const std::vector<std::string>& paths, PredictionFormat format,
                                                         const Vocabulary& vocabulary, const Board& board,
                                                         const std::vector<NonsenseWord>& nonsense);

// One word's top predictions under its own spelling (any word, not only the benchmark's).
struct WordPredictions {
  std::string word;
  std::vector<Prediction> top;
};

// Writers for the two formats (used by `hues run` and the benchmark). The ModelPredictions forms
// write the clue words (English) in vocabulary order, then the nonsense words.
std::string PeerCsv(const std::vector<WordPredictions>& words, const Board& board);
std::string PredictionsJsonl(const std::string& model, const std::vector<WordPredictions>& words);
std::string PeerCsv(const ModelPredictions& model, const Vocabulary& vocabulary, const Board& board,
                    const std::vector<NonsenseWord>& nonsense);
std::string PredictionsJsonl(const ModelPredictions& model, const Vocabulary& vocabulary,
                             const std::vector<NonsenseWord>& nonsense);

// ---- Predictions from a native CLIP model (`hues run`) ------------------------------------------

// The board's 480 patches preprocessed for one preprocessing, shared by the models that have it
// (`hues run --models`): prepared once per (board, clip::PreprocessFingerprintText), not once per
// model. Holds one preprocessing's pixels at a time (3·S²·480 floats: 289 MB at S = 224), so run
// the models grouped by preprocessing. Not thread-safe.
class BoardPixels {
 public:
  // PreprocessImages(BoardPatchImages(board, size), preprocess): the held pixels when the last call
  // had the same board and preprocessing, else newly prepared (replacing them).
  Result<const clip::Matrix*> For(const Board& board, const clip::PreprocessConfig& preprocess);
  int preparations() const { return preparations_; }  // how many times pixels were prepared

 private:
  std::string key_;
  clip::Matrix pixels_;
  int preparations_ = 0;
};

struct ClipRunOptions {
  std::string prompt_template = "{}";  // "{}" is replaced by the word ("a photo of the color {}")
  // Folder for cached board image embeddings; empty = no cache. The cache file is keyed by the
  // model fingerprint (weights + preprocessing), the board file's SHA-256 and the patch size.
  std::filesystem::path cache_dir;
  // Board pixels shared with other models (null: preprocessed chunk by chunk, for this model only).
  // The embeddings are the same either way (ClipModel::EncodePreprocessedImages).
  BoardPixels* board_pixels = nullptr;
};

struct ClipRunResult {
  std::vector<WordPredictions> words;  // in input order, top-5 by cosine similarity, best first
  bool cache_hit = false;
  std::filesystem::path cache_file;  // empty without a cache
  // With options.board_pixels, when the board was encoded: whether its pixels were prepared for
  // this model (false: reused from an earlier model with the same preprocessing).
  std::optional<bool> board_pixels_prepared;
  clip::Matrix board_embeddings;  // [480 x D], what the ranking used (`hues run --save-embeddings`)
  clip::Matrix text_embeddings;   // [words x D]
};

// Ranks the 480 cells for each word: board patches are solid images of the model's input size
// run through the model's own preprocessing and image tower; words go through the template and
// the text tower; similarity = cosine. Ties rank the lower cell index first.
// Where `hues run --out OUT` writes model `model`'s predictions: OUT itself when it ends in .csv
// or .jsonl, else OUT/<model>/results.csv and OUT/<model>/predictions.jsonl.
std::vector<std::filesystem::path> PredictionOutputFiles(const std::filesystem::path& out, const std::string& model);
// Writes `words` to each file (atomically, folders created): .jsonl as PredictionsJsonl, anything
// else as PeerCsv.
Status WritePredictionFiles(const std::vector<std::filesystem::path>& files, const std::string& model,
                            const std::vector<WordPredictions>& words, const Board& board);
// What made the predictions in OUT/<model>/ (its run record, hues-run.json): the model's
// fingerprint (or the embeddings source), the template and the words played. A later `hues run`
// into the same folder compares records so that nothing another run wrote is silently replaced.
struct PredictionRunRecord {
  std::string fingerprint;
  std::string prompt_template;
  std::vector<std::string> words;
  Json ToJson() const;
  // A record as ToJson writes it; Corrupt naming `source` for anything else (an older record
  // without "words" included: it can only be compared as "another run").
  static Result<PredictionRunRecord> FromJson(const Json& j, const std::string& source);
};
enum class EarlierPredictions {
  kNone,    // no prediction file in the folder
  kSame,    // the same record
  kCovers,  // same model and template, and every word of this run (and more) was played
  kOther,   // another run (or files without a readable record): replacing them loses its results
};
struct EarlierRun {
  EarlierPredictions kind = EarlierPredictions::kNone;
  std::string difference;  // kOther: what differs, for the error ("another model", "100 words, not 120")
};
// Compares `now` with what OUT/<model>/ holds (`files` from PredictionOutputFiles, `record_file`
// its hues-run.json). IoError only when the folder cannot be read.
Result<EarlierRun> CompareWithEarlierRun(const std::vector<std::filesystem::path>& files,
                                         const std::filesystem::path& record_file, const PredictionRunRecord& now);

// What a run whose record is `now` does with OUT/<model>/ (`folder`, its `files`, its `record_file`):
// with `resumable` (`hues run --models`), a folder holding the same run, or one that played these
// words and more, is skipped (`skip`, with `earlier` saying which); otherwise the run plays, except
// that another run's predictions (kOther, kCovers) are never replaced without `overwrite`:
// InvalidArgument at `out_flag` naming the folder and what differs.
struct PredictionRunDecision {
  bool skip = false;
  EarlierRun earlier;
};
Result<PredictionRunDecision> DecidePredictionRun(const std::filesystem::path& folder,
                                                  const std::vector<std::filesystem::path>& files,
                                                  const std::filesystem::path& record_file,
                                                  const PredictionRunRecord& now, bool resumable, bool overwrite,
                                                  const std::string& out_flag);

// The board-embedding cache folder when none is given: $VISALIGN_CACHE, $XDG_CACHE_HOME/visalign,
// ~/.cache/visalign, or empty (no cache) when none of these variables is set.
std::filesystem::path DefaultBoardCacheDir();

Result<ClipRunResult> PredictWithClip(const clip::ClipModel& model, const Board& board,
                                      const std::vector<std::string>& words, const ClipRunOptions& options);

}  // namespace visalign::hues
