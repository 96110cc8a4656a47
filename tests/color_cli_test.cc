// `visalign color ...`: JSON shapes and values, text output, and the one-line error contract.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "testing/cli_runner.h"

namespace visalign {
namespace {

using testing::RunVisalign;

nlohmann::json RunJson(const std::vector<std::string>& args) {
  const auto r = RunVisalign(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

void ExpectTriple(const nlohmann::json& j, double a, double b, double c, double tol) {
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 3u);
  EXPECT_NEAR(j[0].get<double>(), a, tol);
  EXPECT_NEAR(j[1].get<double>(), b, tol);
  EXPECT_NEAR(j[2].get<double>(), c, tol);
}

TEST(ColorConvert, JsonHasEverySpace) {
  const nlohmann::json j = RunJson({"color", "convert", "#FF0000", "--json"});
  for (const char* key : {"hex", "srgb", "linear", "xyz", "xyy", "lab", "lch", "hsl"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["hex"], "#FF0000");
  EXPECT_EQ(j["notation"], "hex");
  EXPECT_EQ(j["in_gamut"], true);
  ExpectTriple(j["srgb"], 1, 0, 0, 0);  // 0-1 floats
  ExpectTriple(j["linear"], 1, 0, 0, 0);
  ExpectTriple(j["xyz"], 0.412453, 0.212671, 0.019334, 1e-15);  // skimage's matrix column
  ExpectTriple(j["lab"], 53.24058794, 80.09230823, 67.20275104, 1e-8);  // skimage rgb2lab
  ExpectTriple(j["hsl"], 0, 1, 0.5, 1e-15);
  EXPECT_NEAR(j["lch"][2].get<double>(), 39.998877, 1e-6);  // atan2(67.20275, 80.09231) in degrees
}

TEST(ColorConvert, NamesAndOutOfGamutLab) {
  const nlohmann::json name = RunJson({"color", "convert", "Vivid Pink", "--json"});
  EXPECT_EQ(name["hex"], "#FFB5BA");
  EXPECT_EQ(name["name"], "vivid pink");
  EXPECT_EQ(name["iscc_level"], 3);
  const nlohmann::json lab = RunJson({"color", "convert", "lab(50, 200, 0)", "--json"});
  EXPECT_EQ(lab["in_gamut"], false);
  ExpectTriple(lab["lab"], 50, 200, 0, 0);  // the given numbers, exactly
  EXPECT_LT(lab["srgb"][1].get<double>(), 0.0);  // unclamped
}

TEST(ColorConvert, TextOutputIsATable) {
  const auto r = RunVisalign({"color", "convert", "#F80"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("hex     #FF8800"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lab     "), std::string::npos) << r.out;
}

TEST(ColorDiff, JsonHasRawDifferences) {
  // Sharma et al. (2005) pair 1: CIEDE2000 2.0425.
  const nlohmann::json j = RunJson({"color", "diff", "lab(50, 2.6772, -79.7751)", "lab(50, 0, -82.7485)", "--json"});
  for (const char* key : {"rgb_ed", "rgb_redmean", "de76", "de2000", "hue", "chroma", "hyab"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_NEAR(j["de2000"].get<double>(), 2.0425, 1e-4);
  const double chroma = std::hypot(2.6772, 82.7485 - 79.7751);
  EXPECT_NEAR(j["de76"].get<double>(), chroma, 1e-9);
  EXPECT_NEAR(j["chroma"].get<double>(), chroma, 1e-9);
  EXPECT_NEAR(j["hyab"].get<double>(), chroma, 1e-9);  // same L
}

TEST(ColorDiff, RgbDistancesOnThe255Scale) {
  const nlohmann::json j = RunJson({"color", "diff", "rgb(0, 0, 0)", "rgb(3, 4, 0)", "--json"});
  EXPECT_NEAR(j["rgb_ed"].get<double>(), 5.0, 1e-12);
  const nlohmann::json red = RunJson({"color", "diff", "#FF0000", "#000000", "--json"});
  EXPECT_NEAR(red["rgb_redmean"].get<double>(), 403.0328746478071, 1e-9);  // sqrt(2.498046875 · 255²)
  EXPECT_EQ(RunJson({"color", "diff", "#123456", "#123456", "--json"})["de2000"], 0.0);
}

TEST(ColorNames, ListsEachLevel) {
  EXPECT_EQ(RunJson({"color", "names", "--json"}).size(), 267u);
  EXPECT_EQ(RunJson({"color", "names", "--level", "2", "--json"}).size(), 29u);
  const nlohmann::json level1 = RunJson({"color", "names", "--level", "1", "--json"});
  ASSERT_EQ(level1.size(), 13u);
  EXPECT_EQ(level1[8]["name"], "blue");
  EXPECT_EQ(level1[8]["hex"], "#0067A5");
}

TEST(ColorNearest, FindsTheCentroid) {
  const nlohmann::json j = RunJson({"color", "nearest", "#0067A5", "--json"});
  EXPECT_EQ(j["id"], 178);
  EXPECT_EQ(j["name"], "strong blue");
  EXPECT_EQ(j["de2000"], 0.0);
}

TEST(ColorErrors, BadColorsExitWith2AndOneLine) {
  for (const std::string bad : {"#GGHHII", "rgb(300,0,0)", "hsl(10, 120%, 5%)", "", "not a color"}) {
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
}

}  // namespace
}  // namespace visalign
