#include "benchmarks/violin/component_scan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace visalign::violin {
namespace {

// A binary image from rows of '#' (set) and '.' (clear), fed to a scan one row per block.
std::vector<Component> ScanRows(const std::vector<std::string>& rows, double min_area = 1) {
  const int width = static_cast<int>(rows[0].size());
  ComponentScan scan(width, min_area);
  std::vector<uint8_t> classes(width);
  std::vector<uint64_t> bits(BitRowWords(width));
  for (size_t y = 0; y < rows.size(); ++y) {
    for (int x = 0; x < width; ++x) classes[x] = rows[y][x] == '#';
    PackClassBits(classes.data(), width, bits.data());
    scan.Add(static_cast<int>(y), 1, bits.data());
  }
  return scan.Finish();
}

TEST(ComponentScan, ShapesJoinedBelowAreOneAndDiagonalNeighboursAreNot) {
  const std::vector<Component> found = ScanRows({
      "#.#..#.",
      "#.#.#..",
      "###....",
  });
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].area, 7);  // the U: its arms meet in the last row
  EXPECT_DOUBLE_EQ(found[0].cx(), (0.5 * 3 + 1.5 + 2.5 * 3) / 7);
  EXPECT_DOUBLE_EQ(found[0].cy(), (0.5 * 2 + 1.5 * 2 + 2.5 * 3) / 7);
  EXPECT_EQ(found[1].area, 1);  // (5, 0) and (4, 1) touch only diagonally, in that order
  EXPECT_DOUBLE_EQ(found[1].cx(), 5.5);
  EXPECT_EQ(found[2].area, 1);
  EXPECT_DOUBLE_EQ(found[2].cx(), 4.5);
}

TEST(ComponentScan, SmallComponentsAreLeftOut) {
  const std::vector<Component> found = ScanRows({"##.#", "##.."}, 2);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].area, 4);
}

TEST(ComponentScan, PackedBitsAndTheirCountsAreTheClasses) {
  std::mt19937 rng(3);
  for (int width : {1, 7, 63, 64, 65, 130, 200}) {
    std::vector<uint8_t> classes(width);
    for (uint8_t& c : classes) c = rng() % 2;
    std::vector<uint64_t> bits(BitRowWords(width), ~uint64_t{0});
    PackClassBits(classes.data(), width, bits.data());
    for (int x = 0; x < 64 * static_cast<int>(bits.size()); ++x)
      ASSERT_EQ(bits[x / 64] >> (x % 64) & 1, x < width ? classes[x] : 0) << "width " << width << ", x " << x;
    for (int x0 = 0; x0 <= width; x0 += 3)
      for (int x1 = x0; x1 <= width; x1 += 5)
        ASSERT_EQ(CountBits(bits.data(), x0, x1), std::count(classes.begin() + x0, classes.begin() + x1, 1))
            << "width " << width << ", [" << x0 << ", " << x1 << ")";
  }
}

// Components by flood fill over the pixels, ordered as ComponentScan orders them.
std::vector<Component> FloodFill(const std::vector<uint8_t>& mask, int w, int h) {
  std::vector<int> label(mask.size(), -1);
  std::vector<std::pair<int, Component>> found;  // (last pixel, component)
  for (int start = 0; start < w * h; ++start) {
    if (!mask[start] || label[start] >= 0) continue;
    std::vector<int> stack = {start};
    label[start] = start;
    Component c;
    int last = start;
    while (!stack.empty()) {
      const int i = stack.back();
      stack.pop_back();
      c.area += 1, c.sx += i % w + 0.5, c.sy += i / w + 0.5;
      last = std::max(last, i);
      for (int j : {i - 1, i + 1, i - w, i + w}) {
        if (j < 0 || j >= w * h || ((j == i - 1 || j == i + 1) && j / w != i / w) || !mask[j] || label[j] >= 0)
          continue;
        label[j] = start;
        stack.push_back(j);
      }
    }
    found.push_back({last, c});
  }
  // The last run of a component is the one holding its last pixel.
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.second.area != b.second.area ? a.second.area > b.second.area : a.first < b.first;
  });
  std::vector<Component> out;
  for (const auto& f : found) out.push_back(f.second);
  return out;
}

TEST(ComponentScan, NoiseOfEveryDensityEqualsAFloodFill) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 12; ++trial) {
    const int w = 1 + static_cast<int>(rng() % 150), h = 1 + static_cast<int>(rng() % 90);
    const double density = 0.1 + 0.07 * trial;
    std::bernoulli_distribution set(std::min(density, 0.95));
    std::vector<uint8_t> mask(w * h);
    ComponentScan scan(w, 1);
    std::vector<uint64_t> bits(BitRowWords(w));
    for (int y = 0; y < h;) {  // blocks of 1-3 equal rows
      const int rows = std::min(h - y, 1 + static_cast<int>(rng() % 3));
      for (int x = 0; x < w; ++x) mask[y * w + x] = set(rng);
      for (int r = 1; r < rows; ++r) std::copy_n(&mask[y * w], w, &mask[(y + r) * w]);
      PackClassBits(&mask[y * w], w, bits.data());
      scan.Add(y, rows, bits.data());
      y += rows;
    }
    const std::vector<Component> got = scan.Finish(), want = FloodFill(mask, w, h);
    ASSERT_EQ(got.size(), want.size()) << trial;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].area, want[i].area) << trial << " #" << i;
      EXPECT_DOUBLE_EQ(got[i].sx, want[i].sx) << trial << " #" << i;
      EXPECT_DOUBLE_EQ(got[i].sy, want[i].sy) << trial << " #" << i;
    }
  }
}

}  // namespace
}  // namespace visalign::violin
