#include "flat_png.h"

#include <gtest/gtest.h>

#include <random>

namespace visalign::violin {
namespace {

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

void ExpectDecodesTo(const imaging::Image& img, int compression) {
  const std::string png = EncodeFlatPng(img, compression);
  ASSERT_FALSE(png.empty());
  auto back = imaging::DecodeImage(png, "flat.png");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->width, img.width);
  EXPECT_EQ(back->height, img.height);
  EXPECT_EQ(back->rgb, img.rgb) << img.width << "x" << img.height << " level " << compression;
}

TEST(FlatPng, BlockImagesDecodeExactlyAtOddSizesAndEveryLevel) {
  for (auto [w, h] : std::vector<std::pair<int, int>>{{256, 256}, {7, 5}, {1, 1}, {2, 3}, {255, 129}})
    for (int level : {0, 1, 9}) ExpectDecodesTo(Blocks(w, h), level);
}

TEST(FlatPng, AnyImageRoundTripsNotOnlyFlatOnes) {
  ExpectDecodesTo(Noise(64, 48), 1);
  ExpectDecodesTo(Noise(3, 1), 6);
}

TEST(FlatPng, SolidImagesAreTiny) {
  imaging::Image solid(256, 256);
  EXPECT_LT(EncodeFlatPng(solid, 1).size(), 1000u);  // 196,608 pixel bytes
}

TEST(FlatPng, RejectsMalformedImages) {
  imaging::Image bad(4, 4);
  bad.rgb.pop_back();
  EXPECT_TRUE(EncodeFlatPng(bad, 1).empty());
  EXPECT_TRUE(EncodeFlatPng(imaging::Image(), 1).empty());
}

}  // namespace
}  // namespace visalign::violin
