#include "imaging/pixel_kernels.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "visalign/imaging/purity.h"

namespace visalign::imaging {
namespace {

// Every kernel build this CPU can run: baseline x86-64, and AVX2 when supported.
std::vector<const PixelKernels*> RunnableKernels() {
  std::vector<const PixelKernels*> all = {&BaselinePixelKernels()};
  if (Avx2PixelKernels() != nullptr) all.push_back(Avx2PixelKernels());
  return all;
}

// The definitions, one pixel at a time in 64-bit integers.
RgbTotals ScalarTotals(const std::vector<uint8_t>& rgb, std::vector<uint8_t>* gray) {
  RgbTotals t;
  gray->clear();
  for (size_t i = 0; i < rgb.size(); i += 3) {
    const uint8_t v = GrayLevel(rgb[i], rgb[i + 1], rgb[i + 2]);
    gray->push_back(v);
    for (int c = 0; c < 3; ++c) t.sum[c] += rgb[i + c], t.sum_sq[c] += uint64_t{rgb[i + c]} * rgb[i + c];
    t.gray_sum_sq += uint64_t{v} * v;
    t.gray_lo = std::min(t.gray_lo, v);
    t.gray_hi = std::max(t.gray_hi, v);
  }
  return t;
}

void ExpectSameTotals(const RgbTotals& got, const RgbTotals& expected, const std::string& what) {
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(got.sum[c], expected.sum[c]) << what << " channel " << c;
    EXPECT_EQ(got.sum_sq[c], expected.sum_sq[c]) << what << " channel " << c;
  }
  EXPECT_EQ(got.gray_sum_sq, expected.gray_sum_sq) << what;
  EXPECT_EQ(got.gray_lo, expected.gray_lo) << what;
  EXPECT_EQ(got.gray_hi, expected.gray_hi) << what;
}

// Runs rgb_row and gray_row over `rows` rows of `width` pixels and compares with ScalarTotals.
void ExpectRowsMatchTheDefinition(const std::vector<uint8_t>& rgb, int width, const std::string& what) {
  std::vector<uint8_t> expected_gray;
  const RgbTotals expected = ScalarTotals(rgb, &expected_gray);
  const int rows = static_cast<int>(rgb.size() / 3 / width);
  for (const PixelKernels* k : RunnableKernels()) {
    const std::string name = what + " width " + std::to_string(width) + " (" + k->name + ")";
    std::vector<uint8_t> gray(expected_gray.size()), gray_only(expected_gray.size());
    RgbTotals totals;
    for (int y = 0; y < rows; ++y) {
      const size_t offset = static_cast<size_t>(y) * width;
      k->rgb_row(&rgb[3 * offset], width, &gray[offset], &totals);
      k->gray_row(&rgb[3 * offset], width, &gray_only[offset]);
    }
    ExpectSameTotals(totals, expected, name);
    EXPECT_EQ(gray, expected_gray) << name;
    EXPECT_EQ(gray_only, expected_gray) << name;
  }
}

// Widths below, at and above every vector and block width (16, 32 pixels), one pixel wide, and
// rows longer than the kernels' chunks of partial sums (4096 pixels).
const std::vector<int> kWidths = {1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 95, 97, 1023, 4096, 4097, 9001};

TEST(PixelKernels, TheAvx2BuildIsTestedWhenTheCpuHasIt) {
  EXPECT_EQ(RunnableKernels().size(), __builtin_cpu_supports("avx2") ? 2u : 1u);
}

TEST(PixelKernels, RgbRowsOfRandomPixelsMatchTheDefinition) {
  std::mt19937 rng(7);
  for (int width : kWidths) {
    std::vector<uint8_t> rgb(static_cast<size_t>(width) * 3 * 3);
    for (uint8_t& v : rgb) v = static_cast<uint8_t>(rng());
    ExpectRowsMatchTheDefinition(rgb, width, "random");
  }
}

TEST(PixelKernels, RgbRowsOfExtremePixelsDoNotOverflowPartialSums) {
  for (int width : kWidths) {
    ExpectRowsMatchTheDefinition(std::vector<uint8_t>(static_cast<size_t>(width) * 3 * 2, 255), width, "white");
    ExpectRowsMatchTheDefinition(std::vector<uint8_t>(static_cast<size_t>(width) * 3 * 2, 0), width, "black");
  }
}

TEST(PixelKernels, GrayLevelOfEveryRgbTripleIsOpenCvs) {
  // All 2^24 colors: one row of 65536 pixels (every G, B) per red level.
  constexpr int kLevels = 256;
  std::vector<uint8_t> rgb(static_cast<size_t>(kLevels) * kLevels * 3), gray(static_cast<size_t>(kLevels) * kLevels);
  for (const PixelKernels* k : RunnableKernels()) {
    int64_t mismatches = 0;
    for (int r = 0; r < kLevels; ++r) {
      for (int i = 0; i < kLevels * kLevels; ++i)
        rgb[3 * i] = static_cast<uint8_t>(r), rgb[3 * i + 1] = static_cast<uint8_t>(i >> 8),
                rgb[3 * i + 2] = static_cast<uint8_t>(i);
      k->gray_row(rgb.data(), kLevels * kLevels, gray.data());
      for (int i = 0; i < kLevels * kLevels; ++i)
        mismatches += gray[i] != ((9798 * r + 19235 * (i >> 8) + 3735 * (i & 0xFF) + 16384) >> 15);
    }
    EXPECT_EQ(mismatches, 0) << k->name;
  }
}

TEST(PixelKernels, GrayTotalsMatchTheDefinition) {
  std::mt19937 rng(8);
  for (size_t n : {size_t{1}, size_t{15}, size_t{16}, size_t{31}, size_t{32}, size_t{33}, size_t{1000}, size_t{1} << 20,
                   (size_t{1} << 20) + 17}) {
    std::vector<uint8_t> gray(n);
    const uint8_t base = static_cast<uint8_t>(rng() % 64);
    for (uint8_t& v : gray) v = static_cast<uint8_t>(base + rng() % 150);
    GrayTotals expected;
    for (uint8_t v : gray) {
      expected.lo = std::min(expected.lo, v);
      expected.hi = std::max(expected.hi, v);
      expected.sum_sq += uint64_t{v} * v;
    }
    for (const PixelKernels* k : RunnableKernels()) {
      GrayTotals t;
      k->gray_totals(gray.data(), n, &t);
      EXPECT_EQ(t.lo, expected.lo) << n << " " << k->name;
      EXPECT_EQ(t.hi, expected.hi) << n << " " << k->name;
      EXPECT_EQ(t.sum_sq, expected.sum_sq) << n << " " << k->name;
    }
  }
  // All 255: the largest squares, across the 32-bit partial-sum chunks.
  const std::vector<uint8_t> white((size_t{1} << 20) + 5, 255);
  for (const PixelKernels* k : RunnableKernels()) {
    GrayTotals t;
    k->gray_totals(white.data(), white.size(), &t);
    EXPECT_EQ(t.sum_sq, white.size() * 255 * 255) << k->name;
    EXPECT_EQ(t.lo, 255) << k->name;
  }
}

}  // namespace
}  // namespace visalign::imaging
