// `visalign violin score --json` against an independent Python implementation of the same
// definitions (bench/violin_reference.py: PIL decode, numpy, numpy.fft, sRGB -> Lab and CIEDE2000
// written in numpy from published formulas, cv2.Canny when available). A varied image set — noise
// at several amplitudes, gradients, checkerboards, stripes around the hf cut, odd sizes, GT solids,
// h2/v2/q4 blocks, fuzzy ranges, an RGBA PNG and a JPEG — is scored by both; every raw and
// normalised value, pre_mean and pur_mean must agree within the per-metric tolerances below. The
// maximum differences are printed (docs/performance.md quotes them). The reference's own CIEDE2000
// is first checked against the 34 published pairs of Sharma, Wu & Dalal (2005), so it is anchored
// to published vectors, not to visalign.
//
// The test needs only Debian's python3-numpy and python3-pil; without them it fails (never skips).
// ced needs OpenCV's Canny (python3-opencv, ~500 MB with its dependencies, so not required here):
// with cv2 importable, ced is compared exactly; without it, the reference reports ced (and
// pur_mean) as null, ced is not compared and pur_mean is checked with visalign's ced substituted.
// The test prints one line saying which. ced itself is checked bit-for-bit against cv::Canny — the
// same OpenCV implementation cv2 wraps — by src/imaging/canny_test.cc, so this test covers the
// other metrics.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "testing/cli_runner.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/imaging/image.h"

namespace visalign {
namespace {

namespace fs = std::filesystem;
using testing::RunProgram;
using testing::RunVisalign;
using testing::TempDir;

constexpr char kPython[] = "/usr/bin/python3";
constexpr char kAptPackages[] = "python3-numpy python3-pil";
constexpr char kCiede2000Pairs[] = "data/color/ciede2000_sharma.csv";

fs::path ReferenceScript() { return testing::DataDir().parent_path() / "bench" / "violin_reference.py"; }

// numpy picks its SIMD kernels (arctan2, sums, FFT helpers) from the host CPU at import time. The
// reference runs under every dispatch this host offers, so no result depends on the machine: the
// host's own, then with AVX-512 switched off (the AVX2 path), then with everything above the
// SSE3 baseline switched off. Only features numpy dispatches and the host has are named
// (NPY_DISABLE_CPU_FEATURES warns about others).
struct NumpyDispatch {
  std::string label;
  std::map<std::string, std::string> env;
};

std::vector<NumpyDispatch> NumpyDispatches() {
  auto probe = RunProgram({kPython, "-c",
                           "from numpy.core._multiarray_umath import __cpu_dispatch__ as d, __cpu_features__ as f\n"
                           "print(' '.join(x for x in d if f[x]))"});
  std::vector<std::string> present;
  std::istringstream words(probe.out);
  for (std::string w; words >> w;) present.push_back(w);
  auto join_if = [&](auto keep) {
    std::string out;
    for (const std::string& f : present)
      if (keep(f)) out += (out.empty() ? "" : " ") + f;
    return out;
  };
  std::vector<NumpyDispatch> out = {{"host (" + join_if([](auto&) { return true; }) + ")", {}}};
  const std::string avx512 = join_if([](const std::string& f) { return f.rfind("AVX512", 0) == 0; });
  if (!avx512.empty()) out.push_back({"AVX-512 off", {{"NPY_DISABLE_CPU_FEATURES", avx512}}});
  const std::string all = join_if([](auto&) { return true; });
  if (!all.empty() && all != avx512) out.push_back({"SSE3 baseline", {{"NPY_DISABLE_CPU_FEATURES", all}}});
  return out;
}

// Largest allowed |visalign - reference| per JSON key: abs + rel * max(|visalign|, |reference|),
// plus turn * 360 for angles (raw and norm share a key's tolerance; norm values are <= 1, so the
// raw bound covers them). Where the errors come from:
//  - ced is a count ratio from bit-identical edge maps: exact.
//  - The block mean colour is an exact integer sum in visalign and numpy's pairwise float sum
//    (error ~1e-15 relative, ~3e-13 absolute on a 0..255 mean). Every precision metric is a
//    distance of that mean, so it inherits ~1e-12 absolute plus a few ulps of its own magnitude
//    (values up to ~700, hence a relative term, never an absolute one that grows with them).
//  - hue is atan2 of the mean's (a, b): its error is |d(a, b)| / C radians, and near-neutral means
//    (C ~ 5e-3 for a black/white checker; scikit-image's white is not exactly neutral) amplify the
//    ~5e-14 error of a, b to ~5e-10 degrees. The bound is 1e-11 of a full turn (3.6e-9 degrees):
//    an angle's error scales with the turn, not with the (possibly small) difference reported.
//  - sd, hf: normalised quantities from exact integer moments / Parseval vs float numpy sums.
//  - pre_mean averages six normalised precision metrics, hue/180 among them (~3e-12).
struct Tolerance {
  double abs = 0, rel = 0, turn = 0;
  double For(double ours, double reference) const {
    return abs + rel * std::max(std::fabs(ours), std::fabs(reference)) + turn * 360.0;
  }
};
constexpr double kColourMeanError = 1e-12;  // absolute, of a 0..255 mean and distances of it
constexpr double kFewUlps = 1e-12;          // relative
const std::map<std::string, Tolerance> kTolerance = {{"rgb_ed", {kColourMeanError, kFewUlps}},
                                                     {"rgb_rm", {kColourMeanError, kFewUlps}},
                                                     {"de00", {kColourMeanError, kFewUlps}},
                                                     {"hue", {kColourMeanError, kFewUlps, 1e-11}},
                                                     {"chroma", {kColourMeanError, kFewUlps}},
                                                     {"hyab", {kColourMeanError, kFewUlps}},
                                                     {"sd", {1e-12}},
                                                     {"sd_n", {1e-12}},
                                                     {"ced", {0.0}},
                                                     {"hf", {1e-12}},
                                                     {"pre_mean", {1e-11}},
                                                     {"pur_mean", {1e-12}}};

using Rgb = std::array<int, 3>;
using PixelFn = std::function<Rgb(int x, int y)>;

imaging::Image Paint(int w, int h, const PixelFn& fn) {
  imaging::Image img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const Rgb c = fn(x, y);
      for (int k = 0; k < 3; ++k) img.pixel(x, y)[k] = static_cast<uint8_t>(std::clamp(c[k], 0, 255));
    }
  return img;
}

PixelFn Solid(Rgb c) {
  return [c](int, int) { return c; };
}
// base ± amplitude per channel, uniform; the generator is seeded per case (deterministic).
PixelFn Noise(Rgb base, int amplitude, unsigned seed) {
  auto rng = std::make_shared<std::mt19937>(seed);
  return [=](int, int) {
    Rgb c;
    for (int k = 0; k < 3; ++k) c[k] = base[k] + static_cast<int>((*rng)() % (2 * amplitude + 1)) - amplitude;
    return c;
  };
}
PixelFn Stripes(int period, bool vertical, Rgb a, Rgb b) {
  return [=](int x, int y) { return ((vertical ? x : y) % period) < (period + 1) / 2 ? a : b; };
}
PixelFn Checker(int cell, Rgb a, Rgb b) {
  return [=](int x, int y) { return ((x / cell + y / cell) % 2 == 0) ? a : b; };
}
// Blocks of the layout's split (at floor(W/2), floor(H/2)), each painted by its own function.
PixelFn Quadrants(int w, int h, PixelFn tl, PixelFn tr, PixelFn bl, PixelFn br) {
  return [=](int x, int y) {
    const bool right = x >= w / 2, bottom = y >= h / 2;
    return bottom ? (right ? br(x, y) : bl(x, y)) : (right ? tr(x, y) : tl(x, y));
  };
}

struct Case {
  std::string name;
  int w, h;
  PixelFn paint;
  std::vector<std::string> target;  // score arguments after IMAGE
};

std::vector<Case> Cases() {
  const Rgb violet{120, 80, 200}, navy{40, 90, 160}, mustard{220, 200, 30}, black{0, 0, 0}, white{255, 255, 255};
  const std::vector<std::string> violet_target = {"--target", "#7850C8"};
  const std::vector<std::string> gray_target = {"--target", "#808080"};
  const std::vector<std::string> stripes_target = {"--target", "rgb(130, 145, 95)"};
  std::vector<Case> c = {
      // Noise at several amplitudes: 2 and 12 stay under Canny's threshold (gray range <= 25), 40 does not.
      {"noise_amp2", 96, 80, Noise(violet, 2, 1), violet_target},
      {"noise_amp12", 96, 80, Noise(violet, 12, 2), violet_target},
      {"noise_amp40", 96, 80, Noise(violet, 40, 3), violet_target},
      {"noise_full_257x131", 257, 131, Noise({128, 128, 128}, 128, 4), gray_target},
      {"noise_full_512", 512, 512, Noise({128, 128, 128}, 128, 5), {"--target", "rgb(10, 200, 30)"}},
      {"noise_full_384x256", 384, 256, Noise({128, 128, 128}, 128, 6), {"--target", "#0A0"}},
      {"noise_near_gray", 64, 48, Noise({128, 128, 128}, 3, 7), gray_target},
      {"noise_dark_gray", 40, 40, Noise({6, 6, 6}, 2, 8), {"--target", "#050505"}},
      // Gradients.
      {"gradient_h_256x64", 256, 64,
       [](int x, int) {
         return Rgb{x, 255 - x, 128};
       },
       gray_target},
      {"gradient_diag_100x70",
       100,
       70,
       [](int x, int y) {
         return Rgb{(x + y) * 255 / 168, 60, 255 - y * 3};
       },
       {"--target", "#FF0000"}},
      // Checkerboards: 8-pixel cells (known edge fraction), 1-pixel cells at odd sizes (Nyquist).
      {"checker_8px_64", 64, 64, Checker(8, black, white), {"--target", "#000000"}},
      {"checker_1px_33x17", 33, 17, Checker(1, black, white), {"--target", "#FFFFFF"}},
      {"checker_3px_50x30", 50, 30, Checker(3, navy, mustard), stripes_target},
      // Stripes around the hf cut r = 0.25: periods 2, 3 (above), 4 (exactly at, low), 5 (below).
      {"stripes_v_p2_64", 64, 64, Stripes(2, true, navy, mustard), stripes_target},
      {"stripes_v_p3_64", 64, 64, Stripes(3, true, navy, mustard), stripes_target},
      {"stripes_v_p4_64", 64, 64, Stripes(4, true, navy, mustard), stripes_target},
      {"stripes_v_p5_64", 64, 64, Stripes(5, true, navy, mustard), stripes_target},
      {"stripes_h_p4_60x40", 60, 40, Stripes(4, false, navy, mustard), stripes_target},
      {"stripes_v_p4_63x45", 63, 45, Stripes(4, true, navy, mustard), stripes_target},
      {"stripes_diag_p4_64", 64, 64, [=](int x, int y) { return (x + y) % 4 < 2 ? navy : mustard; }, stripes_target},
      // Odd and degenerate sizes.
      {"one_pixel", 1, 1, Solid({12, 34, 56}), {"--target", "#0C2239"}},
      {"one_row_64x1", 64, 1, Noise(violet, 60, 9), violet_target},
      {"one_column_1x37", 1, 37, Noise(violet, 60, 10), violet_target},
      // Ground-truth solids score 0; an off-target solid; blue vs yellow (de00 > 100 is clamped).
      {"gt_black", 48, 32, Solid(black), {"--target", "#000000"}},
      {"gt_white", 48, 32, Solid(white), {"--target", "#FFFFFF"}},
      {"gt_red", 48, 32, Solid({255, 0, 0}), {"--target", "#FF0000"}},
      {"gt_gray", 48, 32, Solid({128, 128, 128}), gray_target},
      {"gt_olive", 48, 32, Solid({114, 103, 44}), {"--target", "#72672C"}},
      {"solid_off_target", 48, 32, Solid({10, 20, 30}), {"--target", "#FFFFFF"}},
      {"solid_blue_vs_yellow", 16, 16, Solid({0, 0, 255}), {"--target", "#FFFF00"}},
      // Layouts, odd sizes so the halves differ.
      {"h2_blocks_75x51",
       75,
       51,
       Quadrants(75, 51, Noise({200, 30, 30}, 20, 11), Noise({200, 30, 30}, 20, 12), Solid({30, 30, 200}),
                 Solid({30, 30, 200})),
       {"--layout", "h2", "--targets", "#C81E1E,#1E1EC8"}},
      {"v2_blocks_77x40",
       77,
       40,
       Quadrants(
           77, 40,
           [](int x, int y) {
             return Rgb{x * 6, y * 6, 90};
           },
           Checker(2, navy, mustard),
           [](int x, int y) {
             return Rgb{x * 6, y * 6, 90};
           },
           Checker(2, navy, mustard)),
       {"--layout", "v2", "--targets", "rgb(100, 120, 90),#7C9160"}},
      {"q4_blocks_65x49",
       65,
       49,
       Quadrants(65, 49, Noise({255, 0, 0}, 30, 13), Solid({0, 128, 0}), Stripes(3, false, navy, mustard),
                 Noise({255, 255, 0}, 5, 14)),
       {"--layout", "q4", "--targets", "#FF0000,rgb(0, 128, 0),#0000FF,#FFFF00"}},
      {"q4_noise_257x131",
       257,
       131,
       Noise({128, 128, 128}, 128, 15),
       {"--layout", "q4", "--targets", "#808080,#000000,#FFFFFF,#123456"}},
      {"h2_tiny_5x3", 5, 3, Noise(violet, 100, 16), {"--layout", "h2", "--targets", "#7850C8,#000"}},
      {"q4_2x2", 2, 2, Noise(violet, 100, 17), {"--layout", "q4", "--targets", "#FFF,#000,#F00,#00F"}},
      // Fuzzy ranges: one through hue 0 (hsl(340, 70%, 50%) .. hsl(20, 70%, 50%)), noise against a
      // wide range, a gray mean (s = 0), a single-color range (t = 0).
      {"fuzzy_wrap_red", 40, 30, Noise({220, 40, 60}, 10, 18), {"--fuzzy", "#D92662,#D96226"}},
      {"fuzzy_noise", 96, 64, Noise({128, 128, 128}, 128, 19), {"--fuzzy", "#B92842,#E3A857"}},
      {"fuzzy_gray_mean", 32, 32, Solid({90, 90, 90}), {"--fuzzy", "#203040,#E0C0A0"}},
      {"fuzzy_single_color", 32, 32, Noise({50, 150, 100}, 30, 20), {"--fuzzy", "#329664,#329664"}},
  };
  return c;
}

// Re-encodes one PNG as an RGBA PNG (alpha a ramp: composited over the background) and as a JPEG, with PIL.
constexpr char kEncodeWithPil[] =
    "import sys\n"
    "import numpy as np\n"
    "from PIL import Image\n"
    "rgb = np.asarray(Image.open(sys.argv[1]).convert('RGB'))\n"
    "alpha = (np.arange(rgb.shape[0] * rgb.shape[1]) % 256).astype(np.uint8).reshape(rgb.shape[:2])\n"
    "Image.fromarray(np.dstack([rgb, alpha]), 'RGBA').save(sys.argv[2])\n"
    "Image.fromarray(rgb).save(sys.argv[3], quality=90)\n";

struct Worst {
  double diff = 0;
  std::string where;
};

class ViolinReference : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto probe = RunProgram({kPython, "-c", "import numpy, PIL"});
    modules_error_ = probe.exit_code == 0 ? "" : probe.err;
    have_cv2_ = RunProgram({kPython, "-c", "import cv2"}).exit_code == 0;
  }
  void SetUp() override {
    ASSERT_TRUE(modules_error_.empty()) << "the Python reference needs the Debian packages " << kAptPackages
                                        << " (apt-get install -y " << kAptPackages << ", or scripts/setup.sh); "
                                        << kPython << " said:\n"
                                        << modules_error_;
    ASSERT_TRUE(fs::exists(ReferenceScript())) << ReferenceScript();
  }
  void CompareWithReference(const std::vector<std::pair<std::string, std::vector<std::string>>>& runs,
                            const std::vector<Json>& ours, const NumpyDispatch& dispatch);
  static inline std::string modules_error_;
  static inline bool have_cv2_ = false;
  TempDir dir_;
};

void Compare(const std::string& where, const std::string& key, double ours, double reference,
             std::map<std::string, Worst>& worst) {
  ASSERT_TRUE(kTolerance.count(key)) << "unexpected key " << key;
  const double diff = std::fabs(ours - reference);
  EXPECT_LE(diff, kTolerance.at(key).For(ours, reference))
      << where << " " << key << ": visalign " << ours << ", reference " << reference;
  if (diff >= worst[key].diff) worst[key] = {diff, where};
}

TEST_F(ViolinReference, EveryValueMatchesThePythonReference) {
  std::vector<std::pair<std::string, std::vector<std::string>>> runs;  // (case, score arguments)
  for (const Case& c : Cases()) {
    const fs::path path = dir_ / (c.name + ".png");
    ASSERT_TRUE(imaging::WritePng(path, Paint(c.w, c.h, c.paint)).ok()) << path;
    std::vector<std::string> args{path.string()};
    args.insert(args.end(), c.target.begin(), c.target.end());
    runs.emplace_back(c.name, args);
  }
  // An RGBA PNG and a JPEG of a noisy gradient.
  const fs::path source = dir_ / "encoded_source.png";
  ASSERT_TRUE(imaging::WritePng(source, Paint(70, 50,
                                              [noise = Noise({0, 0, 0}, 25, 21)](int x, int y) {
                                                const Rgb n = noise(x, y);
                                                return Rgb{60 + 2 * x + n[0], 200 - 3 * y + n[1], 120 + n[2]};
                                              }))
                  .ok());
  auto encoded = RunProgram(
      {kPython, "-c", kEncodeWithPil, source.string(), (dir_ / "rgba.png").string(), (dir_ / "photo.jpg").string()});
  ASSERT_EQ(encoded.exit_code, 0) << encoded.err;
  runs.push_back({"rgba_png", {(dir_ / "rgba.png").string(), "--target", "#8C8C78"}});
  runs.push_back(
      {"rgba_png_over_olive", {(dir_ / "rgba.png").string(), "--target", "#8C8C78", "--background", "#808000"}});
  runs.push_back(
      {"rgba_png_alpha_dropped", {(dir_ / "rgba.png").string(), "--target", "#8C8C78", "--background", "none"}});
  runs.push_back({"jpeg_q90", {(dir_ / "photo.jpg").string(), "--fuzzy", "#3C78A0,#A0C850"}});

  std::string cases_jsonl;
  for (const auto& [name, args] : runs) cases_jsonl += Json(args).dump() + "\n";
  ASSERT_TRUE(WriteFileAtomic(dir_ / "cases.jsonl", cases_jsonl).ok());
  std::vector<Json> ours;
  for (const auto& [name, args] : runs) {
    std::vector<std::string> cli{"violin", "score"};
    cli.insert(cli.end(), args.begin(), args.end());
    cli.push_back("--json");
    auto r = RunVisalign(cli);
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    ours.push_back(Json::parse(r.out));
  }
  for (const NumpyDispatch& dispatch : NumpyDispatches()) {
    SCOPED_TRACE("numpy dispatch: " + dispatch.label);
    CompareWithReference(runs, ours, dispatch);
  }
}

void ViolinReference::CompareWithReference(const std::vector<std::pair<std::string, std::vector<std::string>>>& runs,
                                           const std::vector<Json>& ours_all, const NumpyDispatch& dispatch) {
  auto reference =
      RunProgram({kPython, ReferenceScript().string(), "batch", (dir_ / "cases.jsonl").string()}, dispatch.env);
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  std::istringstream lines(reference.out);

  std::map<std::string, Worst> worst;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string& name = runs[i].first;
    SCOPED_TRACE(name);
    std::string line;
    ASSERT_TRUE(std::getline(lines, line)) << "reference printed too few lines";
    const Json ref = Json::parse(line);
    const Json& ours = ours_all[i];
    // The reference gives ced exactly when cv2 is importable (null otherwise, never silently).
    ASSERT_EQ(ref["raw"]["ced"].is_null(), !have_cv2_) << line;
    for (const char* group : {"raw", "norm"}) {
      ASSERT_EQ(ours[group].size(), ref[group].size()) << group;
      for (const auto& [key, value] : ref[group].items()) {
        ASSERT_TRUE(ours[group].contains(key)) << group << "." << key;
        if (key == "ced" && !have_cv2_) continue;
        Compare(name, key, ours[group][key].get<double>(), value.get<double>(), worst);
      }
    }
    Compare(name, "pre_mean", ours["pre_mean"].get<double>(), ref["pre_mean"].get<double>(), worst);
    EXPECT_EQ(ours.value("alpha_min", 255), ref.value("alpha_min", 255));
    const double ref_pur_mean = have_cv2_ ? ref["pur_mean"].get<double>()
                                          : (ref["norm"]["sd_n"].get<double>() + ours["norm"]["ced"].get<double>() +
                                             ref["norm"]["hf"].get<double>()) /
                                                3;
    Compare(name, "pur_mean", ours["pur_mean"].get<double>(), ref_pur_mean, worst);
  }
  std::string extra;
  EXPECT_FALSE(std::getline(lines, extra)) << "reference printed more lines than cases";

  std::printf("%s\n", have_cv2_ ? "ced compared exactly with cv2.Canny (python3-opencv is installed)"
                                : "ced NOT compared here: cv2 is not importable (python3-opencv); ced is "
                                  "checked against cv::Canny by src/imaging/canny_test.cc, and pur_mean "
                                  "here with visalign's ced");
  std::printf("numpy dispatch %s: %zu images; max |visalign - reference| per key (raw and norm together):\n",
              dispatch.label.c_str(), runs.size());
  for (const auto& [key, w] : worst) std::printf("  %-9s %.3g  (%s)\n", key.c_str(), w.diff, w.where.c_str());
}

// The reference's CIEDE2000 reproduces Sharma, Wu & Dalal's 34 published pairs (4 decimals) in both
// argument orders; with cv2 it also shows its gray formula equal to cv2.cvtColor on every color.
TEST_F(ViolinReference, ReferenceCiede2000MatchesThePublishedPairs) {
  const fs::path pairs = testing::SharedDir() / kCiede2000Pairs;
  for (const NumpyDispatch& dispatch : NumpyDispatches()) {
    SCOPED_TRACE("numpy dispatch: " + dispatch.label);
    auto r = RunProgram({kPython, ReferenceScript().string(), "selfcheck", pairs.string()}, dispatch.env);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("CIEDE2000(1, 2): 34 pairs"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("CIEDE2000(2, 1): 34 pairs"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("MISMATCH"), std::string::npos) << r.out;
    std::printf("numpy dispatch %s:\n%s", dispatch.label.c_str(), r.out.c_str());
  }
}

// The reference names the packages it needs instead of a Python traceback (here: site-packages
// switched off with -S, so neither numpy nor PIL can be imported).
TEST_F(ViolinReference, MissingModulesNameTheDebianPackages) {
  auto r = RunProgram({kPython, "-S", ReferenceScript().string(), "score", "x.png", "--target", "#000"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(std::string("apt-get install -y ") + kAptPackages), std::string::npos) << r.err;
}

}  // namespace
}  // namespace visalign
