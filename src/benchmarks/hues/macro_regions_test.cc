// The macro color map: the derivation rule, the shipped file, and the CSV contract.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "benchmarks/hues/test_support.h"
#include "visalign/benchmarks/hues/hues.h"

namespace visalign::hues {
namespace {

using testing::Data;
using testing::Scratch;
using testing::TestBoard;
using testing::TestMacro;

TEST(HuesMacro, IsccLevel2NamesMapToTheEightCategories) {
  EXPECT_EQ(MacroForIsccLevel2("olive brown"), Macro::kBrown);
  EXPECT_EQ(MacroForIsccLevel2("purplish red"), Macro::kRed);
  EXPECT_EQ(MacroForIsccLevel2("reddish orange"), Macro::kOrange);
  EXPECT_EQ(MacroForIsccLevel2("greenish yellow"), Macro::kYellow);
  EXPECT_EQ(MacroForIsccLevel2("olive green"), Macro::kGreen);
  EXPECT_EQ(MacroForIsccLevel2("greenish blue"), Macro::kBlue);
  EXPECT_EQ(MacroForIsccLevel2("violet"), Macro::kPurple);
  EXPECT_EQ(MacroForIsccLevel2("purplish pink"), Macro::kPink);
  EXPECT_FALSE(MacroForIsccLevel2("gray").has_value());
  EXPECT_FALSE(MacroForIsccLevel2("white").has_value());
}

TEST(HuesMacro, ShippedMapIsTheDerivedMap) {
  auto iscc = color::IsccNbs::Load(Data("color"));
  ASSERT_TRUE(iscc.ok()) << iscc.status().ToString();
  const MacroMap derived = MacroMap::Derive(TestBoard(), *iscc);
  EXPECT_EQ(TestMacro().ToCsv(), derived.ToCsv())
      << "data/hues/macro_regions.csv is stale: run `visalign hues macro-map --out data/hues/macro_regions.csv`";
}

TEST(HuesMacro, I18IsTheMostNeutralCellAndEveryCategoryOccurs) {
  const Board board = TestBoard();
  const MacroMap macro = TestMacro();
  const int i18 = *ParseCell("I18");
  EXPECT_TRUE(macro.at(i18).neutral);
  EXPECT_EQ(macro.MacroClass(i18), Macro::kNeutral);
  std::set<Macro> categories;
  for (int i = 0; i < kCells; ++i) {
    const color::Lab& lab = board.cell(i).lab;
    EXPECT_GE(std::hypot(lab.a, lab.b), std::hypot(board.cell(i18).lab.a, board.cell(i18).lab.b)) << CellName(i);
    EXPECT_EQ(macro.at(i).neutral, std::hypot(lab.a, lab.b) < MacroMap::kNeutralChroma) << CellName(i);
    EXPECT_GE(macro.at(i).confidence, 0.0);
    EXPECT_LE(macro.at(i).confidence, 1.0);
    categories.insert(macro.at(i).category);
  }
  EXPECT_EQ(categories.size(), size_t(kMacroCategories));
  // Spot checks a reader can verify on the board: a saturated red, a deep blue, a grass green.
  EXPECT_EQ(macro.at(*ParseCell("B15")).category, Macro::kRed);
  EXPECT_EQ(macro.at(*ParseCell("J28")).category, Macro::kBlue);
  EXPECT_EQ(macro.at(*ParseCell("O10")).category, Macro::kGreen);
}

TEST(HuesMacro, LoadRejectsUnknownCategoriesAndMissingCells) {
  Scratch dir;
  auto bad = MacroMap::Load(dir.Write("m.csv", "cell,category,confidence,neutral\nA1,Teal,1,false\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("Teal"), std::string::npos);
  EXPECT_NE(bad.status().where().find("m.csv:2"), std::string::npos) << bad.status().ToString();
  auto partial = MacroMap::Load(dir.Write("p.csv", "cell,category,confidence,neutral\nA1,Red,1,false\n"));
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.status().what().find("A2"), std::string::npos) << partial.status().ToString();
}

}  // namespace
}  // namespace visalign::hues
