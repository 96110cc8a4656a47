// The image formats visalign reads, and one decoder per format (internal to the imaging module).
// The formats are those image APIs return: PNG (the fast path in png_decode.h, else libspng),
// JPEG (libjpeg-turbo) and WebP (libwebp). Anything else is recognised by its signature where
// possible (GIF, TIFF, BMP, HEIC, AVIF, JPEG XL, SVG, PDF, ...) and refused naming the format.
// Every decoder reads the declared size first and refuses more than MaxImagePixels() before it
// allocates (PNG also a declared size its compressed data cannot hold); damaged or truncated data is kCorrupt with the
// decoder library's reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "visalign/imaging/image.h"

namespace visalign::imaging {

enum class ImageFormat { kPng, kJpeg, kWebp, kOther };

struct SniffedFormat {
  ImageFormat format = ImageFormat::kOther;
  std::string name;  // "PNG", "TIFF", ...; empty when the signature is not one we know
};

// The format of `bytes` from its leading signature.
SniffedFormat SniffImageFormat(std::string_view bytes);

// Ok, or kUnsupported naming the size and the limit (MaxImagePixels()).
Status CheckImageSize(uint64_t width, uint64_t height, const std::string& source);

// DEFLATE expands at most 1032:1 (a 258-byte match per 2 bits), plus a few bytes of stream framing.
inline constexpr uint64_t kMaxDeflateRatio = 1032;
inline constexpr uint64_t kDeflateFramingBytes = 64;
// Whether `compressed` bytes of zlib data can possibly inflate to `inflated` bytes.
inline bool CanInflateTo(uint64_t compressed, uint64_t inflated) {
  return inflated / kMaxDeflateRatio <= compressed + kDeflateFramingBytes;
}

Result<Image> DecodePng(std::string_view bytes, const std::string& source, const AlphaPolicy& alpha);
Result<Image> DecodeJpeg(std::string_view bytes, const std::string& source);  // baseline/progressive, CMYK
Result<Image> DecodeWebp(std::string_view bytes, const std::string& source, const AlphaPolicy& alpha);

// 16-bit samples to 8 bits, round(v / 257) (exact: 257 is odd, so there are no ties).
inline uint8_t Scale16To8(uint16_t v) { return static_cast<uint8_t>((v + 128u) / 257u); }

// `pixels` RGBA pixels (8 or 16 bits per sample, host order) to RGB under `alpha`; returns the
// smallest alpha on the 8-bit scale (below 255 whenever a pixel is not opaque).
uint8_t RgbaToRgb(const uint8_t* rgba, size_t pixels, const AlphaPolicy& alpha, uint8_t* rgb);
uint8_t RgbaToRgb(const uint16_t* rgba, size_t pixels, const AlphaPolicy& alpha, uint8_t* rgb);

}  // namespace visalign::imaging
