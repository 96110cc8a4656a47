#include "imaging/fft_power.h"

#include <gtest/gtest.h>

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

// Bin (kx, ky) counts when min(ky, h - ky) >= the first row of column min(kx, w - kx).
double MaskedPower(const std::vector<long double>& power, int w, int h, const std::vector<int>& first_row) {
  long double high = 0;
  for (int ky = 0; ky < h; ++ky)
    for (int kx = 0; kx < w; ++kx)
      if (std::min(ky, h - ky) >= first_row[std::min(kx, w - kx)]) high += power[static_cast<size_t>(ky) * w + kx];
  return static_cast<double>(high);
}

GrayImage RandomPlane(int w, int h, std::mt19937& rng, int levels) {
  GrayImage g{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h)};
  for (uint8_t& v : g.pixels) v = static_cast<uint8_t>(rng() % levels);
  return g;
}

TEST(IsRadix2Size, AcceptsPowersOfTwoFromEight) {
  EXPECT_TRUE(IsRadix2Size(8, 8));
  EXPECT_TRUE(IsRadix2Size(1024, 16));
  EXPECT_FALSE(IsRadix2Size(4, 8));
  EXPECT_FALSE(IsRadix2Size(12, 8));
  EXPECT_FALSE(IsRadix2Size(768, 1024));
}

TEST(HighPowerRadix2, MatchesADirectDftForEveryMaskShape) {
  // Masks from "everything high" (first row 0 everywhere but DC's column) to nothing but the
  // Nyquist rows, on noise and on smooth, low-contrast planes.
  std::mt19937 rng(9);
  for (auto [w, h] : {std::pair{8, 8}, {16, 8}, {8, 32}, {32, 32}, {64, 16}, {16, 128}}) {
    for (int levels : {256, 3}) {
      const GrayImage g = RandomPlane(w, h, rng, levels);
      const std::vector<long double> power = DirectPowerSpectrum(g);
      for (int cut = 1; cut <= w / 2 + 1; cut += std::max(1, w / 8)) {
        std::vector<int> first_row(w / 2 + 1, 0);
        for (int kx = 0; kx < std::min(cut, w / 2 + 1); ++kx) first_row[kx] = 1 + static_cast<int>(rng() % (h / 2));
        const double expected = MaskedPower(power, w, h, first_row);
        EXPECT_NEAR(HighPowerRadix2(g, first_row), expected, 1e-12 * expected)
            << w << "x" << h << " levels " << levels << " cut " << cut;
      }
    }
  }
}

}  // namespace
}  // namespace visalign::imaging
