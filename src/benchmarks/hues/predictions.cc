// Model predictions: the published per-model CSV format and visalign's JSONL, read and written.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "benchmarks/hues/text_util.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"
#include "visalign/core/untrusted.h"

namespace visalign::hues {
namespace {

namespace fs = std::filesystem;
constexpr std::string_view kPeerFileName = "results.csv";
constexpr std::string_view kExpectedWord =
    "a clue word of data/hues/words.csv (English or Spanish) or a nonsense word of the nonsense vocabulary";

// Collects one model's predictions word by word, then checks every word has exactly kTopK.
class ModelBuilder {
 public:
  ModelBuilder(std::string name, std::string source, const Vocabulary& vocabulary,
               const std::vector<NonsenseWord>& nonsense)
      : vocabulary_(vocabulary), nonsense_(nonsense) {
    model_.name = std::move(name);
    model_.source = std::move(source);
    model_.words.resize(vocabulary.words().size());
  }

  // The prediction list for `word`, or an error naming `where` (the row) and `field`.
  Result<std::vector<Prediction>*> ListFor(const std::string& word, const std::string& where,
                                           const std::string& field) {
    std::vector<Prediction>* list = nullptr;
    if (auto index = vocabulary_.IndexOfName(word)) {
      list = &model_.words[static_cast<size_t>(*index)];
    } else {
      const std::string upper = internal::AsciiUpper(word);
      const bool is_nonsense = std::any_of(nonsense_.begin(), nonsense_.end(), [&](const NonsenseWord& n) {
        return internal::AsciiUpper(n.word) == upper;
      });
      if (!is_nonsense)
        return Status::InvalidArgument("unknown word \"" + word + "\"", where + " " + field,
                                       std::string(kExpectedWord));
      list = &model_.nonsense[upper];
    }
    if (seen_.insert(list).second) first_lines_.push_back({list, where, word});
    return list;
  }

  Result<ModelPredictions> Finish() {
    if (first_lines_.empty())
      return Status::InvalidArgument("no predictions", model_.source, "rows of word predictions after the header");
    for (const auto& [list, where, word] : first_lines_) {
      if (list->size() != kTopK)
        return Status::InvalidArgument(fmt::format("{} predictions for word \"{}\"", list->size(), word),
                                       where + " (first row of the word)",
                                       fmt::format("exactly {} rows per word (top-{}, best first)", kTopK, kTopK));
      for (size_t k = 1; k < list->size(); ++k)
        if ((*list)[k].similarity > (*list)[k - 1].similarity)
          return Status::InvalidArgument(fmt::format("similarity {} after {} for word \"{}\"", (*list)[k].similarity,
                                                     (*list)[k - 1].similarity, word),
                                         where + " (first row of the word)",
                                         "the word's rows sorted best first (non-increasing similarity)");
    }
    return std::move(model_);
  }

 private:
  const Vocabulary& vocabulary_;
  const std::vector<NonsenseWord>& nonsense_;
  ModelPredictions model_;
  // Each word's list with the line it first appeared on, in file order (for error messages).
  struct FirstLine {
    const std::vector<Prediction>* list;
    std::string where, word;
  };
  std::vector<FirstLine> first_lines_;
  std::set<const std::vector<Prediction>*> seen_;
};

Result<uint8_t> ParseChannel(const std::string& text, const std::string& where) {
  auto v = ParseInt(text, where);
  if (!v.ok() || *v < 0 || *v > 255)
    return Status::InvalidArgument("invalid color channel \"" + text + "\"", where, "an integer 0..255");
  return static_cast<uint8_t>(*v);
}

Result<ModelPredictions> LoadPeerCsv(const fs::path& file, std::string name, const Vocabulary& vocabulary,
                                     const Board& board, const std::vector<NonsenseWord>& nonsense) {
  VISALIGN_ASSIGN_OR_RETURN(CsvTable t, ReadCsv(file));
  VISALIGN_ASSIGN_OR_RETURN(size_t word_col, t.Column("word"));
  VISALIGN_ASSIGN_OR_RETURN(size_t row_col, t.Column("coordenada_x"));
  VISALIGN_ASSIGN_OR_RETURN(size_t col_col, t.Column("coordenada_y"));
  VISALIGN_ASSIGN_OR_RETURN(size_t sim_col, t.Column("distance"));
  std::optional<std::array<size_t, 3>> rgb_cols;
  if (auto r = t.Column("R"), g = t.Column("G"), b = t.Column("B"); r.ok() && g.ok() && b.ok())
    rgb_cols = std::array<size_t, 3>{*r, *g, *b};
  ModelBuilder builder(std::move(name), file.string(), vocabulary, nonsense);
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    const std::string where = t.Where(i);
    VISALIGN_ASSIGN_OR_RETURN(std::vector<Prediction> * list, builder.ListFor(row[word_col], where, "column word"));
    const std::string cell_text = row[row_col] + row[col_col];
    auto cell = ParseCell(cell_text);
    if (!cell.ok()) return cell.status().WithContext(where + " columns coordenada_x,coordenada_y");
    if (rgb_cols) {
      color::Srgb8 rgb;
      VISALIGN_ASSIGN_OR_RETURN(rgb.r, ParseChannel(row[(*rgb_cols)[0]], where + " column R"));
      VISALIGN_ASSIGN_OR_RETURN(rgb.g, ParseChannel(row[(*rgb_cols)[1]], where + " column G"));
      VISALIGN_ASSIGN_OR_RETURN(rgb.b, ParseChannel(row[(*rgb_cols)[2]], where + " column B"));
      const color::Srgb8 expected = board.cell(*cell).rgb;
      if (!(rgb == expected))
        return Status::InvalidArgument(
            fmt::format("RGB ({}, {}, {}) for cell {}", rgb.r, rgb.g, rgb.b, CellName(*cell)), where,
            fmt::format("the board's color of that cell ({}, {}, {})", expected.r, expected.g, expected.b));
    }
    VISALIGN_ASSIGN_OR_RETURN(double similarity, ParseDouble(row[sim_col], where + " column distance"));
    list->push_back({*cell, similarity});
  }
  return builder.Finish();
}

Result<std::vector<ModelPredictions>> LoadJsonl(const fs::path& file, const Vocabulary& vocabulary,
                                                const std::vector<NonsenseWord>& nonsense) {
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(file));
  std::vector<std::string> order;
  std::map<std::string, ModelBuilder> builders;
  const std::vector<std::string_view> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    const std::string where = fmt::format("{}:{}", file.string(), i + 1);
    const auto parsed = ParseJson(line);
    if (!parsed.ok() || !parsed->is_object())
      return Status::Corrupt(parsed.ok() ? "not a JSON object" : parsed.status().what(), where,
                             R"({"model": ..., "word": ..., "top": [{"cell": ..., "similarity": ...}]})");
    const Json& j = *parsed;
    std::string model = file.stem().string();
    if (j.contains("model")) {
      if (!j["model"].is_string() || j["model"].get<std::string>().empty())
        return Status::InvalidArgument("field \"model\" is " + QuoteJson(j["model"]), where, "a non-empty string");
      model = j["model"].get<std::string>();
    }
    if (!j.contains("word") || !j["word"].is_string())
      return Status::InvalidArgument("field \"word\" is missing or not a string", where, "a clue word");
    if (!j.contains("top") || !j["top"].is_array())
      return Status::InvalidArgument("field \"top\" is missing or not an array", where,
                                     R"(an array of {"cell": "G10", "similarity": 0.21}, best first)");
    auto it = builders.find(model);
    if (it == builders.end()) {
      it = builders.emplace(model, ModelBuilder(model, file.string(), vocabulary, nonsense)).first;
      order.push_back(model);
    }
    VISALIGN_ASSIGN_OR_RETURN(std::vector<Prediction> * list,
                              it->second.ListFor(j["word"].get<std::string>(), where, "field word"));
    if (!list->empty())
      return Status::InvalidArgument("word " + QuoteText(j["word"].get<std::string>()) + " repeated for model " + model,
                                     where, "one line per (model, word)");
    for (size_t k = 0; k < j["top"].size(); ++k) {
      const Json& p = j["top"][k];
      const std::string pw = fmt::format("{} field top[{}]", where, k);
      if (!p.is_object() || !p.contains("cell") || !p["cell"].is_string())
        return Status::InvalidArgument("prediction " + QuoteJson(p), pw, R"({"cell": "G10", "similarity": 0.21})");
      auto cell = ParseCell(p["cell"].get<std::string>());
      if (!cell.ok()) return cell.status().WithContext(pw + ".cell");
      if (!p.contains("similarity") || !p["similarity"].is_number())
        return Status::InvalidArgument(
            "similarity " + (p.contains("similarity") ? QuoteJson(p["similarity"]) : "missing"), pw + ".similarity",
            "a number");
      list->push_back({*cell, p["similarity"].get<double>()});
    }
  }
  if (order.empty()) return Status::InvalidArgument("no predictions", file.string(), "JSON lines of word predictions");
  std::vector<ModelPredictions> models;
  for (const std::string& name : order) {
    VISALIGN_ASSIGN_OR_RETURN(ModelPredictions m, builders.at(name).Finish());
    models.push_back(std::move(m));
  }
  return models;
}

std::string ModelNameForFile(const fs::path& file) {
  if (file.filename() == kPeerFileName) {
    const fs::path parent = fs::absolute(file).parent_path();
    if (!parent.filename().empty()) return parent.filename().string();
  }
  return file.stem().string();
}

// A model's predictions in writer order: clue words (English), then nonsense words.
std::vector<WordPredictions> InWriterOrder(const ModelPredictions& model, const Vocabulary& vocabulary,
                                           const std::vector<NonsenseWord>& nonsense) {
  std::vector<WordPredictions> out;
  for (size_t w = 0; w < model.words.size(); ++w)
    if (!model.words[w].empty()) out.push_back({vocabulary.words()[w].en, model.words[w]});
  for (const NonsenseWord& n : nonsense)
    if (auto it = model.nonsense.find(internal::AsciiUpper(n.word)); it != model.nonsense.end())
      out.push_back({n.word, it->second});
  return out;
}

}  // namespace

Result<PredictionFormat> ParsePredictionFormat(std::string_view text) {
  if (text == "auto") return PredictionFormat::kAuto;
  if (text == "peer") return PredictionFormat::kPeer;
  if (text == "jsonl") return PredictionFormat::kJsonl;
  return Status::InvalidArgument("unknown format \"" + std::string(text) + "\"", "--format", "auto, peer or jsonl");
}

Result<std::vector<ModelPredictions>> LoadPredictions(const fs::path& path, PredictionFormat format,
                                                      const Vocabulary& vocabulary, const Board& board,
                                                      const std::vector<NonsenseWord>& nonsense) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (format == PredictionFormat::kJsonl)
      return Status::Unsupported("a folder with --format jsonl", path.string(), "a .jsonl file");
    if (fs::exists(path / kPeerFileName)) {
      VISALIGN_ASSIGN_OR_RETURN(
          ModelPredictions m,
          LoadPeerCsv(path / kPeerFileName, ModelNameForFile(path / kPeerFileName), vocabulary, board, nonsense));
      return std::vector<ModelPredictions>{std::move(m)};
    }
    std::vector<fs::path> folders;
    for (const auto& entry : fs::directory_iterator(path, ec))
      if (entry.is_directory()) folders.push_back(entry.path());
    if (ec) return Status::IoError("cannot list folder: " + ec.message(), path.string());
    std::sort(folders.begin(), folders.end());
    std::vector<ModelPredictions> models(folders.size());
    std::vector<Status> errors(folders.size());
    std::vector<bool> present(folders.size(), false);
    ParallelFor(folders.size(), [&](size_t i) {
      const fs::path file = folders[i] / kPeerFileName;
      if (!fs::exists(file)) return;
      present[i] = true;
      auto m = LoadPeerCsv(file, folders[i].filename().string(), vocabulary, board, nonsense);
      if (m.ok())
        models[i] = std::move(m).value();
      else
        errors[i] = m.status();
    });
    std::vector<ModelPredictions> loaded;
    for (size_t i = 0; i < folders.size(); ++i) {
      if (!present[i]) {
        spdlog::warn("skipping {}: no {} in it", folders[i].string(), kPeerFileName);
        continue;
      }
      if (!errors[i].ok()) return errors[i];
      loaded.push_back(std::move(models[i]));
    }
    if (loaded.empty())
      return Status::NotFound("no predictions in folder", path.string(),
                              "<model>/results.csv sub-folders (published format) or a results.csv");
    return loaded;
  }
  if (!fs::exists(path, ec))
    return Status::NotFound("predictions path does not exist", path.string(), "a file or folder");
  const std::string ext = internal::AsciiUpper(path.extension().string());
  const bool jsonl = format == PredictionFormat::kJsonl ||
                     (format == PredictionFormat::kAuto && (ext == ".JSONL" || ext == ".JSON" || ext == ".NDJSON"));
  if (jsonl) return LoadJsonl(path, vocabulary, nonsense);
  VISALIGN_ASSIGN_OR_RETURN(ModelPredictions m, LoadPeerCsv(path, ModelNameForFile(path), vocabulary, board, nonsense));
  return std::vector<ModelPredictions>{std::move(m)};
}

std::string PeerCsv(const std::vector<WordPredictions>& words, const Board& board) {
  std::string out = "word,coordenada_x,coordenada_y,R,G,B,distance\n";
  for (const WordPredictions& w : words)
    for (const Prediction& p : w.top) {
      const Cell& c = board.cell(p.cell);
      out += fmt::format("{},{},{},{},{},{},{}\n", CsvField(w.word), c.row, c.col, c.rgb.r, c.rgb.g, c.rgb.b,
                         p.similarity);
    }
  return out;
}

std::string PredictionsJsonl(const std::string& model, const std::vector<WordPredictions>& words) {
  std::string out;
  for (const WordPredictions& w : words) {
    Json top = Json::array();
    for (const Prediction& p : w.top) top.push_back({{"cell", CellName(p.cell)}, {"similarity", p.similarity}});
    out += Json{{"model", model}, {"word", w.word}, {"top", top}}.dump() + "\n";
  }
  return out;
}

std::string PeerCsv(const ModelPredictions& model, const Vocabulary& vocabulary, const Board& board,
                    const std::vector<NonsenseWord>& nonsense) {
  return PeerCsv(InWriterOrder(model, vocabulary, nonsense), board);
}

std::string PredictionsJsonl(const ModelPredictions& model, const Vocabulary& vocabulary,
                             const std::vector<NonsenseWord>& nonsense) {
  return PredictionsJsonl(model.name, InWriterOrder(model, vocabulary, nonsense));
}

}  // namespace visalign::hues
