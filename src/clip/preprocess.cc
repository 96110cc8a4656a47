#include "clip/preprocess.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

namespace visalign::clip {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // Pillow's fixed-point precision for 8-bit images
constexpr double kBicubicA = -0.5;
constexpr double kBicubicSupport = 2.0;
constexpr double kBilinearSupport = 1.0;
constexpr int kChannels = 3;

double Bicubic(double x) {
  x = std::abs(x);
  if (x < 1.0) return ((kBicubicA + 2.0) * x - (kBicubicA + 3.0)) * x * x + 1.0;
  if (x < 2.0) return (((x - 5.0) * x + 8.0) * x - 4.0) * kBicubicA;
  return 0.0;
}

double Bilinear(double x) {
  x = std::abs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// For each output position: the first input index, the number of taps, and fixed-point weights.
struct Coefficients {
  int taps_max = 0;
  std::vector<int> first;
  std::vector<int> count;
  std::vector<int32_t> weights;  // out_size * taps_max
};

Coefficients Precompute(int in_size, int out_size, Interpolation interpolation) {
  const bool cubic = interpolation == Interpolation::kBicubic;
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);  // widen the kernel when downscaling (antialias)
  const double support = (cubic ? kBicubicSupport : kBilinearSupport) * filter_scale;
  Coefficients c;
  c.taps_max = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.first.resize(static_cast<size_t>(out_size));
  c.count.resize(static_cast<size_t>(out_size));
  c.weights.assign(static_cast<size_t>(out_size) * c.taps_max, 0);
  std::vector<double> w(static_cast<size_t>(c.taps_max));
  for (int o = 0; o < out_size; ++o) {
    const double center = (o + 0.5) * scale;
    const int lo = std::max(static_cast<int>(center - support + 0.5), 0);
    const int hi = std::min(static_cast<int>(center + support + 0.5), in_size);
    const int n = hi - lo;
    double total = 0.0;
    for (int k = 0; k < n; ++k) {
      const double x = (k + lo - center + 0.5) / filter_scale;
      w[static_cast<size_t>(k)] = cubic ? Bicubic(x) : Bilinear(x);
      total += w[static_cast<size_t>(k)];
    }
    for (int k = 0; k < n; ++k) {
      double v = w[static_cast<size_t>(k)];
      if (total != 0.0) v /= total;
      const double fixed = v * (1 << kPrecisionBits);
      // Round half away from zero, then truncate: as Pillow's normalize_coeffs_8bpc.
      c.weights[static_cast<size_t>(o) * c.taps_max + k] = static_cast<int32_t>(v < 0 ? fixed - 0.5 : fixed + 0.5);
    }
    c.first[static_cast<size_t>(o)] = lo;
    c.count[static_cast<size_t>(o)] = n;
  }
  return c;
}

uint8_t Clip8(int64_t acc) {
  const int64_t v = acc >> kPrecisionBits;  // arithmetic shift: floor division
  return static_cast<uint8_t>(std::clamp<int64_t>(v, 0, 255));
}

// One separable pass along x (horizontal) or y (vertical).
imaging::Image ResamplePass(const imaging::Image& in, int out_size, bool horizontal, Interpolation interpolation) {
  const int in_size = horizontal ? in.width : in.height;
  const Coefficients c = Precompute(in_size, out_size, interpolation);
  imaging::Image out(horizontal ? out_size : in.width, horizontal ? in.height : out_size);
  constexpr int64_t kHalf = int64_t{1} << (kPrecisionBits - 1);
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      const int o = horizontal ? x : y;
      const int32_t* k = &c.weights[static_cast<size_t>(o) * c.taps_max];
      int64_t acc[kChannels] = {kHalf, kHalf, kHalf};
      for (int t = 0; t < c.count[static_cast<size_t>(o)]; ++t) {
        const int src = c.first[static_cast<size_t>(o)] + t;
        const uint8_t* p = horizontal ? in.pixel(src, y) : in.pixel(x, src);
        for (int ch = 0; ch < kChannels; ++ch) acc[ch] += static_cast<int64_t>(p[ch]) * k[t];
      }
      uint8_t* q = out.pixel(x, y);
      for (int ch = 0; ch < kChannels; ++ch) q[ch] = Clip8(acc[ch]);
    }
  }
  return out;
}

}  // namespace

imaging::Image PilResize(const imaging::Image& in, int width, int height, Interpolation interpolation) {
  imaging::Image out = in;
  if (width != in.width) out = ResamplePass(out, width, /*horizontal=*/true, interpolation);
  if (height != in.height) out = ResamplePass(out, height, /*horizontal=*/false, interpolation);
  return out;
}

Result<Matrix> PreprocessOne(const imaging::Image& image, const PreprocessConfig& config) {
  const int size = config.image_size;
  if (image.width <= 0 || image.height <= 0 ||
      image.rgb.size() != static_cast<size_t>(image.width) * image.height * kChannels) {
    return Status::InvalidArgument(
        fmt::format("image of {}x{} pixels with {} bytes", image.width, image.height, image.rgb.size()),
        "PreprocessImages", "a non-empty RGB8 image");
  }
  int w = size;
  int h = size;
  if (config.resize_mode == ResizeMode::kShortest) {
    // torchvision Resize(size): shorter side -> size, longer side -> int(size * long / short).
    const int short_side = std::min(image.width, image.height);
    const int long_side = std::max(image.width, image.height);
    const int new_long = static_cast<int>(static_cast<double>(static_cast<int64_t>(size) * long_side) / short_side);
    w = image.width <= image.height ? size : new_long;
    h = image.width <= image.height ? new_long : size;
  }
  const imaging::Image resized =
      (w == image.width && h == image.height) ? image : PilResize(image, w, h, config.interpolation);
  // CenterCrop: offsets int(round((dim - size) / 2)) with round half to even (nearbyint's default mode).
  const int top = static_cast<int>(std::nearbyint((resized.height - size) / 2.0));
  const int left = static_cast<int>(std::nearbyint((resized.width - size) / 2.0));
  Matrix out(1, kChannels * size * size);
  for (int ch = 0; ch < kChannels; ++ch) {
    const float mean = config.mean[static_cast<size_t>(ch)];
    const float std = config.std[static_cast<size_t>(ch)];
    float* plane = out.row(0) + static_cast<size_t>(ch) * size * size;
    for (int y = 0; y < size; ++y) {
      for (int x = 0; x < size; ++x) {
        const float v = static_cast<float>(resized.pixel(left + x, top + y)[ch]) / 255.0f;
        plane[static_cast<size_t>(y) * size + x] = (v - mean) / std;
      }
    }
  }
  return out;
}

Result<Matrix> PreprocessImages(const std::vector<imaging::Image>& images, const PreprocessConfig& config) {
  Matrix out(static_cast<int>(images.size()), kChannels * config.image_size * config.image_size);
  for (size_t i = 0; i < images.size(); ++i) {
    Result<Matrix> one = PreprocessOne(images[i], config);
    if (!one.ok()) return one.status().WithContext("image " + std::to_string(i + 1));
    std::copy(one->data.begin(), one->data.end(), out.row(static_cast<int>(i)));
  }
  return out;
}

}  // namespace visalign::clip
