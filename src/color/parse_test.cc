// Color notation parsing: every accepted form with the color it denotes, and bad input that must
// fail with a clear kInvalidArgument.
#include <gtest/gtest.h>

#include <cmath>

#include "visalign/color.h"

namespace visalign::color {
namespace {

const IsccNbs& Names() {
  static const IsccNbs table = *IsccNbs::Load(std::filesystem::path(VISALIGN_TEST_DATA_DIR) / "color");
  return table;
}

struct Good {
  const char* text;
  Notation notation;
  Srgb8 rgb8;
};

TEST(ParseColor, AcceptsEveryNotation) {
  const Good cases[] = {
      {"#FF0000", Notation::kHex, {255, 0, 0}},
      {"#ff8800", Notation::kHex, {255, 136, 0}},
      {"#F80", Notation::kHex, {255, 136, 0}},
      {"  #AbCdEf  ", Notation::kHex, {171, 205, 239}},
      {"rgb(255, 128, 0)", Notation::kRgb, {255, 128, 0}},
      {"RGB( 1 , 2 , 3 )", Notation::kRgb, {1, 2, 3}},
      {"rgb(1 2 3)", Notation::kRgb, {1, 2, 3}},
      {"hsl(120, 100%, 50%)", Notation::kHsl, {0, 255, 0}},
      {"hsl(-240, 100%, 50%)", Notation::kHsl, {0, 255, 0}},
      {"HSL(30deg, 100%, 50%)", Notation::kHsl, {255, 128, 0}},
      {"hsl(210 50% 50%)", Notation::kHsl, {64, 128, 191}},  // (0.25, 0.5, 0.75) rounded half away
      {"lab(53.24058794, 80.09230823, 67.20275104)", Notation::kLab, {255, 0, 0}},
      {"lab(0, 0, 0)", Notation::kLab, {0, 0, 0}},
      {"lab(100% 0 0)", Notation::kLab, {255, 255, 255}},
      {"vivid pink", Notation::kName, {255, 181, 186}},
      {"  VIVID   Pink ", Notation::kName, {255, 181, 186}},
      {"pink", Notation::kName, {228, 113, 122}},        // level 2 representative, #3 deep pink
      {"yellow green", Notation::kName, {141, 182, 0}},  // level 2 representative
  };
  for (const Good& c : cases) {
    const Result<ParsedColor> got = ParseColor(c.text, Names());
    ASSERT_TRUE(got.ok()) << c.text << ": " << got.status().ToString();
    EXPECT_EQ(got->notation, c.notation) << c.text;
    EXPECT_EQ(ToHex(got->rgb8), ToHex(c.rgb8)) << c.text;
    EXPECT_TRUE(got->in_gamut) << c.text;
  }
}

TEST(ParseColor, NumbersFollowCssSyntax) {
  const Lab plain = ParseColor("lab(50, -15, 0.5)", Names())->lab;
  const Lab css = ParseColor("lab(+5e1, -1.5E1, .5)", Names())->lab;
  EXPECT_EQ(css.L, plain.L);
  EXPECT_EQ(css.a, plain.a);
  EXPECT_EQ(css.b, plain.b);
}

TEST(ParseColor, NamesReportTheirCanonicalNameAndLevel) {
  const ParsedColor vivid = *ParseColor("Vivid  Pink", Names());
  EXPECT_EQ(vivid.name, "vivid pink");
  EXPECT_EQ(vivid.iscc_level, 3);
  const ParsedColor pink = *ParseColor("PINK", Names());
  EXPECT_EQ(pink.name, "pink");
  EXPECT_EQ(pink.iscc_level, 2);
  EXPECT_EQ(ParseColor("black", Names())->iscc_level, 3);  // also a level-3 name (#267), which wins
}

TEST(ParseColor, HslDenotesTheExactColorAndItsRounding) {
  const ParsedColor c = *ParseColor("hsl(210, 50%, 50%)", Names());
  EXPECT_NEAR(c.rgb.r, 0.25, 1e-15);
  EXPECT_NEAR(c.rgb.g, 0.5, 1e-15);
  EXPECT_NEAR(c.rgb.b, 0.75, 1e-15);
  EXPECT_EQ(c.rgb8, (Srgb8{64, 128, 191}));  // 63.75, 127.5, 191.25
}

TEST(ParseColor, LabKeepsTheGivenNumbers) {
  const ParsedColor c = *ParseColor("lab(62.5, -20.25, 33)", Names());
  EXPECT_EQ(c.lab.L, 62.5);
  EXPECT_EQ(c.lab.a, -20.25);
  EXPECT_EQ(c.lab.b, 33.0);
  const Lab back = SrgbToLab(c.rgb);
  EXPECT_NEAR(back.a, -20.25, 1e-9);
}

TEST(ParseColor, LabOutsideTheGamutIsFlaggedAndUnclamped) {
  const ParsedColor c = *ParseColor("lab(50, 200, 0)", Names());
  EXPECT_FALSE(c.in_gamut);
  EXPECT_GT(c.rgb.r, 1.0);
  EXPECT_LT(c.rgb.g, 0.0);
  EXPECT_EQ(c.rgb8.r, 255);
  EXPECT_EQ(c.rgb8.g, 0);
}

TEST(ParseColor, ReadmeSharmaPairIsOutOfGamutWithFiniteExtendedSrgb) {
  // The README's `color diff` example: linear red -0.1918 is sRGB -0.4752 (sign-symmetric
  // transfer), not -2.4778.
  const ParsedColor c = *ParseColor("lab(50, 2.6772, -79.7751)", Names());
  EXPECT_FALSE(c.in_gamut);
  EXPECT_NEAR(c.rgb.r, -0.4752, 1e-4);
  EXPECT_NEAR(c.rgb.g, 0.4978, 1e-4);
  EXPECT_NEAR(c.rgb.b, 1.0071, 1e-4);
  EXPECT_EQ(c.rgb8, (Srgb8{0, 127, 255}));
  EXPECT_FALSE(ParseColor("lab(50, 120, -120)", Names())->in_gamut);
}

TEST(ParseColor, LabAcceptsOpponentAxesUpToTheLimit) {
  const ParsedColor c = *ParseColor("lab(50, -1000, 1000)", Names());
  EXPECT_EQ(c.lab.a, -kMaxLabAb);
  EXPECT_EQ(c.lab.b, kMaxLabAb);
  EXPECT_FALSE(c.in_gamut);
  EXPECT_TRUE(std::isfinite(c.rgb.r) && std::isfinite(c.rgb.g) && std::isfinite(c.rgb.b));
}

TEST(ParseColor, LabWhiteIsInGamutDespiteSkimagesWhitePoint) {
  // lab(100, 0, 0) maps to sRGB (1.000003, 0.999995, 1.000036): within half an 8-bit step.
  const ParsedColor c = *ParseColor("lab(100, 0, 0)", Names());
  EXPECT_TRUE(c.in_gamut);
  EXPECT_EQ(c.rgb8, (Srgb8{255, 255, 255}));
}

TEST(ParseColor, RejectsBadInputWithTheTextAndTheExpectedForm) {
  struct Bad {
    const char* text;
    const char* expected_mentions;
  };
  const Bad cases[] = {
      {"#GGHHII", "#RRGGBB"},
      {"#12345", "#RRGGBB"},
      {"#", "#RRGGBB"},
      {"rgb(300,0,0)", "r = 300"},
      {"rgb(0, 256, 0)", "g = 256"},
      {"rgb(-1,0,0)", "0-255"},
      {"rgb(1.5, 0, 0)", "integers"},
      {"rgb(0x10, 0, 0)", "integers"},
      {"rgb(1,2)", "three components"},
      {"rgb(1,2,3,4)", "three components"},
      {"rgb(1,,2)", "three components"},
      {"rgb(1,2,3", "closing parenthesis"},
      {"hsl(10, 120%, 5%)", "s = 120%"},
      {"hsl(10, 50, 50%)", "s = 50"},
      {"hsl(10, 50%, -1%)", "l = -1%"},
      {"hsl(x, 50%, 50%)", "h = x"},
      {"lab(101, 0, 0)", "L = 101"},
      {"lab(50, nan, 0)", "a = nan"},
      {"lab(50, 0, inf)", "b = inf"},
      {"lab(50, 1e999, 0)", "a = 1e999"},
      {"lab(50, 1000.5, 0)", "a and b in -1000..1000; got a = 1000.5"},
      {"lab(50, 0, -1e300)", "b = -1e300"},
      {"cmyk(0, 0, 0, 0)", "rgb(r, g, b)"},
      {"", "ISCC-NBS"},
      {"   ", "ISCC-NBS"},
      {"not a color", "ISCC-NBS"},
      {"vivid", "ISCC-NBS"},
  };
  for (const Bad& c : cases) {
    const Result<ParsedColor> got = ParseColor(c.text, Names());
    ASSERT_FALSE(got.ok()) << c.text;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_EQ(got.status().what(), "invalid color \"" + std::string(c.text) + "\"");
    EXPECT_NE(got.status().expected().find(c.expected_mentions), std::string::npos)
        << c.text << " -> " << got.status().expected();
  }
}

TEST(ParseColor, DefaultNamesOverloadParsesHexWithoutNeedingTheTable) {
  EXPECT_EQ(ParseColor("#102030")->rgb8, (Srgb8{16, 32, 48}));
  const Result<ParsedColor> named = ParseColor("strong blue");  // via IsccNbs::Default()
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_EQ(ToHex(named->rgb8), "#0067A5");
}

TEST(ParseColorList, SplitsAtCommasOutsideParentheses) {
  const Result<std::vector<Srgb8>> got = ParseColorList("red, rgb(0, 128, 0),#00F,hsl(60, 100%, 50%),lab(100, 0, 0)");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const std::vector<Srgb8> expected = {
      ParseColor("red")->rgb8, {0, 128, 0}, {0, 0, 255}, {255, 255, 0}, {255, 255, 255}};
  EXPECT_EQ(*got, expected);
  EXPECT_EQ(*ParseColorList("#D9B451"), (std::vector<Srgb8>{{217, 180, 81}}));
}

TEST(ParseColorList, ReportsTheFirstBadEntryAsParseColorDoes) {
  const Result<std::vector<Srgb8>> bad = ParseColorList("#F00,#GGHHII,nope");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().what(), "invalid color \"#GGHHII\"");
  EXPECT_EQ(bad.status().ToString(), ParseColor("#GGHHII").status().ToString());
  for (const char* text : {"", "#F00,", ",#F00", "#F00,,#00F"}) {
    const Result<std::vector<Srgb8>> empty = ParseColorList(text);
    ASSERT_FALSE(empty.ok()) << text;
    EXPECT_EQ(empty.status().what(), "invalid color \"\"") << text;
  }
  // An unbalanced parenthesis keeps the rest of the list in one entry, which then fails whole.
  EXPECT_EQ(ParseColorList("rgb(1, 2, 3,#F00").status().what(), "invalid color \"rgb(1, 2, 3,#F00\"");
}

TEST(NotationName, NamesEachNotation) {
  EXPECT_EQ(NotationName(Notation::kHex), "hex");
  EXPECT_EQ(NotationName(Notation::kRgb), "rgb");
  EXPECT_EQ(NotationName(Notation::kHsl), "hsl");
  EXPECT_EQ(NotationName(Notation::kLab), "lab");
  EXPECT_EQ(NotationName(Notation::kName), "name");
}

}  // namespace
}  // namespace visalign::color
