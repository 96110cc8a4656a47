#include <algorithm>
#include <array>
#include <cctype>

#include "imaging/codecs.h"
#include "imaging/png_decode.h"
#include "visalign/core/io.h"
#include "visalign/imaging/image.h"

namespace visalign::imaging {
namespace {

constexpr char kSupported[] = "a PNG, JPEG or WebP image";
constexpr size_t kShownBytes = 8;

// The first bytes of an unrecognised file, escaped, so the error shows what it is (HTML, JSON...).
std::string Leading(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes.substr(0, kShownBytes)) {
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

// Everything the fast PNG path does not take, by the file's signature.
Result<Image> DecodeBySignature(std::string_view bytes, const std::string& source, const AlphaPolicy& alpha) {
  const SniffedFormat sniffed = SniffImageFormat(bytes);
  switch (sniffed.format) {
    case ImageFormat::kPng:
      return DecodePng(bytes, source, alpha);
    case ImageFormat::kJpeg:
      return DecodeJpeg(bytes, source);
    case ImageFormat::kWebp:
      return DecodeWebp(bytes, source, alpha);
    case ImageFormat::kOther:
      break;
  }
  if (!sniffed.name.empty()) return Status::Unsupported("unsupported image format " + sniffed.name, source, kSupported);
  return Status::Corrupt(
      "cannot decode image", source,
      std::string(kSupported) + "; this file starts with \"" + Leading(bytes) + "\", the signature of none of them");
}

Status NotEmpty(std::string_view bytes, const std::string& source) {
  return bytes.empty() ? Status::Corrupt("empty image file", source, kSupported) : Status::Ok();
}

}  // namespace

Result<Image> DecodeImage(std::string_view bytes, const std::string& source, const AlphaPolicy& alpha) {
  VISALIGN_RETURN_IF_ERROR(NotEmpty(bytes, source));
  if (Image image; DecodePngFast(bytes, image, alpha) == PngFastDecode::kDecoded) return image;
  return DecodeBySignature(bytes, source, alpha);
}

int ImageFileExtensionRank(std::string_view extension) {
  static constexpr std::array<std::string_view, 4> kExtensions = {"png", "jpg", "jpeg", "webp"};
  if (!extension.empty() && extension.front() == '.') extension.remove_prefix(1);
  for (size_t i = 0; i < kExtensions.size(); ++i) {
    const std::string_view want = kExtensions[i];
    if (extension.size() == want.size() && std::equal(want.begin(), want.end(), extension.begin(), [](char w, char c) {
          return w == std::tolower(static_cast<unsigned char>(c));
        }))
      return static_cast<int>(i);
  }
  return -1;
}

Result<Image> ReadImage(const std::filesystem::path& path, const AlphaPolicy& alpha) {
  // One read buffer per thread, reused across files (see ReadFileInto) and consumed by the fast
  // PNG path; one far larger than images usually are is not kept.
  constexpr size_t kKeptBufferBytes = size_t{64} << 20;
  thread_local std::string bytes;
  const std::string source = path.string();
  VISALIGN_RETURN_IF_ERROR(ReadFileInto(path, bytes));
  VISALIGN_RETURN_IF_ERROR(NotEmpty(bytes, source));
  Image image;
  bool overwritten = false;
  Result<Image> result = [&]() -> Result<Image> {
    if (DecodePngFastInPlace(bytes, image, overwritten, alpha) == PngFastDecode::kDecoded) return std::move(image);
    if (overwritten) VISALIGN_RETURN_IF_ERROR(ReadFileInto(path, bytes));
    return DecodeBySignature(bytes, source, alpha);
  }();
  if (bytes.capacity() > kKeptBufferBytes) std::string().swap(bytes);
  return result;
}

Status WritePng(const std::filesystem::path& path, const Image& image, int compression) {
  VISALIGN_ASSIGN_OR_RETURN(std::string png, EncodePng(image, compression));
  return WriteFileAtomic(path, png);
}

}  // namespace visalign::imaging
