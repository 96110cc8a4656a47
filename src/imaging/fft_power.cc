#include "imaging/fft_power.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>

namespace visalign::imaging {
namespace {

// One 64-byte aligned FFT element (std::vector honours the alignment).
struct alignas(64) Element {
  double v[kFftElementDoubles];
};

// The tables FftTable points to, for one power-of-two n.
struct FftTableStorage {
  int n = 0;
  std::vector<double> twiddles, mirror_distance;
  std::vector<uint32_t> reverse;

  FftTable Prepare(int size) {
    if (n != size) Build(size);
    return {n, twiddles.data(), reverse.data(), mirror_distance.data()};
  }

  void Build(int size) {
    n = size;
    twiddles.clear();
    for (int q = n / 4; q >= 1; q /= 4)
      for (int j = 0; j < q; ++j)
        for (int m = 1; m <= 3; ++m) {
          const double angle = -2.0 * std::numbers::pi * (m * j) / (4.0 * q);
          twiddles.push_back(std::cos(angle));
          twiddles.push_back(std::sin(angle));
        }
    const int bits = std::countr_zero(static_cast<unsigned>(n));
    reverse.assign(n, 0);
    mirror_distance.resize(n);
    for (int k = 0; k < n; ++k) {
      for (int b = 0; b < bits; ++b) reverse[k] |= ((static_cast<uint32_t>(k) >> b) & 1u) << (bits - 1 - b);
      mirror_distance[reverse[k]] = std::min(k, n - k);
    }
  }
};

}  // namespace

bool IsRadix2Size(int width, int height) {
  return width >= kMinRadix2Side && height >= kMinRadix2Side && std::has_single_bit(static_cast<unsigned>(width)) &&
         std::has_single_bit(static_cast<unsigned>(height));
}

double HighPowerRadix2(const GrayImage& gray, const std::vector<int>& first_column, const FftKernels& kernels) {
  thread_local FftTableStorage along_x, along_y;
  thread_local std::vector<Element> work, staged;
  thread_local std::vector<uint8_t> strip;
  HighPowerJob job;
  job.pixels = gray.pixels.data();
  job.along_x = along_x.Prepare(gray.width);
  job.along_y = along_y.Prepare(gray.height);
  job.first_column = first_column.data();
  job.split_row = gray.height / 2 + 1;
  while (job.split_row > 0 && first_column[job.split_row - 1] == 0) --job.split_row;
  strip.resize(static_cast<size_t>(gray.height) * kFftStripBytes);
  work.resize(gray.height);
  job.staged_stride = gray.width + kFftStagedPadElements;
  staged.resize(static_cast<size_t>((job.split_row + 3) / 4) * job.staged_stride);
  job.strip = strip.data();
  job.work = reinterpret_cast<double*>(work.data());
  job.staged = reinterpret_cast<double*>(staged.data());
  return kernels.high_power(job);
}

}  // namespace visalign::imaging
