#include "benchmarks/violin/two_color_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "benchmarks/violin/two_color_classifier.h"

namespace visalign::violin {
namespace {

// The builds this CPU runs: the baseline always, the wider ones where the CPU has them.
std::vector<const TwoColorKernels*> RunnableBuilds() {
  const TwoColorKernels* builds[kTwoColorBuilds];
  return {builds, builds + RunnableTwoColorKernels(builds)};
}

TEST(TwoColorKernels, TheBestBuildIsTheWidestTheCpuRuns) {
  const TwoColorKernels* widest = Avx512TwoColorKernels() != nullptr ? Avx512TwoColorKernels()
                                  : Avx2TwoColorKernels() != nullptr ? Avx2TwoColorKernels()
                                                                     : &kBaselineTwoColorKernels;
  EXPECT_EQ(&BestTwoColorKernels(), widest) << BestTwoColorKernels().name;
}

// Every build's g of every one of the 16,777,216 8-bit colours is within the classifier's margin of
// |p - A|² - |p - B|² from the exact conversion (so outside it the sign is the converted one's), its
// class is 1 exactly when g is above the margin, and the colours within the margin are listed.
void ExpectEveryColourWithinTheMargin(color::Srgb8 first, color::Srgb8 second) {
  const color::Lab a = color::Srgb8ToLab(first), b = color::Srgb8ToLab(second);
  const TwoColorClassifier classifier(a, b);
  constexpr size_t kRow = 1 << 16;
  std::vector<uint8_t> rgb(3 * kRow), classes(kRow);
  std::vector<uint32_t> packed(kRow + kTwoColorListPad, 0xFFFFFFFF), pending(kRow), near(kRow);
  std::vector<double> lab(3 * kRow);
  std::vector<float> g(kRow + kTwoColorListPad);
  for (uint32_t i = 0; i < kRow; ++i) pending[i] = i;
  for (const TwoColorKernels* kernels : RunnableBuilds()) {
    double worst = 0;  // largest error as a share of the margin
    for (uint32_t row = 0; row < (1u << 24) / kRow; ++row) {
      for (uint32_t i = 0; i < kRow; ++i) {
        const uint32_t c = row * kRow + i;
        rgb[3 * i] = static_cast<uint8_t>(c >> 16), rgb[3 * i + 1] = static_cast<uint8_t>(c >> 8),
                rgb[3 * i + 2] = static_cast<uint8_t>(c);
        packed[i] = uint32_t{rgb[3 * i]} | uint32_t{rgb[3 * i + 1]} << 8 | uint32_t{rgb[3 * i + 2]} << 16;
      }
      color::Srgb8ToLabBatch(rgb.data(), kRow, lab.data());
      size_t ones = 0;
      const size_t close = kernels->classify_listed(classifier.g_params(), classifier.g_margin(), packed.data(),
                                                    pending.data(), kRow, g.data(), classes.data(), near.data(), &ones);
      size_t want_ones = 0, want_close = 0;
      for (size_t i = 0; i < kRow; ++i) {
        const float margin = classifier.g_margin();
        ASSERT_EQ(classes[i], g[i] > margin ? 1 : 0) << kernels->name << ", colour " << row * kRow + i;
        want_ones += classes[i];
        if (std::abs(g[i]) <= margin) {
          ASSERT_EQ(near[want_close++], i) << kernels->name;
        }
        const double* p = &lab[3 * i];
        const double exact = (p[0] - a.L) * (p[0] - a.L) + (p[1] - a.a) * (p[1] - a.a) + (p[2] - a.b) * (p[2] - a.b) -
                             (p[0] - b.L) * (p[0] - b.L) - (p[1] - b.a) * (p[1] - b.a) - (p[2] - b.b) * (p[2] - b.b);
        worst = std::max(worst, std::abs(g[i] - exact) / classifier.g_margin());
      }
      ASSERT_EQ(ones, want_ones) << kernels->name;
      ASSERT_EQ(close, want_close) << kernels->name;
    }
    EXPECT_LE(worst, 1.0) << kernels->name << ", " << color::ToHex(first) << " vs " << color::ToHex(second);
    EXPECT_GT(worst, 0.0) << kernels->name;
  }
}

// Every build's f at every cube's and every cell's lowest and highest corner is CIELAB's f of the
// corner's X/Xn, Y/Yn, Z/Zn in double precision within the kernels' error (and f's jump where t is at
// epsilon), computed once: the same table on every call.
TEST(TwoColorKernels, EveryBuildsCornersAreCielabFAtTheCubesAndCellsCorners) {
  const TwoColorClassifier classifier(color::Srgb8ToLab({200, 40, 60}), color::Srgb8ToLab({30, 60, 190}));
  constexpr double kEpsilon = 0.008856;
  const double jump = std::abs(7.787 * kEpsilon + 16.0 / 116 - std::cbrt(kEpsilon));  // f's jump at epsilon
  const auto exact_f = [](double t) { return t > kEpsilon ? std::cbrt(t) : 7.787 * t + 16.0 / 116; };
  const double white[3] = {color::kD65White.x, color::kD65White.y, color::kD65White.z};
  // f at the colour (r, g, b) against the table's value `got`.
  const auto expect_f = [&](const char* build, int r, int g, int b, const float got[3]) {
    const auto lin = [](int code) { return color::SrgbToLinear(code / 255.0); };
    const color::Xyz xyz = color::LinearToXyz({lin(r), lin(g), lin(b)});
    const double t[3] = {xyz.x / white[0], xyz.y / white[1], xyz.z / white[2]};
    for (int k = 0; k < 3; ++k) {
      const double tolerance = kTwoColorFError + (std::abs(t[k] - kEpsilon) < 1e-5 ? jump : 0);
      ASSERT_NEAR(got[k], exact_f(t[k]), tolerance) << build << ", colour " << r << " " << g << " " << b;
    }
  };
  for (const TwoColorKernels* kernels : RunnableBuilds()) {
    const TwoColorCorners& corners = kernels->corners(classifier.g_params());
    EXPECT_EQ(&kernels->corners(classifier.g_params()), &corners) << kernels->name;
    for (size_t cube = 0; cube < kTwoColorCubes; ++cube)
      for (int top = 0; top < 2; ++top) {
        const int level = 15 * top;  // a cube's highest level is its lowest + 15
        const int r = static_cast<int>(cube >> 8) * 16 + level, g = static_cast<int>(cube >> 4 & 15) * 16 + level,
                  b = static_cast<int>(cube & 15) * 16 + level;
        const float got[3] = {top ? corners.hi[0][cube] : corners.lo[0][cube],
                              top ? corners.hi[1][cube] : corners.lo[1][cube],
                              top ? corners.hi[2][cube] : corners.lo[2][cube]};
        expect_f(kernels->name, r, g, b, got);
      }
    for (size_t cell = 0; cell < kTwoColorCells; ++cell)
      for (int top = 0; top < 2; ++top) {
        const size_t cube = cell >> 3;
        const int level = 7 * top;  // a cell's highest level is its lowest + 7
        const int r = static_cast<int>(cube >> 8) * 16 + static_cast<int>(cell >> 2 & 1) * 8 + level,
                  g = static_cast<int>(cube >> 4 & 15) * 16 + static_cast<int>(cell >> 1 & 1) * 8 + level,
                  b = static_cast<int>(cube & 15) * 16 + static_cast<int>(cell & 1) * 8 + level;
        const float got[3] = {corners.cells[cube][0][top][cell & 7], corners.cells[cube][1][top][cell & 7],
                              corners.cells[cube][2][top][cell & 7]};
        expect_f(kernels->name, r, g, b, got);
      }
  }
}

// The cells refine the cubes: for the probes benchmark's pair, the cubes whose bounds do not decide
// them hold 15.5 % of all colours (on noise, the share of pixels pass 2 computes), the cells 7.2 %; a
// decided cube's cells all have its answer.
TEST(TwoColorKernels, EveryBuildsCellsLeaveHalfAsManyColoursUndecidedAsCubes) {
  const TwoColorClassifier classifier(color::Srgb8ToLab({200, 40, 60}), color::Srgb8ToLab({30, 60, 190}));
  for (const TwoColorKernels* kernels : RunnableBuilds()) {
    const TwoColorCorners& corners = kernels->corners(classifier.g_params());
    std::vector<uint8_t> cubes(kTwoColorCubes + kTwoColorCellPad), cells(kTwoColorCells + kTwoColorCellPad);
    kernels->decide_cubes(classifier.g_params(), corners, classifier.g_margin(), cubes.data());
    kernels->decide_cells(classifier.g_params(), corners, classifier.g_margin(), cubes.data(), cells.data());
    const auto share = [](const std::vector<uint8_t>& answers, size_t n) {
      return static_cast<double>(
                 std::count(answers.begin(), answers.begin() + static_cast<std::ptrdiff_t>(n), kTwoColorUndecided)) /
             static_cast<double>(n);
    };
    EXPECT_NEAR(share(cubes, kTwoColorCubes), 0.155, 0.005) << kernels->name;
    EXPECT_NEAR(share(cells, kTwoColorCells), 0.072, 0.005) << kernels->name;
    for (size_t cell = 0; cell < kTwoColorCells; ++cell) {
      const size_t cube = (cell >> 11) << 8 | (cell >> 6 & 15) << 4 | (cell >> 1 & 15);  // r5 g5 b5 halved
      if (cubes[cube] != kTwoColorUndecided) {
        ASSERT_EQ(cells[cell], cubes[cube]) << kernels->name << ", cell " << cell;
      }
    }
  }
}

TEST(TwoColorKernels, EveryBuildsGOfEveryColourIsWithinTheMargin) {
  ExpectEveryColourWithinTheMargin({255, 0, 0}, {0, 0, 255});
  ExpectEveryColourWithinTheMargin({4, 6, 3}, {0, 12, 1});  // CIELAB's linear branch
}

TEST(TwoColorKernels, EveryBuildClassifiesRowsOfNoiseOfEveryLengthAsTheBaseline) {
  std::mt19937 rng(17);
  const color::Lab a = color::Srgb8ToLab({200, 40, 60}), b = color::Srgb8ToLab({30, 60, 190});
  for (size_t pixels : {1, 7, 10, 11, 12, 19, 33, 5000}) {  // rows shorter than, and not a multiple of, a step
    std::vector<uint8_t> rgb(3 * pixels), want(pixels), got(pixels);
    for (uint8_t& v : rgb) v = static_cast<uint8_t>(rng());
    TwoColorClassifier baseline(a, b, kBaselineTwoColorKernels);
    const size_t want_ones = baseline.Row(rgb.data(), pixels, want.data());
    if (pixels == 5000) {
      EXPECT_NEAR(static_cast<double>(want_ones) / pixels, 0.37, 0.05);
    }
    for (const TwoColorKernels* kernels : RunnableBuilds()) {
      TwoColorClassifier classify(a, b, *kernels);
      EXPECT_EQ(classify.Row(rgb.data(), pixels, got.data()), want_ones) << kernels->name << ", " << pixels;
      EXPECT_EQ(got, want) << kernels->name << ", " << pixels;
    }
  }
}

}  // namespace
}  // namespace visalign::violin
