// `visalign color ...`: parse a color and show it in every space, compare two colors, list and
// match ISCC-NBS names.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "cli/cli.h"
#include "visalign/color.h"

namespace visalign::cli {
namespace {

using namespace visalign::color;

constexpr char kColorHelp[] =
    "A color: #RRGGBB, #RGB, rgb(r, g, b) (integers 0-255), hsl(h, s%, l%), lab(L, a, b) "
    "(CIELAB, L 0-100) or an ISCC-NBS name (\"vivid pink\", \"olive green\", \"pink\"); "
    "case-insensitive. Quote it in the shell.";

Result<ParsedColor> ParseArgument(const std::string& text, const std::string& argument) {
  Result<ParsedColor> parsed = ParseColor(text);
  if (!parsed.ok()) return parsed.status().WithContext("argument " + argument);
  return parsed;
}

Json Triple(double a, double b, double c) { return Json::array({a, b, c}); }

Json ConvertJson(const std::string& input, const ParsedColor& c) {
  const ColorSpaces s = InAllSpaces(c);
  Json j;
  j["input"] = input;
  j["notation"] = std::string(NotationName(c.notation));
  if (c.notation == Notation::kName) {
    j["name"] = c.name;
    j["iscc_level"] = c.iscc_level;
  }
  j["in_gamut"] = c.in_gamut;
  j["hex"] = ToHex(c.rgb8);
  j["srgb"] = Triple(s.srgb.r, s.srgb.g, s.srgb.b);
  j["srgb_clipped"] = Triple(s.clipped.r, s.clipped.g, s.clipped.b);
  j["linear"] = Triple(s.linear.r, s.linear.g, s.linear.b);
  j["xyz"] = Triple(s.xyz.x, s.xyz.y, s.xyz.z);
  j["xyy"] = Triple(s.xyy.x, s.xyy.y, s.xyy.Y);
  j["lab"] = Triple(s.lab.L, s.lab.a, s.lab.b);
  j["lch"] = Triple(s.lch.L, s.lch.C, s.lch.h);
  j["hsl"] = Triple(s.hsl.h, s.hsl.s, s.hsl.l);
  return j;
}

bool SameColor(Rgb p, Rgb q) { return p.r == q.r && p.g == q.g && p.b == q.b; }

void PrintConvertTable(const std::string& input, const ParsedColor& c) {
  const ColorSpaces s = InAllSpaces(c);
  const bool clipped = !SameColor(s.clipped, s.srgb);
  std::string source = std::string(NotationName(c.notation)) + " notation";
  if (c.notation == Notation::kName) source = fmt::format("ISCC-NBS level-{} name \"{}\"", c.iscc_level, c.name);
  std::cout << fmt::format("input   {}  ({})\n", input, source);
  std::cout << (c.in_gamut ? "gamut   inside sRGB\n"
                           : "gamut   OUT OF sRGB GAMUT: hex and hsl describe the clipped color\n");
  std::cout << fmt::format("hex     {}  (8-bit sRGB {}, {}, {}{})\n", ToHex(c.rgb8), c.rgb8.r, c.rgb8.g, c.rgb8.b,
                           c.in_gamut ? "" : "; clipped");
  std::cout << fmt::format("srgb    {:.6f} {:.6f} {:.6f}  (gamma-encoded, 0-1{})\n", s.srgb.r, s.srgb.g, s.srgb.b,
                           clipped ? "; extended sRGB, unclipped" : "");
  if (clipped) {
    std::cout << fmt::format("clipped {:.6f} {:.6f} {:.6f}  (srgb with each channel clipped to 0-1)\n", s.clipped.r,
                             s.clipped.g, s.clipped.b);
  }
  std::cout << fmt::format("linear  {:.6f} {:.6f} {:.6f}  (linear-light sRGB)\n", s.linear.r, s.linear.g, s.linear.b);
  std::cout << fmt::format("xyz     {:.6f} {:.6f} {:.6f}  (D65, 2 deg, Y of white = 1)\n", s.xyz.x, s.xyz.y, s.xyz.z);
  std::cout << fmt::format("xyy     {:.6f} {:.6f} {:.6f}  (x, y, Y)\n", s.xyy.x, s.xyy.y, s.xyy.Y);
  std::cout << fmt::format("lab     {:.4f} {:.4f} {:.4f}  (CIELAB L*, a*, b*)\n", s.lab.L, s.lab.a, s.lab.b);
  std::cout << fmt::format("lch     {:.4f} {:.4f} {:.4f}  (L*, C*ab, h in degrees)\n", s.lch.L, s.lch.C, s.lch.h);
  std::cout << fmt::format("hsl     {:.4f} {:.4f}% {:.4f}%  (h in degrees, s, l{})\n", s.hsl.h, 100 * s.hsl.s,
                           100 * s.hsl.l, clipped ? "; of the clipped color" : "");
}

Status RunConvert(const Cli& cli, const std::string& text) {
  VISALIGN_ASSIGN_OR_RETURN(ParsedColor c, ParseArgument(text, "COLOR"));
  if (cli.global().json) {
    PrintJson(ConvertJson(text, c));
  } else {
    PrintConvertTable(text, c);
  }
  return Status::Ok();
}

// The diff table's description of a color: "#4080BF", or outside the gamut
// "#007FFF, OUT OF sRGB GAMUT: clipped 0 0.497828 1" (the color the RGB distances measure).
std::string DescribeForDiff(const ParsedColor& c) {
  if (c.in_gamut) return ToHex(c.rgb8);
  const Rgb clipped = ClipToGamut(c.rgb);
  return fmt::format("{}, OUT OF sRGB GAMUT: clipped {:g} {:g} {:g}", ToHex(c.rgb8), clipped.r, clipped.g, clipped.b);
}

Status RunDiff(const Cli& cli, const std::string& text1, const std::string& text2) {
  VISALIGN_ASSIGN_OR_RETURN(ParsedColor c1, ParseArgument(text1, "COLOR1"));
  VISALIGN_ASSIGN_OR_RETURN(ParsedColor c2, ParseArgument(text2, "COLOR2"));
  const ColorDifferences d = CompareColors(c1, c2);
  if (cli.global().json) {
    const Rgb clipped1 = ClipToGamut(c1.rgb), clipped2 = ClipToGamut(c2.rgb);
    const Json srgb_clipped = {Triple(clipped1.r, clipped1.g, clipped1.b), Triple(clipped2.r, clipped2.g, clipped2.b)};
    PrintJson({{"rgb_ed", d.rgb_ed},
               {"rgb_redmean", d.rgb_redmean},
               {"de76", d.de76},
               {"de2000", d.de2000},
               {"hue", d.hue},
               {"chroma", d.chroma},
               {"hyab", d.hyab},
               {"in_gamut", {c1.in_gamut, c2.in_gamut}},
               {"srgb_clipped", srgb_clipped}});
    return Status::Ok();
  }
  std::cout << fmt::format("colors       {} ({}) vs {} ({})\n", text1, DescribeForDiff(c1), text2, DescribeForDiff(c2));
  const char* rgb_basis = c1.in_gamut && c2.in_gamut ? "" : ", of the clipped colors";
  std::cout << fmt::format("rgb_ed       {:.6f}  (Euclidean distance of sRGB on 0-255{})\n", d.rgb_ed, rgb_basis);
  std::cout << fmt::format("rgb_redmean  {:.6f}  (redmean-weighted sRGB distance on 0-255{})\n", d.rgb_redmean,
                           rgb_basis);
  std::cout << fmt::format("de76         {:.6f}  (CIE76, Euclidean in CIELAB)\n", d.de76);
  std::cout << fmt::format("de2000       {:.6f}  (CIEDE2000, kL = kC = kH = 1)\n", d.de2000);
  std::cout << fmt::format("hue          {:.6f}  (hue-angle difference in degrees, 0-180)\n", d.hue);
  std::cout << fmt::format("chroma       {:.6f}  (a*b*-plane distance)\n", d.chroma);
  std::cout << fmt::format("hyab         {:.6f}  (|dL*| + a*b*-plane distance)\n", d.hyab);
  return Status::Ok();
}

Json CategoryJson(const IsccCategory& cat) {
  Json j{{"level", cat.level},    {"index", cat.index},   {"name", cat.name},
         {"hex", ToHex(cat.rgb)}, {"rep_id", cat.rep_id}, {"member_ids", cat.member_ids}};
  if (cat.level == 2) j["parent_level1"] = cat.parent_level1;
  return j;
}

Status RunNames(const Cli& cli, int level) {
  VISALIGN_ASSIGN_OR_RETURN(const IsccNbs* table, IsccNbs::Default());
  Json j = Json::array();
  if (level == 3) {
    for (const IsccCentroid& c : table->centroids()) {
      if (cli.global().json) {
        j.push_back(
            {{"id", c.id}, {"name", c.name}, {"hex", ToHex(c.rgb)}, {"level2", c.level2}, {"level1", c.level1}});
      } else {
        std::cout << fmt::format("{:>3}  {}  {:<28} {:<16} {}\n", c.id, ToHex(c.rgb), c.name, c.level2, c.level1);
      }
    }
  } else {
    for (const IsccCategory& cat : level == 1 ? table->level1() : table->level2()) {
      if (cli.global().json) {
        j.push_back(CategoryJson(cat));
      } else {
        const IsccCentroid* rep = table->CentroidById(cat.rep_id);
        std::cout << fmt::format("{:>2}  {}  {:<16} {:>3} member{}, representative #{} {}\n", cat.index, ToHex(cat.rgb),
                                 cat.name, cat.member_ids.size(), cat.member_ids.size() == 1 ? "" : "s", cat.rep_id,
                                 rep ? rep->name : "");
      }
    }
  }
  if (cli.global().json) PrintJson(j);
  return Status::Ok();
}

Status RunNearest(const Cli& cli, const std::string& text) {
  VISALIGN_ASSIGN_OR_RETURN(ParsedColor c, ParseArgument(text, "COLOR"));
  VISALIGN_ASSIGN_OR_RETURN(const IsccNbs* table, IsccNbs::Default());
  const IsccCentroid& n = table->Nearest(c.lab);
  const double de = DeltaE2000(c.lab, Srgb8ToLab(n.rgb));
  if (cli.global().json) {
    PrintJson({{"input", text},
               {"in_gamut", c.in_gamut},
               {"id", n.id},
               {"name", n.name},
               {"hex", ToHex(n.rgb)},
               {"level2", n.level2},
               {"level1", n.level1},
               {"de2000", de}});
  } else {
    std::cout << fmt::format("{} ({}{}) -> #{} {} {}  (level 2: {}, level 1: {}; CIEDE2000 {:.4f})\n", text,
                             ToHex(c.rgb8), c.in_gamut ? "" : ", out of sRGB gamut", n.id, n.name, ToHex(n.rgb),
                             n.level2, n.level1, de);
  }
  return Status::Ok();
}

const CommandGroup kColor(10, {"color"}, [](Cli& cli) {
  CLI::App* g = cli.Group("color", "Color parsing, conversion, differences and ISCC-NBS names");
  g->footer(
      "Conversions use scikit-image's rgb2lab constants (D65 white 0.95047, 1, 1.08883); see docs/color.md.\n"
      "Colors outside the sRGB gamut (only lab() can be) are flagged: \"in_gamut\": false with --json, OUT OF sRGB\n"
      "GAMUT in text. Their sRGB is extended (sign-symmetric transfer, unclipped); hex, HSL and the RGB distances\n"
      "use the color clipped per channel to 0-1.\n"
      "Examples:\n"
      "  visalign color convert '#FF8800'\n"
      "  visalign color convert 'lab(50, 20, -30)' --json\n"
      "  visalign color diff 'vivid pink' 'rgb(250, 180, 190)' --json\n"
      "  visalign color nearest 'hsl(200, 60%, 40%)'\n"
      "  visalign color names --level 2");

  CLI::App* conv = g->add_subcommand("convert", "Show one color in every color space");
  auto conv_text = std::make_shared<std::string>();
  conv->add_option("COLOR", *conv_text, kColorHelp)->required();
  conv->footer(
      "Output (with --json, an object; arrays are full double precision):\n"
      "  in_gamut      false if the 8-bit color needed clamping (a channel beyond 0-1 by over half a step)\n"
      "  hex           8-bit sRGB of srgb_clipped, rounded\n"
      "  srgb          gamma-encoded sRGB as 0-1 floats (not 0-255), unclipped: outside the gamut this is\n"
      "                extended sRGB, sign(v)*f(|v|) with the IEC 61966-2-1 transfer f (as CSS Color 4)\n"
      "  srgb_clipped  srgb with each channel clipped to 0-1 (equal to srgb inside the gamut)\n"
      "  linear        linear-light sRGB (IEC 61966-2-1)\n"
      "  xyz           CIE XYZ, D65, 2 deg observer, Y of white = 1\n"
      "  xyy           chromaticity x, y and luminance Y\n"
      "  lab           CIELAB L*, a*, b* (skimage constants)\n"
      "  lch           L*, C*ab, hue angle in degrees [0, 360)\n"
      "  hsl           HSL of srgb_clipped: hue in degrees [0, 360), saturation and lightness as 0-1 fractions\n"
      "Also: input, notation, and name/iscc_level for ISCC-NBS names.\n"
      "Examples:\n"
      "  visalign color convert '#F80'\n"
      "  visalign color convert 'strong blue' --json\n"
      "  visalign color convert 'lab(50, 120, -120)'    # out of gamut: flagged, hsl of the clipped color");
  cli.Bind(conv, [&cli, conv_text] { return RunConvert(cli, *conv_text); });

  CLI::App* diff = g->add_subcommand("diff", "Color differences between two colors");
  auto diff_text1 = std::make_shared<std::string>();
  auto diff_text2 = std::make_shared<std::string>();
  diff->add_option("COLOR1", *diff_text1, kColorHelp)->required();
  diff->add_option("COLOR2", *diff_text2, "The second color, same notations as COLOR1")->required();
  diff->footer(
      "Output (with --json, raw unnormalised values at full double precision):\n"
      "  rgb_ed       Euclidean distance of sRGB on the 0-255 scale\n"
      "  rgb_redmean  sqrt((2 + r/256) dR^2 + 4 dG^2 + (2 + (255 - r)/256) dB^2), r = mean red, 0-255 scale\n"
      "  de76         CIE76: Euclidean distance in CIELAB\n"
      "  de2000       CIEDE2000 (Sharma, Wu & Dalal 2005), kL = kC = kH = 1\n"
      "  hue          hue-angle difference of atan2(b*, a*), degrees, 0-180 (0 for gray)\n"
      "  chroma       a*b*-plane distance sqrt(da^2 + db^2)\n"
      "  hyab         |dL*| + sqrt(da^2 + db^2)\n"
      "  in_gamut     [COLOR1, COLOR2]: false for a color outside the sRGB gamut\n"
      "  srgb_clipped [COLOR1, COLOR2]: the 0-1 sRGB the RGB distances were computed on\n"
      "RGB distances use each color's exact (unrounded) sRGB clipped to 0-1 per channel (srgb_clipped; the\n"
      "color itself inside the gamut), so they are defined for every color. Lab values of lab() inputs are used\n"
      "as given.\n"
      "Examples:\n"
      "  visalign color diff '#FF0000' '#FE0101'\n"
      "  visalign color diff 'lab(50, 2.6772, -79.7751)' 'lab(50, 0, -82.7485)' --json");
  cli.Bind(diff, [&cli, diff_text1, diff_text2] { return RunDiff(cli, *diff_text1, *diff_text2); });

  CLI::App* names = g->add_subcommand("names", "List the ISCC-NBS color names and their sRGB colors");
  auto level = std::make_shared<int>(3);
  names->add_option("--level", *level, "1: 13 basic names, 2: 29 intermediate names, 3: 267 full names")
      ->check(CLI::IsMember({1, 2, 3}))
      ->capture_default_str();
  names->footer(
      "Level 3 lists each name's centroid; levels 1 and 2 list each category's representative color\n"
      "(rules in data/color/NOTICE.md). Data: data/color/iscc_nbs_*.csv.\n"
      "Examples:\n"
      "  visalign color names --level 1\n"
      "  visalign color names --json");
  cli.Bind(names, [&cli, level] { return RunNames(cli, *level); });

  CLI::App* nearest = g->add_subcommand("nearest", "The ISCC-NBS level-3 name nearest to a color (CIEDE2000)");
  auto nearest_text = std::make_shared<std::string>();
  nearest->add_option("COLOR", *nearest_text, kColorHelp)->required();
  nearest->footer(
      "Searches the 267 ISCC-NBS centroids for the smallest CIEDE2000 difference (ties: lowest id).\n"
      "Examples:\n"
      "  visalign color nearest '#3366CC'\n"
      "  visalign color nearest 'lab(60, 40, 10)' --json");
  cli.Bind(nearest, [&cli, nearest_text] { return RunNearest(cli, *nearest_text); });
});

}  // namespace
}  // namespace visalign::cli
