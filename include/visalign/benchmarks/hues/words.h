// Hues and Cues: The clue words. Part of the Hues and Cues module; the
// benchmark as a whole is described in visalign/benchmarks/hues/hues.h.
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include "visalign/core/status.h"

#include "visalign/benchmarks/hues/board.h"

namespace visalign::hues {

// ---- Words --------------------------------------------------------------------------------------

struct Word {
  std::string en;  // as in published result files ("HAPINESS", "BERT (AND ERNIE)")
  std::string es;
  std::string category;  // Animal, Food, Mineral, Plant, Environment, Subjective, Pop Culture
  int clue_id = 0;
};

class Vocabulary {
 public:
  static Result<Vocabulary> Load(const std::filesystem::path& words_csv);  // word_en,word_es,category,clue_id
  static Result<Vocabulary> Default();                                     // data/hues/words.csv
  const std::vector<Word>& words() const { return words_; }
  std::optional<int> IndexOfClue(int clue_id) const;
  // Index of the word whose English or Spanish spelling equals `text` (ASCII case-insensitive).
  std::optional<int> IndexOfName(std::string_view text) const;
  const std::vector<std::string>& categories() const { return categories_; }  // first-seen order

 private:
  std::vector<Word> words_;
  std::vector<std::string> categories_;
  std::map<int, int> by_clue_;
  std::map<std::string, int> by_name_;
};

struct NonsenseWord {
  std::string word;
  std::string group;  // number, stop_word, pseudoword, random_string
};
inline constexpr int kNonsenseGroups = 4;
inline constexpr int kNonsenseGroupSize = 4;
// nonsense16.csv (word,group,source): exactly 4 groups of 4 distinct words (case-insensitive).
Result<std::vector<NonsenseWord>> LoadNonsenseVocabulary(const std::filesystem::path& csv);
Result<std::vector<NonsenseWord>> DefaultNonsenseVocabulary();  // data/hues/nonsense16.csv
// The authors' own list as published (data/hues/nonsense_words.csv, 11 words in groups of unequal size: number 1,
// random_string 1, pseudoword 2, stop_word 7; the group labels are visalign's).
Result<std::vector<NonsenseWord>> PublishedNonsenseVocabulary();
// Both lists without repeats (the 16 items, then HER, HIM, HE, SHE): the nonsense words `hues run --nonsense`
// plays and prediction files may hold.
Result<std::vector<NonsenseWord>> AllNonsenseWords();

// The words to play (`hues run --words`): "data" = `vocabulary`'s clue words (English, in order);
// a path ending in .csv = the non-empty cells of its word_en column (else its word column); any
// other path = one word per line (trailing spaces and CRs dropped, blank lines skipped). An empty
// list is an error naming `spec`.
Result<std::vector<std::string>> ReadWordList(const std::string& spec, const Vocabulary& vocabulary);

}  // namespace visalign::hues
