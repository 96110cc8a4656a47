// Prediction files beyond one path: several inputs at once, and where and how `hues run` writes
// its outputs (file or per-model folder, the board-embedding cache folder).
#include <fmt/format.h>

#include <cstdlib>
#include <set>

#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

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

Json PredictionRunRecord::ToJson() const {
  std::string joined;
  for (const std::string& w : words) joined += w + "\n";
  return {{"fingerprint", fingerprint},
          {"template", prompt_template},
          {"words", words},
          {"words_sha256", Sha256Hex(joined)}};
}

Result<PredictionRunRecord> PredictionRunRecord::FromJson(const Json& j, const std::string& source) {
  auto corrupt = [&](const std::string& what) {
    return Status::Corrupt("run record " + what, source, "a hues-run.json as `visalign hues run` writes it");
  };
  if (!j.is_object()) return corrupt("is not a JSON object");
  PredictionRunRecord r;
  const auto fingerprint = j.find("fingerprint"), tmpl = j.find("template"), words = j.find("words");
  if (fingerprint == j.end() || !fingerprint->is_string()) return corrupt("has no string \"fingerprint\"");
  if (tmpl == j.end() || !tmpl->is_string()) return corrupt("has no string \"template\"");
  if (words == j.end() || !words->is_array()) return corrupt("has no \"words\" array");
  r.fingerprint = fingerprint->get<std::string>();
  r.prompt_template = tmpl->get<std::string>();
  for (const Json& w : *words) {
    if (!w.is_string()) return corrupt("has a word that is not a string");
    r.words.push_back(w.get<std::string>());
  }
  return r;
}

Result<EarlierRun> CompareWithEarlierRun(const std::vector<fs::path>& files, const fs::path& record_file,
                                         const PredictionRunRecord& now) {
  std::error_code ec;
  bool any = false;
  for (const fs::path& f : files) any = any || fs::exists(f, ec);
  if (!any) return EarlierRun{};
  if (!fs::is_regular_file(record_file, ec))
    return EarlierRun{EarlierPredictions::kOther, "no run record (" + record_file.filename().string() + ")"};
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(record_file));
  Result<Json> parsed = ParseJson(text);
  Result<PredictionRunRecord> earlier = parsed.ok() ? PredictionRunRecord::FromJson(*parsed, record_file.string())
                                                    : Result<PredictionRunRecord>(parsed.status());
  if (!earlier.ok())
    return EarlierRun{EarlierPredictions::kOther, "an unreadable run record (" + earlier.status().what() + ")"};
  if (earlier->fingerprint != now.fingerprint) return EarlierRun{EarlierPredictions::kOther, "another model"};
  if (earlier->prompt_template != now.prompt_template)
    return EarlierRun{EarlierPredictions::kOther, "template \"" + earlier->prompt_template + "\""};
  bool complete = true;
  for (const fs::path& f : files) complete = complete && fs::is_regular_file(f, ec);
  if (earlier->words == now.words && complete) return EarlierRun{EarlierPredictions::kSame, ""};
  const std::set<std::string> played(earlier->words.begin(), earlier->words.end());
  size_t missing = 0;
  for (const std::string& w : now.words) missing += played.count(w) == 0;
  if (missing == 0 && complete) return EarlierRun{EarlierPredictions::kCovers, ""};
  return EarlierRun{EarlierPredictions::kOther,
                    fmt::format("{} words, {} of this run's {} among them", earlier->words.size(),
                                now.words.size() - missing, now.words.size())};
}

Result<PredictionRunDecision> DecidePredictionRun(const fs::path& folder, const std::vector<fs::path>& files,
                                                  const fs::path& record_file, const PredictionRunRecord& now,
                                                  bool resumable, bool overwrite, const std::string& out_flag) {
  PredictionRunDecision decision;
  VISALIGN_ASSIGN_OR_RETURN(decision.earlier, CompareWithEarlierRun(files, record_file, now));
  const EarlierPredictions kind = decision.earlier.kind;
  const bool done = kind == EarlierPredictions::kSame || kind == EarlierPredictions::kCovers;
  decision.skip = resumable && done;
  if (!decision.skip && !overwrite && (kind == EarlierPredictions::kOther || kind == EarlierPredictions::kCovers))
    return Status::InvalidArgument(
        fmt::format("{} holds the predictions of another run ({}{})", folder.string(),
                    kind == EarlierPredictions::kCovers ? "more words" : decision.earlier.difference,
                    kind == EarlierPredictions::kCovers ? ", e.g. --nonsense" : ""),
        out_flag, "another --out (or --name), or --overwrite to replace them");
  return decision;
}

}  // namespace visalign::hues
