#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cstring>

#include "imaging/png_decode.h"
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
  Image img = Image::ForOverwrite(rgb.cols, rgb.rows);
  for (int y = 0; y < rgb.rows; ++y)
    std::memcpy(img.pixel(0, y), rgb.ptr<uint8_t>(y), static_cast<size_t>(rgb.cols) * 3);
  return img;
}

// The general decoder, for everything the fast PNG path does not take; it also reports damage.
Result<Image> DecodeWithOpenCv(std::string_view bytes, const std::string& source) {
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

Status NotEmpty(std::string_view bytes, const std::string& source) {
  return bytes.empty() ? Status::Corrupt("empty image file", source, "a PNG, JPEG or WebP image") : Status::Ok();
}

}  // namespace

Result<Image> DecodeImage(std::string_view bytes, const std::string& source) {
  VISALIGN_RETURN_IF_ERROR(NotEmpty(bytes, source));
  if (Image image; DecodePngFast(bytes, image) == PngFastDecode::kDecoded) return image;
  return DecodeWithOpenCv(bytes, source);
}

Result<Image> ReadImage(const std::filesystem::path& path) {
  // One read buffer per thread, reused across files (see ReadFileInto) and consumed by the fast
  // PNG path; one far larger than images usually are is not kept.
  constexpr size_t kKeptBufferBytes = size_t{64} << 20;
  thread_local std::string bytes;
  const std::string source = path.string();
  VISALIGN_RETURN_IF_ERROR(ReadFileInto(path, bytes));
  VISALIGN_RETURN_IF_ERROR(NotEmpty(bytes, source));
  Image image;
  bool overwritten = false;
  Result<Image> result = [&]() -> Result<Image> {
    if (DecodePngFastInPlace(bytes, image, overwritten) == PngFastDecode::kDecoded) return std::move(image);
    if (overwritten) VISALIGN_RETURN_IF_ERROR(ReadFileInto(path, bytes));
    return DecodeWithOpenCv(bytes, source);
  }();
  if (bytes.capacity() > kKeptBufferBytes) std::string().swap(bytes);
  return result;
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
