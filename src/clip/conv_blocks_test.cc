// AvgPool2d(count_include_pad=False) against windows averaged by hand.
#include "clip/conv_blocks.h"

#include <gtest/gtest.h>

namespace visalign::clip {
namespace {

TEST(AvgPool2dExcludePadTest, AveragesOnlyTheCoveredPixels) {
  // One 5×5 channel holding 1..25 row-major; 3×3 windows, stride 2, padding 1 -> 3×3.
  FeatureMap x(1, 5, 5, 1);
  for (int k = 0; k < 25; ++k) x.data[k] = static_cast<float>(k + 1);
  const FeatureMap y = AvgPool2dExcludePad(x, 3, 2, 1);
  ASSERT_EQ(y.h, 3);
  ASSERT_EQ(y.w, 3);
  EXPECT_FLOAT_EQ(y.data[0], (1 + 2 + 6 + 7) / 4.0f);          // corner: 4 pixels, not 9
  EXPECT_FLOAT_EQ(y.data[1], (2 + 3 + 4 + 7 + 8 + 9) / 6.0f);  // top edge: 6
  EXPECT_FLOAT_EQ(y.data[2], (4 + 5 + 9 + 10) / 4.0f);
  EXPECT_FLOAT_EQ(y.data[4], 13.0f);  // inside: 7..9, 12..14, 17..19
  EXPECT_FLOAT_EQ(y.data[8], (19 + 20 + 24 + 25) / 4.0f);
  // An even size: 4 -> 2, the last window reaching into the padding on one side only.
  FeatureMap even(1, 4, 4, 2);
  for (size_t k = 0; k < even.data.size(); ++k) even.data[k] = static_cast<float>(k % 2 == 0 ? k / 2 : 100);
  const FeatureMap z = AvgPool2dExcludePad(even, 3, 2, 1);
  ASSERT_EQ(z.h, 2);
  EXPECT_FLOAT_EQ(z.data[0], (0 + 1 + 4 + 5) / 4.0f);                           // channel 0 of (0, 0)
  EXPECT_FLOAT_EQ(z.data[1], 100.0f);                                           // channel 1: constant
  EXPECT_FLOAT_EQ(z.data[6], (5 + 6 + 7 + 9 + 10 + 11 + 13 + 14 + 15) / 9.0f);  // (1, 1)
}

}  // namespace
}  // namespace visalign::clip
