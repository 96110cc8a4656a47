// `hues run --words`: the clue words, or a word list from a CSV or text file.
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"

namespace visalign::hues {

Result<std::vector<std::string>> ReadWordList(const std::string& spec, const Vocabulary& vocabulary) {
  std::vector<std::string> words;
  if (spec == "data") {
    for (const Word& w : vocabulary.words()) words.push_back(w.en);
    return words;
  }
  if (std::filesystem::path(spec).extension() == ".csv") {
    VISALIGN_ASSIGN_OR_RETURN(CsvTable t, ReadCsv(spec));
    auto column = t.Column("word_en");
    if (!column.ok()) column = t.Column("word");
    if (!column.ok()) return column.status();
    for (const auto& row : t.rows)
      if (!row[*column].empty()) words.push_back(row[*column]);
  } else {
    VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(spec));
    for (std::string_view line : SplitLines(text)) {
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
      if (!line.empty()) words.emplace_back(line);
    }
  }
  if (words.empty()) return Status::InvalidArgument("no words", spec, "one word per line, or a CSV with a word column");
  return words;
}

}  // namespace visalign::hues
