#include <algorithm>

#include "imaging/codecs.h"

namespace visalign::imaging {
namespace {

constexpr uint32_t kOpaque8 = 255, kOpaque16 = 65535, kScale8To16 = 257;

// round((c·a + b·(max − a)) / max): the sum is an integer and max is odd, so there are no ties.
uint32_t Blend(uint32_t c, uint32_t a, uint32_t b, uint32_t max) { return (c * a + b * (max - a) + max / 2) / max; }

}  // namespace

uint8_t RgbaToRgb(const uint8_t* rgba, size_t pixels, const AlphaPolicy& alpha, uint8_t* rgb) {
  uint8_t alpha_min = kOpaque8;
  const bool composite = alpha.mode == AlphaPolicy::Mode::kComposite;
  for (size_t i = 0; i < pixels; ++i, rgba += 4, rgb += 3) {
    const uint8_t a = rgba[3];
    alpha_min = std::min(alpha_min, a);
    for (int c = 0; c < 3; ++c)
      rgb[c] = composite && a != kOpaque8 ? static_cast<uint8_t>(Blend(rgba[c], a, alpha.background[c], kOpaque8))
                                          : rgba[c];
  }
  return alpha_min;
}

uint8_t RgbaToRgb(const uint16_t* rgba, size_t pixels, const AlphaPolicy& alpha, uint8_t* rgb) {
  uint16_t alpha_min = kOpaque16;
  const bool composite = alpha.mode == AlphaPolicy::Mode::kComposite;
  for (size_t i = 0; i < pixels; ++i, rgba += 4, rgb += 3) {
    const uint16_t a = rgba[3];
    alpha_min = std::min(alpha_min, a);
    for (int c = 0; c < 3; ++c) {
      const uint32_t v =
          composite && a != kOpaque16 ? Blend(rgba[c], a, alpha.background[c] * kScale8To16, kOpaque16) : rgba[c];
      rgb[c] = Scale16To8(static_cast<uint16_t>(v));
    }
  }
  // Never 255 when a pixel is not opaque, though 65534 / 257 rounds to it.
  return alpha_min == kOpaque16 ? kOpaque8 : std::min<uint8_t>(Scale16To8(alpha_min), kOpaque8 - 1);
}

}  // namespace visalign::imaging
