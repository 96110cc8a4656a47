// Hues and Cues: The human players' answers and the human baseline. Part of the Hues and Cues module; the
// benchmark as a whole is described in visalign/benchmarks/hues/hues.h.
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/stats/statistics.h"

#include "visalign/benchmarks/hues/words.h"

namespace visalign::hues {

// ---- Humans -------------------------------------------------------------------------------------

struct HumanAnswer {
  int word = 0;  // index into the Vocabulary
  int cell = 0;
  std::string user, gender, age_range, language;  // empty when the column is absent
  bool colorblind = false;  // listed as colour-blind (by userId or a colorblind=YES column); kept only on request
};

// The demographic groups of an answer, as the baseline's GroupRate names them: gender and language
// as given ("unknown" when empty), age "<30" (ageRange upper bound below 30), ">=30" (lower bound 30
// or more) or "unknown".
struct AnswerGroups {
  std::string gender, age, language;
};
AnswerGroups GroupsOf(const HumanAnswer& answer);

// Which word an answer counts for. The word list names the same clue differently in its two languages
// for the two Sesame Street clues: clue 91 is BERT (AND ERNIE) in English but EPI (Y BLAS) in Spanish,
// i.e. Ernie (the Spanish Sesame Street calls Ernie "Epi" and Bert "Blas"), and clue 96 the reverse
// (data/hues/NOTICE.md). A player was shown the clue in the answer's language, so:
//   kCharacter (default): an answer counts for the word naming the character the player saw: a Spanish
//     answer to a clue whose Spanish name is one of those below counts for the word whose English name is
//     that character (EPI (Y BLAS) -> ERNIE (AND BERT), BLAS (Y EPI) -> BERT (AND ERNIE)). The answer is
//     Spanish when its `language` is "spanish", or, without a language, when its `word` is the clue's
//     Spanish spelling and not its English one. This is the pairing the authors' published Hotelling rows
//     for the two clues reproduce (docs/reproduction.md, H2).
//   kClueId: every answer counts for its clueId's word (the game's ids as stored).
enum class AnswerPairing { kCharacter, kClueId };
std::string_view AnswerPairingName(AnswerPairing pairing);  // "character", "clue-id"
Result<AnswerPairing> ParseAnswerPairing(std::string_view name);

struct HumanData {
  std::string source;
  std::string exclusions_source;  // the colorblind userId list applied; empty when colorblind players are kept
  std::vector<HumanAnswer> answers;
  int users = 0;
  int excluded_answers = 0;  // colour-blind players' answers left out
  int excluded_users = 0;
  bool include_colorblind = false;
  int word_mismatches = 0;  // rows whose `word` is neither spelling of their clue (kept; clueId rules)
  AnswerPairing pairing = AnswerPairing::kCharacter;
  int repaired_answers = 0;  // answers AnswerPairing::kCharacter counted for another clue's word
};

struct HumanLoadOptions {
  bool include_colorblind = false;
  // Players to exclude by userId (one per line); empty path = data/hues/colorblind_ids.txt.
  // Rows with a `colorblind` column equal to YES are excluded too. With include_colorblind the list
  // is still read, to mark those players' answers (HumanAnswer::colorblind).
  std::filesystem::path colorblind_ids;
  AnswerPairing pairing = AnswerPairing::kCharacter;
};

// The published answer format: columns userId,timestamp,clueCategory,clueId,word,coordinate
// (+ optional language,gender,ageRange,colorblind,...), LF or CRLF. Words are matched by clueId.
Result<HumanData> LoadHumans(const std::filesystem::path& csv, const Vocabulary& vocabulary,
                             const HumanLoadOptions& options = {});
Result<HumanData> DefaultHumans(const Vocabulary& vocabulary, const HumanLoadOptions& options = {});

// Outlier threshold on d²: "chi2:P" → χ²₂ quantile at P (default chi2:0.95 = 5.991), "sigma:K" → K².
struct Threshold {
  std::string spec;
  double d2 = 0;
};
Result<Threshold> ParseThreshold(std::string_view spec);

struct WordBaseline {
  int word = 0;
  int n = 0;
  stats::Vec2 mean{};
  stats::Mat2 cov{};      // n − 1 denominator (zeros when n < 2)
  bool singular = true;   // covariance near-singular or n < 2: no Mahalanobis possible
  stats::Mat2 inverse{};  // valid when !singular
  int loo_tested = 0;     // answers whose leave-one-out covariance was invertible
  int loo_failed = 0;
  int loo_singular = 0;      // answers whose leave-one-out covariance was singular (not tested)
  double loo_fail_rate = 0;  // loo_failed / loo_tested (NaN when nothing was tested)
  std::array<int, kMacroCategories> macro_counts{};
  Macro modal_macro = Macro::kBrown;  // most frequent category of the answers (ties: lower enum)
};

struct CategoryRate {
  std::string category;
  int n_words = 0;
  double fail_rate = 0;  // mean of the words' LOO fail rates (words without a rate are skipped and counted)
  int words_without_rate = 0;
};

struct GroupRate {
  std::string dimension;  // gender, age, language
  std::string group;      // e.g. "female", "<30", "spanish"
  int answers = 0;
  int tested = 0;
  int failed = 0;
  double fail_rate = 0;  // failed / tested over all LOO tests of this group's answers
};

// Do players under and over 30 fail the leave-one-out test equally often? A permutation test over players:
// the statistic is the difference of the two groups' fail rates (failed / tested over their answers, ">=30"
// minus "<30"); each permutation shuffles the players' age groups (a player keeps all their answers), and
// p = (1 + #{|difference*| >= |difference|}) / (1 + permutations). Players whose age is unknown are left out.
struct AgePermutationTest {
  int players_under_30 = 0, players_30_and_over = 0;
  double difference = 0;  // NaN when a group has no tested answer
  double p_value = 0;     // NaN likewise
  int permutations = 0;
  uint64_t seed = 0;
};
inline constexpr int kAgePermutations = 20000;
inline constexpr uint64_t kAgePermutationSeed = 20240501;

struct HumanBaseline {
  Threshold threshold;
  std::vector<WordBaseline> words;  // one per vocabulary word, vocabulary order
  std::vector<CategoryRate> categories;
  std::vector<GroupRate> demographics;
  AgePermutationTest age_test;
  double fail_rate = 0;  // mean of word rates
  int singular_words = 0;
};

HumanBaseline ComputeHumanBaseline(const HumanData& humans, const Vocabulary& vocabulary, const Board& board,
                                   const MacroMap& macro, const Threshold& threshold);
Json HumanBaselineJson(const HumanBaseline& baseline, const HumanData& humans, const Vocabulary& vocabulary);

}  // namespace visalign::hues
