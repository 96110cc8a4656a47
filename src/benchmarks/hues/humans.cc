// Human answers: loading the published answer format and the leave-one-out baseline.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "benchmarks/hues/text_util.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"
#include "visalign/stats/resampling.h"

namespace visalign::hues {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kChromaticityDof = 2;
constexpr int kAgeSplit = 30;
constexpr std::string_view kUnknown = "unknown";

std::string Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

Result<std::set<std::string>> ReadIdList(const std::filesystem::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::set<std::string> ids;
  for (std::string_view line : SplitLines(text))
    if (std::string id = Trim(line); !id.empty()) ids.insert(id);
  return ids;
}

// "<30", ">=30" or "unknown" for the published ageRange values ("-10", "10-19", ..., "70").
std::string AgeGroup(std::string_view range) {
  const std::string r = Trim(range);
  if (r.empty()) return std::string(kUnknown);
  auto parse = [](std::string_view s, int& v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size();
  };
  int lower = 0, upper = 0;
  const size_t dash = r.find('-');
  if (dash == std::string::npos) {
    if (!parse(r, lower)) return std::string(kUnknown);
    upper = lower;  // "70": 70 and over
  } else {
    if (dash != 0 && !parse(std::string_view(r).substr(0, dash), lower)) return std::string(kUnknown);
    if (!parse(std::string_view(r).substr(dash + 1), upper)) return std::string(kUnknown);
  }
  if (dash != std::string::npos && upper < kAgeSplit) return "<30";
  if (lower >= kAgeSplit) return ">=30";
  return std::string(kUnknown);
}

std::string OrUnknown(const std::string& s) { return s.empty() ? std::string(kUnknown) : s; }

Json JsonNumber(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

// The Spanish clue names that name another word's English character (AnswerPairing::kCharacter).
struct SpanishCharacter {
  std::string_view es, en;
};
constexpr std::array<SpanishCharacter, 2> kSpanishCharacters = {
    {{"EPI (Y BLAS)", "ERNIE (AND BERT)"}, {"BLAS (Y EPI)", "BERT (AND ERNIE)"}}};

// Word index -> the word a Spanish answer to it counts for under kCharacter (only the words that move).
std::map<int, int> SpanishCharacterWords(const Vocabulary& vocabulary) {
  std::map<int, int> out;
  for (size_t w = 0; w < vocabulary.words().size(); ++w)
    for (const SpanishCharacter& c : kSpanishCharacters) {
      const Word& word = vocabulary.words()[w];
      if (internal::AsciiUpper(word.es) != c.es || internal::AsciiUpper(word.en) == c.en) continue;
      if (auto target = vocabulary.IndexOfName(c.en); target && *target != static_cast<int>(w))
        out[static_cast<int>(w)] = *target;
    }
  return out;
}

}  // namespace

std::string_view AnswerPairingName(AnswerPairing pairing) {
  return pairing == AnswerPairing::kCharacter ? "character" : "clue-id";
}

Result<AnswerPairing> ParseAnswerPairing(std::string_view name) {
  if (name == "character") return AnswerPairing::kCharacter;
  if (name == "clue-id") return AnswerPairing::kClueId;
  return Status::InvalidArgument("answer pairing \"" + std::string(name) + "\"", "answer pairing",
                                 "character or clue-id");
}

AnswerGroups GroupsOf(const HumanAnswer& answer) {
  return {OrUnknown(answer.gender), AgeGroup(answer.age_range), OrUnknown(answer.language)};
}

Result<HumanData> LoadHumans(const std::filesystem::path& csv, const Vocabulary& vocabulary,
                             const HumanLoadOptions& options) {
  VISALIGN_ASSIGN_OR_RETURN(CsvTable t, ReadCsv(csv));
  VISALIGN_ASSIGN_OR_RETURN(size_t user_col, t.Column("userId"));
  VISALIGN_ASSIGN_OR_RETURN(size_t clue_col, t.Column("clueId"));
  VISALIGN_ASSIGN_OR_RETURN(size_t coord_col, t.Column("coordinate"));
  auto optional_column = [&](std::string_view name) -> std::optional<size_t> {
    auto c = t.Column(name);
    return c.ok() ? std::optional<size_t>(*c) : std::nullopt;
  };
  const auto word_col = optional_column("word");
  const auto language_col = optional_column("language");
  const auto gender_col = optional_column("gender");
  const auto age_col = optional_column("ageRange");
  const auto colorblind_col = optional_column("colorblind");

  // The list is read also when colour-blind players are kept, to mark their answers.
  std::filesystem::path ids_path = options.colorblind_ids;
  if (ids_path.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(ids_path, DataFile("hues/colorblind_ids.txt"));
  }
  VISALIGN_ASSIGN_OR_RETURN(std::set<std::string> colorblind_ids, ReadIdList(ids_path));

  const std::map<int, int> spanish_character =
      options.pairing == AnswerPairing::kCharacter ? SpanishCharacterWords(vocabulary) : std::map<int, int>();
  HumanData data;
  data.pairing = options.pairing;
  data.source = csv.string();
  data.exclusions_source = options.include_colorblind ? std::string() : ids_path.string();
  data.include_colorblind = options.include_colorblind;
  std::set<std::string> users, excluded_users;
  auto field = [](const std::vector<std::string>& row, const std::optional<size_t>& col) {
    return col ? Trim(row[*col]) : std::string();
  };
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    VISALIGN_ASSIGN_OR_RETURN(int64_t clue, ParseInt(Trim(row[clue_col]), t.Where(i) + " column clueId"));
    auto word = vocabulary.IndexOfClue(static_cast<int>(clue));
    if (!word)
      return Status::InvalidArgument(fmt::format("unknown clueId {}", clue), t.Where(i) + " column clueId",
                                     "a clue_id listed in data/hues/words.csv");
    auto cell = ParseCell(Trim(row[coord_col]));
    if (!cell.ok()) return cell.status().WithContext(t.Where(i) + " column coordinate");
    const std::string user = Trim(row[user_col]);
    const bool colorblind = colorblind_ids.count(user) || internal::AsciiUpper(field(row, colorblind_col)) == "YES";
    if (!options.include_colorblind && colorblind) {
      ++data.excluded_answers;
      excluded_users.insert(user);
      continue;
    }
    const std::string spelled = field(row, word_col);
    if (word_col && vocabulary.IndexOfName(spelled) != word) ++data.word_mismatches;
    if (auto moved = spanish_character.find(*word); moved != spanish_character.end()) {
      const Word& shown = vocabulary.words()[*word];
      const std::string language = internal::AsciiUpper(field(row, language_col));
      const bool spanish = language_col && !language.empty()
                               ? language == "SPANISH"
                               : internal::AsciiUpper(spelled) == internal::AsciiUpper(shown.es) &&
                                     internal::AsciiUpper(spelled) != internal::AsciiUpper(shown.en);
      if (spanish) {
        word = moved->second;
        ++data.repaired_answers;
      }
    }
    users.insert(user);
    data.answers.push_back(
        {*word, *cell, user, field(row, gender_col), field(row, age_col), field(row, language_col), colorblind});
  }
  if (data.answers.empty())
    return Status::InvalidArgument("no human answers", csv.string(),
                                   "rows in the published answer format (after excluding colour-blind players)");
  data.users = static_cast<int>(users.size());
  data.excluded_users = static_cast<int>(excluded_users.size());
  return data;
}

Result<HumanData> DefaultHumans(const Vocabulary& vocabulary, const HumanLoadOptions& options) {
  VISALIGN_ASSIGN_OR_RETURN(auto path, DataFile("hues/human_responses.csv"));
  return LoadHumans(path, vocabulary, options);
}

Result<Threshold> ParseThreshold(std::string_view spec) {
  const auto invalid = [&] {
    return Status::InvalidArgument("invalid threshold \"" + std::string(spec) + "\"", "outlier threshold",
                                   "chi2:P with 0 < P < 1 (d² above the chi-square(2) quantile, default chi2:0.95) "
                                   "or sigma:K with K > 0 (d² above K²)");
  };
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return invalid();
  const std::string kind(spec.substr(0, colon));
  auto value = ParseDouble(spec.substr(colon + 1), "outlier threshold");
  if (!value.ok()) return invalid();
  if (kind == "chi2") {
    auto q = stats::ChiSquareQuantile(*value, kChromaticityDof);
    if (!q.ok()) return invalid();
    return Threshold{std::string(spec), *q};
  }
  if (kind == "sigma" && *value > 0) return Threshold{std::string(spec), *value * *value};
  return invalid();
}

namespace {

// One answer's leave-one-out result against the other answers to its word.
enum class Outcome { kNotTested, kPassed, kFailed };

// The age permutation test over players (AgePermutationTest).
AgePermutationTest AgeTest(const HumanData& humans, const std::vector<Outcome>& outcome) {
  struct Player {
    bool over_30 = false;
    int tested = 0, failed = 0;
  };
  std::map<std::string, Player> by_user;
  for (size_t i = 0; i < humans.answers.size(); ++i) {
    const HumanAnswer& a = humans.answers[i];
    const std::string group = AgeGroup(a.age_range);
    if (group == kUnknown) continue;
    auto it = by_user.emplace(a.user, Player{group == ">=30", 0, 0}).first;  // a player's first stated age counts
    it->second.tested += outcome[i] != Outcome::kNotTested ? 1 : 0;
    it->second.failed += outcome[i] == Outcome::kFailed ? 1 : 0;
  }
  std::vector<Player> players;
  for (const auto& [user, p] : by_user) players.push_back(p);
  AgePermutationTest t;
  t.permutations = kAgePermutations;
  t.seed = kAgePermutationSeed;
  const auto difference = [&](const std::vector<bool>& over_30) {
    std::array<double, 2> tested{}, failed{};
    for (size_t i = 0; i < players.size(); ++i) {
      tested[over_30[i]] += players[i].tested;
      failed[over_30[i]] += players[i].failed;
    }
    return tested[0] > 0 && tested[1] > 0 ? failed[1] / tested[1] - failed[0] / tested[0] : kNaN;
  };
  std::vector<bool> labels;
  for (const Player& p : players) {
    labels.push_back(p.over_30);
    (p.over_30 ? t.players_30_and_over : t.players_under_30) += 1;
  }
  t.difference = difference(labels);
  if (std::isnan(t.difference)) {
    t.p_value = kNaN;
    return t;
  }
  stats::ResamplingRng rng(t.seed);
  int as_extreme = 0;
  for (int r = 0; r < t.permutations; ++r) {
    for (size_t i = labels.size(); i > 1; --i) {  // Fisher-Yates with the platform-independent draw
      const size_t j = rng.Below(i);
      const bool swap = labels[i - 1];
      labels[i - 1] = labels[j];
      labels[j] = swap;
    }
    as_extreme += std::abs(difference(labels)) >= std::abs(t.difference) ? 1 : 0;
  }
  t.p_value = (1.0 + as_extreme) / (1.0 + t.permutations);
  return t;
}

}  // namespace

HumanBaseline ComputeHumanBaseline(const HumanData& humans, const Vocabulary& vocabulary, const Board& board,
                                   const MacroMap& macro, const Threshold& threshold) {
  HumanBaseline b;
  b.threshold = threshold;
  const size_t n_words = vocabulary.words().size();
  std::vector<std::vector<size_t>> answers_of(n_words);
  for (size_t i = 0; i < humans.answers.size(); ++i) answers_of[humans.answers[i].word].push_back(i);

  std::vector<Outcome> outcome(humans.answers.size(), Outcome::kNotTested);
  b.words.resize(n_words);
  std::vector<stats::Vec2> points;
  for (size_t w = 0; w < n_words; ++w) {
    WordBaseline& wb = b.words[w];
    wb.word = static_cast<int>(w);
    points.clear();
    for (size_t a : answers_of[w]) {
      points.push_back(board.cell(humans.answers[a].cell).xy);
      ++wb.macro_counts[static_cast<size_t>(macro.at(humans.answers[a].cell).category)];
    }
    wb.n = static_cast<int>(points.size());
    wb.mean = stats::Mean(points);
    wb.modal_macro =
        static_cast<Macro>(std::max_element(wb.macro_counts.begin(), wb.macro_counts.end()) - wb.macro_counts.begin());
    if (auto cov = stats::Covariance(points); cov.ok()) {
      wb.cov = *cov;
      if (auto inv = stats::Inverse(wb.cov)) {
        wb.inverse = *inv;
        wb.singular = false;
      }
    }
    const std::vector<double> loo = stats::LeaveOneOutMahalanobis(points);
    for (size_t i = 0; i < points.size(); ++i) {
      if (std::isnan(loo[i])) {
        ++wb.loo_singular;
        continue;
      }
      const bool failed = loo[i] > threshold.d2;
      ++wb.loo_tested;
      wb.loo_failed += failed ? 1 : 0;
      outcome[answers_of[w][i]] = failed ? Outcome::kFailed : Outcome::kPassed;
    }
    wb.loo_fail_rate = wb.loo_tested > 0 ? double(wb.loo_failed) / wb.loo_tested : kNaN;
    if (wb.singular) ++b.singular_words;
  }

  std::vector<double> rates;
  for (const std::string& category : vocabulary.categories()) {
    CategoryRate c{category};
    std::vector<double> category_rates;
    for (const WordBaseline& wb : b.words) {
      if (vocabulary.words()[wb.word].category != category) continue;
      ++c.n_words;
      if (std::isnan(wb.loo_fail_rate)) {
        ++c.words_without_rate;
        continue;
      }
      category_rates.push_back(wb.loo_fail_rate);
      rates.push_back(wb.loo_fail_rate);
    }
    c.fail_rate = stats::Mean(category_rates);
    b.categories.push_back(std::move(c));
  }
  b.fail_rate = stats::Mean(rates);

  // Demographics: every answer's LOO outcome (against all other answers to its word), grouped.
  std::map<std::pair<std::string, std::string>, GroupRate> groups;
  auto add = [&](const std::string& dimension, const std::string& group, Outcome o) {
    GroupRate& g = groups[{dimension, group}];
    g.dimension = dimension;
    g.group = group;
    ++g.answers;
    if (o != Outcome::kNotTested) ++g.tested;
    if (o == Outcome::kFailed) ++g.failed;
  };
  for (size_t i = 0; i < humans.answers.size(); ++i) {
    const AnswerGroups g = GroupsOf(humans.answers[i]);
    add("gender", g.gender, outcome[i]);
    add("age", g.age, outcome[i]);
    add("language", g.language, outcome[i]);
  }
  for (auto& [key, g] : groups) {
    g.fail_rate = g.tested > 0 ? double(g.failed) / g.tested : kNaN;
    b.demographics.push_back(g);
  }
  b.age_test = AgeTest(humans, outcome);
  return b;
}

Json HumanBaselineJson(const HumanBaseline& baseline, const HumanData& humans, const Vocabulary& vocabulary) {
  Json words = Json::array();
  std::vector<std::string> singular;
  for (const WordBaseline& wb : baseline.words) {
    const Word& w = vocabulary.words()[wb.word];
    Json j{{"word", w.en},
           {"category", w.category},
           {"n", wb.n},
           {"mean", {JsonNumber(wb.mean[0]), JsonNumber(wb.mean[1])}},
           {"singular", wb.singular},
           {"loo_fail_rate", JsonNumber(wb.loo_fail_rate)},
           {"loo_tested", wb.loo_tested},
           {"loo_failed", wb.loo_failed},
           {"loo_singular", wb.loo_singular},
           {"modal_macro", MacroName(wb.modal_macro)}};
    j["cov"] = wb.n >= 2 ? Json{{wb.cov[0][0], wb.cov[0][1]}, {wb.cov[1][0], wb.cov[1][1]}} : Json(nullptr);
    words.push_back(std::move(j));
    if (wb.singular) singular.push_back(w.en);
  }
  Json categories = Json::array();
  for (const CategoryRate& c : baseline.categories)
    categories.push_back({{"category", c.category},
                          {"n_words", c.n_words},
                          {"fail_rate", JsonNumber(c.fail_rate)},
                          {"words_without_rate", c.words_without_rate}});
  Json demographics = Json::array();
  for (const GroupRate& g : baseline.demographics)
    demographics.push_back({{"dimension", g.dimension},
                            {"group", g.group},
                            {"answers", g.answers},
                            {"tested", g.tested},
                            {"failed", g.failed},
                            {"fail_rate", JsonNumber(g.fail_rate)}});
  return {{"source", humans.source},
          {"answers", humans.answers.size()},
          {"users", humans.users},
          {"include_colorblind", humans.include_colorblind},
          {"excluded_colorblind", {{"answers", humans.excluded_answers}, {"users", humans.excluded_users}}},
          {"word_spelling_mismatches", humans.word_mismatches},
          {"pairing", {{"rule", AnswerPairingName(humans.pairing)}, {"answers_moved", humans.repaired_answers}}},
          {"threshold", {{"spec", baseline.threshold.spec}, {"d2", baseline.threshold.d2}}},
          {"fail_rate", JsonNumber(baseline.fail_rate)},
          {"singular_words", singular},
          {"words", words},
          {"categories", categories},
          {"demographics", demographics},
          {"age_permutation_test",
           {{"groups", {"<30", ">=30"}},
            {"players", {baseline.age_test.players_under_30, baseline.age_test.players_30_and_over}},
            {"difference", JsonNumber(baseline.age_test.difference)},
            {"p_value", JsonNumber(baseline.age_test.p_value)},
            {"permutations", baseline.age_test.permutations},
            {"seed", baseline.age_test.seed}}}};
}

}  // namespace visalign::hues
