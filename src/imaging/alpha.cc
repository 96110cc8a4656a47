#include <algorithm>

#include "imaging/codecs.h"

namespace visalign::imaging {
namespace {

constexpr uint32_t kOpaque8 = 255, kOpaque16 = 65535;

// RGBA samples of one depth (kOpaque = its largest value) to 8-bit RGB through `to8`; returns the
// smallest alpha on the sample's scale. Blending is round((c·a + b·(max − a)) / max): the sum is
// an integer and max is odd, so there are no ties.
template <typename Sample, uint32_t kOpaque, typename To8>
Sample Convert(const Sample* rgba, size_t pixels, const AlphaPolicy& alpha, uint8_t* rgb, To8 to8) {
  constexpr uint32_t kBackgroundScale = kOpaque / kOpaque8;  // 1 or 257
  Sample alpha_min = kOpaque;
  const bool composite = alpha.mode == AlphaPolicy::Mode::kComposite;
  for (size_t i = 0; i < pixels; ++i, rgba += 4, rgb += 3) {
    const uint32_t a = rgba[3];
    alpha_min = std::min<Sample>(alpha_min, static_cast<Sample>(a));
    for (int c = 0; c < 3; ++c) {
      const uint32_t b = alpha.background[c] * kBackgroundScale;
      const uint32_t v =
          composite && a != kOpaque ? (rgba[c] * a + b * (kOpaque - a) + kOpaque / 2) / kOpaque : rgba[c];
      rgb[c] = to8(v);
    }
  }
  return alpha_min;
}

}  // namespace

uint8_t RgbaToRgb(const uint8_t* rgba, size_t pixels, const AlphaPolicy& alpha, uint8_t* rgb) {
  return Convert<uint8_t, kOpaque8>(rgba, pixels, alpha, rgb, [](uint32_t v) { return static_cast<uint8_t>(v); });
}

uint8_t RgbaToRgb(const uint16_t* rgba, size_t pixels, const AlphaPolicy& alpha, uint8_t* rgb) {
  const uint16_t alpha_min = Convert<uint16_t, kOpaque16>(
      rgba, pixels, alpha, rgb, [](uint32_t v) { return Scale16To8(static_cast<uint16_t>(v)); });
  // Never 255 when a pixel is not opaque, though 65534 / 257 rounds to it.
  return alpha_min == kOpaque16 ? kOpaque8 : std::min<uint8_t>(Scale16To8(alpha_min), kOpaque8 - 1);
}

}  // namespace visalign::imaging
