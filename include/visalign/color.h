// Color science: parsing, conversions between sRGB, linear sRGB, CIE XYZ (D65, 2°), xyY, CIELAB,
// LCh(ab) and HSL, and color differences. Every benchmark reduces to these functions, so they
// follow published definitions exactly:
//   - sRGB transfer: IEC 61966-2-1 (threshold 0.04045 / 0.0031308, exponent 2.4), extended to
//     negative values sign-symmetrically as CSS Color 4 does for extended sRGB (below).
//   - linear sRGB -> XYZ: the matrix and D65 white (0.95047, 1.0, 1.08883) of scikit-image's
//     rgb2lab; CIELAB with ε = 0.008856 and the κ-form 7.787·t + 16/116, so values agree with
//     skimage.color.rgb2lab to 1e-9.
//   - CIEDE2000: Sharma, Wu & Dalal (2005), kL = kC = kH = 1, computed in degrees.
// Conventions: `Rgb` is gamma-encoded sRGB; inside the gamut it lies in [0, 1]. A color outside
// the gamut (only lab(), XYZ or linear input can be) is kept as *extended* sRGB: unbounded
// channels, nothing clipped, so Lab -> sRGB -> Lab round-trips. Whatever is only defined on the
// sRGB cube [0, 1]³ — 8-bit values, HSL, the RGB distances — is computed on the color clipped
// per channel to the cube (ClipToGamut), and the CLI flags such colors (`in_gamut: false`).
// `Srgb8` is 8-bit sRGB; `Hsl` has h in degrees [0, 360), s and l in [0, 1].
// Invariant: for every Lab color ParseColor accepts (L* in [0, 100], |a*|, |b*| <= kMaxLabAb),
// every conversion and difference below is finite — no NaN, no infinity (tested over a grid).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/core/status.h"

namespace visalign::color {

struct Srgb8 {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Srgb8&) const = default;
};
struct Rgb {
  double r = 0, g = 0, b = 0;
};  // gamma-encoded sRGB, nominal [0, 1]
struct LinearRgb {
  double r = 0, g = 0, b = 0;
};  // linear-light sRGB
struct Xyz {
  double x = 0, y = 0, z = 0;
};  // Y of white = 1
struct Xyy {
  double x = 0, y = 0, Y = 0;
};
struct Lab {
  double L = 0, a = 0, b = 0;
};
struct Lch {
  double L = 0, C = 0, h = 0;
};  // h in degrees [0, 360)
struct Hsl {
  double h = 0, s = 0, l = 0;
};  // h in degrees [0, 360)

// D65 reference white used for XYZ <-> Lab (scikit-image's values).
inline constexpr Xyz kD65White{0.95047, 1.0, 1.08883};

// --- sRGB transfer function (one channel) ------------------------------------------------------
// IEC 61966-2-1 on [0, 1], extended to every real number as an odd function (CSS Color 4's
// extended sRGB, sign(v)·f(|v|)):
//   SrgbToLinear(c) = sign(c)·( |c| / 12.92                  if |c| <= 0.04045
//                               ((|c| + 0.055) / 1.055)^2.4   otherwise )
//   LinearToSrgb(v) = sign(v)·( 12.92·|v|                     if |v| <= 0.0031308
//                               1.055·|v|^(1/2.4) − 0.055     otherwise )
// Invariants: f(−x) = −f(x) exactly; strictly increasing; each the inverse of the other; on
// [0, ∞) bit-identical to the standard formulas (and to skimage). scikit-image instead applies
// the linear toe to every negative value, which sends linear −0.19 to sRGB −2.48.
double SrgbToLinear(double c);
double LinearToSrgb(double v);

// --- Gamut ------------------------------------------------------------------------------------
// A color is in the sRGB gamut when its 8-bit rendering needs no clamping: every channel of its
// gamma-encoded sRGB lies in [−kGamutTolerance, 1 + kGamutTolerance], half an 8-bit step. So
// lab(100, 0, 0), sRGB (1.000003, 0.999995, 1.000036) by skimage's white point, is in gamut.
inline constexpr double kGamutTolerance = 0.5 / 255.0;
bool InGamut(Rgb c);
// Per-channel clipping to the sRGB cube: each channel clamped to [0, 1] (NaN -> 0). Not a
// perceptual gamut mapping (hue and lightness may shift). Identity on the cube, so every color
// given as hex, rgb(), hsl() or a name is unchanged; ToSrgb8(c) == ToSrgb8(ClipToGamut(c)).
Rgb ClipToGamut(Rgb c);

// --- Scalar conversions -------------------------------------------------------------------
Rgb FromSrgb8(Srgb8 c);  // c / 255
Srgb8 ToSrgb8(Rgb c);    // round-half-away, clamped to [0, 255]
LinearRgb ToLinear(Rgb c);
Rgb FromLinear(LinearRgb c);
Xyz LinearToXyz(LinearRgb c);
LinearRgb XyzToLinear(Xyz c);
Xyy XyzToXyy(Xyz c);  // black maps to the white point's chromaticity, Y = 0
Xyz XyyToXyz(Xyy c);
Lab XyzToLab(Xyz c);
Xyz LabToXyz(Lab c);
Lch LabToLch(Lab c);
Lab LchToLab(Lch c);
// CSS Color 4 rgbToHsl of ClipToGamut(c): HSL is defined on the sRGB cube only, so an
// out-of-gamut color gets the HSL of its clipped color (CSS's extension to such input, with
// s > 1, l outside [0, 1] and the hue turned by 180°, is not followed). Invariants: h in
// [0, 360), s and l in [0, 1]; achromatic colors get h = 0, s = 0.
Hsl RgbToHsl(Rgb c);
Rgb HslToRgb(Hsl c);  // CSS Color 4 hslToRgb; s, l in [0, 1] give a color on the cube

Lab SrgbToLab(Rgb c);  // composition of the above
Rgb LabToSrgb(Lab c);
Lab Srgb8ToLab(Srgb8 c);

// --- Batch conversions (contiguous interleaved arrays) ---------------------------------------
// rgb: n×3 bytes (R, G, B); lab: n×3 doubles. Uses a 256-entry linearisation table; results
// equal the scalar Srgb8ToLab to within 1e-12.
void Srgb8ToLabBatch(const uint8_t* rgb, size_t n, double* lab);
// rgb: n×3 doubles in [0, 1] (gamma-encoded); lab: n×3 doubles.
void SrgbToLabBatch(const double* rgb, size_t n, double* lab);

// --- Differences ----------------------------------------------------------------------------
// RGB arguments here are on the 0..255 scale (doubles, so means of pixels can be compared).
struct Rgb255 {
  double r = 0, g = 0, b = 0;
};
inline Rgb255 ToRgb255(Srgb8 c) { return {double(c.r), double(c.g), double(c.b)}; }
inline Rgb255 ToRgb255(Rgb c) { return {c.r * 255.0, c.g * 255.0, c.b * 255.0}; }
// Each channel clamped to [0, 255] (NaN -> 0), the 0..255 form of ClipToGamut(Rgb).
Rgb255 ClipToGamut(Rgb255 c);

// The RGB distances measure colors on the sRGB cube: both arguments are clipped with
// ClipToGamut first (identity for channels in [0, 255]), so an out-of-gamut color is measured as
// its clipped color and the result is always finite (the redmean weights stay positive).
// sqrt(ΔR² + ΔG² + ΔB²)
double RgbEuclidean(Rgb255 p, Rgb255 q);
// r̄ = (R1+R2)/2; sqrt((2 + r̄/256)ΔR² + 4ΔG² + (2 + (255 − r̄)/256)ΔB²)
double RgbRedmean(Rgb255 p, Rgb255 q);
double DeltaE76(Lab p, Lab q);
double DeltaE2000(Lab p, Lab q);      // kL = kC = kH = 1
double HueDifference(Lab p, Lab q);   // circular |h_p − h_q| of atan2(b, a), degrees in [0, 180]
double ChromaDistance(Lab p, Lab q);  // sqrt(Δa² + Δb²), the ab-plane distance
double HyAB(Lab p, Lab q);            // |ΔL| + sqrt(Δa² + Δb²)

// --- ISCC-NBS color names --------------------------------------------------------------------
struct IsccCentroid {
  int id = 0;        // 1..267
  std::string name;  // level-3 name, lower case ("vivid pink")
  Srgb8 rgb;
  std::string level2, level1;
};
struct IsccCategory {  // a level-1 (13) or level-2 (29) category with its representative color
  int level = 0;       // 1 or 2
  int index = 0;       // 1-based within the level
  std::string name;
  std::string parent_level1;  // level 2 only
  Srgb8 rgb;                  // representative (see data/color/NOTICE.md for the rule)
  int rep_id = 0;             // level-3 id of the representative
  std::vector<int> member_ids;
};

class IsccNbs {
 public:
  // Reads iscc_nbs_centroids.csv and iscc_nbs_levels.csv from `dir` (validated: 267 centroids,
  // 13 level-1 and 29 level-2 categories, members that exist).
  static Result<IsccNbs> Load(const std::filesystem::path& dir);
  // The table from the shipped data folder, loaded once (thread-safe). Error if data is missing.
  static Result<const IsccNbs*> Default();

  const std::vector<IsccCentroid>& centroids() const { return centroids_; }
  const std::vector<IsccCategory>& level1() const { return level1_; }
  const std::vector<IsccCategory>& level2() const { return level2_; }
  const IsccCentroid* CentroidById(int id) const;
  // Case-insensitive, whitespace-normalised lookup; level-3 names first, then level 2, then level 1.
  // Returns the representative color and the level it matched, or nullptr-equivalent (level 0).
  // `id` is the level-3 id of the centroid (for level 1/2: of the category's representative);
  // `name` is the canonical lower-case name.
  struct NameMatch {
    int level = 0;
    Srgb8 rgb;
    int id = 0;
    std::string name;
  };
  NameMatch FindName(std::string_view name) const;
  // The level-3 centroid nearest to `lab` by CIEDE2000.
  const IsccCentroid& Nearest(Lab lab) const;

 private:
  std::vector<IsccCentroid> centroids_;
  std::vector<IsccCategory> level1_, level2_;
  std::vector<Lab> centroid_lab_;  // Lab of each centroid, for Nearest
};

// --- Parsing --------------------------------------------------------------------------------
enum class Notation { kHex, kRgb, kHsl, kLab, kName };
std::string_view NotationName(Notation n);  // "hex", "rgb", "hsl", "lab", "name"

struct ParsedColor {
  Notation notation = Notation::kHex;
  Rgb rgb;               // exact sRGB denoted by the text (unclamped for lab() outside the gamut)
  Srgb8 rgb8;            // the 8-bit color the text denotes: ToSrgb8(rgb) (rounded, clamped)
  bool in_gamut = true;  // InGamut(rgb): false when rgb8 needed clamping (only lab() can be out)
  std::string name;      // ISCC-NBS name when notation == kName
  int iscc_level = 0;    // 1, 2 or 3 when notation == kName
  Lab lab;               // CIELAB: the parsed numbers for lab(), else SrgbToLab(rgb)
};

// Largest |a*| and |b*| accepted by lab(): far beyond any real color (CSS Color 4: "in practice
// ±160"), small enough that everything derived stays finite (XYZ = f³, CIEDE2000's C*^7).
inline constexpr double kMaxLabAb = 1000.0;

// Accepts `#RRGGBB`, `#RGB`, `rgb(r, g, b)` (integers 0-255), `hsl(h, s%, l%)` (h any real,
// wrapped to [0, 360); s and l in 0-100%), `lab(L, a, b)` (CSS Color 4 reals, L in [0, 100],
// |a|, |b| <= kMaxLabAb) and ISCC-NBS names ("vivid pink", "pink"). Case-insensitive; spaces
// around tokens allowed.
// Errors are kInvalidArgument naming the text and what was expected.
Result<ParsedColor> ParseColor(std::string_view text, const IsccNbs& names);
Result<ParsedColor> ParseColor(std::string_view text);  // uses IsccNbs::Default() for names

// A comma-separated list of colors in ParseColor's notations ("red,rgb(0, 128, 0),#00F"), split
// at commas outside parentheses so rgb(...), hsl(...) and lab(...) stay whole. Returns each
// color's rgb8 in order. Errors are ParseColor's for the first bad entry; an empty entry
// ("#F00,,#00F", or "") is a bad color. Names use IsccNbs::Default().
Result<std::vector<Srgb8>> ParseColorList(std::string_view text);

// "#RRGGBB" upper case.
std::string ToHex(Srgb8 c);

// Every representation of one parsed color, each computed from the notation's own values: lab()
// input goes Lab -> XYZ -> linear, all other notations go sRGB -> linear -> XYZ -> Lab. `srgb` is
// extended sRGB (unclipped); `clipped` is the color on the sRGB cube that hex and hsl describe
// (`hsl` = RgbToHsl(srgb)).
struct ColorSpaces {
  Rgb srgb;
  Rgb clipped;
  LinearRgb linear;
  Xyz xyz;
  Xyy xyy;
  Lab lab;
  Lch lch;
  Hsl hsl;
};
ColorSpaces InAllSpaces(const ParsedColor& c);

// Every difference between two parsed colors: RgbEuclidean and RgbRedmean of their `rgb` on 0-255
// (so of the colors clipped to the sRGB gamut), DeltaE76, DeltaE2000, HueDifference, ChromaDistance
// and HyAB of their `lab`.
struct ColorDifferences {
  double rgb_ed, rgb_redmean, de76, de2000, hue, chroma, hyab;
};
ColorDifferences CompareColors(const ParsedColor& p, const ParsedColor& q);

}  // namespace visalign::color
