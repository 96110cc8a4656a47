#include "imaging/canny.h"

#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include "imaging/test_planes.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>

namespace visalign::imaging {
namespace {

using testing::Plane;

// The reference: OpenCV's own Canny (single-threaded, as visalign runs it).
std::vector<uint8_t> OpenCvEdges(const GrayImage& g, CannyThresholds t) {
  cv::setNumThreads(1);
  const cv::Mat src(g.height, g.width, CV_8U, const_cast<uint8_t*>(g.pixels.data()));
  cv::Mat edges;
  cv::Canny(src, edges, t.low, t.high, 3, false);
  return std::vector<uint8_t>(edges.datastart, edges.dataend);
}

// Every kernel build this CPU can run: baseline x86-64, and AVX2 when supported.
std::vector<const PixelKernels*> RunnableKernels() {
  std::vector<const PixelKernels*> all = {&BaselinePixelKernels()};
  if (Avx2PixelKernels() != nullptr) all.push_back(Avx2PixelKernels());
  return all;
}

// Expects, from every kernel build, the same edge map as cv::Canny and a count equal to its
// number of edge pixels.
void ExpectSameAsOpenCv(const GrayImage& g, CannyThresholds t, const std::string& what) {
  const std::vector<uint8_t> expected = OpenCvEdges(g, t);
  int64_t expected_count = 0;
  for (uint8_t e : expected) expected_count += e != 0;
  for (const PixelKernels* kernels : RunnableKernels()) {
    std::vector<uint8_t> ours;
    const int64_t count = CannyEdges(g, t, &ours, *kernels);
    ASSERT_EQ(ours.size(), expected.size()) << what;
    int64_t mismatches = 0;
    for (size_t i = 0; i < expected.size(); ++i) mismatches += ours[i] != expected[i];
    EXPECT_EQ(mismatches, 0) << what << " " << g.width << "x" << g.height << " thresholds " << t.low << "/" << t.high
                             << " (" << kernels->name << ")";
    EXPECT_EQ(count, expected_count) << what << " " << g.width << "x" << g.height << " (" << kernels->name << ")";
  }
}

// Widths around the vector widths of both builds (8 and 16 16-bit lanes, 16 and 32 bytes).
const std::vector<std::pair<int, int>> kSizes = {{1, 1},   {1, 9},   {9, 1},   {2, 2},    {3, 17},  {8, 8},
                                                 {15, 16}, {16, 15}, {17, 31}, {31, 33},  {32, 5},  {33, 7},
                                                 {47, 3},  {48, 4},  {64, 64}, {100, 37}, {129, 65}};

TEST(CannyEdges, UniformNoiseMatchesOpenCv) {
  std::mt19937 rng(1);
  for (auto [w, h] : kSizes) {
    const GrayImage g = Plane(w, h, [&](int, int) { return uint8_t(rng()); });
    ExpectSameAsOpenCv(g, {100, 200}, "uniform noise");
  }
}

TEST(CannyEdges, LowContrastNoiseNearTheThresholdsMatchesOpenCv) {
  // Noise amplitudes around the thresholds: many magnitudes equal a neighbour's or a threshold.
  std::mt19937 rng(2);
  for (int amplitude : {13, 25, 26, 30, 50}) {
    for (auto [w, h] : kSizes) {
      const GrayImage g = Plane(w, h, [&](int, int) { return uint8_t(100 + rng() % (amplitude + 1)); });
      ExpectSameAsOpenCv(g, {100, 200}, "noise amplitude " + std::to_string(amplitude));
    }
  }
}

TEST(CannyEdges, FewLevelPlanesFullOfTiesMatchOpenCv) {
  // Three gray levels: equal magnitudes everywhere exercise the > / >= suppression rules.
  std::mt19937 rng(3);
  for (auto [w, h] : kSizes) {
    const GrayImage g = Plane(w, h, [&](int, int) { return uint8_t(rng() % 3 * 60); });
    ExpectSameAsOpenCv(g, {100, 200}, "three levels");
  }
}

TEST(CannyEdges, StripesCheckerboardsAndGradientsMatchOpenCv) {
  for (auto [w, h] : kSizes) {
    for (int period : {1, 2, 3, 4, 5, 8}) {
      ExpectSameAsOpenCv(Plane(w, h, [&](int x, int) { return uint8_t((x / period) % 2 ? 255 : 0); }), {100, 200},
                         "vertical stripes " + std::to_string(period));
      ExpectSameAsOpenCv(Plane(w, h, [&](int, int y) { return uint8_t((y / period) % 2 ? 255 : 0); }), {100, 200},
                         "horizontal stripes " + std::to_string(period));
      ExpectSameAsOpenCv(Plane(w, h, [&](int x, int y) { return uint8_t(((x + y) / period) % 2 ? 200 : 10); }),
                         {100, 200}, "diagonal stripes " + std::to_string(period));
      ExpectSameAsOpenCv(Plane(w, h, [&](int x, int y) { return uint8_t((x / period + y / period) % 2 ? 255 : 0); }),
                         {100, 200}, "checkerboard " + std::to_string(period));
    }
    ExpectSameAsOpenCv(Plane(w, h, [](int x, int y) { return uint8_t((x * 7 + y * 3) % 256); }), {100, 200},
                       "wrapping gradient");
    ExpectSameAsOpenCv(Plane(w, h, [](int x, int y) { return uint8_t(x * x + 3 * y * y); }), {100, 200}, "quadratic");
  }
}

TEST(CannyEdges, RandomShapesAndThresholdsMatchOpenCv) {
  // Filled discs of random gray levels over noise-free backgrounds, random threshold pairs
  // (including low = high and low = 0).
  std::mt19937 rng(4);
  for (int trial = 0; trial < 60; ++trial) {
    const int w = 1 + rng() % 90, h = 1 + rng() % 90;
    const int cx = rng() % w, cy = rng() % h, r = 1 + rng() % 30;
    const uint8_t inside = rng(), outside = rng();
    const GrayImage g = Plane(
        w, h, [&](int x, int y) { return (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r ? inside : outside; });
    const int low = rng() % 400, high = low + rng() % 400;
    ExpectSameAsOpenCv(g, {low, high}, "disc trial " + std::to_string(trial));
    const GrayImage noisy = Plane(w, h, [&](int, int) { return uint8_t(rng() % 64); });
    ExpectSameAsOpenCv(noisy, {low / 4, high / 4}, "noise trial " + std::to_string(trial));
  }
}

TEST(CannyEdges, WeakRingsJoinThroughLongFloodsFromOneStrongCorner) {
  // Concentric square rings of contrast 40 (step magnitude 4 * 40 = 160, between the thresholds)
  // that reach contrast 80 (magnitude 320, strong) only near the bottom-right corner: every ring
  // edge is an edge only through a flood that runs up and left, against the scan order, across
  // many rows and 64-pixel words.
  for (auto [w, h] : std::vector<std::pair<int, int>>{{300, 200}, {67, 130}, {129, 64}}) {
    const GrayImage g = Plane(w, h, [w = w, h = h](int x, int y) {
      const int ring = std::max(std::abs(x - w / 2), std::abs(y - h / 2)) / 6;
      const int contrast = x > w - 12 && y > h - 12 ? 80 : 40;
      return uint8_t(ring % 2 ? contrast : 0);
    });
    ExpectSameAsOpenCv(g, {100, 200}, "weak rings");
    // Most edge pixels were undecided: without hysteresis (low = high) few remain.
    EXPECT_GT(CannyEdges(g, {100, 200}), 4 * CannyEdges(g, {200, 200})) << w << "x" << h;
  }
}

TEST(CannyEdges, TheAvx2BuildIsTestedWhenTheCpuHasIt) {
  EXPECT_EQ(RunnableKernels().size(), __builtin_cpu_supports("avx2") ? 2u : 1u);
}

TEST(CannyEdges, LargeNoisyPlaneMatchesOpenCv) {
  std::mt19937 rng(5);
  const GrayImage g = Plane(1023, 517, [&](int x, int y) { return uint8_t((x + y) / 8 + rng() % 40); });
  ExpectSameAsOpenCv(g, {100, 200}, "large");
  const GrayImage noise = Plane(1024, 256, [&](int, int) { return uint8_t(rng()); });
  ExpectSameAsOpenCv(noise, {100, 200}, "large noise");
}

}  // namespace
}  // namespace visalign::imaging
