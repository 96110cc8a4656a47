#include "flat_png.h"

#include <zlib.h>

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
constexpr int kWindowBits = 15;
constexpr int kMemLevel = 9;

void PutU32(std::string& out, uint32_t v) {
  const char bytes[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                         static_cast<char>(v)};
  out.append(bytes, 4);
}

void PutChunk(std::string& out, const char type[4], const uint8_t* data, size_t size) {
  PutU32(out, static_cast<uint32_t>(size));
  const size_t type_at = out.size();
  out.append(type, 4);
  if (size > 0) out.append(reinterpret_cast<const char*>(data), size);
  const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(out.data() + type_at), static_cast<uInt>(size + 4));
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

std::string EncodeFlatPng(const imaging::Image& image, int compression) {
  if (image.width <= 0 || image.height <= 0 ||
      image.rgb.size() != static_cast<size_t>(image.width) * image.height * kChannels)
    return {};
  thread_local std::vector<uint8_t> raw, deflated;
  FilterRows(image, raw);

  z_stream zs{};
  if (deflateInit2(&zs, compression, Z_DEFLATED, kWindowBits, kMemLevel, Z_RLE) != Z_OK) return {};
  deflated.resize(deflateBound(&zs, static_cast<uLong>(raw.size())));
  zs.next_in = raw.data();
  zs.avail_in = static_cast<uInt>(raw.size());
  int rc = Z_OK;
  // deflateBound can be a few bytes short for tiny stored (level 0) streams: grow and go on.
  while (rc == Z_OK || rc == Z_BUF_ERROR) {
    if (zs.total_out == deflated.size()) deflated.resize(2 * deflated.size());
    zs.next_out = deflated.data() + zs.total_out;
    zs.avail_out = static_cast<uInt>(deflated.size() - zs.total_out);
    rc = deflate(&zs, Z_FINISH);
    if (rc == Z_BUF_ERROR && zs.avail_out > 0) break;  // no progress possible: a zlib failure
  }
  const size_t deflated_size = zs.total_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return {};

  std::string out(reinterpret_cast<const char*>(kSignature.data()), kSignature.size());
  std::array<uint8_t, 13> ihdr{};
  for (int i = 0; i < 4; ++i) {
    ihdr[i] = static_cast<uint8_t>(static_cast<uint32_t>(image.width) >> (24 - 8 * i));
    ihdr[4 + i] = static_cast<uint8_t>(static_cast<uint32_t>(image.height) >> (24 - 8 * i));
  }
  ihdr[8] = kBitDepth;
  ihdr[9] = kColorTypeRgb;  // compression, filter and interlace methods stay 0
  PutChunk(out, "IHDR", ihdr.data(), ihdr.size());
  PutChunk(out, "IDAT", deflated.data(), deflated_size);
  PutChunk(out, "IEND", nullptr, 0);
  return out;
}

}  // namespace visalign::violin
