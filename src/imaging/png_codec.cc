// PNG through libspng: every PNG the fast path (png_decode.h) does not take — gray, palette,
// 16-bit, interlaced, irregular chunk layouts — and damaged files, with libspng's reason; and the
// encoder. No gamma or other colour transformation is applied (as libpng and OpenCV do by default).
#include <spng.h>

#include <cstring>
#include <memory>
#include <vector>

#include "imaging/codecs.h"
#include "imaging/png_decode.h"

namespace visalign::imaging {
namespace {

constexpr size_t kMaxChunkBytes = size_t{64} << 20;  // ancillary chunks (text, ICC) kept in memory
constexpr uint8_t kBitDepth16 = 16;
constexpr int kRgbaChannels = 4;

struct SpngFree {
  void operator()(spng_ctx* ctx) const { spng_ctx_free(ctx); }
};
using SpngContext = std::unique_ptr<spng_ctx, SpngFree>;

// The bytes the image data inflates to without interlacing (interlaced data is a little longer):
// per row a filter byte and width samples of bit_depth bits for each channel.
uint64_t InflatedSizeAtLeast(const spng_ihdr& ihdr) {
  int channels = 1;  // grayscale, palette
  if (ihdr.color_type == SPNG_COLOR_TYPE_TRUECOLOR) channels = 3;
  if (ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA) channels = 2;
  if (ihdr.color_type == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA) channels = kRgbaChannels;
  const uint64_t row_bits = uint64_t{ihdr.width} * channels * ihdr.bit_depth;
  return uint64_t{ihdr.height} * ((row_bits + 7) / 8 + 1);
}

Status SpngError(int code, const char* step, const std::string& source) {
  return Status::Corrupt(std::string("cannot decode PNG: ") + spng_strerror(code) + " (" + step + ")", source,
                         "a complete, undamaged PNG file");
}

// The chunks after the image data up to IEND, with their CRCs: a file cut or damaged after the
// last row is still an error (as libpng's png_read_end makes it), not a silently accepted image.
Status ReadToEnd(spng_ctx* ctx, const std::string& source) {
  if (int e = spng_decode_chunks(ctx)) return SpngError(e, "after the image data", source);
  return Status::Ok();
}

// libspng does not check chunk types: a file with a type that is not four letters (a damaged or
// forged chunk) is refused here, as libpng refuses it. Truncation is left to libspng to report.
Status CheckChunkTypes(std::string_view bytes, const std::string& source) {
  constexpr size_t kSignatureSize = 8, kFramingSize = 12;  // length, type, CRC
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  for (size_t pos = kSignatureSize; pos + kFramingSize <= bytes.size();) {
    const uint8_t* type = data + pos + 4;
    if (!IsPngChunkType(type))
      return Status::Corrupt("cannot decode PNG: chunk type is not four letters (at byte " + std::to_string(pos) + ")",
                             source, "a complete, undamaged PNG file");
    if (std::memcmp(type, "IEND", 4) == 0) break;
    const uint64_t length =
        (uint64_t{data[pos]} << 24) | (uint64_t{data[pos + 1]} << 16) | (uint64_t{data[pos + 2]} << 8) | data[pos + 3];
    if (length > bytes.size() - pos - kFramingSize) break;
    pos += kFramingSize + length;
  }
  return Status::Ok();
}

}  // namespace

Result<Image> DecodePng(std::string_view bytes, const std::string& source, const AlphaPolicy& alpha) {
  SpngContext ctx(spng_ctx_new(0));
  if (!ctx) return Status::Internal("libspng: out of memory");
  // Critical chunks with a bad CRC are errors; ancillary ones are dropped (libpng's default).
  spng_set_crc_action(ctx.get(), SPNG_CRC_ERROR, SPNG_CRC_DISCARD);
  spng_set_chunk_limits(ctx.get(), kMaxChunkBytes, kMaxChunkBytes);
  if (int e = spng_set_png_buffer(ctx.get(), bytes.data(), bytes.size())) return SpngError(e, "buffer", source);
  VISALIGN_RETURN_IF_ERROR(CheckChunkTypes(bytes, source));
  spng_ihdr ihdr{};
  if (int e = spng_get_ihdr(ctx.get(), &ihdr)) return SpngError(e, "header", source);
  VISALIGN_RETURN_IF_ERROR(CheckImageSize(ihdr.width, ihdr.height, source));
  // The whole file bounds the compressed data: a header claiming more than it can inflate to is
  // refused before libspng allocates rows for it.
  if (!CanInflateTo(bytes.size(), InflatedSizeAtLeast(ihdr))) {
    return Status::Corrupt("image data too short for " + std::to_string(ihdr.width) + "x" +
                               std::to_string(ihdr.height) + " pixels (" + std::to_string(bytes.size()) + " bytes)",
                           source, "a complete, undamaged PNG file");
  }
  const int w = static_cast<int>(ihdr.width), h = static_cast<int>(ihdr.height);
  const size_t pixels = static_cast<size_t>(w) * h;
  spng_trns trns{};
  const bool has_alpha = ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA ||
                         ihdr.color_type == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA || spng_get_trns(ctx.get(), &trns) == 0;
  Image image = Image::ForOverwrite(w, h);
  if (ihdr.bit_depth != kBitDepth16 && !has_alpha) {
    if (int e = spng_decode_image(ctx.get(), image.rgb.data(), image.rgb.size(), SPNG_FMT_RGB8, 0))
      return SpngError(e, "image data", source);
    VISALIGN_RETURN_IF_ERROR(ReadToEnd(ctx.get(), source));
    return image;
  }
  if (ihdr.bit_depth != kBitDepth16) {
    std::vector<uint8_t> rgba(pixels * kRgbaChannels);
    if (int e = spng_decode_image(ctx.get(), rgba.data(), rgba.size(), SPNG_FMT_RGBA8, SPNG_DECODE_TRNS))
      return SpngError(e, "image data", source);
    VISALIGN_RETURN_IF_ERROR(ReadToEnd(ctx.get(), source));
    image.alpha_min = RgbaToRgb(rgba.data(), pixels, alpha, image.rgb.data());
    return image;
  }
  std::vector<uint16_t> wide(pixels * kRgbaChannels);
  if (int e =
          spng_decode_image(ctx.get(), wide.data(), wide.size() * sizeof(uint16_t), SPNG_FMT_RGBA16, SPNG_DECODE_TRNS))
    return SpngError(e, "image data", source);
  VISALIGN_RETURN_IF_ERROR(ReadToEnd(ctx.get(), source));
  image.alpha_min = RgbaToRgb(wide.data(), pixels, alpha, image.rgb.data());
  return image;
}

Result<std::string> EncodePng(const Image& image, int compression) {
  if (image.width <= 0 || image.height <= 0 || image.rgb.size() != static_cast<size_t>(image.width) * image.height * 3)
    return Status::InvalidArgument("image buffer does not match its size", "EncodePng", "width*height*3 bytes");
  SpngContext ctx(spng_ctx_new(SPNG_CTX_ENCODER));
  if (!ctx) return Status::Internal("libspng: out of memory");
  spng_set_option(ctx.get(), SPNG_ENCODE_TO_BUFFER, 1);
  spng_set_option(ctx.get(), SPNG_IMG_COMPRESSION_LEVEL, compression);
  spng_ihdr ihdr{};
  ihdr.width = static_cast<uint32_t>(image.width);
  ihdr.height = static_cast<uint32_t>(image.height);
  ihdr.bit_depth = 8;
  ihdr.color_type = SPNG_COLOR_TYPE_TRUECOLOR;
  spng_set_ihdr(ctx.get(), &ihdr);
  if (int e = spng_encode_image(ctx.get(), image.rgb.data(), image.rgb.size(), SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE))
    return Status::Internal(std::string("PNG encoding failed: ") + spng_strerror(e));
  size_t size = 0;
  int error = 0;
  std::unique_ptr<void, decltype(&free)> buffer(spng_get_png_buffer(ctx.get(), &size, &error), &free);
  if (!buffer) return Status::Internal(std::string("PNG encoding failed: ") + spng_strerror(error));
  return std::string(static_cast<const char*>(buffer.get()), size);
}

}  // namespace visalign::imaging
