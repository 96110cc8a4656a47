#include "imaging/fft_power.h"

#include <gtest/gtest.h>
#include <opencv2/core.hpp>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>

namespace visalign::imaging {
namespace {

// |X(kx, ky)|^2 of the plane's 2-D DFT by a separable direct DFT in long double, row-major
// by ky: R = DFT of every row, X = DFT of every column of R.
std::vector<long double> DirectPowerSpectrum(const GrayImage& g) {
  using C = std::complex<long double>;
  const int w = g.width, h = g.height;
  auto twiddle = [](long long k, int n) {
    return std::polar(1.0L, -2.0L * std::numbers::pi_v<long double> * static_cast<long double>(k % n) / n);
  };
  std::vector<C> rows(static_cast<size_t>(w) * h);
  for (int y = 0; y < h; ++y)
    for (int kx = 0; kx < w; ++kx) {
      C sum = 0;
      for (int x = 0; x < w; ++x)
        sum += static_cast<long double>(g.pixels[static_cast<size_t>(y) * w + x]) * twiddle(1LL * kx * x, w);
      rows[static_cast<size_t>(y) * w + kx] = sum;
    }
  std::vector<long double> power(static_cast<size_t>(w) * h);
  for (int kx = 0; kx < w; ++kx)
    for (int ky = 0; ky < h; ++ky) {
      C sum = 0;
      for (int y = 0; y < h; ++y) sum += rows[static_cast<size_t>(y) * w + kx] * twiddle(1LL * ky * y, h);
      power[static_cast<size_t>(ky) * w + kx] = std::norm(sum);
    }
  return power;
}

// Bin (kx, ky) counts when min(kx, w - kx) >= the first column of row min(ky, h - ky).
double MaskedPower(const std::vector<long double>& power, int w, int h, const std::vector<int>& first_column) {
  long double high = 0;
  for (int ky = 0; ky < h; ++ky)
    for (int kx = 0; kx < w; ++kx)
      if (std::min(kx, w - kx) >= first_column[std::min(ky, h - ky)]) high += power[static_cast<size_t>(ky) * w + kx];
  return static_cast<double>(high);
}

// |X(kx, ky)|^2 by OpenCV's own 2-D DFT (an independent implementation, accurate to ~1e-15
// relative), for sizes too large for the direct DFT.
std::vector<long double> OpenCvPowerSpectrum(const GrayImage& g) {
  cv::Mat plane(g.height, g.width, CV_64F), spectrum;
  for (int y = 0; y < g.height; ++y)
    for (int x = 0; x < g.width; ++x) plane.at<double>(y, x) = g.pixels[static_cast<size_t>(y) * g.width + x];
  cv::dft(plane, spectrum, cv::DFT_COMPLEX_OUTPUT);
  std::vector<long double> power(static_cast<size_t>(g.width) * g.height);
  for (int y = 0; y < g.height; ++y)
    for (int x = 0; x < g.width; ++x) {
      const cv::Vec2d bin = spectrum.at<cv::Vec2d>(y, x);
      power[static_cast<size_t>(y) * g.width + x] =
          static_cast<long double>(bin[0]) * bin[0] + static_cast<long double>(bin[1]) * bin[1];
    }
  return power;
}

GrayImage RandomPlane(int w, int h, std::mt19937& rng, int levels) {
  GrayImage g{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h)};
  for (uint8_t& v : g.pixels) v = static_cast<uint8_t>(rng() % levels);
  return g;
}

// A smooth plane (a gentle diagonal ramp): almost all power at low frequencies, so the high
// power is tiny next to the total and any cancellation would show.
GrayImage RampPlane(int w, int h) {
  GrayImage g{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h)};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      g.pixels[static_cast<size_t>(y) * w + x] = static_cast<uint8_t>((x + y) * 255 / (w + h));
  return g;
}

// The hf mask for a w x h plane: numpy's r > 0.25 per row.
std::vector<int> HfMask(int w, int h) {
  std::vector<int> first_column(h / 2 + 1);
  for (int ky = 0; ky <= h / 2; ++ky) {
    int kx = 0;
    const double fy = ky * (1.0 / h);
    while (kx <= w / 2 && std::sqrt(kx * (1.0 / w) * (kx * (1.0 / w)) + fy * fy) <= 0.25) ++kx;
    first_column[ky] = kx;
  }
  return first_column;
}

// Every kernel build this CPU can run.
std::vector<const FftKernels*> RunnableKernels() {
  std::vector<const FftKernels*> kernels = {&BaselineFftKernels()};
  if (Avx2FftKernels() != nullptr) kernels.push_back(Avx2FftKernels());
  return kernels;
}

TEST(IsRadix2Size, AcceptsPowersOfTwoFromEight) {
  EXPECT_TRUE(IsRadix2Size(8, 8));
  EXPECT_TRUE(IsRadix2Size(1024, 16));
  EXPECT_FALSE(IsRadix2Size(4, 8));
  EXPECT_FALSE(IsRadix2Size(12, 8));
  EXPECT_FALSE(IsRadix2Size(768, 1024));
}

TEST(HighPowerRadix2, MatchesADirectDftForEveryMaskShape) {
  // Masks from "every bin" (first column 0 everywhere) to "nothing" (w/2 + 1), with rows counted
  // whole from a random split on, on noise and on smooth, low-contrast planes; odd and even log2
  // sizes on both axes, square and not.
  std::mt19937 rng(9);
  for (auto [w, h] : {std::pair{8, 8}, {16, 8}, {8, 32}, {32, 32}, {64, 16}, {16, 128}, {128, 8}, {32, 64}}) {
    for (int levels : {256, 3}) {
      const GrayImage g = RandomPlane(w, h, rng, levels);
      const std::vector<long double> power = DirectPowerSpectrum(g);
      for (int split = 0; split <= h / 2 + 1; split += std::max(1, h / 16)) {
        std::vector<int> first_column(h / 2 + 1, 0);
        for (int ky = 0; ky < split; ++ky) first_column[ky] = static_cast<int>(rng() % (w / 2 + 2));
        const double expected = MaskedPower(power, w, h, first_column);
        for (const FftKernels* kernels : RunnableKernels())
          EXPECT_NEAR(HighPowerRadix2(g, first_column, *kernels), expected, 1e-12 * expected)
              << kernels->name << " " << w << "x" << h << " levels " << levels << " split " << split;
      }
    }
  }
}

TEST(HighPowerRadix2, MatchesOpenCvsDftOnLargePlanesWithTheHfMask) {
  // Sizes up to 2048 on one axis, noise and a smooth ramp (high power ~1e-5 of the total).
  std::mt19937 rng(5);
  for (auto [w, h] : {std::pair{256, 256}, {512, 128}, {64, 1024}, {2048, 16}, {16, 2048}, {1024, 512}}) {
    for (const GrayImage& g : {RandomPlane(w, h, rng, 256), RampPlane(w, h)}) {
      const std::vector<int> mask = HfMask(w, h);
      const double expected = MaskedPower(OpenCvPowerSpectrum(g), w, h, mask);
      for (const FftKernels* kernels : RunnableKernels())
        EXPECT_NEAR(HighPowerRadix2(g, mask, *kernels), expected, 1e-12 * expected)
            << kernels->name << " " << w << "x" << h;
    }
  }
}

TEST(HighPowerRadix2, BaselineAndAvx2BuildsAgree) {
  if (Avx2FftKernels() == nullptr) GTEST_SKIP() << "CPU without AVX2+FMA";
  std::mt19937 rng(3);
  for (int size = 8; size <= 2048; size *= 2) {
    const GrayImage g = RandomPlane(size, size, rng, 256);
    const std::vector<int> mask = HfMask(size, size);
    const double baseline = HighPowerRadix2(g, mask, BaselineFftKernels());
    EXPECT_NEAR(HighPowerRadix2(g, mask, *Avx2FftKernels()), baseline, 1e-13 * baseline) << size;
  }
}

}  // namespace
}  // namespace visalign::imaging
