// DecodeImage's libpng fast path (8-bit RGB/RGBA PNGs) must give exactly OpenCV's pixels.
#include <gtest/gtest.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <png.h>

#include <random>
#include <string>

#include "visalign/imaging.h"

namespace visalign::imaging {
namespace {

struct PngSpec {
  int width, height;
  int color_type;  // PNG_COLOR_TYPE_RGB or PNG_COLOR_TYPE_RGBA
  bool interlaced;
  int filters;     // PNG_FILTER_* mask for the encoder
  int level;       // zlib level
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
  png_write_info(png, info);
  std::vector<png_bytep> rows(spec.height);
  for (int y = 0; y < spec.height; ++y) rows[y] = &pixels[static_cast<size_t>(y) * spec.width * channels];
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

// OpenCV's reading of the same bytes, as RGB (alpha dropped).
void ExpectEqualsOpenCv(const std::string& bytes, const std::string& what) {
  const cv::Mat decoded = cv::imdecode(cv::Mat(1, static_cast<int>(bytes.size()), CV_8U, const_cast<char*>(bytes.data())),
                                       cv::IMREAD_UNCHANGED);
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

TEST(PngFastPath, RgbAndRgbaPngsDecodeExactlyAsOpenCv) {
  std::mt19937 rng(12);
  const int filter_sets[] = {PNG_FILTER_NONE, PNG_FILTER_SUB, PNG_FILTER_UP, PNG_FILTER_AVG, PNG_FILTER_PAETH,
                             PNG_ALL_FILTERS};
  for (int color_type : {PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGBA})
    for (bool interlaced : {false, true})
      for (int filters : filter_sets)
        for (auto [w, h] : {std::pair{1, 1}, {7, 3}, {33, 17}, {64, 64}}) {
          const PngSpec spec{w, h, color_type, interlaced, filters, 6};
          ExpectEqualsOpenCv(EncodeTestPng(spec, rng), "type " + std::to_string(color_type) + " interlaced " +
                                                           std::to_string(interlaced) + " filters " +
                                                           std::to_string(filters) + " " + std::to_string(w) +
                                                           "x" + std::to_string(h));
        }
}

TEST(PngFastPath, DamagedPngsStayErrors) {
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
