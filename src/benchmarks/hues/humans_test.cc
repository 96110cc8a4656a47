// Human answers: the published format, colour-blind exclusion, thresholds and the LOO baseline.
#include <gtest/gtest.h>

#include <cmath>

#include "benchmarks/hues/test_support.h"
#include "visalign/benchmarks/hues/hues.h"

namespace visalign::hues {
namespace {

using testing::Data;
using testing::Scratch;
using testing::TestBoard;
using testing::TestMacro;
using testing::TestVocabulary;

constexpr char kHeader[] =
    "userId,timestamp,clueCategory,clueId,word,coordinate,language,gender,ageRange,colorblind\r\n";

TEST(HuesHumans, ThresholdSpecs) {
  EXPECT_NEAR(ParseThreshold("chi2:0.95")->d2, 5.991464547107979, 1e-12);
  EXPECT_NEAR(ParseThreshold("chi2:0.99")->d2, -2 * std::log(0.01), 1e-12);
  EXPECT_DOUBLE_EQ(ParseThreshold("sigma:2")->d2, 4.0);
  for (const char* bad : {"chi2:1.5", "chi2:0", "sigma:-1", "sigma:x", "5.99", "f:0.9"}) {
    auto t = ParseThreshold(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.status().where(), "outlier threshold");
  }
}

// The shipped answers with the shipped colour-blind list.
Result<HumanData> ShippedHumans(const Vocabulary& vocabulary, HumanLoadOptions options = {}) {
  options.colorblind_ids = Data("hues/colorblind_ids.txt");
  return LoadHumans(Data("hues/human_responses.csv"), vocabulary, options);
}

TEST(HuesHumans, ShippedAnswersMatchTheNotice) {
  // NOTICE.md: 3,899 rows from 324 players; 9 colour-blind players with 80 rows; 21-63 answers per word.
  const Vocabulary vocabulary = TestVocabulary();
  auto humans = ShippedHumans(vocabulary);
  ASSERT_TRUE(humans.ok()) << humans.status().ToString();
  EXPECT_EQ(humans->answers.size(), 3899u - 80u);
  EXPECT_EQ(humans->excluded_answers, 80);
  EXPECT_EQ(humans->excluded_users, 9);
  EXPECT_EQ(humans->users, 324 - 9);
  EXPECT_EQ(humans->word_mismatches, 0);
  EXPECT_EQ(ShippedHumans(vocabulary, {.include_colorblind = true})->answers.size(), 3899u);
}

TEST(HuesHumans, PublishedFormatWithCrlfSpanishWordsAndColorblindFlags) {
  Scratch dir;
  const auto ids = dir.Write("ids.txt", "u-blind\n\n");
  const auto csv = dir.Write("answers.csv", std::string(kHeader) +
                                                "u1,t,ANIMAL,1,SALMÓN,E11,spanish,female,20-29,no\r\n"
                                                "u2,t,ANIMAL,1,SALMON,e12,english,male,30-39,no\r\n"
                                                "u-blind,t,ANIMAL,1,SALMÓN,E13,spanish,male,30-39,no\r\n"
                                                "u3,t,ANIMAL,1,SALMÓN,E14,spanish,male,-10,YES\r\n"
                                                "u4,t,ANIMAL,2,SALMÓN,K26,spanish,other,70,no\r\n");
  const Vocabulary vocabulary = TestVocabulary();
  auto humans = LoadHumans(csv, vocabulary, {false, ids});
  ASSERT_TRUE(humans.ok()) << humans.status().ToString();
  ASSERT_EQ(humans->answers.size(), 3u);
  EXPECT_EQ(humans->excluded_answers, 2);  // by id and by the colorblind column
  EXPECT_EQ(humans->excluded_users, 2);
  EXPECT_EQ(humans->answers[1].cell, *ParseCell("E12"));
  EXPECT_EQ(vocabulary.words()[humans->answers[2].word].en, "WHALE");  // clueId rules, not the spelling
  EXPECT_EQ(humans->word_mismatches, 1);
}

TEST(HuesHumans, SesameStreetAnswersCountForTheCharacterThePlayerSawUnlessPairedByClueId) {
  // Clue 91 is BERT (AND ERNIE) in English but EPI (Y BLAS) (Ernie) in Spanish; clue 96 the reverse.
  Scratch dir;
  const auto ids = dir.Write("ids.txt", "");
  const auto csv = dir.Write("answers.csv", std::string(kHeader) +
                                                "es91,t,POP,91,EPI (Y BLAS),G4,spanish,female,20-29,no\r\n"
                                                "es96,t,POP,96,BLAS (Y EPI),C7,spanish,female,20-29,no\r\n"
                                                "en91,t,POP,91,BERT (AND ERNIE),C8,english,male,20-29,no\r\n"
                                                "en96,t,POP,96,ERNIE (AND BERT),G5,english,male,20-29,no\r\n");
  const Vocabulary vocabulary = TestVocabulary();
  auto word_of = [&](const HumanData& h, const std::string& user) {
    for (const HumanAnswer& a : h.answers)
      if (a.user == user) return vocabulary.words()[a.word].en;
    return std::string("none");
  };
  auto character = LoadHumans(csv, vocabulary, {false, ids});
  ASSERT_TRUE(character.ok()) << character.status().ToString();
  EXPECT_EQ(character->pairing, AnswerPairing::kCharacter);
  EXPECT_EQ(word_of(*character, "es91"), "ERNIE (AND BERT)");  // the player saw Epi = Ernie
  EXPECT_EQ(word_of(*character, "es96"), "BERT (AND ERNIE)");  // Blas = Bert
  EXPECT_EQ(word_of(*character, "en91"), "BERT (AND ERNIE)");
  EXPECT_EQ(word_of(*character, "en96"), "ERNIE (AND BERT)");
  EXPECT_EQ(character->repaired_answers, 2);
  EXPECT_EQ(character->word_mismatches, 0);

  auto by_clue = LoadHumans(csv, vocabulary, {false, ids, AnswerPairing::kClueId});
  ASSERT_TRUE(by_clue.ok()) << by_clue.status().ToString();
  EXPECT_EQ(word_of(*by_clue, "es91"), "BERT (AND ERNIE)");
  EXPECT_EQ(word_of(*by_clue, "es96"), "ERNIE (AND BERT)");
  EXPECT_EQ(by_clue->repaired_answers, 0);

  // Without a language column the shown spelling decides.
  const auto no_language = dir.Write("old.csv",
                                     "userId,timestamp,clueCategory,clueId,word,coordinate\n"
                                     "es91,t,POP,91,EPI (Y BLAS),G4\n"
                                     "en91,t,POP,91,BERT (AND ERNIE),C8\n");
  auto spelled = LoadHumans(no_language, vocabulary, {false, ids});
  ASSERT_TRUE(spelled.ok()) << spelled.status().ToString();
  EXPECT_EQ(word_of(*spelled, "es91"), "ERNIE (AND BERT)");
  EXPECT_EQ(word_of(*spelled, "en91"), "BERT (AND ERNIE)");

  EXPECT_EQ(ParseAnswerPairing("clue-id").value(), AnswerPairing::kClueId);
  EXPECT_EQ(ParseAnswerPairing("clueId").status().expected(), "character or clue-id");
}

TEST(HuesHumans, ShippedSesameStreetAnswersByCharacter) {
  // 28 + 29 answers to the two clues; 54 of them Spanish (moved under the character pairing). By
  // character, the modal macro colour of BERT (AND ERNIE) is Yellow (Bert's colour, clue 96's answers
  // in Spanish), by clue id it is Orange (clue 91's, mostly Spanish players shown Epi = Ernie).
  const Vocabulary vocabulary = TestVocabulary();
  auto character = ShippedHumans(vocabulary);
  ASSERT_TRUE(character.ok()) << character.status().ToString();
  EXPECT_EQ(character->repaired_answers, 54);
  auto by_clue = ShippedHumans(vocabulary, {.pairing = AnswerPairing::kClueId});
  ASSERT_TRUE(by_clue.ok()) << by_clue.status().ToString();
  const Board board = TestBoard();
  const MacroMap macro = TestMacro();
  const Threshold threshold = *ParseThreshold("chi2:0.95");
  const int bert = *vocabulary.IndexOfName("BERT (AND ERNIE)");
  auto modal = [&](const HumanData& h) {
    const HumanBaseline b = ComputeHumanBaseline(h, vocabulary, board, macro, threshold);
    return std::string(MacroName(b.words[bert].modal_macro));
  };
  EXPECT_EQ(modal(*character), "Yellow");
  EXPECT_EQ(modal(*by_clue), "Orange");
}

TEST(HuesHumans, BadAnswersNameFileLineAndValue) {
  Scratch dir;
  const Vocabulary vocabulary = TestVocabulary();
  const auto ids = dir.Write("ids.txt", "");
  auto q31 = LoadHumans(dir.Write("a.csv", std::string(kHeader) + "u1,t,ANIMAL,1,SALMÓN,E11,s,f,20-29,no\r\n"
                                                                  "u1,t,ANIMAL,2,BALLENA,Q31,s,f,20-29,no\r\n"),
                        vocabulary, {false, ids});
  ASSERT_FALSE(q31.ok());
  EXPECT_NE(q31.status().ToString().find("\"Q31\""), std::string::npos) << q31.status().ToString();
  EXPECT_NE(q31.status().where().find("a.csv:3"), std::string::npos) << q31.status().ToString();
  auto clue = LoadHumans(dir.Write("b.csv", std::string(kHeader) + "u1,t,ANIMAL,999,X,E11,s,f,20-29,no\r\n"),
                         vocabulary, {false, ids});
  ASSERT_FALSE(clue.ok());
  EXPECT_NE(clue.status().ToString().find("999"), std::string::npos);
  EXPECT_NE(clue.status().where().find("b.csv:2"), std::string::npos);
  EXPECT_FALSE(LoadHumans(dir.Write("c.csv", ""), vocabulary, {false, ids}).ok());
  EXPECT_FALSE(LoadHumans(dir.Write("d.csv", kHeader), vocabulary, {false, ids}).ok());
}

TEST(HuesHumans, BaselineLeaveOneOutAndDemographics) {
  // SALMON: six answers, five clustered and one far away (P30); WHALE: two answers (singular).
  const Board board = TestBoard();
  const Vocabulary vocabulary = TestVocabulary();
  const MacroMap macro = TestMacro();
  HumanData data;
  const std::vector<std::string> salmon_cells{"E11", "E12", "F11", "F12", "E10", "P30"};
  const std::vector<std::string> ages{"20-29", "20-29", "-10", "30-39", "70", "50-59"};
  for (size_t i = 0; i < salmon_cells.size(); ++i)
    data.answers.push_back(
        {0, *ParseCell(salmon_cells[i]), "u" + std::to_string(i), i % 2 ? "male" : "female", ages[i], "spanish"});
  data.answers.push_back({1, *ParseCell("K26"), "u0", "female", "20-29", "spanish"});
  data.answers.push_back({1, *ParseCell("K27"), "u1", "male", "20-29", "spanish"});
  const Threshold threshold = *ParseThreshold("chi2:0.95");
  const HumanBaseline b = ComputeHumanBaseline(data, vocabulary, board, macro, threshold);

  std::vector<stats::Vec2> points;
  for (const auto& c : salmon_cells) points.push_back(board.cell(*ParseCell(c)).xy);
  const std::vector<double> loo = stats::LeaveOneOutMahalanobis(points);
  int expected_failed = 0;
  for (double d2 : loo) expected_failed += d2 > threshold.d2;
  ASSERT_GT(loo[5], threshold.d2);  // the far answer is an outlier to the others

  const WordBaseline& salmon = b.words[0];
  EXPECT_EQ(salmon.n, 6);
  EXPECT_FALSE(salmon.singular);
  EXPECT_NEAR(salmon.mean[0], stats::Mean(points)[0], 1e-15);
  EXPECT_NEAR(salmon.cov[0][1], (*stats::Covariance(points))[0][1], 1e-15);
  EXPECT_EQ(salmon.loo_tested, 6);
  EXPECT_EQ(salmon.loo_failed, expected_failed);
  EXPECT_DOUBLE_EQ(salmon.loo_fail_rate, expected_failed / 6.0);

  const WordBaseline& whale = b.words[1];
  EXPECT_EQ(whale.n, 2);
  EXPECT_TRUE(whale.singular);
  EXPECT_EQ(whale.loo_singular, 2);
  EXPECT_TRUE(std::isnan(whale.loo_fail_rate));
  EXPECT_EQ(b.singular_words, 1 + 98);  // the 98 words without answers are singular too

  // Animal: only SALMON has a rate; WHALE and the others are counted as words without one.
  EXPECT_EQ(b.categories[0].category, "Animal");
  EXPECT_DOUBLE_EQ(b.categories[0].fail_rate, salmon.loo_fail_rate);
  EXPECT_EQ(b.categories[0].words_without_rate, 12);

  auto group = [&](const std::string& dimension, const std::string& name) {
    for (const GroupRate& g : b.demographics)
      if (g.dimension == dimension && g.group == name) return g;
    return GroupRate{};
  };
  EXPECT_EQ(group("age", "<30").answers, 3 + 2);  // 20-29, 20-29, -10 + WHALE's two
  EXPECT_EQ(group("age", ">=30").answers, 3);     // 30-39, 70, 50-59
  EXPECT_EQ(group("age", ">=30").tested, 3);
  EXPECT_EQ(group("age", "<30").tested, 3);  // WHALE's answers are not testable
  EXPECT_EQ(group("gender", "female").answers + group("gender", "male").answers, 8);
}

}  // namespace
}  // namespace visalign::hues
