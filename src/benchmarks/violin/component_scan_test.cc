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

// Components of at least min_area pixels by flood fill over the pixels, ordered as ComponentScan
// orders them; *labels (if given): each pixel's component as its first pixel, -1 for clear pixels.
std::vector<Component> FloodFill(const std::vector<uint8_t>& mask, int w, int h, double min_area = 1,
                                 std::vector<int>* labels = nullptr) {
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
    if (c.area >= min_area) found.push_back({last, c});
  }
  if (labels) *labels = label;
  // The last run of a component is the one holding its last pixel.
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.second.area != b.second.area ? a.second.area > b.second.area : a.first < b.first;
  });
  std::vector<Component> out;
  for (const auto& f : found) out.push_back(f.second);
  return out;
}

// A random mask of w x h pixels, each set with probability `density`, in blocks of 1-3 equal rows
// (per pixel, and packed: `bits` row by row, `blocks` the rows of each block).
struct RandomMask {
  RandomMask(std::mt19937& rng, int w, int h, double density) : w(w), h(h), mask(w * h), words(BitRowWords(w)) {
    std::bernoulli_distribution set(std::min(density, 0.95));
    bits.resize(words * h);
    for (int y = 0; y < h;) {
      const int rows = std::min(h - y, 1 + static_cast<int>(rng() % 3));
      for (int x = 0; x < w; ++x) mask[y * w + x] = set(rng);
      for (int r = 0; r < rows; ++r) {
        if (r > 0) std::copy_n(&mask[y * w], w, &mask[(y + r) * w]);
        PackClassBits(&mask[y * w], w, &bits[(y + r) * words]);
      }
      blocks.push_back(rows);
      y += rows;
    }
  }
  bool Set(const std::vector<uint64_t>& packed, int x, int y) const {
    return packed[y * words + x / 64] >> (x % 64) & 1;
  }
  int w, h;
  std::vector<uint8_t> mask;
  size_t words;
  std::vector<uint64_t> bits;
  std::vector<int> blocks;
};

void ExpectSameComponents(const std::vector<Component>& got, const std::vector<Component>& want, int trial) {
  ASSERT_EQ(got.size(), want.size()) << trial;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].area, want[i].area) << trial << " #" << i;
    EXPECT_DOUBLE_EQ(got[i].sx, want[i].sx) << trial << " #" << i;
    EXPECT_DOUBLE_EQ(got[i].sy, want[i].sy) << trial << " #" << i;
  }
}

TEST(ComponentScan, NoiseOfEveryDensityEqualsAFloodFill) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 12; ++trial) {
    const RandomMask m(rng, 1 + static_cast<int>(rng() % 150), 1 + static_cast<int>(rng() % 90), 0.1 + 0.07 * trial);
    ComponentScan scan(m.w, 1);
    int y = 0;
    for (int rows : m.blocks) scan.Add(y, rows, &m.bits[y * m.words]), y += rows;
    ExpectSameComponents(scan.Finish(), FloodFill(m.mask, m.w, m.h), trial);
  }
}

// Blocks of equal rows count as their rows, and a scan used again after Finish starts afresh.
TEST(ComponentScan, BlocksAreTheirRowsAndAScanAfterFinishStartsAfresh) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 6; ++trial) {
    const RandomMask m(rng, 1 + static_cast<int>(rng() % 150), 1 + static_cast<int>(rng() % 90), 0.2 + 0.1 * trial);
    ComponentScan scan(m.w, 2);
    for (int pass = 0; pass < 2; ++pass) {
      int y = 0;
      for (int rows : m.blocks) {
        if (pass == 0) scan.Add(y, rows, &m.bits[y * m.words]);
        for (int r = 0; pass == 1 && r < rows; ++r) scan.Add(y + r, 1, &m.bits[(y + r) * m.words]);
        y += rows;
      }
      ExpectSameComponents(scan.Finish(), FloodFill(m.mask, m.w, m.h, 2), trial);
    }
  }
}

TEST(ComponentExtent, AComponentWithinFewerRowsAndColumnsHasFewerPixelsThanTheMinimumArea) {
  EXPECT_EQ(ComponentExtent(1), 1);  // every pixel counts
  EXPECT_EQ(ComponentExtent(2), 2);
  EXPECT_EQ(ComponentExtent(4), 2);  // 2 x 2 would hold 4
  EXPECT_EQ(ComponentExtent(4.5), 3);
  EXPECT_EQ(ComponentExtent(131.072), 12);   // 0.2 % of 256²: 11² = 121 pixels
  EXPECT_EQ(ComponentExtent(2097.152), 46);  // 0.2 % of 1024²: 45² = 2025
}

// A packed image of w x h pixels from a per-pixel mask.
std::vector<uint64_t> Pack(const std::vector<uint8_t>& mask, int w, int h) {
  std::vector<uint64_t> bits(BitRowWords(w) * h);
  for (int y = 0; y < h; ++y) PackClassBits(&mask[y * w], w, &bits[y * BitRowWords(w)]);
  return bits;
}

// The components holding a seed (and of the minimum area) are a flood fill's, on noise of every
// density, widths across words (multiples of 64 among them), blocks of equal rows and seeds shared
// by a component.
TEST(SeededComponents, AreTheFloodFillsComponentsHoldingASeed) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    const int w = trial % 4 == 0 ? 64 * (1 + trial % 3) : 1 + static_cast<int>(rng() % 200);
    const RandomMask m(rng, w, 1 + static_cast<int>(rng() % 120), 0.05 + 0.022 * trial);
    std::vector<uint64_t> seeds(m.bits.size());
    std::bernoulli_distribution seeded(0.01 + 0.002 * trial);
    std::vector<uint8_t> seeded_mask(m.mask.size(), 0);
    for (int y = 0; y < m.h; ++y)
      for (int x = 0; x < m.w; ++x)
        if (m.mask[y * m.w + x] && seeded(rng))
          seeds[y * m.words + x / 64] |= uint64_t{1} << (x % 64), seeded_mask[y * m.w + x] = 1;
    // The reference: the flood fill's components with their pixels cleared unless one holds a seed.
    std::vector<int> label;
    FloodFill(m.mask, m.w, m.h, 1, &label);
    std::vector<uint8_t> holds(m.mask.size(), 0), kept(m.mask.size(), 0);
    for (size_t i = 0; i < m.mask.size(); ++i)
      if (seeded_mask[i]) holds[label[i]] = 1;
    for (size_t i = 0; i < m.mask.size(); ++i) kept[i] = label[i] >= 0 && holds[label[i]];
    const double min_area = trial % 2 == 0 ? 1 : 1 + rng() % 40;
    ExpectSameComponents(SeededComponents(m.bits.data(), seeds.data(), m.w, m.h, min_area),
                         FloodFill(kept, m.w, m.h, min_area), trial);
  }
}

// Seeds are pixels of the mask, and every component of at least min_area pixels holds one, on noise
// of every density; on sparse noise (10 %) there are none.
TEST(CrossingSeeds, EveryComponentOfTheMinimumAreaHoldsASeed) {
  std::mt19937 rng(19);
  for (int trial = 0; trial < 40; ++trial) {
    const RandomMask m(rng, 1 + static_cast<int>(rng() % 260), 1 + static_cast<int>(rng() % 140), 0.02 * trial);
    const double min_area = 1 + rng() % 200;
    std::vector<uint64_t> seeds(m.bits.size(), ~uint64_t{0});
    const bool any = CrossingSeeds(m.bits.data(), m.w, m.h, min_area, 1000, seeds.data());
    std::vector<int> label;
    FloodFill(m.mask, m.w, m.h, 1, &label);
    std::vector<int> area(m.w * m.h, 0), holds(m.w * m.h, 0);
    bool set = false;
    for (int y = 0; y < m.h; ++y)
      for (int x = 0; x < 64 * static_cast<int>(m.words); ++x) {
        const bool seed = m.Set(seeds, x, y);
        ASSERT_TRUE(!seed || (x < m.w && m.mask[y * m.w + x])) << trial << ": (" << x << ", " << y << ")";
        set |= seed;
        if (x < m.w && label[y * m.w + x] >= 0) ++area[label[y * m.w + x]], holds[label[y * m.w + x]] |= seed;
      }
    EXPECT_EQ(any, set) << trial;
    for (int i = 0; i < m.w * m.h; ++i)
      if (area[i] >= min_area) {
        EXPECT_TRUE(holds[i]) << trial << ": the component of pixel " << i;
      }
  }
  std::vector<uint8_t> sparse(256 * 256);  // pixel by pixel (RandomMask repeats rows)
  std::bernoulli_distribution set(0.1);
  for (uint8_t& v : sparse) v = set(rng);
  const std::vector<uint64_t> bits = Pack(sparse, 256, 256);
  std::vector<uint64_t> seeds(bits.size());
  EXPECT_FALSE(CrossingSeeds(bits.data(), 256, 256, 131.072, kMaskPasses, seeds.data()));
}

// min_area 131: k = 12, bands of s = 6. A bar from row 6 to row 12 crosses a band (its pixel in row
// 12 is the seed), a bar of 5 rows crosses none; a bar across columns 18 .. 24 is seeded at column 24.
TEST(CrossingSeeds, ABarAcrossABandIsSeededWhereItReachesTheBandsLastLine) {
  const int w = 40, h = 30;
  const auto seeds_of = [&](const std::vector<std::pair<int, int>>& pixels) {
    std::vector<uint8_t> mask(w * h, 0);
    for (auto [x, y] : pixels) mask[y * w + x] = 1;
    const std::vector<uint64_t> bits = Pack(mask, w, h);
    std::vector<uint64_t> seeds(bits.size());
    CrossingSeeds(bits.data(), w, h, 131, kMaskPasses, seeds.data());
    std::vector<std::pair<int, int>> out;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        if (seeds[y * BitRowWords(w) + x / 64] >> (x % 64) & 1) out.push_back({x, y});
    return out;
  };
  std::vector<std::pair<int, int>> bar;
  for (int y = 6; y <= 12; ++y) bar.push_back({3, y});
  EXPECT_EQ(seeds_of(bar), (std::vector<std::pair<int, int>>{{3, 12}}));
  bar.clear();
  for (int y = 7; y <= 11; ++y) bar.push_back({3, y});
  EXPECT_TRUE(seeds_of(bar).empty());
  bar.clear();
  for (int x = 18; x <= 24; ++x) bar.push_back({x, 20});
  EXPECT_EQ(seeds_of(bar), (std::vector<std::pair<int, int>>{{24, 20}}));
  // A U from row 6 down to row 11 and up again, then down to row 12 on its far side: a path that turns
  // twice inside the band, found by the second downward sweep.
  bar.clear();
  for (int y = 6; y <= 11; ++y) bar.push_back({10, y});
  for (int x = 11; x <= 13; ++x) bar.push_back({x, 11});
  for (int y = 8; y <= 10; ++y) bar.push_back({13, y});
  for (int x = 14; x <= 15; ++x) bar.push_back({x, 8});
  for (int y = 9; y <= 12; ++y) bar.push_back({15, y});
  EXPECT_EQ(seeds_of(bar), (std::vector<std::pair<int, int>>{{15, 12}}));
}

// Whether the mask is scanned whole (few runs) or through the grid (noise), the components are a
// flood fill's.
TEST(MaskComponents, EqualsAFloodFillOnMasksOfEveryDensity) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 30; ++trial) {
    const RandomMask m(rng, 1 + static_cast<int>(rng() % 300), 1 + static_cast<int>(rng() % 100),
                       trial < 5 ? 0.003 * trial : 0.03 * trial);
    const double min_area = 1 + rng() % 60;
    MaskComponents components(m.w, m.h, min_area);
    int y = 0;
    for (int rows : m.blocks) components.Add(rows, &m.bits[y * m.words]), y += rows;
    ExpectSameComponents(components.Finish(), FloodFill(m.mask, m.w, m.h, min_area), trial);
  }
}

// A serpentine of 334 bars of 60 rows, joined below then above, with min_area 20,000 (k = 142, bands
// of s = 71): it crosses no band of rows (there is none: 64 rows), each band of columns in one sweep,
// so its seeds lie 71 columns apart; the flood from the first finds it whole, 20,040 pixels.
TEST(MaskComponents, ASerpentineSeededFarApartIsFoundWhole) {
  const double min_area = 20000;
  const int w = 670, h = 64;
  std::vector<uint8_t> mask(w * h, 0);
  for (int x = 1, bar = 0; x < w - 2; x += 2, ++bar) {
    for (int y = 2; y <= 61; ++y) mask[y * w + x] = 1;
    if (x + 2 < w - 2) mask[(bar % 2 == 0 ? 61 : 2) * w + x + 1] = 1;
  }
  const std::vector<uint64_t> bits = Pack(mask, w, h);
  MaskComponents components(w, h, min_area);
  for (int y = 0; y < h; ++y) components.Add(1, &bits[y * BitRowWords(w)]);
  const std::vector<Component> found = components.Finish(), want = FloodFill(mask, w, h, min_area);
  ASSERT_EQ(want.size(), 1u);
  ExpectSameComponents(found, want, 0);
}

// A band of rows whose flood needs a sweep per bar (a serpentine between its lines 6 and 12, min_area
// 131) adds its first row whole.
TEST(CrossingSeeds, ABandThatDoesNotSettleAddsItsFirstRow) {
  const int w = 200, h = 13;
  std::vector<uint8_t> mask(w * h, 0);
  for (int x = 1, bar = 0; x + 2 < w; x += 2, ++bar) {
    for (int y = 7; y <= 11; ++y) mask[y * w + x] = 1;
    mask[(bar % 2 == 0 ? 11 : 7) * w + x + 1] = 1;
  }
  mask[6 * w + 1] = 1;  // the serpentine's start, on line 6
  const std::vector<uint64_t> bits = Pack(mask, w, h);
  std::vector<uint64_t> seeds(bits.size());
  ASSERT_TRUE(CrossingSeeds(bits.data(), w, h, 131, kMaskPasses, seeds.data()));
  EXPECT_EQ(seeds[6 * BitRowWords(w)], 2u);  // (1, 6): row 6 whole
}

}  // namespace
}  // namespace visalign::violin
