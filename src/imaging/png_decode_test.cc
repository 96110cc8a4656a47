// The fast PNG decoder (8-bit RGB/RGBA, not interlaced) must give exactly OpenCV's pixels, take
// every regular file of that kind, and hand anything irregular to OpenCV, which reports damage.
#include "imaging/png_decode.h"

#include <gtest/gtest.h>
#include <png.h>
#include <zlib.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "testing/dirs.h"
#include "visalign/imaging/image.h"

namespace visalign::imaging {
namespace {

struct PngSpec {
  int width, height;
  int color_type;  // PNG_COLOR_TYPE_RGB or PNG_COLOR_TYPE_RGBA
  bool interlaced;
  int filters;               // PNG_FILTER_* mask for the encoder
  int level;                 // zlib level
  size_t idat_bytes = 8192;  // libpng's compression buffer: the size of each IDAT chunk
  bool text_chunk = false;   // add tEXt and gAMA chunks before and after the image data
};

void AppendBytes(png_structp png, png_bytep data, size_t n) {
  auto* out = static_cast<std::string*>(png_get_io_ptr(png));
  out->append(reinterpret_cast<const char*>(data), n);
}

// Encodes random pixels (smooth ramps plus noise, so every filter type gets chosen) with libpng.
std::string EncodeTestPng(const PngSpec& spec, std::mt19937& rng) {
  const int channels = spec.color_type == PNG_COLOR_TYPE_RGBA ? 4 : 3;
  std::vector<uint8_t> pixels(static_cast<size_t>(spec.width) * spec.height * channels);
  for (int y = 0; y < spec.height; ++y)
    for (int x = 0; x < spec.width * channels; ++x)
      pixels[static_cast<size_t>(y) * spec.width * channels + x] = static_cast<uint8_t>(x + 3 * y + rng() % 9);
  std::string out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    ADD_FAILURE() << "libpng could not encode the test image";
    return out;
  }
  png_set_write_fn(png, &out, AppendBytes, nullptr);
  png_set_IHDR(png, info, spec.width, spec.height, 8, spec.color_type,
               spec.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, spec.filters);
  png_set_compression_level(png, spec.level);
  png_set_compression_buffer_size(png, spec.idat_bytes);
  png_text text{};
  char key[] = "Comment", value[] = "made by png_decode_test";
  text.compression = PNG_TEXT_COMPRESSION_NONE;
  text.key = key;
  text.text = value;
  if (spec.text_chunk) {
    png_set_text(png, info, &text, 1);
    png_set_gAMA(png, info, 1.0 / 2.2);
  }
  png_write_info(png, info);
  std::vector<png_bytep> rows(spec.height);
  for (int y = 0; y < spec.height; ++y) rows[y] = &pixels[static_cast<size_t>(y) * spec.width * channels];
  png_write_image(png, rows.data());
  png_write_end(png, spec.text_chunk ? info : nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

// OpenCV's reading of the same bytes, as RGB (alpha dropped).
void ExpectEqualsOpenCv(const std::string& bytes, const std::string& what) {
  const cv::Mat decoded = cv::imdecode(
      cv::Mat(1, static_cast<int>(bytes.size()), CV_8U, const_cast<char*>(bytes.data())), cv::IMREAD_UNCHANGED);
  ASSERT_FALSE(decoded.empty()) << what;
  auto image = DecodeImage(bytes, what);
  ASSERT_TRUE(image.ok()) << what << ": " << image.status().ToString();
  ASSERT_EQ(image->width, decoded.cols) << what;
  ASSERT_EQ(image->height, decoded.rows) << what;
  const int channels = decoded.channels();
  int64_t mismatches = 0;
  for (int y = 0; y < decoded.rows; ++y)
    for (int x = 0; x < decoded.cols; ++x) {
      const uint8_t* bgr = decoded.ptr<uint8_t>(y) + static_cast<size_t>(x) * channels;
      const uint8_t* rgb = image->pixel(x, y);
      mismatches += rgb[0] != bgr[2] || rgb[1] != bgr[1] || rgb[2] != bgr[0];
    }
  EXPECT_EQ(mismatches, 0) << what;
}

// A PNG assembled chunk by chunk, for files no encoder writes: `filtered` is the image data with
// a filter byte before each row; the zlib stream is split into IDATs of `idat_bytes`.
struct RawChunk {
  std::string type, data;
};
std::string Chunk(const RawChunk& c) {
  std::string out;
  auto put32 = [&out](uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
  };
  put32(static_cast<uint32_t>(c.data.size()));
  out += c.type + c.data;
  const std::string crc_input = c.type + c.data;
  put32(static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(crc_input.data()), crc_input.size())));
  return out;
}
std::string Ihdr(uint32_t w, uint32_t h, uint8_t depth, uint8_t color, uint8_t interlace = 0) {
  std::string d;
  for (uint32_t v : {w, h})
    for (int shift = 24; shift >= 0; shift -= 8) d.push_back(static_cast<char>(v >> shift));
  d += {static_cast<char>(depth), static_cast<char>(color), 0, 0, static_cast<char>(interlace)};
  return Chunk({"IHDR", d});
}
std::string Zlib(const std::string& raw) {
  uLongf size = compressBound(raw.size());
  std::string out(size, '\0');
  compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(raw.data()), raw.size(), 6);
  out.resize(size);
  return out;
}
constexpr char kSignature[] = "\x89PNG\r\n\x1a\n";
std::string AssemblePng(const std::string& ihdr, const std::string& zlib_stream, size_t idat_bytes,
                        const std::string& between = "") {
  std::string png(kSignature, 8);
  png += ihdr + between;
  for (size_t i = 0; i < zlib_stream.size(); i += idat_bytes) png += Chunk({"IDAT", zlib_stream.substr(i, idat_bytes)});
  return png + Chunk({"IEND", ""});
}
// A 5x3 RGB image, every row with filter `filter` (0..4), as its filtered bytes.
std::string FilteredRows(uint8_t filter) {
  std::string raw;
  for (int y = 0; y < 3; ++y) {
    raw.push_back(static_cast<char>(filter));
    for (int i = 0; i < 15; ++i) raw.push_back(static_cast<char>(40 * y + 3 * i));
  }
  return raw;
}

bool FastPathTakes(const std::string& bytes) {
  Image image;
  return DecodePngFast(bytes, image) == PngFastDecode::kDecoded;
}

TEST(PngDecode, EveryFilterAndLayoutDecodesExactlyAsOpenCv) {
  std::mt19937 rng(12);
  const int filter_sets[] = {PNG_FILTER_NONE, PNG_FILTER_SUB,   PNG_FILTER_UP,
                             PNG_FILTER_AVG,  PNG_FILTER_PAETH, PNG_ALL_FILTERS};
  for (int color_type : {PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGBA})
    for (int filters : filter_sets)
      for (auto [w, h] : {std::pair{1, 1}, {7, 3}, {33, 17}, {64, 64}, {1, 40}, {40, 1}})
        for (int level : {0, 6, 9}) {
          const std::string what = "type " + std::to_string(color_type) + " filters " + std::to_string(filters) + " " +
                                   std::to_string(w) + "x" + std::to_string(h) + " level " + std::to_string(level);
          const std::string png = EncodeTestPng({w, h, color_type, false, filters, level}, rng);
          EXPECT_TRUE(FastPathTakes(png)) << what;
          ExpectEqualsOpenCv(png, what);
        }
}

TEST(PngDecode, ManySmallIdatChunksAndAncillaryChunks) {
  std::mt19937 rng(14);
  for (size_t idat_bytes : {size_t{1}, size_t{7}, size_t{64}})
    for (bool text_chunk : {false, true}) {
      PngSpec spec{45, 23, PNG_COLOR_TYPE_RGB, false, PNG_ALL_FILTERS, 6};
      spec.idat_bytes = idat_bytes;
      spec.text_chunk = text_chunk;
      const std::string png = EncodeTestPng(spec, rng);
      EXPECT_TRUE(FastPathTakes(png)) << idat_bytes;
      ExpectEqualsOpenCv(png, "IDATs of " + std::to_string(idat_bytes) + " bytes");
    }
}

TEST(PngDecode, HandHeldFiltersGiveTheirDefinitions) {
  // Rows of 5 pixels (15 bytes) 40y + 3i; each filter's inverse applied by hand.
  for (uint8_t filter = 0; filter <= 4; ++filter) {
    const std::string raw = FilteredRows(filter);
    Image::Bytes expected(45);
    for (int y = 0; y < 3; ++y)
      for (int i = 0; i < 15; ++i) {
        const int x = static_cast<uint8_t>(raw[y * 16 + 1 + i]);
        const int a = i >= 3 ? expected[y * 15 + i - 3] : 0, b = y > 0 ? expected[(y - 1) * 15 + i] : 0,
                  c = i >= 3 && y > 0 ? expected[(y - 1) * 15 + i - 3] : 0;
        const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
        const int paeth = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c);
        const int predictor[] = {0, a, b, (a + b) / 2, paeth};
        expected[y * 15 + i] = static_cast<uint8_t>(x + predictor[filter]);
      }
    Image image;
    ASSERT_EQ(DecodePngFast(AssemblePng(Ihdr(5, 3, 8, 2), Zlib(raw), 5), image), PngFastDecode::kDecoded)
        << int{filter};
    EXPECT_EQ(image.rgb, expected) << "filter " << int{filter};
  }
}

TEST(PngDecode, OtherKindsGoToOpenCv) {
  std::mt19937 rng(15);
  // Interlaced: not taken, still decoded exactly by the general path.
  const std::string interlaced = EncodeTestPng({33, 17, PNG_COLOR_TYPE_RGB, true, PNG_ALL_FILTERS, 6}, rng);
  EXPECT_FALSE(FastPathTakes(interlaced));
  ExpectEqualsOpenCv(interlaced, "interlaced");
  // Gray (0), palette (3), gray+alpha (4), 16-bit RGB: not taken.
  const std::string gray_raw(2 * 4, '\0');
  EXPECT_FALSE(FastPathTakes(AssemblePng(Ihdr(3, 2, 8, 0), Zlib(gray_raw), 64)));
  EXPECT_FALSE(FastPathTakes(AssemblePng(Ihdr(3, 2, 8, 3), Zlib(gray_raw), 64, Chunk({"PLTE", "abc"}))));
  EXPECT_FALSE(FastPathTakes(AssemblePng(Ihdr(3, 2, 8, 4), Zlib(gray_raw), 64)));
  EXPECT_FALSE(FastPathTakes(AssemblePng(Ihdr(3, 2, 16, 2), Zlib(std::string(2 * 19, '\0')), 64)));
  EXPECT_FALSE(FastPathTakes("GIF89a"));
}

TEST(PngDecode, IrregularFilesAreNotTakenAndDamagedOnesStayErrors) {
  const std::string raw = FilteredRows(4), zlib_stream = Zlib(raw), ihdr = Ihdr(5, 3, 8, 2);
  ASSERT_TRUE(FastPathTakes(AssemblePng(ihdr, zlib_stream, 5)));
  // An ancillary chunk with a wrong CRC is ignored, as libpng discards it.
  std::string bad_text = Chunk({"tEXt", "k\0v"});
  bad_text.back() = static_cast<char>(bad_text.back() ^ 1);
  EXPECT_TRUE(FastPathTakes(AssemblePng(ihdr, zlib_stream, 5, bad_text)));
  // A suggested palette in a truecolor image is allowed and unused.
  EXPECT_TRUE(FastPathTakes(AssemblePng(ihdr, zlib_stream, 5, Chunk({"PLTE", "abc"}))));

  struct Case {
    std::string what, bytes;
  };
  std::string flipped_data = raw;
  flipped_data[20] = static_cast<char>(flipped_data[20] ^ 0x10);
  std::string bad_adler = zlib_stream;
  bad_adler.back() = static_cast<char>(bad_adler.back() ^ 1);
  std::string bad_filter = raw;
  bad_filter[16] = 5;  // row 1's filter byte
  std::string bad_idat_crc = AssemblePng(ihdr, zlib_stream, 1000);
  bad_idat_crc[bad_idat_crc.size() - 13] = static_cast<char>(bad_idat_crc[bad_idat_crc.size() - 13] ^ 1);
  const std::string good = AssemblePng(ihdr, zlib_stream, 5);
  const std::vector<Case> cases = {
      {"truncated", good.substr(0, good.size() - 20)},
      {"IDAT CRC wrong", bad_idat_crc},
      {"Adler-32 wrong", AssemblePng(ihdr, bad_adler, 5)},
      {"filter type 5", AssemblePng(ihdr, Zlib(bad_filter), 5)},
      {"too little image data", AssemblePng(ihdr, Zlib(raw.substr(0, 30)), 5)},
      {"too much image data", AssemblePng(ihdr, Zlib(raw + raw), 5)},
      {"no IEND", good.substr(0, good.size() - 12)},
      {"no IDAT", std::string(kSignature, 8) + ihdr + Chunk({"IEND", ""})},
      {"IHDR not first", std::string(kSignature, 8) + Chunk({"tEXt", "k\0v"}) + good.substr(8)},
      {"unknown critical chunk", AssemblePng(ihdr, zlib_stream, 5, Chunk({"ABCD", "x"}))},
      // Seen by the fuzzer: a non-letter byte in an ancillary chunk's type ("g/MA").
      {"chunk type not letters", AssemblePng(ihdr, zlib_stream, 5, Chunk({"g/MA", "x"}))},
      {"IDATs not consecutive", std::string(kSignature, 8) + ihdr + Chunk({"IDAT", zlib_stream.substr(0, 10)}) +
                                    Chunk({"tEXt", "k\0v"}) + Chunk({"IDAT", zlib_stream.substr(10)}) +
                                    Chunk({"IEND", ""})},
      {"zero width", AssemblePng(Ihdr(0, 3, 8, 2), zlib_stream, 5)},
      {"huge chunk length", std::string(kSignature, 8) + ihdr + "\xff\xff\xff\xffIDAT"},
  };
  for (const Case& c : cases) EXPECT_FALSE(FastPathTakes(c.bytes)) << c.what;
  // Damaged pixel data is an error for the whole decoder, never an image.
  for (const char* what :
       {"truncated", "IDAT CRC wrong", "filter type 5", "too little image data", "chunk type not letters"})
    for (const Case& c : cases)
      if (c.what == what) {
        EXPECT_EQ(DecodeImage(c.bytes, c.what).status().code(), StatusCode::kCorrupt) << c.what;
      }
  // Only the stream's checksum wrong (the chunk CRCs hold): libpng decodes it with a warning.
  EXPECT_TRUE(DecodeImage(cases[2].bytes, cases[2].what).ok());
}

TEST(PngDecode, InPlaceJoiningGivesTheSamePixels) {
  std::mt19937 rng(16);
  for (int color_type : {PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGBA}) {
    PngSpec spec{61, 29, color_type, false, PNG_ALL_FILTERS, 6};
    spec.idat_bytes = 37;
    std::string bytes = EncodeTestPng(spec, rng);
    Image expected, in_place;
    ASSERT_EQ(DecodePngFast(bytes, expected), PngFastDecode::kDecoded);
    bool overwritten = false;
    ASSERT_EQ(DecodePngFastInPlace(bytes, in_place, overwritten), PngFastDecode::kDecoded);
    EXPECT_TRUE(overwritten);  // many IDATs were joined where they lay
    EXPECT_EQ(in_place.rgb, expected.rgb);
  }
}

TEST(PngDecode, ReadImageRereadsAFileTheFastPathGaveUpOnAfterJoining) {
  // Several IDATs (joined in the read buffer) and then a reason to give up: the general decoder
  // must still see the file's real bytes.
  const std::string raw = FilteredRows(4), ihdr = Ihdr(5, 3, 8, 2);
  std::string bad_adler = Zlib(raw);
  bad_adler.back() = static_cast<char>(bad_adler.back() ^ 1);
  std::string bad_filter = raw;
  bad_filter[16] = 5;
  const visalign::testing::TempDir tmp;
  const std::filesystem::path& dir = tmp.path();
  const auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
    return dir / name;
  };
  const auto adler = ReadImage(write("adler.png", AssemblePng(ihdr, bad_adler, 5)));
  ASSERT_TRUE(adler.ok()) << adler.status().ToString();  // libpng only warns about the checksum
  Image hand_made;
  ASSERT_EQ(DecodePngFast(AssemblePng(ihdr, Zlib(raw), 5), hand_made), PngFastDecode::kDecoded);
  EXPECT_EQ(adler->rgb, hand_made.rgb);
  const auto filter = ReadImage(write("filter.png", AssemblePng(ihdr, Zlib(bad_filter), 5)));
  EXPECT_EQ(filter.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(filter.status().where(), (dir / "filter.png").string());
}

TEST(PngDecode, DamagedPngsStayErrors) {
  std::mt19937 rng(13);
  const std::string good = EncodeTestPng({40, 30, PNG_COLOR_TYPE_RGB, false, PNG_ALL_FILTERS, 6}, rng);
  // Cut inside the image data, and one flipped byte inside the compressed stream (IDAT CRC fails).
  EXPECT_EQ(DecodeImage(good.substr(0, good.size() / 2), "cut.png").status().code(), StatusCode::kCorrupt);
  std::string flipped = good;
  flipped[good.size() / 2] = static_cast<char>(flipped[good.size() / 2] ^ 0x5A);
  EXPECT_EQ(DecodeImage(flipped, "flipped.png").status().code(), StatusCode::kCorrupt);
}

}  // namespace
}  // namespace visalign::imaging
