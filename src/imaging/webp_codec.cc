// WebP through libwebp: lossy and lossless still images; alpha is dropped like every other
// format's. Animated WebP is refused (which frame would be "the image"?).
#include <webp/decode.h>

#include <vector>

#include "imaging/codecs.h"

namespace visalign::imaging {

Result<Image> DecodeWebp(std::string_view bytes, const std::string& source, const AlphaPolicy& alpha) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  WebPBitstreamFeatures features;
  if (const VP8StatusCode code = WebPGetFeatures(data, bytes.size(), &features); code != VP8_STATUS_OK)
    return Status::Corrupt("cannot decode WebP header (libwebp status " + std::to_string(code) + ")", source,
                           "a complete, undamaged WebP file");
  if (features.has_animation) return Status::Unsupported("animated WebP", source, "a still PNG, JPEG or WebP image");
  VISALIGN_RETURN_IF_ERROR(
      CheckImageSize(static_cast<uint64_t>(features.width), static_cast<uint64_t>(features.height), source));
  Image image = Image::ForOverwrite(features.width, features.height);
  const Status damaged = Status::Corrupt("cannot decode WebP image data (truncated or damaged)", source,
                                         "a complete, undamaged WebP file");
  if (!features.has_alpha) {
    if (!WebPDecodeRGBInto(data, bytes.size(), image.rgb.data(), image.rgb.size(), features.width * 3)) return damaged;
    return image;
  }
  const size_t pixels = static_cast<size_t>(features.width) * features.height;
  std::vector<uint8_t> rgba(pixels * 4);
  if (!WebPDecodeRGBAInto(data, bytes.size(), rgba.data(), rgba.size(), features.width * 4)) return damaged;
  image.alpha_min = RgbaToRgb(rgba.data(), pixels, alpha, image.rgb.data());
  return image;
}

}  // namespace visalign::imaging
