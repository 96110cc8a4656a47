// JPEG through libjpeg-turbo's TurboJPEG API: baseline and progressive, gray, YCbCr and (Adobe,
// inverted) CMYK/YCCK, with libjpeg's defaults (accurate integer IDCT, fancy upsampling) as OpenCV
// and PIL use them. Any warning (a corrupt or truncated scan) is an error: libjpeg would
// otherwise fill the missing blocks with gray and report success.
#include <turbojpeg.h>

#include <memory>
#include <vector>

#include "imaging/codecs.h"

namespace visalign::imaging {
namespace {

constexpr int kCmykChannels = 4;
constexpr int kByteShift = 8;

struct TjFree {
  void operator()(void* handle) const { tjDestroy(handle); }
};

Status TjError(void* handle, const std::string& source) {
  return Status::Corrupt(std::string("cannot decode JPEG: ") + tjGetErrorStr2(handle), source,
                         "a complete, undamaged JPEG file");
}

// OpenCV's CMYK -> RGB for the inverted CMYK that Adobe applications write: v' = k - (255 - v) k / 256.
uint8_t FromInvertedCmyk(int v, int k) { return static_cast<uint8_t>(k - (((255 - v) * k) >> kByteShift)); }

}  // namespace

Result<Image> DecodeJpeg(std::string_view bytes, const std::string& source) {
  std::unique_ptr<void, TjFree> handle(tjInitDecompress());
  if (!handle) return Status::Internal("libjpeg-turbo: cannot create a decompressor");
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto size = static_cast<unsigned long>(bytes.size());
  int w = 0, h = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(handle.get(), data, size, &w, &h, &subsampling, &colorspace) != 0)
    return TjError(handle.get(), source);
  VISALIGN_RETURN_IF_ERROR(CheckImageSize(static_cast<uint64_t>(w), static_cast<uint64_t>(h), source));
  constexpr int kFlags = TJFLAG_STOPONWARNING;
  Image image = Image::ForOverwrite(w, h);
  if (colorspace != TJCS_CMYK && colorspace != TJCS_YCCK) {
    if (tjDecompress2(handle.get(), data, size, image.rgb.data(), w, 0, h, TJPF_RGB, kFlags) != 0)
      return TjError(handle.get(), source);
    return image;
  }
  std::vector<uint8_t> cmyk(static_cast<size_t>(w) * h * kCmykChannels);
  if (tjDecompress2(handle.get(), data, size, cmyk.data(), w, 0, h, TJPF_CMYK, kFlags) != 0)
    return TjError(handle.get(), source);
  for (size_t i = 0, n = static_cast<size_t>(w) * h; i < n; ++i) {
    const uint8_t* p = &cmyk[i * kCmykChannels];
    for (int c = 0; c < 3; ++c) image.rgb[i * 3 + c] = FromInvertedCmyk(p[c], p[3]);
  }
  return image;
}

}  // namespace visalign::imaging
