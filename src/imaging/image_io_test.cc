#include <gtest/gtest.h>

#include "visalign/imaging/image.h"

namespace visalign::imaging {
namespace {

Image Pattern(int w, int h) {
  Image img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = img.pixel(x, y);
      p[0] = static_cast<uint8_t>(x * 7);
      p[1] = static_cast<uint8_t>(y * 13);
      p[2] = static_cast<uint8_t>(x + y);
    }
  return img;
}

TEST(ImageIo, PngRoundTripIsExactAndKeepsChannelOrder) {
  Image img = Pattern(17, 9);
  auto png = EncodePng(img);
  ASSERT_TRUE(png.ok());
  auto back = DecodeImage(*png, "mem.png");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->width, 17);
  EXPECT_EQ(back->height, 9);
  EXPECT_EQ(back->rgb, img.rgb);
}

TEST(ImageIo, GarbageAndEmptyInputAreCorrupt) {
  EXPECT_EQ(DecodeImage("", "a.png").status().code(), StatusCode::kCorrupt);
  auto r = DecodeImage("<html>502 Bad Gateway</html>", "b.png");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().where(), "b.png");
}

TEST(ImageIo, TruncatedPngIsAnError) {
  auto png = EncodePng(Pattern(64, 64), 0);
  ASSERT_TRUE(png.ok());
  EXPECT_FALSE(DecodeImage(std::string_view(*png).substr(0, png->size() / 2), "t.png").ok());
}

TEST(ImageIo, MissingFileIsNotFound) {
  EXPECT_EQ(ReadImage("/nonexistent/x.png").status().code(), StatusCode::kNotFound);
}

TEST(ImageIo, MismatchedBufferIsRejected) {
  Image img(4, 4);
  img.rgb.pop_back();
  EXPECT_FALSE(EncodePng(img).ok());
}

}  // namespace
}  // namespace visalign::imaging
