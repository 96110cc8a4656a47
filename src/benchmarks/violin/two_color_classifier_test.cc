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

void ExpectEveryColourAsConverted(color::Srgb8 first, color::Srgb8 second, const TwoColorKernels& kernels) {
  const color::Lab a = color::Srgb8ToLab(first), b = color::Srgb8ToLab(second);
  TwoColorClassifier classify(a, b, kernels);
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
// every kernels' build the CPU runs: the baseline and the one this process uses among them.
void ExpectEveryColourAsConverted(color::Srgb8 first, color::Srgb8 second) {
  const TwoColorKernels* builds[kTwoColorBuilds];
  const size_t n = RunnableTwoColorKernels(builds);
  ASSERT_EQ(builds[0], &kBaselineTwoColorKernels);
  ASSERT_EQ(builds[n - 1], &BestTwoColorKernels());
  for (size_t i = 0; i < n; ++i) ExpectEveryColourAsConverted(first, second, *builds[i]);
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
