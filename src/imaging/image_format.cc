#include <array>
#include <atomic>
#include <cstring>

#include "imaging/codecs.h"

namespace visalign::imaging {
namespace {

struct Signature {
  size_t offset;
  std::string_view magic;
  ImageFormat format;
  const char* name;
};

using namespace std::string_view_literals;
constexpr std::array kSignatures = {
    Signature{0, "\x89PNG\r\n\x1a\n"sv, ImageFormat::kPng, "PNG"},
    Signature{0, "\xFF\xD8\xFF"sv, ImageFormat::kJpeg, "JPEG"},
    Signature{8, "WEBP"sv, ImageFormat::kWebp, "WebP"},  // after "RIFF" and a length, checked below
    Signature{0, "GIF87a"sv, ImageFormat::kOther, "GIF"},
    Signature{0, "GIF89a"sv, ImageFormat::kOther, "GIF"},
    Signature{0, "II*\0"sv, ImageFormat::kOther, "TIFF"},
    Signature{0, "MM\0*"sv, ImageFormat::kOther, "TIFF"},
    Signature{0, "BM"sv, ImageFormat::kOther, "BMP"},
    Signature{0, "%PDF"sv, ImageFormat::kOther, "PDF"},
    Signature{0, "\xFF\x0A"sv, ImageFormat::kOther, "JPEG XL"},
    Signature{0, "\0\0\0\x0CJXL \r\n\x87\n"sv, ImageFormat::kOther, "JPEG XL"},
    Signature{0, "\0\0\0\x0CjP  \r\n\x87\n"sv, ImageFormat::kOther, "JPEG 2000"},  // JP2 file
    Signature{0, "\xFF\x4F\xFF\x51"sv, ImageFormat::kOther, "JPEG 2000"},          // J2K codestream
    Signature{0, "\0\0\1\0"sv, ImageFormat::kOther, "ICO"},
    Signature{0, "8BPS"sv, ImageFormat::kOther, "PSD"},
    Signature{0, "qoif"sv, ImageFormat::kOther, "QOI"},
    Signature{0, "\x76\x2F\x31\x01"sv, ImageFormat::kOther, "OpenEXR"},
    Signature{0, "P6"sv, ImageFormat::kOther, "PPM"},
};

// ISO base media files (HEIF, AVIF): a leading "ftyp" box whose major brand names the family.
const char* IsoMediaName(std::string_view bytes) {
  if (bytes.size() < 12 || bytes.substr(4, 4) != "ftyp") return nullptr;
  const std::string_view brand = bytes.substr(8, 4);
  if (brand == "avif" || brand == "avis") return "AVIF";
  if (brand == "heic" || brand == "heix" || brand == "hevc" || brand == "heim" || brand == "heis" || brand == "mif1" ||
      brand == "msf1")
    return "HEIC/HEIF";
  return "ISO media (MP4/MOV)";
}

// SVG and other XML: text that opens with "<?xml" or "<svg" after optional whitespace or a BOM.
bool LooksLikeSvg(std::string_view bytes) {
  if (bytes.substr(0, 3) == "\xEF\xBB\xBF") bytes.remove_prefix(3);
  while (!bytes.empty() && (bytes[0] == ' ' || bytes[0] == '\t' || bytes[0] == '\r' || bytes[0] == '\n'))
    bytes.remove_prefix(1);
  const std::string_view head = bytes.substr(0, 512);
  return head.substr(0, 4) == "<svg" || (head.substr(0, 5) == "<?xml" && head.find("<svg") != std::string_view::npos);
}

}  // namespace

SniffedFormat SniffImageFormat(std::string_view bytes) {
  for (const Signature& s : kSignatures) {
    if (bytes.size() < s.offset + s.magic.size() || bytes.substr(s.offset, s.magic.size()) != s.magic) continue;
    if (s.format == ImageFormat::kWebp && bytes.substr(0, 4) != "RIFF") continue;
    return {s.format, s.name};
  }
  if (const char* name = IsoMediaName(bytes)) return {ImageFormat::kOther, name};
  if (LooksLikeSvg(bytes)) return {ImageFormat::kOther, "SVG"};
  return {};
}

namespace {
std::atomic<uint64_t> g_max_image_pixels{0};  // 0 = kDefaultMaxImagePixels
}  // namespace

uint64_t MaxImagePixels() {
  const uint64_t n = g_max_image_pixels.load(std::memory_order_relaxed);
  return n > 0 ? n : kDefaultMaxImagePixels;
}

void SetMaxImagePixels(uint64_t pixels) { g_max_image_pixels.store(pixels, std::memory_order_relaxed); }

Status CheckImageSize(uint64_t width, uint64_t height, const std::string& source) {
  if (width == 0 || height == 0)
    return Status::Corrupt("image declares " + std::to_string(width) + "x" + std::to_string(height) + " pixels", source,
                           "a width and height of at least 1");
  const uint64_t limit = MaxImagePixels();
  if (width > limit || height > limit || width * height > limit)
    return Status::Unsupported("image of " + std::to_string(width) + "x" + std::to_string(height) + " pixels", source,
                               "at most " + std::to_string(limit) + " pixels (the image size limit)");
  return Status::Ok();
}

}  // namespace visalign::imaging
