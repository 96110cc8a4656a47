// The product's decoders (libspng, libjpeg-turbo, libwebp, codecs.h) against the library they
// replace: for every PNG colour type and bit depth, JPEG colour space and WebP kind, DecodeImage
// gives exactly OpenCV's pixels (cv::imdecode, as the product read images before), converted the
// way visalign documents (16-bit v/257 rounded, gray replicated, alpha dropped). Other formats are
// refused naming the format; damaged and oversized files are errors, never crashes or images.
#include "imaging/codecs.h"

#include <gtest/gtest.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <png.h>
#include <turbojpeg.h>
#include <zlib.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "visalign/imaging.h"

namespace visalign::imaging {
namespace {

std::string Bytes(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

// OpenCV's reading of `bytes`, converted as visalign's contract states.
Image OpenCvReference(const std::string& bytes) {
  const cv::Mat m = cv::imdecode(cv::Mat(1, static_cast<int>(bytes.size()), CV_8U, const_cast<char*>(bytes.data())),
                                 cv::IMREAD_UNCHANGED);
  EXPECT_FALSE(m.empty());
  Image out(m.cols, m.rows);
  for (int y = 0; y < m.rows; ++y)
    for (int x = 0; x < m.cols; ++x) {
      uint8_t v[4] = {0, 0, 0, 0};
      for (int c = 0; c < m.channels(); ++c)
        v[c] = m.depth() == CV_16U ? Scale16To8(m.ptr<uint16_t>(y)[x * m.channels() + c])
                                   : m.ptr<uint8_t>(y)[x * m.channels() + c];
      uint8_t* p = out.pixel(x, y);
      if (m.channels() <= 2) {
        p[0] = p[1] = p[2] = v[0];
      } else {
        p[0] = v[2], p[1] = v[1], p[2] = v[0];
      }
    }
  return out;
}

void ExpectSameAsOpenCv(const std::string& bytes, const std::string& what) {
  Result<Image> ours = DecodeImage(bytes, what);
  ASSERT_TRUE(ours.ok()) << what << ": " << ours.status().ToString();
  const Image reference = OpenCvReference(bytes);
  ASSERT_EQ(ours->width, reference.width) << what;
  ASSERT_EQ(ours->height, reference.height) << what;
  EXPECT_TRUE(ours->rgb == reference.rgb) << what;
}

// --- PNG of any colour type and bit depth, written by libpng --------------------------------------
struct PngKind {
  int color_type, bit_depth;
  bool interlaced = false, trns = false;
};

void Append(png_structp png, png_bytep data, size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), n);
}

std::string WritePngKind(const PngKind& k, int w, int h, std::mt19937& rng) {
  const int channels = k.color_type == PNG_COLOR_TYPE_GRAY || k.color_type == PNG_COLOR_TYPE_PALETTE ? 1
                       : k.color_type == PNG_COLOR_TYPE_GRAY_ALPHA                                   ? 2
                       : k.color_type == PNG_COLOR_TYPE_RGB                                          ? 3
                                                                                                     : 4;
  const int max_sample = (1 << k.bit_depth) - 1;
  const size_t row_bytes = (static_cast<size_t>(w) * channels * k.bit_depth + 7) / 8;
  std::vector<std::vector<uint8_t>> rows(h, std::vector<uint8_t>(row_bytes, 0));
  for (auto& row : rows)
    for (int i = 0; i < w * channels; ++i) {
      const unsigned v = rng() % (max_sample + 1);
      if (k.bit_depth == 16) {
        row[2 * i] = static_cast<uint8_t>(v >> 8), row[2 * i + 1] = static_cast<uint8_t>(v);
      } else {
        const int bit = i * k.bit_depth;  // samples packed from the most significant bit
        row[bit / 8] |= static_cast<uint8_t>(v << (8 - k.bit_depth - bit % 8));
      }
    }
  std::string out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    ADD_FAILURE() << "libpng could not write the test image";
    return out;
  }
  png_set_write_fn(png, &out, Append, nullptr);
  png_set_IHDR(png, info, w, h, k.bit_depth, k.color_type, k.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  std::vector<png_color> palette(1 << std::min(k.bit_depth, 8));
  std::vector<png_byte> alpha(palette.size());
  if (k.color_type == PNG_COLOR_TYPE_PALETTE) {
    for (auto& c : palette) c = {static_cast<png_byte>(rng()), static_cast<png_byte>(rng()), static_cast<png_byte>(rng())};
    png_set_PLTE(png, info, palette.data(), static_cast<int>(palette.size()));
    if (k.trns) {
      for (auto& a : alpha) a = static_cast<png_byte>(rng());
      png_set_tRNS(png, info, alpha.data(), static_cast<int>(alpha.size()), nullptr);
    }
  }
  png_write_info(png, info);
  std::vector<png_bytep> pointers;
  for (auto& row : rows) pointers.push_back(row.data());
  png_write_image(png, pointers.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

TEST(Codecs, EveryPngColourTypeAndBitDepthDecodesAsOpenCv) {
  std::mt19937 rng(7);
  const std::vector<PngKind> kinds = {
      {PNG_COLOR_TYPE_GRAY, 1},        {PNG_COLOR_TYPE_GRAY, 2},         {PNG_COLOR_TYPE_GRAY, 4},
      {PNG_COLOR_TYPE_GRAY, 8},        {PNG_COLOR_TYPE_GRAY, 16},        {PNG_COLOR_TYPE_GRAY_ALPHA, 8},
      {PNG_COLOR_TYPE_GRAY_ALPHA, 16}, {PNG_COLOR_TYPE_PALETTE, 1},      {PNG_COLOR_TYPE_PALETTE, 2},
      {PNG_COLOR_TYPE_PALETTE, 4},     {PNG_COLOR_TYPE_PALETTE, 8},      {PNG_COLOR_TYPE_PALETTE, 8, false, true},
      {PNG_COLOR_TYPE_RGB, 16},        {PNG_COLOR_TYPE_RGB_ALPHA, 16},   {PNG_COLOR_TYPE_RGB, 8, true},
      {PNG_COLOR_TYPE_RGB_ALPHA, 8, true}, {PNG_COLOR_TYPE_GRAY, 16, true}, {PNG_COLOR_TYPE_PALETTE, 4, true, true},
  };
  for (const PngKind& k : kinds)
    for (auto [w, h] : {std::pair{1, 1}, {13, 7}, {64, 33}}) {
      const std::string what = "PNG type " + std::to_string(k.color_type) + " depth " + std::to_string(k.bit_depth) +
                               (k.interlaced ? " interlaced" : "") + (k.trns ? " tRNS" : "") + " " +
                               std::to_string(w) + "x" + std::to_string(h);
      ExpectSameAsOpenCv(WritePngKind(k, w, h, rng), what);
    }
}

cv::Mat Noise(int w, int h, int type, std::mt19937& rng) {
  cv::Mat m(h, w, type);
  for (size_t i = 0; i < m.total() * m.elemSize(); ++i) m.data[i] = static_cast<uint8_t>(64 + (i % 97) + rng() % 40);
  return m;
}

std::string Encode(const char* ext, const cv::Mat& m, const std::vector<int>& params = {}) {
  std::vector<uint8_t> out;
  EXPECT_TRUE(cv::imencode(ext, m, out, params)) << ext;
  return Bytes(out);
}

std::string TurboJpeg(const cv::Mat& pixels, int pixel_format, int subsampling) {
  tjhandle encoder = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  EXPECT_EQ(tjCompress2(encoder, pixels.data, pixels.cols, 0, pixels.rows, pixel_format, &jpeg, &size, subsampling,
                        90, 0),
            0)
      << tjGetErrorStr2(encoder);
  std::string out(reinterpret_cast<char*>(jpeg), size);
  tjFree(jpeg);
  tjDestroy(encoder);
  return out;
}

TEST(Codecs, JpegOfEveryColourSpaceDecodesAsOpenCv) {
  std::mt19937 rng(8);
  for (auto [w, h] : {std::pair{1, 1}, {17, 9}, {64, 48}}) {
    const std::string size = std::to_string(w) + "x" + std::to_string(h);
    for (int quality : {50, 95}) {
      ExpectSameAsOpenCv(Encode(".jpg", Noise(w, h, CV_8UC3, rng), {cv::IMWRITE_JPEG_QUALITY, quality}),
                         "JPEG colour q" + std::to_string(quality) + " " + size);
      ExpectSameAsOpenCv(Encode(".jpg", Noise(w, h, CV_8UC1, rng), {cv::IMWRITE_JPEG_QUALITY, quality}),
                         "JPEG gray " + size);
    }
    ExpectSameAsOpenCv(Encode(".jpg", Noise(w, h, CV_8UC3, rng), {cv::IMWRITE_JPEG_PROGRESSIVE, 1}),
                       "JPEG progressive " + size);
    // Other subsamplings, and CMYK as print-oriented tools write it (TurboJPEG encodes them;
    // OpenCV decodes CMYK to BGR).
    ExpectSameAsOpenCv(TurboJpeg(Noise(w, h, CV_8UC3, rng), TJPF_RGB, TJSAMP_444), "JPEG 4:4:4 " + size);
    ExpectSameAsOpenCv(TurboJpeg(Noise(w, h, CV_8UC3, rng), TJPF_RGB, TJSAMP_422), "JPEG 4:2:2 " + size);
    ExpectSameAsOpenCv(TurboJpeg(Noise(w, h, CV_8UC4, rng), TJPF_CMYK, TJSAMP_444), "JPEG CMYK " + size);
  }
}

TEST(Codecs, WebpLossyAndLosslessDecodeAsOpenCv) {
  std::mt19937 rng(9);
  for (auto [w, h] : {std::pair{1, 1}, {17, 9}, {64, 48}}) {
    const std::string size = std::to_string(w) + "x" + std::to_string(h);
    ExpectSameAsOpenCv(Encode(".webp", Noise(w, h, CV_8UC3, rng), {cv::IMWRITE_WEBP_QUALITY, 80}), "WebP lossy " + size);
    ExpectSameAsOpenCv(Encode(".webp", Noise(w, h, CV_8UC3, rng), {cv::IMWRITE_WEBP_QUALITY, 101}),
                       "WebP lossless " + size);
    ExpectSameAsOpenCv(Encode(".webp", Noise(w, h, CV_8UC4, rng), {cv::IMWRITE_WEBP_QUALITY, 101}),
                       "WebP lossless with alpha " + size);
  }
}

void ExpectUnsupported(const std::string& bytes, const std::string& format) {
  Result<Image> r = DecodeImage(bytes, "file");
  ASSERT_FALSE(r.ok()) << format;
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported) << format;
  EXPECT_EQ(r.status().what(), "unsupported image format " + format);
  EXPECT_EQ(r.status().expected(), "a PNG, JPEG or WebP image");
}

TEST(Codecs, OtherFormatsAreRefusedByName) {
  std::mt19937 rng(10);
  ExpectUnsupported(Encode(".tiff", Noise(8, 8, CV_8UC3, rng)), "TIFF");
  ExpectUnsupported(Encode(".bmp", Noise(8, 8, CV_8UC3, rng)), "BMP");
  ExpectUnsupported("GIF89a\x01\x00\x01\x00\x80\x00\x00", "GIF");
  ExpectUnsupported(std::string("\0\0\0\x1c" "ftypheic\0\0\0\0mif1heic", 28), "HEIC/HEIF");
  ExpectUnsupported(std::string("\0\0\0\x1c" "ftypavif\0\0\0\0avifmif1", 28), "AVIF");
  ExpectUnsupported("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>", "SVG");
  ExpectUnsupported("  <svg width=\"10\" height=\"10\"></svg>", "SVG");
  ExpectUnsupported("%PDF-1.7\n%\xE2\xE3\xCF\xD3\n", "PDF");
  // Bytes of no known format name what they start with.
  Result<Image> html = DecodeImage("<html>502 Bad Gateway</html>", "reply");
  ASSERT_FALSE(html.ok());
  EXPECT_EQ(html.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(html.status().expected().find("starts with \"<html>50\""), std::string::npos) << html.status().ToString();
}

TEST(Codecs, DamagedJpegAndWebpAreCorrupt) {
  std::mt19937 rng(11);
  const std::string jpeg = Encode(".jpg", Noise(64, 64, CV_8UC3, rng), {cv::IMWRITE_JPEG_QUALITY, 90});
  for (size_t keep : {size_t{2}, size_t{200}, jpeg.size() / 2, jpeg.size() - 2}) {
    Result<Image> r = DecodeImage(jpeg.substr(0, keep), "cut.jpg");
    ASSERT_FALSE(r.ok()) << keep;
    EXPECT_EQ(r.status().code(), StatusCode::kCorrupt) << keep;
  }
  std::string bad_scan = jpeg;  // a restart marker in the middle of the entropy-coded data
  bad_scan[bad_scan.size() * 2 / 3] = '\xFF';
  bad_scan[bad_scan.size() * 2 / 3 + 1] = '\xD3';
  Result<Image> scan = DecodeImage(bad_scan, "scan.jpg");
  ASSERT_FALSE(scan.ok());
  EXPECT_EQ(scan.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(scan.status().what().find("cannot decode JPEG"), std::string::npos) << scan.status().ToString();

  const std::string webp = Encode(".webp", Noise(64, 64, CV_8UC3, rng), {cv::IMWRITE_WEBP_QUALITY, 80});
  for (size_t keep : {size_t{12}, size_t{30}, webp.size() / 2, webp.size() - 1}) {
    Result<Image> r = DecodeImage(webp.substr(0, keep), "cut.webp");
    ASSERT_FALSE(r.ok()) << keep;
    EXPECT_EQ(r.status().code(), StatusCode::kCorrupt) << keep;
  }
}

// A valid small PNG whose IHDR is rewritten (with a correct CRC) to claim another size.
std::string PngClaiming(uint32_t w, uint32_t h) {
  Image image(16, 16);
  std::string png = *EncodePng(image);
  for (int i = 0; i < 4; ++i) {
    png[16 + i] = static_cast<char>(w >> (24 - 8 * i));
    png[20 + i] = static_cast<char>(h >> (24 - 8 * i));
  }
  const uint32_t crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(png.data() + 12), 17));
  for (int i = 0; i < 4; ++i) png[29 + i] = static_cast<char>(crc >> (24 - 8 * i));
  return png;
}

TEST(Codecs, APngHeaderThatLiesIsCorruptAndAHugeOneIsRefusedBeforeAllocating) {
  Result<Image> lying = DecodeImage(PngClaiming(512, 512), "lies.png");
  ASSERT_FALSE(lying.ok());
  EXPECT_EQ(lying.status().code(), StatusCode::kCorrupt) << lying.status().ToString();
  for (uint32_t side : {100000u, 50000u}) {
    const auto start = std::chrono::steady_clock::now();
    Result<Image> huge = DecodeImage(PngClaiming(side, side), "huge.png");
    ASSERT_FALSE(huge.ok());
    EXPECT_EQ(huge.status().code(), StatusCode::kUnsupported);
    const std::string size = std::to_string(side) + "x" + std::to_string(side);
    EXPECT_EQ(huge.status().ToString(), "image of " + size + " pixels (huge.png): at most 1073741824 pixels (2^30)");
    // Refused from the header: no gigabytes were allocated or touched.
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  }
}

TEST(Codecs, EncodedPngsRoundTripThroughEveryDecoder) {
  std::mt19937 rng(12);
  Image image(37, 21);
  for (auto& v : image.rgb) v = static_cast<uint8_t>(rng());
  for (int level : {0, 1, 6, 9}) {
    Result<std::string> png = EncodePng(image, level);
    ASSERT_TRUE(png.ok());
    EXPECT_TRUE(DecodeImage(*png, "fast")->rgb == image.rgb) << level;
    EXPECT_TRUE(DecodePng(*png, "spng")->rgb == image.rgb) << level;
    ExpectSameAsOpenCv(*png, "encoded level " + std::to_string(level));
  }
}

}  // namespace
}  // namespace visalign::imaging
