// `visalign color ...`: JSON shapes and values, text output, and the one-line error contract.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "testing/cli_runner.h"

#include "visalign/core/json.h"

namespace visalign {
namespace {

using testing::RunVisalign;

Json RunJson(const std::vector<std::string>& args) {
  const auto r = RunVisalign(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Json::parse(r.out);
}

// Every value in `j` is a finite number, a string or a boolean: NaN and infinity, which
// Json prints as null, fail.
void ExpectAllFinite(const Json& j, const std::string& where) {
  if (j.is_structured()) {
    for (const Json& v : j) ExpectAllFinite(v, where);
    return;
  }
  EXPECT_TRUE(j.is_string() || j.is_boolean() || (j.is_number() && std::isfinite(j.get<double>())))
      << where << ": " << j.dump();
}

// No printed field of a text table reads nan or inf (in any case, with any sign).
void ExpectNoNanOrInfText(const std::string& text, const std::string& where) {
  static const std::regex kNonFinite(R"((^|[^a-z])[-+]?(nan|inf)([^a-z]|$))", std::regex::icase);
  EXPECT_FALSE(std::regex_search(text, kNonFinite)) << where << ":\n" << text;
}

void ExpectTriple(const Json& j, double a, double b, double c, double tol) {
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 3u);
  EXPECT_NEAR(j[0].get<double>(), a, tol);
  EXPECT_NEAR(j[1].get<double>(), b, tol);
  EXPECT_NEAR(j[2].get<double>(), c, tol);
}

TEST(ColorConvert, JsonHasEverySpace) {
  const Json j = RunJson({"color", "convert", "#FF0000", "--json"});
  for (const char* key : {"hex", "srgb", "linear", "xyz", "xyy", "lab", "lch", "hsl"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["hex"], "#FF0000");
  EXPECT_EQ(j["notation"], "hex");
  EXPECT_EQ(j["in_gamut"], true);
  ExpectTriple(j["srgb"], 1, 0, 0, 0);  // 0-1 floats
  ExpectTriple(j["linear"], 1, 0, 0, 0);
  ExpectTriple(j["xyz"], 0.412453, 0.212671, 0.019334, 1e-15);          // skimage's matrix column
  ExpectTriple(j["lab"], 53.24058794, 80.09230823, 67.20275104, 1e-8);  // skimage rgb2lab
  ExpectTriple(j["hsl"], 0, 1, 0.5, 1e-15);
  EXPECT_NEAR(j["lch"][2].get<double>(), 39.998877, 1e-6);  // atan2(67.20275, 80.09231) in degrees
}

TEST(ColorConvert, NamesAndOutOfGamutLab) {
  const Json name = RunJson({"color", "convert", "Vivid Pink", "--json"});
  EXPECT_EQ(name["hex"], "#FFB5BA");
  EXPECT_EQ(name["name"], "vivid pink");
  EXPECT_EQ(name["iscc_level"], 3);
  const Json lab = RunJson({"color", "convert", "lab(50, 200, 0)", "--json"});
  EXPECT_EQ(lab["in_gamut"], false);
  ExpectTriple(lab["lab"], 50, 200, 0, 0);       // the given numbers, exactly
  EXPECT_LT(lab["srgb"][1].get<double>(), 0.0);  // unclamped
}

TEST(ColorConvert, OutOfGamutLabIsFlaggedWithTheHslOfItsClippedColor) {
  const Json j = RunJson({"color", "convert", "lab(50, 120, -120)", "--json"});
  ExpectAllFinite(j, "lab(50, 120, -120)");
  EXPECT_EQ(j["in_gamut"], false);
  const double r = j["srgb"][0].get<double>(), g = j["srgb"][1].get<double>(), b = j["srgb"][2].get<double>();
  ASSERT_TRUE(r > 0 && r < 1 && g < 0 && b > 1) << j["srgb"];
  ExpectTriple(j["srgb_clipped"], r, 0, 1, 0);
  EXPECT_EQ(j["hex"], "#B800FF");  // 0.722268·255 = 184.18
  // Sign-symmetric transfer: the negative green is the mirror of the encoded |linear green|.
  const double linear_g = j["linear"][1].get<double>();
  ASSERT_LT(linear_g, -0.0031308);
  EXPECT_NEAR(g, -(1.055 * std::pow(-linear_g, 1 / 2.4) - 0.055), 1e-15);
  // HSL of the clipped (r, 0, 1): blue is the maximum, h = 60·(4 + (r − 0)/1), s = 1, l = 1/2
  // (CSS's rgbToHsl of the unclipped color gave s = 553 %).
  ExpectTriple(j["hsl"], 60 * (4 + r), 1, 0.5, 1e-12);

  const auto text = RunVisalign({"color", "convert", "lab(50, 120, -120)"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  ExpectNoNanOrInfText(text.out, "lab(50, 120, -120)");
  EXPECT_NE(text.out.find("gamut   OUT OF sRGB GAMUT"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(fmt::format("clipped {:.6f} 0.000000 1.000000", r)), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("% 50.0000%  (h in degrees, s, l; of the clipped color)"), std::string::npos) << text.out;
  const auto inside = RunVisalign({"color", "convert", "#F80"});
  EXPECT_NE(inside.out.find("gamut   inside sRGB"), std::string::npos) << inside.out;
  EXPECT_EQ(inside.out.find("clipped"), std::string::npos) << inside.out;
  EXPECT_EQ(RunJson({"color", "convert", "#F80", "--json"})["srgb_clipped"],
            RunJson({"color", "convert", "#F80", "--json"})["srgb"]);
}

TEST(ColorConvert, TextOutputIsATable) {
  const auto r = RunVisalign({"color", "convert", "#F80"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("hex     #FF8800"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lab     "), std::string::npos) << r.out;
}

TEST(ColorDiff, JsonHasRawDifferences) {
  // Sharma et al. (2005) pair 1: CIEDE2000 2.0425.
  const Json j = RunJson({"color", "diff", "lab(50, 2.6772, -79.7751)", "lab(50, 0, -82.7485)", "--json"});
  for (const char* key : {"rgb_ed", "rgb_redmean", "de76", "de2000", "hue", "chroma", "hyab"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_NEAR(j["de2000"].get<double>(), 2.0425, 1e-4);
  const double chroma = std::hypot(2.6772, 82.7485 - 79.7751);
  EXPECT_NEAR(j["de76"].get<double>(), chroma, 1e-9);
  EXPECT_NEAR(j["chroma"].get<double>(), chroma, 1e-9);
  EXPECT_NEAR(j["hyab"].get<double>(), chroma, 1e-9);  // same L
}

TEST(ColorDiff, ReadmeExampleIsFiniteWithRgbDistancesOfTheClippedColors) {
  // Both Sharma pair 1 colors are blue beyond sRGB: red is negative, blue above 1. rgb_redmean
  // used to print -nan. Clipped, they are (0, g1, 1) and (0, g2, 1): only ΔG remains, so
  // rgb_ed = 255·|g1 − g2| and rgb_redmean = sqrt(4·ΔG²) = 2·rgb_ed.
  const std::vector<std::string> args = {"color", "diff", "lab(50, 2.6772, -79.7751)", "lab(50, 0, -82.7485)"};
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  const Json j = RunJson(json_args);
  ExpectAllFinite(j, "README diff");
  EXPECT_EQ(j["in_gamut"], Json::array({false, false}));
  const Json& clipped = j["srgb_clipped"];
  ASSERT_EQ(clipped.size(), 2u);
  for (const Json& c : clipped) {
    EXPECT_EQ(c[0].get<double>(), 0.0);
    EXPECT_EQ(c[2].get<double>(), 1.0);
  }
  const double rgb_ed = 255 * std::fabs(clipped[0][1].get<double>() - clipped[1][1].get<double>());
  EXPECT_NEAR(j["rgb_ed"].get<double>(), rgb_ed, 1e-12);
  EXPECT_NEAR(j["rgb_redmean"].get<double>(), 2 * rgb_ed, 1e-12);
  EXPECT_NEAR(j["de2000"].get<double>(), 2.0425, 1e-4);

  const auto text = RunVisalign(args);
  EXPECT_EQ(text.exit_code, 0) << text.err;
  ExpectNoNanOrInfText(text.out, "README diff");
  EXPECT_NE(text.out.find("(#007FFF, OUT OF sRGB GAMUT: clipped 0 0.497828 1)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("on 0-255, of the clipped colors)"), std::string::npos) << text.out;
}

TEST(ColorDiff, RgbDistancesOnThe255Scale) {
  const Json j = RunJson({"color", "diff", "rgb(0, 0, 0)", "rgb(3, 4, 0)", "--json"});
  EXPECT_NEAR(j["rgb_ed"].get<double>(), 5.0, 1e-12);
  const Json red = RunJson({"color", "diff", "#FF0000", "#000000", "--json"});
  EXPECT_NEAR(red["rgb_redmean"].get<double>(), 403.0328746478071, 1e-9);  // sqrt(2.498046875 · 255²)
  EXPECT_EQ(RunJson({"color", "diff", "#123456", "#123456", "--json"})["de2000"], 0.0);
}

// convert, diff and nearest over a grid of Lab colors (L* 0..100 by 25, a*, b* -200..200 by
// 100), in JSON and text: never NaN or infinity, HSL always within its ranges.
TEST(ColorCli, LabGridNeverPrintsNanOrInfinity) {
  std::string previous = "lab(50, 0, 0)";
  int out_of_gamut = 0;
  for (int L = 0; L <= 100; L += 25) {
    for (int a = -200; a <= 200; a += 100) {
      for (int b = -200; b <= 200; b += 100) {
        const std::string color = fmt::format("lab({}, {}, {})", L, a, b);
        const Json convert = RunJson({"color", "convert", color, "--json"});
        ExpectAllFinite(convert, color);
        out_of_gamut += convert["in_gamut"] == false;
        const Json& hsl = convert["hsl"];
        EXPECT_TRUE(hsl[1].get<double>() >= 0 && hsl[1].get<double>() <= 1 && hsl[2].get<double>() >= 0 &&
                    hsl[2].get<double>() <= 1)
            << color << ": hsl " << hsl;
        ExpectAllFinite(RunJson({"color", "diff", color, previous, "--json"}), color + " vs " + previous);
        ExpectAllFinite(RunJson({"color", "nearest", color, "--json"}), color);
        for (const std::vector<std::string>& args :
             {std::vector<std::string>{"color", "convert", color}, {"color", "diff", color, previous}}) {
          const auto r = RunVisalign(args);
          EXPECT_EQ(r.exit_code, 0) << r.err;
          ExpectNoNanOrInfText(r.out, args[1] + " " + color);
        }
        previous = color;
      }
    }
  }
  EXPECT_GT(out_of_gamut, 100);  // of 125
}

TEST(ColorNames, ListsEachLevel) {
  EXPECT_EQ(RunJson({"color", "names", "--json"}).size(), 267u);
  EXPECT_EQ(RunJson({"color", "names", "--level", "2", "--json"}).size(), 29u);
  const Json level1 = RunJson({"color", "names", "--level", "1", "--json"});
  ASSERT_EQ(level1.size(), 13u);
  EXPECT_EQ(level1[8]["name"], "blue");
  EXPECT_EQ(level1[8]["hex"], "#0067A5");
}

TEST(ColorNearest, FindsTheCentroid) {
  const Json j = RunJson({"color", "nearest", "#0067A5", "--json"});
  EXPECT_EQ(j["id"], 178);
  EXPECT_EQ(j["name"], "strong blue");
  EXPECT_EQ(j["de2000"], 0.0);
}

TEST(ColorErrors, BadColorsExitWith2AndOneLine) {
  for (const std::string bad :
       {"#GGHHII", "rgb(300,0,0)", "hsl(10, 120%, 5%)", "lab(50, 2000, 0)", "", "not a color"}) {
    const auto r = RunVisalign({"color", "convert", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.out, "") << bad;
    EXPECT_EQ(r.err.rfind("error: invalid color \"" + bad + "\" (argument COLOR): ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  const auto diff = RunVisalign({"color", "diff", "#000", "rgb(0,0)", "--json"});
  EXPECT_EQ(diff.exit_code, 2);
  EXPECT_EQ(diff.err.rfind("error: invalid color \"rgb(0,0)\" (argument COLOR2): ", 0), 0u) << diff.err;
}

TEST(ColorErrors, UsageErrorsExitWith2) {
  EXPECT_EQ(RunVisalign({"color", "convert"}).exit_code, 2);
  EXPECT_EQ(RunVisalign({"color", "names", "--level", "4"}).exit_code, 2);
}

TEST(ColorHelp, TeachesWithExamples) {
  const auto r = RunVisalign({"color", "diff", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("de2000"), std::string::npos);
  EXPECT_NE(r.out.find("Examples"), std::string::npos);
  EXPECT_NE(r.out.find("srgb_clipped"), std::string::npos);
  const auto convert = RunVisalign({"color", "convert", "--help"});
  for (const char* words : {"in_gamut", "srgb_clipped", "extended sRGB", "HSL of srgb_clipped"})
    EXPECT_NE(convert.out.find(words), std::string::npos) << words;
}

}  // namespace
}  // namespace visalign
