// Prediction files beyond one path: several inputs at once, and where and how `hues run` writes
// its outputs (file or per-model folder, the board-embedding cache folder).
#include <cstdlib>
#include <set>

#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"

namespace visalign::hues {
namespace fs = std::filesystem;

Result<std::vector<ModelPredictions>> LoadPredictionSets(const std::vector<std::string>& paths, PredictionFormat format,
                                                         const Vocabulary& vocabulary, const Board& board,
                                                         const std::vector<NonsenseWord>& nonsense) {
  std::vector<ModelPredictions> all;
  std::set<std::string> names;
  for (const std::string& path : paths) {
    VISALIGN_ASSIGN_OR_RETURN(auto models, LoadPredictions(path, format, vocabulary, board, nonsense));
    for (ModelPredictions& m : models) {
      if (!names.insert(m.name).second)
        return Status::InvalidArgument("model \"" + m.name + "\" appears twice", m.source,
                                       "distinct model names (folder names or JSONL \"model\" fields)");
      all.push_back(std::move(m));
    }
  }
  return all;
}

std::vector<fs::path> PredictionOutputFiles(const fs::path& out, const std::string& model) {
  const std::string ext = out.extension().string();
  if (ext == ".jsonl" || ext == ".csv") return {out};
  return {out / model / "results.csv", out / model / "predictions.jsonl"};
}

Status WritePredictionFiles(const std::vector<fs::path>& files, const std::string& model,
                            const std::vector<WordPredictions>& words, const Board& board) {
  for (const fs::path& file : files) {
    if (!file.parent_path().empty()) VISALIGN_RETURN_IF_ERROR(EnsureDirectory(file.parent_path()));
    const std::string contents = file.extension() == ".jsonl" ? PredictionsJsonl(model, words) : PeerCsv(words, board);
    VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(file, contents));
  }
  return Status::Ok();
}

fs::path DefaultBoardCacheDir() {
  if (const char* v = std::getenv("VISALIGN_CACHE"); v && *v) return v;
  if (const char* v = std::getenv("XDG_CACHE_HOME"); v && *v) return fs::path(v) / "visalign";
  if (const char* v = std::getenv("HOME"); v && *v) return fs::path(v) / ".cache/visalign";
  return {};
}

}  // namespace visalign::hues
