// Fast decoder for the PNGs text-to-image models produce: 8-bit RGB or RGBA, not interlaced.
// Chunks and their CRC-32s are checked, the IDAT stream is inflated whole by libdeflate (with its
// Adler-32 check) and un-filtered here, writing RGB rows (alpha dropped). zlib's inflate and
// checksums plus libpng's row filters were ~9 ms of a noisy 1024x1024 image; see
// docs/performance.md. Pixels equal libpng's (no gamma or other transformation, like OpenCV).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "visalign/imaging/image.h"

namespace visalign::imaging {

enum class PngFastDecode {
  kDecoded,     // `image` holds the pixels
  kNotHandled,  // not a PNG this decoder takes, or anything irregular: let the general decoder
                // (libspng, codecs.h) decide, which also reports damaged files
};

PngFastDecode DecodePngFast(std::string_view bytes, Image& image, const AlphaPolicy& alpha = {});
// Whether the 4 bytes at `type` are a valid chunk type: ASCII letters only (PNG specification,
// 5.4; libpng refuses others, libspng does not check).
bool IsPngChunkType(const uint8_t* type);
// The same, allowed to overwrite `bytes`: the IDAT data is joined where it lies instead of in a
// separate buffer. `overwritten` says whether it was; the bytes are then no longer the file.
PngFastDecode DecodePngFastInPlace(std::string& bytes, Image& image, bool& overwritten, const AlphaPolicy& alpha = {});

}  // namespace visalign::imaging
