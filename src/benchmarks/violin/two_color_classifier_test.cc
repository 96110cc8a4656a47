#include "benchmarks/violin/two_color_classifier.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace visalign::violin {
namespace {

// The nearer of A and B by converting the pixel: the definition the classifier must equal.
uint8_t Nearer(const double* lab, const color::Lab& a, const color::Lab& b) {
  auto d2 = [&](const color::Lab& t) {
    const double dl = lab[0] - t.L, da = lab[1] - t.a, db = lab[2] - t.b;
    return dl * dl + da * da + db * db;
  };
  return d2(a) <= d2(b) ? 0 : 1;
}

void ExpectEveryColourAsConverted(color::Srgb8 first, color::Srgb8 second, const TwoColorKernels& kernels,
                                  TwoColorCells cells) {
  const color::Lab a = color::Srgb8ToLab(first), b = color::Srgb8ToLab(second);
  TwoColorClassifier classify(a, b, kernels, cells);
  constexpr size_t kRow = 4096;
  std::vector<uint8_t> rgb(3 * kRow), got(kRow);
  std::vector<double> lab(3 * kRow);
  size_t mismatches = 0, ones = 0;
  for (uint32_t row = 0; row < (1u << 24) / kRow; ++row) {
    for (uint32_t i = 0; i < kRow; ++i) {
      const uint32_t c = row * kRow + i;
      rgb[3 * i] = static_cast<uint8_t>(c >> 16), rgb[3 * i + 1] = static_cast<uint8_t>(c >> 8),
              rgb[3 * i + 2] = static_cast<uint8_t>(c);
    }
    const size_t row_ones = classify.Row(rgb.data(), kRow, got.data());
    color::Srgb8ToLabBatch(rgb.data(), kRow, lab.data());
    size_t want_ones = 0;
    for (size_t i = 0; i < kRow; ++i) {
      const uint8_t want = Nearer(&lab[3 * i], a, b);
      want_ones += want;
      if (got[i] != want && ++mismatches <= 5)
        ADD_FAILURE() << "colour " << color::ToHex({rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]}) << ": class "
                      << int{got[i]} << ", converting it gives " << int{want};
    }
    EXPECT_EQ(row_ones, want_ones);
    ones += row_ones;
  }
  EXPECT_EQ(mismatches, 0u) << color::ToHex(first) << " vs " << color::ToHex(second) << ", " << kernels.name;
  EXPECT_GT(ones, 0u);
  EXPECT_LT(ones, size_t{1} << 24);
}

// Every one of the 16,777,216 8-bit colours, 4,096 per row, classified as converting each would, by
// every kernels' build the CPU runs (the baseline and the one this process uses among them), by cubes
// and by cells.
void ExpectEveryColourAsConverted(color::Srgb8 first, color::Srgb8 second) {
  const TwoColorKernels* builds[kTwoColorBuilds];
  const size_t n = RunnableTwoColorKernels(builds);
  ASSERT_EQ(builds[0], &kBaselineTwoColorKernels);
  ASSERT_EQ(builds[n - 1], &BestTwoColorKernels());
  for (size_t i = 0; i < n; ++i)
    for (TwoColorCells cells : {TwoColorCells::kNever, TwoColorCells::kAlways})
      ExpectEveryColourAsConverted(first, second, *builds[i], cells);
}

TEST(TwoColorClassifier, EveryColourAsConvertingItWouldForNearlyEqualGreys) {
  ExpectEveryColourAsConverted({128, 128, 128}, {129, 128, 128});
}

TEST(TwoColorClassifier, EveryColourAsConvertingItWouldForDarkColoursOnCIELABsLinearBranch) {
  ExpectEveryColourAsConverted({4, 6, 3}, {0, 12, 1});
}

TEST(TwoColorClassifier, EveryColourAsConvertingItWouldForSaturatedAndRandomPairs) {
  ExpectEveryColourAsConverted({255, 0, 0}, {0, 0, 255});
  std::mt19937 rng(11);
  const auto any = [&] { return static_cast<uint8_t>(rng()); };
  ExpectEveryColourAsConverted({any(), any(), any()}, {any(), any(), any()});
}

// Rows of noise: by cubes alone for the first 1,024 pixels (a sixth of them undecided), by cells from
// then on, and the same classes as by cubes throughout.
TEST(TwoColorClassifier, BoundsCellsOnceCubesLeaveManyPixelsUndecided) {
  const color::Lab a = color::Srgb8ToLab({200, 40, 60}), b = color::Srgb8ToLab({30, 60, 190});
  TwoColorClassifier automatic(a, b), cubes(a, b, BestTwoColorKernels(), TwoColorCells::kNever);
  std::mt19937 rng(23);
  std::vector<uint8_t> rgb(3 * 256), got(256), want(256);
  for (int row = 0; row < 8; ++row) {
    for (uint8_t& v : rgb) v = static_cast<uint8_t>(rng());
    EXPECT_EQ(automatic.bounds_cells(), row >= 4) << row;
    EXPECT_EQ(automatic.Row(rgb.data(), 256, got.data()), cubes.Row(rgb.data(), 256, want.data()));
    EXPECT_EQ(got, want) << row;
  }
  EXPECT_FALSE(cubes.bounds_cells());
  // A flat image never needs them.
  TwoColorClassifier flat(a, b);
  std::vector<uint8_t> grey(3 * 4096, 128), classes(4096);
  for (int row = 0; row < 4; ++row) flat.Row(grey.data(), 4096, classes.data());
  EXPECT_FALSE(flat.bounds_cells());
}

TEST(TwoColorClassifier, TiesGoToTheFirstColour) {
  const color::Lab grey = color::Srgb8ToLab({90, 90, 90});
  TwoColorClassifier classify(grey, grey);
  std::vector<uint8_t> rgb(3 * 256), got(256, 7);
  for (int i = 0; i < 256; ++i) rgb[3 * i] = static_cast<uint8_t>(i), rgb[3 * i + 1] = 90, rgb[3 * i + 2] = 255 - i;
  EXPECT_EQ(classify.Row(rgb.data(), 256, got.data()), 0u);
  EXPECT_EQ(got, std::vector<uint8_t>(256, 0));
}

}  // namespace
}  // namespace visalign::violin
