#include "flat_png.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace visalign::violin {
namespace {

constexpr std::array<uint8_t, 8> kSignature{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
constexpr uint8_t kBitDepth = 8;
constexpr uint8_t kColorTypeRgb = 2;
constexpr uint8_t kFilterSub = 1;
constexpr uint8_t kFilterUp = 2;
constexpr int kChannels = 3;

// zlib (RFC 1950) header: deflate with a 32 KiB window, no dictionary, check bits valid.
constexpr std::array<uint8_t, 2> kZlibHeader{0x78, 0x01};
constexpr uint32_t kAdlerModulus = 65521;

// DEFLATE (RFC 1951) pieces used here: one final block with the fixed Huffman code.
constexpr int kEndOfBlock = 256;
constexpr int kFirstLengthSymbol = 257;
constexpr int kMinMatch = 3;
constexpr int kMaxMatch = 258;
constexpr std::array<int, 29> kLengthBase{3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                          31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr std::array<int, 29> kLengthExtraBits{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                               2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr int kDistanceCodeBits = 5;  // fixed code of distance symbol 0 (distance 1) is 00000

class BitWriter {
 public:
  explicit BitWriter(std::string& out) : out_(out) {}
  void Put(uint32_t bits, int count) {  // least significant bit first
    acc_ |= static_cast<uint64_t>(bits) << count_;
    count_ += count;
    while (count_ >= 8) {
      out_.push_back(static_cast<char>(acc_ & 0xFF));
      acc_ >>= 8;
      count_ -= 8;
    }
  }
  // Huffman codes are defined most significant bit first.
  void PutCode(uint32_t code, int length) {
    uint32_t reversed = 0;
    for (int i = 0; i < length; ++i) reversed |= ((code >> i) & 1U) << (length - 1 - i);
    Put(reversed, length);
  }
  void Flush() {
    if (count_ > 0) out_.push_back(static_cast<char>(acc_ & 0xFF));
    acc_ = 0;
    count_ = 0;
  }

 private:
  std::string& out_;
  uint64_t acc_ = 0;
  int count_ = 0;
};

// Fixed literal/length code (RFC 1951 section 3.2.6).
void PutSymbol(BitWriter& w, int symbol) {
  if (symbol <= 143) return w.PutCode(0x30 + symbol, 8);
  if (symbol <= 255) return w.PutCode(0x190 + (symbol - 144), 9);
  if (symbol <= 279) return w.PutCode(symbol - 256, 7);
  w.PutCode(0xC0 + (symbol - 280), 8);
}

void PutDistanceOneMatch(BitWriter& w, int length) {
  const int code =
      static_cast<int>(std::upper_bound(kLengthBase.begin(), kLengthBase.end(), length) - kLengthBase.begin()) - 1;
  PutSymbol(w, kFirstLengthSymbol + code);
  w.Put(static_cast<uint32_t>(length - kLengthBase[code]), kLengthExtraBits[code]);
  w.Put(0, kDistanceCodeBits);
}

class Adler32 {
 public:
  // Adds `n` bytes of value `b`: s1 grows by n·b, s2 by n·s1 + b·n(n+1)/2.
  void AddRun(uint8_t b, uint64_t n) {
    s2_ = (s2_ + n % kAdlerModulus * s1_ + b * (n * (n + 1) / 2 % kAdlerModulus)) % kAdlerModulus;
    s1_ = (s1_ + n % kAdlerModulus * b) % kAdlerModulus;
  }
  uint32_t value() const { return static_cast<uint32_t>(s2_ << 16 | s1_); }

 private:
  uint64_t s1_ = 1, s2_ = 0;
};

// Length of the run of bytes equal to p[0] in [p, end), compared eight at a time.
size_t RunLength(const uint8_t* p, const uint8_t* end) {
  const uint64_t pattern = p[0] * 0x0101010101010101ULL;
  const uint8_t* q = p;
  uint64_t word;
  while (end - q >= 8) {
    std::memcpy(&word, q, 8);
    if (word != pattern) break;
    q += 8;
  }
  while (q < end && *q == p[0]) ++q;
  return static_cast<size_t>(q - p);
}

// zlib stream of `data`: each run is one literal plus distance-1 matches of up to 258 bytes.
void Deflate(const std::vector<uint8_t>& data, std::string& out) {
  out.append(reinterpret_cast<const char*>(kZlibHeader.data()), kZlibHeader.size());
  BitWriter w(out);
  w.Put(1, 1);  // BFINAL
  w.Put(1, 2);  // BTYPE = fixed Huffman
  Adler32 adler;
  const uint8_t* p = data.data();
  const uint8_t* end = p + data.size();
  while (p < end) {
    const uint8_t b = *p;
    const size_t run = RunLength(p, end);
    adler.AddRun(b, run);
    PutSymbol(w, b);
    size_t left = run - 1;
    while (left >= static_cast<size_t>(kMinMatch)) {
      const int len = static_cast<int>(std::min<size_t>(left, kMaxMatch));
      PutDistanceOneMatch(w, len);
      left -= static_cast<size_t>(len);
    }
    for (; left > 0; --left) PutSymbol(w, b);
    p += run;
  }
  PutSymbol(w, kEndOfBlock);
  w.Flush();
  const uint32_t sum = adler.value();
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((sum >> shift) & 0xFF));
}

void PutU32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xFF));
}

void PutChunk(std::string& out, const char type[4], std::string_view data) {
  PutU32(out, static_cast<uint32_t>(data.size()));
  const size_t type_at = out.size();
  out.append(type, 4);
  out.append(data);
  const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(out.data() + type_at), static_cast<uInt>(data.size() + 4));
  PutU32(out, static_cast<uint32_t>(crc));
}

// PNG scanlines (filter byte + filtered row) of the whole image.
void FilterRows(const imaging::Image& image, std::vector<uint8_t>& raw) {
  const size_t stride = static_cast<size_t>(image.width) * kChannels;
  raw.assign(static_cast<size_t>(image.height) * (stride + 1), 0);
  for (int y = 0; y < image.height; ++y) {
    const uint8_t* row = image.rgb.data() + static_cast<size_t>(y) * stride;
    uint8_t* out = raw.data() + static_cast<size_t>(y) * (stride + 1);
    if (y > 0 && std::memcmp(row, row - stride, stride) == 0) {
      out[0] = kFilterUp;  // the rest stays zero
      continue;
    }
    out[0] = kFilterSub;
    std::memcpy(out + 1, row, kChannels);
    for (size_t i = kChannels; i < stride; ++i) out[1 + i] = static_cast<uint8_t>(row[i] - row[i - kChannels]);
  }
}

}  // namespace

std::string EncodeFlatPng(const imaging::Image& image) {
  if (image.width <= 0 || image.height <= 0 ||
      image.rgb.size() != static_cast<size_t>(image.width) * image.height * kChannels)
    return {};
  thread_local std::vector<uint8_t> raw;
  FilterRows(image, raw);
  std::string idat;
  Deflate(raw, idat);

  std::string ihdr;
  PutU32(ihdr, static_cast<uint32_t>(image.width));
  PutU32(ihdr, static_cast<uint32_t>(image.height));
  ihdr += {static_cast<char>(kBitDepth), static_cast<char>(kColorTypeRgb), 0, 0, 0};  // deflate, adaptive, no interlace

  std::string out(reinterpret_cast<const char*>(kSignature.data()), kSignature.size());
  PutChunk(out, "IHDR", ihdr);
  PutChunk(out, "IDAT", idat);
  PutChunk(out, "IEND", {});
  return out;
}

}  // namespace visalign::violin
