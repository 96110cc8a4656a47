// Board cells, names and chromaticity, checked against hand computations.
#include <gtest/gtest.h>

#include "benchmarks/hues/test_support.h"
#include "visalign/benchmarks/hues/hues.h"

namespace visalign::hues {
namespace {

using testing::Data;
using testing::Scratch;
using testing::TestBoard;

TEST(HuesBoard, CellNamesRoundTrip) {
  EXPECT_EQ(*ParseCell("A1"), 0);
  EXPECT_EQ(*ParseCell("A30"), 29);
  EXPECT_EQ(*ParseCell("I18"), 8 * 30 + 17);
  EXPECT_EQ(*ParseCell("p30"), 479);
  EXPECT_EQ(CellName(0), "A1");
  EXPECT_EQ(CellName(257), "I18");
  EXPECT_EQ(CellName(479), "P30");
  for (const char* bad : {"Q31", "Q1", "A0", "A31", "A01", "", "18", "I", "I18x"}) {
    auto r = ParseCell(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().what().find(std::string("\"") + bad + "\""), std::string::npos) << r.status().ToString();
  }
}

TEST(HuesBoard, DisplayChromaticityByHand) {
  // White: XYZ = 255² · row sums of M = (168.2615, 171.1976, 186.1257) · 65025; sum 525.5848.
  const stats::Vec2 white = CellChromaticity({255, 255, 255}, Chromaticity::kDisplay);
  EXPECT_NEAR(white[0], 168.2615 / 525.5848, 1e-15);
  EXPECT_NEAR(white[1], 171.1976 / 525.5848, 1e-15);
  // Pure red: the first column of M, (69.1661, 39.0454, 3.3467), sum 111.5582.
  const stats::Vec2 red = CellChromaticity({255, 0, 0}, Chromaticity::kDisplay);
  EXPECT_NEAR(red[0], 69.1661 / 111.5582, 1e-15);
  EXPECT_NEAR(red[1], 39.0454 / 111.5582, 1e-15);
  // Gamma 2: doubling every channel multiplies XYZ by 4 and leaves xy unchanged.
  const stats::Vec2 a = CellChromaticity({50, 25, 10}, Chromaticity::kDisplay);
  const stats::Vec2 b = CellChromaticity({100, 50, 20}, Chromaticity::kDisplay);
  EXPECT_NEAR(a[0], b[0], 1e-15);
  EXPECT_NEAR(a[1], b[1], 1e-15);
}

TEST(HuesBoard, SrgbChromaticityOfWhiteIsD65) {
  // D65 white (0.95047, 1, 1.08883): x = 0.95047/3.0393, y = 1/3.0393.
  const stats::Vec2 white = CellChromaticity({255, 255, 255}, Chromaticity::kSrgb);
  EXPECT_NEAR(white[0], 0.95047 / 3.0393, 1e-4);
  EXPECT_NEAR(white[1], 1.0 / 3.0393, 1e-4);
}

TEST(HuesBoard, LoadsAll480CellsOfTheShippedBoard) {
  const Board board = TestBoard();
  ASSERT_EQ(board.cells().size(), 480u);
  const Cell& a1 = board.cell(0);
  EXPECT_EQ(a1.name, "A1");
  EXPECT_EQ(a1.rgb, (color::Srgb8{82, 48, 27}));
  const Cell& i18 = board.cell(*ParseCell("I18"));
  EXPECT_EQ(i18.row, 'I');
  EXPECT_EQ(i18.col, 18);
  EXPECT_EQ(i18.rgb, (color::Srgb8{191, 193, 194}));
  EXPECT_NEAR(i18.xy[0], CellChromaticity(i18.rgb, Chromaticity::kDisplay)[0], 0);
  EXPECT_NEAR(i18.lab.L, color::Srgb8ToLab(i18.rgb).L, 1e-12);
  const Board srgb = TestBoard(Chromaticity::kSrgb);
  EXPECT_NE(srgb.cell(0).xy[0], a1.xy[0]);
}

TEST(HuesBoard, RejectsUnknownCellsNamingFileAndLine) {
  Scratch dir;
  const auto path = dir.Write("board.csv", "cell,row,col,R,G,B\nA1,A,1,1,2,3\nQ31,Q,31,1,2,3\n");
  auto b = Board::Load(path, Chromaticity::kDisplay);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().ToString().find("\"Q31\""), std::string::npos) << b.status().ToString();
  EXPECT_NE(b.status().where().find("board.csv:3"), std::string::npos) << b.status().ToString();
}

TEST(HuesBoard, ParsesChromaticityNames) {
  EXPECT_EQ(*ParseChromaticity("display"), Chromaticity::kDisplay);
  EXPECT_EQ(*ParseChromaticity("srgb"), Chromaticity::kSrgb);
  EXPECT_FALSE(ParseChromaticity("cie").ok());
}

}  // namespace
}  // namespace visalign::hues
