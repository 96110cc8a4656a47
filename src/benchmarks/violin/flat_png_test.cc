#include "flat_png.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>

namespace visalign::violin {
namespace {

constexpr size_t kIdatOffset = 8 + 12 + 13;  // signature, IHDR chunk (length, type, 13 bytes, CRC)

imaging::Image Blocks(int w, int h) {
  imaging::Image img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = img.pixel(x, y);
      p[0] = x < w / 2 ? 0xD9 : 0x10;
      p[1] = y < h / 2 ? 0xB4 : 0xFF;
      p[2] = 0x51;
    }
  return img;
}

imaging::Image Noise(int w, int h) {
  imaging::Image img(w, h);
  std::mt19937 gen(3);
  for (uint8_t& v : img.rgb) v = static_cast<uint8_t>(gen());
  return img;
}

// The IDAT payload inflated by zlib itself, which verifies the Adler-32 checksum.
std::string InflatedIdat(const std::string& png) {
  const uint32_t len = (uint32_t(uint8_t(png[kIdatOffset])) << 24) | (uint32_t(uint8_t(png[kIdatOffset + 1])) << 16) |
                       (uint32_t(uint8_t(png[kIdatOffset + 2])) << 8) | uint8_t(png[kIdatOffset + 3]);
  EXPECT_EQ(png.substr(kIdatOffset + 4, 4), "IDAT");
  std::string out(1 << 22, '\0');
  uLongf out_len = out.size();
  const int rc = uncompress(reinterpret_cast<Bytef*>(out.data()), &out_len,
                            reinterpret_cast<const Bytef*>(png.data() + kIdatOffset + 8), len);
  EXPECT_EQ(rc, Z_OK);
  out.resize(rc == Z_OK ? out_len : 0);
  return out;
}

void ExpectDecodesTo(const imaging::Image& img) {
  const std::string png = EncodeFlatPng(img);
  ASSERT_FALSE(png.empty());
  EXPECT_EQ(InflatedIdat(png).size(), static_cast<size_t>(img.height) * (1 + 3 * img.width));
  auto back = imaging::DecodeImage(png, "flat.png");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->width, img.width);
  EXPECT_EQ(back->height, img.height);
  EXPECT_EQ(back->rgb, img.rgb) << img.width << "x" << img.height;
}

TEST(FlatPng, BlockImagesDecodeExactlyAtOddSizes) {
  for (auto [w, h] : std::vector<std::pair<int, int>>{{256, 256}, {7, 5}, {1, 1}, {2, 3}, {255, 129}, {1024, 3}})
    ExpectDecodesTo(Blocks(w, h));
}

TEST(FlatPng, RunsAroundTheMaximumMatchLengthOf258) {
  // A black row filters to [1, 0 x 3w]: zero runs of 3..270 bytes cross 258 (w = 86) and leave
  // 1- and 2-byte remainders (w = 87: 261 = 258 + 3; w = 260/3...).
  for (int w = 1; w <= 90; ++w) ExpectDecodesTo(imaging::Image(w, 2));
}

TEST(FlatPng, AnyImageRoundTripsNotOnlyFlatOnes) {
  ExpectDecodesTo(Noise(64, 48));
  ExpectDecodesTo(Noise(3, 1));
}

TEST(FlatPng, FlatImagesAreSmall) {
  // 196,608 pixel bytes; each 769-byte scanline costs a literal or two and three 258-byte matches.
  EXPECT_LT(EncodeFlatPng(imaging::Image(256, 256)).size(), 2100u);
  EXPECT_LT(EncodeFlatPng(Blocks(256, 256)).size(), 2100u);
}

TEST(FlatPng, RejectsMalformedImages) {
  imaging::Image bad(4, 4);
  bad.rgb.pop_back();
  EXPECT_TRUE(EncodeFlatPng(bad).empty());
  EXPECT_TRUE(EncodeFlatPng(imaging::Image()).empty());
}

}  // namespace
}  // namespace visalign::violin
