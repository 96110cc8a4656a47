// PNG encoding tuned for images made of flat color blocks (VIOLIN ground truth). Each row is
// filtered with Up when it equals the row above (all zero bytes) and with Sub otherwise (zero
// bytes inside a block); the scanlines are then deflated as byte runs — a literal followed by
// distance-1 matches, fixed Huffman codes — and the Adler-32 checksum is computed per run, so the
// cost grows with the number of runs rather than the number of bytes. Valid 8-bit RGB PNG for any
// image (noise just compresses poorly); tests decode the output with OpenCV and zlib.
#pragma once

#include <string>

#include "visalign/imaging/image.h"

namespace visalign::violin {

// Requires a non-empty image whose buffer holds width * height * 3 bytes (returns "" otherwise).
std::string EncodeFlatPng(const imaging::Image& image);

}  // namespace visalign::violin
