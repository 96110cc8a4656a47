#include "visalign/core/base64.h"

#include <gtest/gtest.h>

namespace visalign {
namespace {

TEST(Base64, RoundTripsAndRejectsDamagedInput) {
  EXPECT_EQ(EncodeBase64("foobar"), "Zm9vYmFy");  // RFC 4648 section 10 vectors
  EXPECT_EQ(EncodeBase64("fo"), "Zm8=");
  EXPECT_EQ(EncodeBase64("f"), "Zg==");
  EXPECT_EQ(DecodeBase64("Zm9v\nYmFy"), "foobar");
  EXPECT_EQ(DecodeBase64("Zg=="), "f");
  EXPECT_EQ(DecodeBase64("Zm9vYmF"), std::nullopt);   // truncated
  EXPECT_EQ(DecodeBase64("Zm=vYmFy"), std::nullopt);  // padding inside
  EXPECT_EQ(DecodeBase64("Zm9v!mFy"), std::nullopt);
}

}  // namespace
}  // namespace visalign
