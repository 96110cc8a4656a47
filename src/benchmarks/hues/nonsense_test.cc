// Nonsense baseline: the collapse classes, entropy and false-positive flags on hand-made predictions.
#include <gtest/gtest.h>

#include <cmath>

#include "benchmarks/hues/test_support.h"
#include "visalign/benchmarks/hues/hues.h"

namespace visalign::hues {
namespace {

using testing::Scratch;
using testing::TestNonsense;

// A map where rows A-D are Red, E-H Blue, I-L Green, M-P Yellow; cells A1..A3 and I18 are neutral.
MacroMap TestMap(const Scratch& dir) {
  std::string csv = "cell,category,confidence,neutral\n";
  const char* categories[] = {"Red", "Blue", "Green", "Yellow"};
  for (int i = 0; i < kCells; ++i) {
    const std::string name = CellName(i);
    const bool neutral = name == "A1" || name == "A2" || name == "A3" || name == "I18";
    csv += name + "," + categories[i / kCols / 4] + ",1," + (neutral ? "true" : "false") + "\n";
  }
  return *MacroMap::Load(dir.Write("map.csv", csv));
}

class HuesNonsense : public ::testing::Test {
 protected:
  // Predictions whose top-1 cells are `cells` for the 16 nonsense words in vocabulary order.
  ModelPredictions Model(const std::vector<std::string>& cells) {
    ModelPredictions m;
    m.name = "m";
    m.words.resize(100);
    for (size_t i = 0; i < vocabulary_.size(); ++i)
      m.nonsense[AsciiUpper(vocabulary_[i].word)] = std::vector<Prediction>(5, Prediction{*ParseCell(cells[i]), 0.1});
    return m;
  }
  static std::string AsciiUpper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
  }
  NonsenseResult Classify(const ModelPredictions& m) {
    auto r = ClassifyNonsense(m, vocabulary_, map_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return *r;
  }
  Scratch dir_;
  MacroMap map_ = TestMap(dir_);
  std::vector<NonsenseWord> vocabulary_ = TestNonsense();
};

TEST_F(HuesNonsense, VocabularyHasFourGroupsOfFourWithThePublishedItems) {
  ASSERT_EQ(vocabulary_.size(), 16u);
  for (const char* w : {"0000", "THE", "OF", "IT", "GLIMBOR", "ZIZAX", "XKDF#HS_DK", "AND", "Glimborp", "xfhjk_1"})
    EXPECT_TRUE(std::any_of(vocabulary_.begin(), vocabulary_.end(), [&](const NonsenseWord& n) { return n.word == w; }))
        << w;
  EXPECT_EQ(vocabulary_[0].group, "number");
}

TEST_F(HuesNonsense, NeutralCollapse) {
  // Groups 1-3 put 3 or 4 answers on neutral cells; group 4 is scattered.
  const NonsenseResult r = Classify(
      Model({"A1", "A2", "I18", "A3", "A1", "A1", "A2", "E5", "I18", "I18", "A3", "M1", "A5", "E5", "I5", "M5"}));
  EXPECT_EQ(r.collapse, CollapseClass::kNeutral);
  EXPECT_EQ(r.collapse_onto, Macro::kNeutral);
  EXPECT_TRUE(r.groups[0].collapsed);
  EXPECT_FALSE(r.groups[3].collapsed);
  // Classes: Neutral 10, Red 1 (A5), Blue 2 (E5 twice), Green 1 (I5), Yellow 2 (M1, M5):
  const double expected =
      -(10 / 16.0 * std::log2(10 / 16.0) + 2 * (1 / 16.0) * std::log2(1 / 16.0) + 2 * (2 / 16.0) * std::log2(2 / 16.0));
  EXPECT_NEAR(r.entropy_bits, expected, 1e-12);
}

TEST_F(HuesNonsense, SpecificColorCollapse) {
  const NonsenseResult r =
      Classify(Model({"E1", "E2", "F3", "A1", "E1", "E9", "H2", "H3", "G1", "G2", "G3", "G4", "A5", "E5", "I5", "M5"}));
  EXPECT_EQ(r.collapse, CollapseClass::kSpecificColor);
  EXPECT_EQ(r.collapse_onto, Macro::kBlue);
}

TEST_F(HuesNonsense, SelectiveCollapseWhenOneOrTwoGroupsOrDifferentColorsCollapse) {
  const NonsenseResult two =
      Classify(Model({"E1", "E2", "F3", "A5", "M1", "M2", "M3", "A5", "A5", "E5", "I5", "M5", "A5", "E5", "I5", "M5"}));
  EXPECT_EQ(two.collapse, CollapseClass::kSelective);
  EXPECT_FALSE(two.collapse_onto.has_value());
  const NonsenseResult different =
      Classify(Model({"E1", "E2", "F3", "A5", "M1", "M2", "M3", "A5", "I1", "I2", "I3", "I4", "A5", "E5", "I5", "M5"}));
  EXPECT_EQ(different.collapse, CollapseClass::kSelective);
}

TEST_F(HuesNonsense, HighEntropyAndNoPriorWhenNothingRepeats) {
  const NonsenseResult r =
      Classify(Model({"A5", "E5", "I5", "M5", "A6", "E6", "I6", "M6", "A7", "E7", "I7", "M7", "A8", "E8", "I8", "M8"}));
  EXPECT_EQ(r.collapse, CollapseClass::kHighEntropy);
  EXPECT_NEAR(r.entropy_bits, 2.0, 1e-12);  // 4 classes × 4
  EXPECT_FALSE(r.prior_cell.has_value());
}

TEST_F(HuesNonsense, ValidWordsAnsweredWithTheNonsensePriorAreFlagged) {
  ModelPredictions m =
      Model({"I18", "I18", "I18", "A5", "E5", "I5", "M5", "A6", "E6", "I6", "M6", "A7", "E7", "I7", "M7", "A8"});
  m.words[0] = std::vector<Prediction>(5, Prediction{*ParseCell("I18"), 0.2});  // SALMON
  m.words[1] = std::vector<Prediction>(5, Prediction{*ParseCell("K26"), 0.2});  // WHALE
  const NonsenseResult r = Classify(m);
  ASSERT_TRUE(r.prior_cell.has_value());
  EXPECT_EQ(CellName(*r.prior_cell), "I18");
  EXPECT_EQ(r.prior_count, 3);
  EXPECT_EQ(r.false_positive_words, std::vector<int>{0});
}

TEST_F(HuesNonsense, MissingNonsenseWordsAreAnError) {
  ModelPredictions m = Model(std::vector<std::string>(16, "A5"));
  m.nonsense.erase("ZIZAX");
  auto r = ClassifyNonsense(m, vocabulary_, map_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().what().find("ZIZAX"), std::string::npos) << r.status().ToString();
}

// The authors' 11 published items: number 1, random_string 1, pseudoword 2, stop_word 7 words.
class HuesPublishedNonsense : public HuesNonsense {
 protected:
  void SetUp() override {
    auto published = PublishedNonsenseVocabulary();
    ASSERT_TRUE(published.ok()) << published.status().ToString();
    vocabulary_ = std::move(published).value();
    ASSERT_EQ(vocabulary_.size(), 11u);
  }
};

TEST_F(HuesPublishedNonsense, OneWordGroupsNeverCollapseAndTwoOfTwoGroupsDecide) {
  // Everything on I18: the pseudoword (2 of 2) and stop-word (7 of 7) groups collapse onto Neutral; the two
  // one-word groups cannot collapse, so 2 of the 2 groups that can collapse decide.
  const NonsenseResult all_grey = Classify(Model(std::vector<std::string>(11, "I18")));
  ASSERT_EQ(all_grey.groups.size(), 4u);
  EXPECT_FALSE(all_grey.groups[0].collapsed);
  EXPECT_FALSE(all_grey.groups[1].collapsed);
  EXPECT_TRUE(all_grey.groups[2].collapsed);
  EXPECT_TRUE(all_grey.groups[3].collapsed);
  EXPECT_EQ(all_grey.collapse, CollapseClass::kNeutral);
}

TEST_F(HuesPublishedNonsense, AGroupCollapsesOnThreeQuartersOfItsWords) {
  // Pseudowords on two Red cells collapse onto Red (2 of 2); stop words 5 of 7 on I18 do not (5/7 < 3/4).
  const NonsenseResult five = Classify(Model({"E5", "M5", "A4", "A5", "I18", "I18", "I18", "I18", "I18", "E6", "M6"}));
  EXPECT_TRUE(five.groups[2].collapsed);
  EXPECT_EQ(five.groups[2].onto, Macro::kRed);
  EXPECT_FALSE(five.groups[3].collapsed);
  EXPECT_EQ(five.collapse, CollapseClass::kSelective);  // 1 of 2 groups: not a model-wide collapse
  // 6 of 7 stop words on I18 (6/7 >= 3/4) collapse onto Neutral; with pseudowords on Red the classes differ.
  const NonsenseResult six = Classify(Model({"E5", "M5", "A4", "A5", "I18", "I18", "I18", "I18", "I18", "I18", "M6"}));
  EXPECT_TRUE(six.groups[3].collapsed);
  EXPECT_EQ(six.groups[3].onto, Macro::kNeutral);
  EXPECT_EQ(six.collapse, CollapseClass::kSelective);
}

TEST(HuesNonsenseLists, AllNonsenseWordsAreTheSixteenThenThePublishedStopWordsTheyDrop) {
  auto all = AllNonsenseWords();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 20u);
  std::vector<std::string> added;
  for (size_t i = 16; i < all->size(); ++i) added.push_back((*all)[i].word);
  EXPECT_EQ(added, (std::vector<std::string>{"HER", "HIM", "HE", "SHE"}));
}

}  // namespace
}  // namespace visalign::hues
