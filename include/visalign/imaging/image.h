// Images as visalign sees them: 8-bit RGB, interleaved, row-major. PNG (own fast path, else
// libspng), JPEG (libjpeg-turbo) and WebP (libwebp) are decoded inside this module only; other
// formats are refused naming the format. Alpha is dropped or composited (AlphaPolicy) and its
// minimum kept (Image::alpha_min); 16-bit inputs are scaled to 8 bits (v/257, rounded); grayscale
// inputs are replicated to R = G = B. Images of more than MaxImagePixels() pixels, and images whose
// compressed data is too short for the size they declare, are refused before any pixel memory is
// allocated, so memory follows the input's real content, not what its header claims.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "visalign/core/status.h"

namespace visalign::imaging {

// An allocator whose containers leave new elements uninitialised unless given a value, so a
// decoder that writes every pixel does not first clear megabytes it will overwrite.
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

struct Image {
  using Bytes = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;
  int width = 0;
  int height = 0;
  Bytes rgb;  // width * height * 3 bytes: R, G, B per pixel
  // The smallest alpha of the decoded file (PNG alpha or tRNS, WebP alpha; 16-bit alpha scaled to
  // 8 bits); 255 for opaque images and formats without alpha.
  uint8_t alpha_min = 255;

  Image() = default;
  // All pixels black.
  Image(int w, int h) : width(w), height(h), rgb(static_cast<size_t>(w) * h * 3, 0) {}
  // Pixels unset: for code that writes every byte.
  static Image ForOverwrite(int w, int h) {
    Image image;
    image.width = w;
    image.height = h;
    image.rgb.resize(static_cast<size_t>(w) * h * 3);
    return image;
  }
  uint8_t* pixel(int x, int y) { return &rgb[(static_cast<size_t>(y) * width + x) * 3]; }
  const uint8_t* pixel(int x, int y) const { return &rgb[(static_cast<size_t>(y) * width + x) * 3]; }
};

// What decoders do with transparent pixels. kDrop keeps each pixel's stored RGB, as PIL's
// convert("RGB") and OpenCV do (CLIP preprocessing expects it: open_clip reads images that way).
// kComposite blends every pixel over `background`: per channel round((c·a + b·(255 − a)) / 255),
// exact in integers; 16-bit files blend in 16 bits (b·257, 65535) and are then scaled.
struct AlphaPolicy {
  enum class Mode { kDrop, kComposite };
  Mode mode = Mode::kDrop;
  std::array<uint8_t, 3> background{255, 255, 255};
};

// The largest image (width x height) the decoders accept: kDefaultMaxImagePixels (64 Mi pixels,
// 192 MiB as RGB; image APIs return at most ~4 Mpx) unless SetMaxImagePixels changed it for the
// process (the CLI's --max-image-pixels). 0 restores the default.
inline constexpr uint64_t kDefaultMaxImagePixels = uint64_t{1} << 26;
uint64_t MaxImagePixels();
void SetMaxImagePixels(uint64_t pixels);

// Decodes PNG, JPEG or WebP. `source` names the input in errors: kCorrupt for damaged or
// unrecognised bytes, kUnsupported for another image format or too many pixels.
Result<Image> DecodeImage(std::string_view bytes, const std::string& source, const AlphaPolicy& alpha = {});
Result<Image> ReadImage(const std::filesystem::path& path, const AlphaPolicy& alpha = {});

// The rank of a file extension (".png", ".JPG", "webp": dot optional, any case) among those visalign
// imports from folders of images made elsewhere: png 0, jpg 1, jpeg 2, webp 3; -1 for any other.
// One rule for `violin evaluate --images` and the directory backend; the rank orders same-stem files.
int ImageFileExtensionRank(std::string_view extension);

// PNG bytes of an image; `compression` 0 (fastest) .. 9 (smallest).
Result<std::string> EncodePng(const Image& image, int compression = 1);
// Encodes and writes atomically (temp file + rename).
Status WritePng(const std::filesystem::path& path, const Image& image, int compression = 1);

}  // namespace visalign::imaging
