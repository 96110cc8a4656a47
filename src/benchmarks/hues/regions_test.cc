// The regionalization study: what a painting may hold, and the consensus map over paintings.
#include "visalign/benchmarks/hues/regions.h"

#include <gtest/gtest.h>

#include "benchmarks/hues/test_support.h"

namespace visalign::hues {
namespace {

using testing::Scratch;
using testing::TestBoard;

// A painting of the whole board in one category, then `strokes` on top.
RegionPainting Filled(Macro fill, const std::vector<std::pair<std::string, Macro>>& strokes = {}) {
  RegionPainting p;
  p.cells.fill(fill);
  for (const auto& [cell, category] : strokes) p.cells[static_cast<size_t>(*ParseCell(cell))] = category;
  return p;
}

TEST(RegionPainting, ParsesCellsAndCategoriesCaseInsensitively) {
  auto p = ParseRegionPainting({{"a1", "red"}, {"P30", "Blue"}}, "painting");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->painted(), 2);
  EXPECT_EQ(p->cells[0], Macro::kRed);
  EXPECT_EQ(p->cells[kCells - 1], Macro::kBlue);
  EXPECT_FALSE(p->cells[1].has_value());
  EXPECT_EQ(RegionPaintingJson(*p), Json({{"A1", "Red"}, {"P30", "Blue"}}));
}

TEST(RegionPainting, RefusesUnknownCellsCategoriesAndEmptyPaintings) {
  const auto error = [](const Json& cells) { return ParseRegionPainting(cells, "body cells").status(); };
  EXPECT_NE(error({{"Q31", "Red"}}).what().find("unknown cell \"Q31\""), std::string::npos);
  EXPECT_NE(error({{"A1", "Teal"}}).what().find("unknown category \"Teal\" for cell A1"), std::string::npos);
  EXPECT_NE(error({{"A1", 3}}).what().find("unknown category 3"), std::string::npos);
  EXPECT_NE(error({{"A1", "Red"}, {"a1", "Blue"}}).what().find("A1 painted twice"), std::string::npos);
  EXPECT_EQ(error(Json::object()).what(), "no painted cell");
  EXPECT_EQ(error(Json::array()).where(), "body cells");
}

TEST(RegionConsensus, MajorityPerCellWithItsAgreementShare) {
  const std::vector<RegionPainting> paintings = {
      Filled(Macro::kGreen, {{"A1", Macro::kRed}, {"B2", Macro::kBlue}}),
      Filled(Macro::kGreen, {{"A1", Macro::kRed}}),
      Filled(Macro::kGreen, {{"A1", Macro::kPink}, {"B2", Macro::kBlue}}),
      Filled(Macro::kGreen),
  };
  auto map = RegionConsensus(paintings, TestBoard());
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  const MacroCell& a1 = map->at(*ParseCell("A1"));
  EXPECT_EQ(a1.category, Macro::kRed);  // 2 Red, 1 Pink, 1 Green
  EXPECT_DOUBLE_EQ(a1.confidence, 0.5);
  const MacroCell& b2 = map->at(*ParseCell("B2"));  // 2 Blue, 2 Green: the tie goes to Green, earlier in the list
  EXPECT_EQ(b2.category, Macro::kGreen);
  EXPECT_DOUBLE_EQ(b2.confidence, 0.5);
  EXPECT_EQ(map->at(*ParseCell("O10")).category, Macro::kGreen);
  EXPECT_DOUBLE_EQ(map->at(*ParseCell("O10")).confidence, 1.0);
  EXPECT_EQ(map->source(), "consensus of 4 region paintings");
}

TEST(RegionConsensus, AgreementCountsOnlyTheParticipantsWhoPaintedTheCell) {
  RegionPainting partial;
  partial.cells[0] = Macro::kYellow;  // only A1
  auto map = RegionConsensus({Filled(Macro::kOrange), partial}, TestBoard());
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(map->at(0).category, Macro::kOrange);  // 1 Orange, 1 Yellow: the tie goes to Orange
  EXPECT_DOUBLE_EQ(map->at(0).confidence, 0.5);
  EXPECT_DOUBLE_EQ(map->at(1).confidence, 1.0);  // only the full painting covers A2
}

TEST(RegionConsensus, NeutralFollowsTheBoardNotThePaintings) {
  const Board board = TestBoard();
  auto map = RegionConsensus({Filled(Macro::kBrown)}, board);
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  for (int i = 0; i < kCells; ++i) EXPECT_EQ(map->at(i).neutral, MacroMap::IsNeutral(board.cell(i))) << CellName(i);
  EXPECT_TRUE(map->at(*ParseCell("I18")).neutral);
}

TEST(RegionConsensus, NeedsEveryCellPaintedByAtLeastOneParticipant) {
  RegionPainting partial = Filled(Macro::kBlue);
  partial.cells[*ParseCell("C5")].reset();
  partial.cells[*ParseCell("D1")].reset();
  auto map = RegionConsensus({partial}, TestBoard());
  ASSERT_FALSE(map.ok());
  EXPECT_EQ(map.status().what(), "2 cells painted by nobody (first: C5)");
  EXPECT_EQ(map.status().where(), "region paintings");
  EXPECT_FALSE(RegionConsensus({}, TestBoard()).ok());
}

TEST(RegionConsensus, WritesAMacroMapTheHuesCommandsReadBackUnchanged) {
  const std::vector<RegionPainting> paintings = {
      Filled(Macro::kPurple, {{"A1", Macro::kRed}, {"F9", Macro::kYellow}}),
      Filled(Macro::kPurple, {{"A1", Macro::kRed}}),
      Filled(Macro::kPink, {{"F9", Macro::kYellow}}),
  };
  auto map = RegionConsensus(paintings, TestBoard());
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  Scratch dir;
  auto back = MacroMap::Load(dir.Write("macro_regions.csv", map->ToCsv()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToCsv(), map->ToCsv());
  for (int i = 0; i < kCells; ++i) {
    EXPECT_EQ(back->at(i).category, map->at(i).category) << CellName(i);
    EXPECT_EQ(back->at(i).confidence, map->at(i).confidence) << CellName(i);  // exact: 2/3 round-trips
    EXPECT_EQ(back->at(i).neutral, map->at(i).neutral) << CellName(i);
  }
  EXPECT_DOUBLE_EQ(back->at(*ParseCell("B1")).confidence, 2.0 / 3.0);
}

}  // namespace
}  // namespace visalign::hues
