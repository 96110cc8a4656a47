#include "imaging/png_decode.h"

#include "imaging/codecs.h"

#include <libdeflate.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

namespace visalign::imaging {
namespace {

constexpr uint8_t kSignature[] = {137, 'P', 'N', 'G', '\r', '\n', 26, '\n'};
constexpr size_t kLengthSize = 4, kTypeSize = 4, kCrcSize = 4;
constexpr uint32_t kMaxChunkLength = 0x7FFFFFFFu;  // PNG: lengths are 31-bit
constexpr uint32_t kIhdrLength = 13;
// A thread's scratch buffer above this is released after use, so one outsized image does not
// pin its memory in every worker for the rest of the run (1024x1024 RGBA is 4 MiB).
constexpr size_t kMaxKeptScratchBytes = size_t{32} << 20;
constexpr uint8_t kAncillaryBit = 0x20;  // set in the first type byte of ancillary chunks
constexpr uint8_t kBitDepth8 = 8;
constexpr uint8_t kColorRgb = 2, kColorRgba = 6;

enum class RowFilter : uint8_t { kNone = 0, kSub = 1, kUp = 2, kAverage = 3, kPaeth = 4 };
constexpr uint8_t kLastFilter = static_cast<uint8_t>(RowFilter::kPaeth);

uint32_t ReadBigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}
bool IsType(const uint8_t* type, const char (&name)[5]) { return std::memcmp(type, name, kTypeSize) == 0; }

// A thread's scratch buffers for one decode; on leaving, one that an outsized image grew gives its
// memory back.
struct Scratch {
  std::vector<uint8_t>& joined;    // IDAT payloads joined when there are several
  std::vector<uint8_t>& filtered;  // the inflated rows of an RGBA image
  ~Scratch() {
    for (std::vector<uint8_t>* v : {&joined, &filtered})
      if (v->capacity() > kMaxKeptScratchBytes) std::vector<uint8_t>().swap(*v);
  }
};

// One pixel's channels in the low lanes of a 16-bit vector (room for the Paeth and average sums).
using Lanes16 = int16_t __attribute__((vector_size(16)));
using Bytes8 = uint8_t __attribute__((vector_size(8)));

// A pixel is loaded and stored as 4 bytes (a 3-byte pixel's fourth lane is ignored; buffers have a
// byte of slack, and the extra byte stored lands on the next pixel, which is written after it).
// The last pixel of a row is stored exactly, byte by byte.
constexpr size_t kPixelSlack = 1;

Lanes16 LoadPixel(const uint8_t* p) {
  uint32_t word;
  std::memcpy(&word, p, sizeof(word));
  return __builtin_convertvector(std::bit_cast<Bytes8>(uint64_t{word}), Lanes16);
}
uint64_t PixelWord(Lanes16 v) { return std::bit_cast<uint64_t>(__builtin_convertvector(v, Bytes8)); }
void StoreWord4(uint8_t* p, uint64_t word) {
  const auto low = static_cast<uint32_t>(word);
  std::memcpy(p, &low, sizeof(low));
}
template <int kBpp>
void StoreWordExact(uint8_t* p, uint64_t word) {
  for (int i = 0; i < kBpp; ++i) p[i] = static_cast<uint8_t>(word >> (8 * i));
}
Lanes16 Abs(Lanes16 v) { return v < 0 ? -v : v; }

// The PNG predictor of one pixel from its left (a), upper (b) and upper-left (c) neighbours.
template <RowFilter kFilter>
Lanes16 Predict(Lanes16 a, Lanes16 b, Lanes16 c) {
  if constexpr (kFilter == RowFilter::kAverage) return (a + b) >> 1;
  if constexpr (kFilter == RowFilter::kPaeth) {
    // Distances of p = a + b - c to a, b and c; ties prefer a, then b.
    const Lanes16 pa = Abs(b - c), pb = Abs(a - c), pc = Abs(a + b - c - c);
    return ((pa <= pb) & (pa <= pc)) ? a : (pb <= pc ? b : c);
  }
}

// Average and Paeth: each pixel depends on the one just decoded, so the row goes pixel by
// pixel with all channels at once. `out` may be `in` (decoding in place).
template <int kBpp, RowFilter kFilter>
void UnfilterPixels(const uint8_t* in, const uint8_t* prior, uint8_t* out, int width) {
  constexpr int16_t kByteMask = 0xFF;
  Lanes16 a{}, c{};
  for (int x = 0;; ++x, in += kBpp, prior += kBpp, out += kBpp) {
    const Lanes16 b = LoadPixel(prior);
    a = (LoadPixel(in) + Predict<kFilter>(a, b, c)) & kByteMask;
    if (x == width - 1) return StoreWordExact<kBpp>(out, PixelWord(a));
    StoreWord4(out, PixelWord(a));
    c = b;
  }
}

// Sub needs no 16-bit room: bytes added in 8-bit lanes wrap as PNG wants, one add per pixel.
template <int kBpp>
void UnfilterSub(const uint8_t* in, uint8_t* out, int width) {
  Bytes8 a{};
  for (int x = 0;; ++x, in += kBpp, out += kBpp) {
    uint32_t word;
    std::memcpy(&word, in, sizeof(word));
    a += std::bit_cast<Bytes8>(uint64_t{word});
    if (x == width - 1) return StoreWordExact<kBpp>(out, std::bit_cast<uint64_t>(a));
    StoreWord4(out, std::bit_cast<uint64_t>(a));
  }
}

void UnfilterUp(const uint8_t* in, const uint8_t* prior, uint8_t* out, size_t n) {
  using Bytes16 = uint8_t __attribute__((vector_size(16)));
  size_t i = 0;
  for (; i + sizeof(Bytes16) <= n; i += sizeof(Bytes16)) {
    Bytes16 x, y;
    std::memcpy(&x, in + i, sizeof(x));
    std::memcpy(&y, prior + i, sizeof(y));
    x += y;
    std::memcpy(out + i, &x, sizeof(x));
  }
  for (; i < n; ++i) out[i] = static_cast<uint8_t>(in[i] + prior[i]);
}

template <int kBpp>
void UnfilterRow(RowFilter filter, const uint8_t* in, const uint8_t* prior, uint8_t* out, int width) {
  switch (filter) {
    case RowFilter::kNone:
      if (out != in) std::memmove(out, in, static_cast<size_t>(width) * kBpp);
      break;
    case RowFilter::kSub:
      UnfilterSub<kBpp>(in, out, width);
      break;
    case RowFilter::kUp:
      UnfilterUp(in, prior, out, static_cast<size_t>(width) * kBpp);
      break;
    case RowFilter::kAverage:
      UnfilterPixels<kBpp, RowFilter::kAverage>(in, prior, out, width);
      break;
    case RowFilter::kPaeth:
      UnfilterPixels<kBpp, RowFilter::kPaeth>(in, prior, out, width);
      break;
  }
}

// Rows are un-filtered in the buffer they were inflated into. An RGB row also ends there: row y
// moves y + 1 bytes left as it is decoded (over its filter byte and data already consumed; every
// pixel is loaded before a store can reach it), so the buffer becomes the image without another
// copy or buffer. RGBA rows are decoded in place (their prior row keeps its alpha), then written
// to `rgb` under `alpha` (RgbaToRgb), keeping the smallest alpha in `alpha_min`.
template <int kBpp>
bool Unfilter(uint8_t* filtered, int width, int height, uint8_t* rgb, const AlphaPolicy& alpha = {},
              uint8_t* alpha_min = nullptr) {
  const size_t stride = static_cast<size_t>(width) * kBpp;
  thread_local std::vector<uint8_t> zero_row;
  if (zero_row.size() < stride + kPixelSlack) zero_row.assign(stride + kPixelSlack, 0);
  const uint8_t* prior = zero_row.data();
  for (int y = 0; y < height; ++y) {
    uint8_t* row = filtered + static_cast<size_t>(y) * (stride + 1);
    const uint8_t filter = row[0];
    if (filter > kLastFilter) return false;
    uint8_t* out = kBpp == 3 ? filtered + static_cast<size_t>(y) * stride : row + 1;
    UnfilterRow<kBpp>(static_cast<RowFilter>(filter), row + 1, prior, out, width);
    if constexpr (kBpp == 4) {
      const uint8_t row_min = RgbaToRgb(out, width, alpha, rgb + static_cast<size_t>(y) * width * 3);
      *alpha_min = std::min(*alpha_min, row_min);
    }
    prior = out;
  }
  return true;
}

struct DecompressorDeleter {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

// Inflates the whole zlib stream (Adler-32 checked by libdeflate); it must fill `out` exactly and
// end where the data ends.
bool Inflate(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size) {
  thread_local std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> decompressor(
      libdeflate_alloc_decompressor());
  if (!decompressor) return false;
  size_t used_in = 0, produced = 0;
  return libdeflate_zlib_decompress_ex(decompressor.get(), in, in_size, out, out_size, &used_in, &produced) ==
             LIBDEFLATE_SUCCESS &&
         used_in == in_size && produced == out_size;
}

// `writable` is the input itself when the caller lets it be overwritten, else nullptr.
PngFastDecode Decode(std::string_view bytes, uint8_t* writable, const AlphaPolicy& alpha, Image& image,
                     bool& overwritten) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t size = bytes.size();
  if (size < sizeof(kSignature) || std::memcmp(data, kSignature, sizeof(kSignature)) != 0)
    return PngFastDecode::kNotHandled;

  uint32_t width = 0, height = 0;
  int bpp = 0;
  // IDAT payloads: one is used where it lies, several are joined: in place when allowed (each
  // payload moves left over the chunk framing before it, already checked), else into a buffer.
  const uint8_t* idat = nullptr;
  size_t idat_size = 0, idat_chunks = 0;
  thread_local std::vector<uint8_t> joined_buffer, filtered_buffer;
  const Scratch scratch{joined_buffer, filtered_buffer};
  std::vector<uint8_t>& joined = scratch.joined;
  bool idat_closed = false, ended = false;
  size_t pos = sizeof(kSignature);
  while (!ended) {
    if (size - pos < kLengthSize + kTypeSize + kCrcSize) return PngFastDecode::kNotHandled;
    const uint32_t length = ReadBigEndian32(data + pos);
    if (length > kMaxChunkLength || size - pos - kLengthSize - kTypeSize - kCrcSize < length)
      return PngFastDecode::kNotHandled;
    const uint8_t* type = data + pos + kLengthSize;
    const uint8_t* payload = type + kTypeSize;
    pos += kLengthSize + kTypeSize + length + kCrcSize;
    if (!IsPngChunkType(type)) return PngFastDecode::kNotHandled;
    const bool first = bpp == 0;
    if (first && !IsType(type, "IHDR")) return PngFastDecode::kNotHandled;
    if (idat_chunks > 0 && !IsType(type, "IDAT")) idat_closed = true;
    // Ancillary chunks never change the pixels (libpng discards a damaged one with a warning).
    if (type[0] & kAncillaryBit) continue;
    if (libdeflate_crc32(0, type, kTypeSize + length) != ReadBigEndian32(payload + length))
      return PngFastDecode::kNotHandled;
    if (IsType(type, "IDAT")) {
      if (first || idat_closed) return PngFastDecode::kNotHandled;
      if (++idat_chunks == 1) {
        idat = payload;
        joined.clear();
      } else if (writable) {
        std::memmove(writable + (idat - data) + idat_size, payload, length);
        overwritten = true;
      } else {
        if (idat_chunks == 2) joined.assign(idat, idat + idat_size);
        joined.insert(joined.end(), payload, payload + length);
      }
      idat_size += length;
    } else if (IsType(type, "IHDR")) {
      if (!first || length != kIhdrLength) return PngFastDecode::kNotHandled;
      width = ReadBigEndian32(payload);
      height = ReadBigEndian32(payload + 4);
      const uint8_t depth = payload[8], color = payload[9], compression = payload[10], filter = payload[11],
                    interlace = payload[12];
      if (width == 0 || height == 0 || width > kMaxChunkLength || height > kMaxChunkLength ||
          static_cast<uint64_t>(width) * height > MaxImagePixels() || depth != kBitDepth8 ||
          (color != kColorRgb && color != kColorRgba) || compression != 0 || filter != 0 || interlace != 0)
        return PngFastDecode::kNotHandled;
      bpp = color == kColorRgb ? 3 : 4;
    } else if (IsType(type, "IEND")) {
      ended = true;
    } else if (IsType(type, "PLTE")) {
      // A suggested palette for truecolor images: not used for decoding.
    } else {
      return PngFastDecode::kNotHandled;  // a critical chunk this decoder does not know
    }
  }
  const size_t filtered_size = static_cast<size_t>(height) * (static_cast<size_t>(width) * bpp + 1);
  // The general decoder words the error; nothing is allocated for a size the data cannot hold.
  if (idat_chunks == 0 || !CanInflateTo(idat_size, filtered_size)) return PngFastDecode::kNotHandled;
  if (idat_chunks > 1 && !writable) idat = joined.data();

  const int w = static_cast<int>(width), h = static_cast<int>(height);
  if (bpp == 3) {
    Image decoded;
    decoded.rgb.resize(filtered_size + kPixelSlack);
    if (!Inflate(idat, idat_size, decoded.rgb.data(), filtered_size) || !Unfilter<3>(decoded.rgb.data(), w, h, nullptr))
      return PngFastDecode::kNotHandled;
    decoded.rgb.resize(static_cast<size_t>(width) * height * 3);
    decoded.width = w;
    decoded.height = h;
    image = std::move(decoded);
    return PngFastDecode::kDecoded;
  }
  std::vector<uint8_t>& filtered = scratch.filtered;
  filtered.resize(filtered_size + kPixelSlack);
  if (!Inflate(idat, idat_size, filtered.data(), filtered_size)) return PngFastDecode::kNotHandled;
  image = Image::ForOverwrite(w, h);
  return Unfilter<4>(filtered.data(), w, h, image.rgb.data(), alpha, &image.alpha_min) ? PngFastDecode::kDecoded
                                                                                       : PngFastDecode::kNotHandled;
}

}  // namespace

bool IsPngChunkType(const uint8_t* type) {
  for (size_t i = 0; i < kTypeSize; ++i)
    if (!((type[i] >= 'A' && type[i] <= 'Z') || (type[i] >= 'a' && type[i] <= 'z'))) return false;
  return true;
}

PngFastDecode DecodePngFast(std::string_view bytes, Image& image, const AlphaPolicy& alpha) {
  bool overwritten = false;
  return Decode(bytes, nullptr, alpha, image, overwritten);
}

PngFastDecode DecodePngFastInPlace(std::string& bytes, Image& image, bool& overwritten, const AlphaPolicy& alpha) {
  overwritten = false;
  return Decode(bytes, reinterpret_cast<uint8_t*>(bytes.data()), alpha, image, overwritten);
}

}  // namespace visalign::imaging
