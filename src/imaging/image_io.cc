#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <png.h>

#include <csetjmp>
#include <cstring>

#include "visalign/imaging.h"
#include "visalign/io.h"

namespace visalign::imaging {
namespace {

// Converts any decoded OpenCV matrix (1/3/4 channels, 8 or 16 bits, BGR order) to our RGB8 image.
Result<Image> FromMat(const cv::Mat& decoded, const std::string& source) {
  cv::Mat m = decoded;
  if (m.depth() == CV_16U) {
    cv::Mat m8;
    m.convertTo(m8, CV_8U, 1.0 / 257.0);
    m = m8;
  } else if (m.depth() != CV_8U) {
    return Status::Unsupported("unsupported pixel depth", source, "8- or 16-bit images");
  }
  cv::Mat rgb;
  switch (m.channels()) {
    case 1: cv::cvtColor(m, rgb, cv::COLOR_GRAY2RGB); break;
    case 3: cv::cvtColor(m, rgb, cv::COLOR_BGR2RGB); break;
    case 4: cv::cvtColor(m, rgb, cv::COLOR_BGRA2RGB); break;
    default: return Status::Unsupported("unsupported channel count " + std::to_string(m.channels()), source,
                                        "gray, RGB or RGBA images");
  }
  Image img(rgb.cols, rgb.rows);
  for (int y = 0; y < rgb.rows; ++y)
    std::memcpy(img.pixel(0, y), rgb.ptr<uint8_t>(y), static_cast<size_t>(rgb.cols) * 3);
  return img;
}

// Fast path for the common 8-bit RGB / RGBA PNG: libpng decodes straight into the image's rows
// (alpha stripped by libpng), skipping OpenCV's BGR matrix, its conversion and the copy. No other
// transformation is requested (like OpenCV, no gamma), so pixels equal the OpenCV path's.
enum class PngFastPath { kDecoded, kNotHandled, kFailed };

// Beyond this OpenCV's own limit (CV_IO_MAX_IMAGE_PIXELS) applies: leave such files to it.
constexpr size_t kMaxFastPathPixels = size_t{1} << 30;
constexpr size_t kPngSignatureSize = 8;

struct PngInput {
  const uint8_t* data;
  size_t size;
  size_t pos;
};

void ReadPngBytes(png_structp png, png_bytep out, size_t n) {
  auto* in = static_cast<PngInput*>(png_get_io_ptr(png));
  if (n > in->size - in->pos) png_error(png, "truncated PNG");
  std::memcpy(out, in->data + in->pos, n);
  in->pos += n;
}
// libpng's default handlers print to stderr; errors are reported by the caller instead.
[[noreturn]] void OnPngError(png_structp png, png_const_charp) { std::longjmp(png_jmpbuf(png), 1); }
void OnPngWarning(png_structp, png_const_charp) {}

// Only trivially destructible locals live between setjmp and a possible longjmp; `image` and
// `rows` belong to the caller.
PngFastPath DecodeRgbPng(std::string_view bytes, Image& image, std::vector<png_bytep>& rows) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < kPngSignatureSize || png_sig_cmp(data, 0, kPngSignatureSize) != 0)
    return PngFastPath::kNotHandled;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, OnPngError, OnPngWarning);
  if (!png) return PngFastPath::kNotHandled;
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return PngFastPath::kNotHandled;
  }
  PngInput input{data, bytes.size(), 0};
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return PngFastPath::kFailed;
  }
  png_set_read_fn(png, &input, ReadPngBytes);
  png_read_info(png, info);
  const int color_type = png_get_color_type(png, info);
  const png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  if (png_get_bit_depth(png, info) != 8 || (color_type != PNG_COLOR_TYPE_RGB && color_type != PNG_COLOR_TYPE_RGBA) ||
      static_cast<size_t>(width) * height > kMaxFastPathPixels) {
    png_destroy_read_struct(&png, &info, nullptr);
    return PngFastPath::kNotHandled;
  }
  if (color_type == PNG_COLOR_TYPE_RGBA) png_set_strip_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  image = Image(static_cast<int>(width), static_cast<int>(height));
  rows.resize(height);
  for (png_uint_32 y = 0; y < height; ++y) rows[y] = image.pixel(0, static_cast<int>(y));
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return PngFastPath::kDecoded;
}

}  // namespace

Result<Image> DecodeImage(std::string_view bytes, const std::string& source) {
  if (bytes.empty()) return Status::Corrupt("empty image file", source, "a PNG, JPEG or WebP image");
  {
    // A file the fast path rejects or fails on goes through OpenCV, which decides (and reports).
    Image image;
    std::vector<png_bytep> rows;
    if (DecodeRgbPng(bytes, image, rows) == PngFastPath::kDecoded) return image;
  }
  cv::Mat buf(1, static_cast<int>(bytes.size()), CV_8U, const_cast<char*>(bytes.data()));
  cv::Mat decoded;
  try {
    decoded = cv::imdecode(buf, cv::IMREAD_UNCHANGED);
  } catch (const cv::Exception& e) {
    return Status::Corrupt("cannot decode image", source, "a valid PNG, JPEG or WebP image");
  }
  if (decoded.empty()) return Status::Corrupt("cannot decode image", source, "a valid PNG, JPEG or WebP image");
  return FromMat(decoded, source);
}

Result<Image> ReadImage(const std::filesystem::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return DecodeImage(bytes, path.string());
}

Result<std::string> EncodePng(const Image& image, int compression) {
  if (image.width <= 0 || image.height <= 0 ||
      image.rgb.size() != static_cast<size_t>(image.width) * image.height * 3)
    return Status::InvalidArgument("image buffer does not match its size", "EncodePng", "width*height*3 bytes");
  cv::Mat rgb(image.height, image.width, CV_8UC3, const_cast<uint8_t*>(image.rgb.data()));
  cv::Mat bgr;
  cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
  std::vector<uint8_t> out;
  if (!cv::imencode(".png", bgr, out, {cv::IMWRITE_PNG_COMPRESSION, compression}))
    return Status::Internal("PNG encoding failed");
  return std::string(out.begin(), out.end());
}

Status WritePng(const std::filesystem::path& path, const Image& image, int compression) {
  VISALIGN_ASSIGN_OR_RETURN(std::string png, EncodePng(image, compression));
  return WriteFileAtomic(path, png);
}

}  // namespace visalign::imaging
