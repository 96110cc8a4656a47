// Clue words (words.csv) and the nonsense vocabulary (nonsense16.csv).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "benchmarks/hues/text_util.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"

namespace visalign::hues {

Result<Vocabulary> Vocabulary::Load(const std::filesystem::path& words_csv) {
  VISALIGN_ASSIGN_OR_RETURN(CsvTable t, ReadCsv(words_csv));
  VISALIGN_ASSIGN_OR_RETURN(size_t en_col, t.Column("word_en"));
  VISALIGN_ASSIGN_OR_RETURN(size_t es_col, t.Column("word_es"));
  VISALIGN_ASSIGN_OR_RETURN(size_t cat_col, t.Column("category"));
  VISALIGN_ASSIGN_OR_RETURN(size_t id_col, t.Column("clue_id"));
  Vocabulary v;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    Word w{row[en_col], row[es_col], row[cat_col], 0};
    VISALIGN_ASSIGN_OR_RETURN(int64_t id, ParseInt(row[id_col], t.Where(i) + " column clue_id"));
    w.clue_id = static_cast<int>(id);
    if (w.en.empty() || w.category.empty())
      return Status::Corrupt("empty word or category", t.Where(i), "word_en and category filled in");
    const int index = static_cast<int>(v.words_.size());
    if (!v.by_clue_.emplace(w.clue_id, index).second)
      return Status::Corrupt(fmt::format("clue_id {} listed twice", w.clue_id), t.Where(i), "unique clue ids");
    for (const std::string& name : {w.en, w.es}) {
      if (name.empty()) continue;
      auto [it, inserted] = v.by_name_.emplace(internal::AsciiUpper(name), index);
      if (!inserted && it->second != index)
        return Status::Corrupt("word \"" + name + "\" names two clues", t.Where(i), "unique spellings");
    }
    if (std::find(v.categories_.begin(), v.categories_.end(), w.category) == v.categories_.end())
      v.categories_.push_back(w.category);
    v.words_.push_back(std::move(w));
  }
  if (v.words_.empty()) return Status::Corrupt("no words", words_csv.string(), "at least one clue word");
  return v;
}

Result<Vocabulary> Vocabulary::Default() {
  VISALIGN_ASSIGN_OR_RETURN(auto path, DataFile("hues/words.csv"));
  return Load(path);
}

std::optional<int> Vocabulary::IndexOfClue(int clue_id) const {
  auto it = by_clue_.find(clue_id);
  if (it == by_clue_.end()) return std::nullopt;
  return it->second;
}

std::optional<int> Vocabulary::IndexOfName(std::string_view text) const {
  auto it = by_name_.find(internal::AsciiUpper(text));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

namespace {

// A word,group CSV of distinct words (case-insensitive); the groups in first-seen order.
Result<std::vector<NonsenseWord>> ReadNonsenseCsv(const std::filesystem::path& csv, std::vector<std::string>& groups) {
  VISALIGN_ASSIGN_OR_RETURN(CsvTable t, ReadCsv(csv));
  VISALIGN_ASSIGN_OR_RETURN(size_t word_col, t.Column("word"));
  VISALIGN_ASSIGN_OR_RETURN(size_t group_col, t.Column("group"));
  std::vector<NonsenseWord> words;
  std::set<std::string> seen;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    NonsenseWord w{t.rows[i][word_col], t.rows[i][group_col]};
    if (w.word.empty() || w.group.empty())
      return Status::Corrupt("empty word or group", t.Where(i), "word and group filled in");
    if (!seen.insert(internal::AsciiUpper(w.word)).second)
      return Status::Corrupt("nonsense word \"" + w.word + "\" listed twice", t.Where(i),
                             "distinct words (compared case-insensitively)");
    if (std::find(groups.begin(), groups.end(), w.group) == groups.end()) groups.push_back(w.group);
    words.push_back(std::move(w));
  }
  if (words.empty()) return Status::Corrupt("no nonsense words", csv.string(), "at least one word,group row");
  return words;
}

}  // namespace

Result<std::vector<NonsenseWord>> LoadNonsenseVocabulary(const std::filesystem::path& csv) {
  std::vector<std::string> groups;
  VISALIGN_ASSIGN_OR_RETURN(std::vector<NonsenseWord> words, ReadNonsenseCsv(csv, groups));
  for (const std::string& g : groups) {
    const auto n = std::count_if(words.begin(), words.end(), [&](const NonsenseWord& w) { return w.group == g; });
    if (n != kNonsenseGroupSize)
      return Status::Corrupt(fmt::format("group \"{}\" has {} words", g, n), csv.string(),
                             fmt::format("{} groups of {} words", kNonsenseGroups, kNonsenseGroupSize));
  }
  if (groups.size() != kNonsenseGroups)
    return Status::Corrupt(fmt::format("{} groups", groups.size()), csv.string(),
                           fmt::format("{} groups of {} words", kNonsenseGroups, kNonsenseGroupSize));
  return words;
}

Result<std::vector<NonsenseWord>> DefaultNonsenseVocabulary() {
  VISALIGN_ASSIGN_OR_RETURN(auto path, DataFile("hues/nonsense16.csv"));
  return LoadNonsenseVocabulary(path);
}

Result<std::vector<NonsenseWord>> PublishedNonsenseVocabulary() {
  VISALIGN_ASSIGN_OR_RETURN(auto path, DataFile("hues/nonsense_words.csv"));
  std::vector<std::string> groups;
  return ReadNonsenseCsv(path, groups);
}

Result<std::vector<NonsenseWord>> AllNonsenseWords() {
  VISALIGN_ASSIGN_OR_RETURN(std::vector<NonsenseWord> all, DefaultNonsenseVocabulary());
  VISALIGN_ASSIGN_OR_RETURN(std::vector<NonsenseWord> published, PublishedNonsenseVocabulary());
  for (NonsenseWord& w : published) {
    const std::string upper = internal::AsciiUpper(w.word);
    if (std::none_of(all.begin(), all.end(),
                     [&](const NonsenseWord& a) { return internal::AsciiUpper(a.word) == upper; }))
      all.push_back(std::move(w));
  }
  return all;
}

}  // namespace visalign::hues
