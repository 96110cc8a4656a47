// The product's decoders (libspng, libjpeg-turbo, libwebp, codecs.h) against the library they
// replace: for every PNG colour type and bit depth, JPEG colour space and WebP kind, DecodeImage
// gives exactly OpenCV's pixels (cv::imdecode, as the product read images before), converted the
// way visalign documents (16-bit v/257 rounded, gray replicated, alpha dropped). Other formats are
// refused naming the format; damaged and oversized files are errors, never crashes or images.
#include "imaging/codecs.h"

#include <gtest/gtest.h>
#include <png.h>
#include <sys/resource.h>
#include <turbojpeg.h>
#include <zlib.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "visalign/imaging/image.h"

namespace visalign::imaging {
namespace {

std::string Bytes(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

// OpenCV's reading of `bytes`, converted as visalign's contract states: 16-bit scaled, gray
// replicated, alpha dropped or composited over the policy's background — blended here in floating
// point, round((c·a + b·(max − a)) / max), independently of the decoders' integer code.
Image OpenCvReference(const std::string& bytes, const AlphaPolicy& alpha = {}) {
  const cv::Mat m = cv::imdecode(cv::Mat(1, static_cast<int>(bytes.size()), CV_8U, const_cast<char*>(bytes.data())),
                                 cv::IMREAD_UNCHANGED);
  EXPECT_FALSE(m.empty());
  const bool wide = m.depth() == CV_16U;
  const double max = wide ? 65535.0 : 255.0;
  const int channels = m.channels();
  Image out(m.cols, m.rows);
  double alpha_min = max;
  for (int y = 0; y < m.rows; ++y)
    for (int x = 0; x < m.cols; ++x) {
      double v[4] = {0, 0, 0, max};
      for (int c = 0; c < channels; ++c)
        v[c] = wide ? m.ptr<uint16_t>(y)[x * channels + c] : m.ptr<uint8_t>(y)[x * channels + c];
      const bool has_alpha = channels == 2 || channels == 4;
      const double a = has_alpha ? v[channels - 1] : max;
      alpha_min = std::min(alpha_min, a);
      const double rgb[3] = {channels <= 2 ? v[0] : v[2], channels <= 2 ? v[0] : v[1], v[0]};
      for (int c = 0; c < 3; ++c) {
        double value = rgb[c];
        if (alpha.mode == AlphaPolicy::Mode::kComposite && a < max)
          value = std::round((rgb[c] * a + alpha.background[c] * (max / 255.0) * (max - a)) / max);
        out.pixel(x, y)[c] = wide ? Scale16To8(static_cast<uint16_t>(value)) : static_cast<uint8_t>(value);
      }
    }
  out.alpha_min = alpha_min == max
                      ? 255
                      : std::min<uint8_t>(
                            wide ? Scale16To8(static_cast<uint16_t>(alpha_min)) : static_cast<uint8_t>(alpha_min), 254);
  return out;
}

void ExpectSameAsOpenCv(const std::string& bytes, const std::string& what, const AlphaPolicy& alpha = {}) {
  Result<Image> ours = DecodeImage(bytes, what, alpha);
  ASSERT_TRUE(ours.ok()) << what << ": " << ours.status().ToString();
  const Image reference = OpenCvReference(bytes, alpha);
  ASSERT_EQ(ours->width, reference.width) << what;
  ASSERT_EQ(ours->height, reference.height) << what;
  EXPECT_TRUE(ours->rgb == reference.rgb) << what;
  EXPECT_EQ(ours->alpha_min, reference.alpha_min) << what;
}

const AlphaPolicy kOverOlive{AlphaPolicy::Mode::kComposite, {128, 128, 0}};

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
    for (auto& c : palette)
      c = {static_cast<png_byte>(rng()), static_cast<png_byte>(rng()), static_cast<png_byte>(rng())};
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
      {PNG_COLOR_TYPE_GRAY, 1},        {PNG_COLOR_TYPE_GRAY, 2},
      {PNG_COLOR_TYPE_GRAY, 4},        {PNG_COLOR_TYPE_GRAY, 8},
      {PNG_COLOR_TYPE_GRAY, 16},       {PNG_COLOR_TYPE_GRAY_ALPHA, 8},
      {PNG_COLOR_TYPE_GRAY_ALPHA, 16}, {PNG_COLOR_TYPE_PALETTE, 1},
      {PNG_COLOR_TYPE_PALETTE, 2},     {PNG_COLOR_TYPE_PALETTE, 4},
      {PNG_COLOR_TYPE_PALETTE, 8},     {PNG_COLOR_TYPE_PALETTE, 8, false, true},
      {PNG_COLOR_TYPE_RGB, 16},        {PNG_COLOR_TYPE_RGB_ALPHA, 16},
      {PNG_COLOR_TYPE_RGB, 8, true},   {PNG_COLOR_TYPE_RGB_ALPHA, 8, true},
      {PNG_COLOR_TYPE_GRAY, 16, true}, {PNG_COLOR_TYPE_PALETTE, 4, true, true},
  };
  for (const PngKind& k : kinds)
    for (auto [w, h] : {std::pair{1, 1}, {13, 7}, {64, 33}}) {
      const std::string what = "PNG type " + std::to_string(k.color_type) + " depth " + std::to_string(k.bit_depth) +
                               (k.interlaced ? " interlaced" : "") + (k.trns ? " tRNS" : "") + " " + std::to_string(w) +
                               "x" + std::to_string(h);
      const std::string png = WritePngKind(k, w, h, rng);
      ExpectSameAsOpenCv(png, what);
      ExpectSameAsOpenCv(png, what + " over olive", kOverOlive);
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
  EXPECT_EQ(
      tjCompress2(encoder, pixels.data, pixels.cols, 0, pixels.rows, pixel_format, &jpeg, &size, subsampling, 90, 0), 0)
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
    ExpectSameAsOpenCv(Encode(".webp", Noise(w, h, CV_8UC3, rng), {cv::IMWRITE_WEBP_QUALITY, 80}),
                       "WebP lossy " + size);
    ExpectSameAsOpenCv(Encode(".webp", Noise(w, h, CV_8UC3, rng), {cv::IMWRITE_WEBP_QUALITY, 101}),
                       "WebP lossless " + size);
    const std::string with_alpha = Encode(".webp", Noise(w, h, CV_8UC4, rng), {cv::IMWRITE_WEBP_QUALITY, 101});
    ExpectSameAsOpenCv(with_alpha, "WebP lossless with alpha " + size);
    ExpectSameAsOpenCv(with_alpha, "WebP lossless with alpha over olive " + size, kOverOlive);
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
  ExpectUnsupported(std::string("\0\0\0\x1c"
                                "ftypheic\0\0\0\0mif1heic",
                                24),
                    "HEIC/HEIF");
  ExpectUnsupported(std::string("\0\0\0\x1c"
                                "ftypavif\0\0\0\0avifmif1",
                                24),
                    "AVIF");
  ExpectUnsupported("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>", "SVG");
  ExpectUnsupported("  <svg width=\"10\" height=\"10\"></svg>", "SVG");
  ExpectUnsupported("%PDF-1.7\n%\xE2\xE3\xCF\xD3\n", "PDF");
  // OpenCV's imdecode once reached its JPEG 2000 decoder from here (the fuzzer found it): refused by name.
  ExpectUnsupported(std::string("\0\0\0\x0CjP  \r\n\x87\n\0\0\0\x14"
                                "ftypjp2 ",
                                24),
                    "JPEG 2000");
  ExpectUnsupported(std::string("\xFF\x4F\xFF\x51\0\x2F\0\0", 8), "JPEG 2000");
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

// A valid small PNG whose IHDR is rewritten (with a correct CRC) to claim another size (and, when
// given, another PNG colour type: 6 is RGBA).
std::string PngClaiming(uint32_t w, uint32_t h, char color_type = 2) {
  Image image(16, 16);
  std::string png = *EncodePng(image);
  for (int i = 0; i < 4; ++i) {
    png[16 + i] = static_cast<char>(w >> (24 - 8 * i));
    png[20 + i] = static_cast<char>(h >> (24 - 8 * i));
  }
  png[25] = color_type;
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
    EXPECT_EQ(huge.status().ToString(),
              "image of " + size + " pixels (huge.png): at most 67108864 pixels (the image size limit)");
    // Refused from the header: no gigabytes were allocated or touched.
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  }
}

// The process's peak resident memory so far (getrusage), in KiB.
long PeakRssKib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// The fuzzer's 69-byte PNG claiming 32768x32768 RGBA made the fast path zero-fill 4 GiB before
// inflating anything. Memory must follow the data: refused by the pixel limit, and with the limit
// raised, refused because a few bytes cannot inflate to 4 GiB — before anything is allocated.
TEST(Codecs, AHeaderClaimingMoreThanTheDataCanHoldIsRefusedBeforeAllocating) {
  const std::string tiny = PngClaiming(32768, 32768, 6);
  EXPECT_LT(tiny.size(), 100u);
  EXPECT_EQ(DecodeImage(tiny, "tiny.png").status().code(), StatusCode::kUnsupported);
  SetMaxImagePixels(uint64_t{1} << 31);
  EXPECT_EQ(MaxImagePixels(), uint64_t{1} << 31);
  const long peak_kib_before = PeakRssKib();
  const auto start = std::chrono::steady_clock::now();
  const Status st = DecodeImage(tiny, "tiny.png").status();
  EXPECT_EQ(st.code(), StatusCode::kCorrupt) << st.ToString();
  EXPECT_EQ(st.what(), "image data too short for 32768x32768 pixels (" + std::to_string(tiny.size()) + " bytes)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_LT(PeakRssKib() - peak_kib_before, 64 * 1024) << "the decoder touched memory for the claimed size";
  SetMaxImagePixels(0);
  EXPECT_EQ(MaxImagePixels(), kDefaultMaxImagePixels);
  // Within the default limit (64 Mi pixels), the same: 8192x8192 RGBA would be 256 MiB of rows.
  const Status within = DecodeImage(PngClaiming(8192, 8192, 6), "within.png").status();
  EXPECT_EQ(within.code(), StatusCode::kCorrupt) << within.ToString();
  EXPECT_NE(within.what().find("image data too short"), std::string::npos) << within.ToString();
  // A lower limit refuses what the default accepts.
  SetMaxImagePixels(100);
  EXPECT_EQ(DecodeImage(PngClaiming(16, 16), "small.png").status().code(), StatusCode::kUnsupported);
  SetMaxImagePixels(0);
  EXPECT_TRUE(DecodeImage(PngClaiming(16, 16), "small.png").ok());
}

// The fast path's RGBA files (every filter, odd sizes) composite like the general path, and the
// extremes are exact: alpha 0 gives the background, alpha 255 the stored colour.
TEST(Codecs, TransparentPixelsAreCompositedOrDroppedAndTheirMinimumKept) {
  std::mt19937 rng(13);
  for (auto [w, h] : {std::pair{1, 1}, {17, 9}, {64, 48}}) {
    const std::string png = Encode(".png", Noise(w, h, CV_8UC4, rng));
    ExpectSameAsOpenCv(png, "RGBA PNG " + std::to_string(w));
    ExpectSameAsOpenCv(png, "RGBA PNG over olive " + std::to_string(w), kOverOlive);
  }
  cv::Mat clear(4, 4, CV_8UC4, cv::Scalar(10, 20, 30, 0));
  const std::string transparent = Encode(".png", clear);
  Result<Image> dropped = DecodeImage(transparent, "clear.png");
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(dropped->alpha_min, 0);
  EXPECT_EQ(dropped->pixel(3, 3)[0], 30);  // the hidden RGB (BGR 10, 20, 30 stored)
  Result<Image> composited = DecodeImage(transparent, "clear.png", kOverOlive);
  ASSERT_TRUE(composited.ok());
  for (size_t i = 0; i < composited->rgb.size(); ++i) EXPECT_EQ(composited->rgb[i], kOverOlive.background[i % 3]);
  cv::Mat opaque(4, 4, CV_8UC4, cv::Scalar(10, 20, 30, 255));
  Result<Image> solid = DecodeImage(Encode(".png", opaque), "opaque.png", kOverOlive);
  ASSERT_TRUE(solid.ok());
  EXPECT_EQ(solid->alpha_min, 255);
  EXPECT_EQ(solid->pixel(0, 0)[0], 30);
  EXPECT_EQ(DecodeImage(Encode(".jpg", Noise(8, 8, CV_8UC3, rng)), "a.jpg", kOverOlive)->alpha_min, 255);
}

TEST(Codecs, EncodedPngsRoundTripThroughEveryDecoder) {
  std::mt19937 rng(12);
  Image image(37, 21);
  for (auto& v : image.rgb) v = static_cast<uint8_t>(rng());
  for (int level : {0, 1, 6, 9}) {
    Result<std::string> png = EncodePng(image, level);
    ASSERT_TRUE(png.ok());
    EXPECT_TRUE(DecodeImage(*png, "fast")->rgb == image.rgb) << level;
    EXPECT_TRUE(DecodePng(*png, "spng", {})->rgb == image.rgb) << level;
    ExpectSameAsOpenCv(*png, "encoded level " + std::to_string(level));
  }
}

}  // namespace
}  // namespace visalign::imaging
