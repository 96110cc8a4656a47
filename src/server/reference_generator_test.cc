// Reference generator profiles: each degradation is the documented transformation of the GT.
#include <gtest/gtest.h>

#include "server/reference_generator.h"
#include "visalign/violin_dataset.h"

namespace visalign::server {
namespace {

violin::ManifestItem Item(violin::Layout layout, std::vector<color::Srgb8> targets) {
  violin::ManifestItem it;
  it.id = "x";
  it.prompt = "p";
  it.layout = layout;
  it.targets = std::move(targets);
  return it;
}

std::array<uint8_t, 3> Px(const imaging::Image& img, int x, int y) {
  const uint8_t* p = img.pixel(x, y);
  return {p[0], p[1], p[2]};
}

TEST(ParseProfile, AcceptsTheDocumentedProfilesOnly) {
  EXPECT_EQ(ParseProfile("exact")->kind, Profile::Kind::kExact);
  EXPECT_EQ(ParseProfile("noise:8")->param, 8.0);
  EXPECT_EQ(ParseProfile("hue-shift:-30")->param, -30.0);
  EXPECT_EQ(ParseProfile("layout-5050")->kind, Profile::Kind::kLayout5050);
  EXPECT_FALSE(ParseProfile("noise").ok());
  EXPECT_FALSE(ParseProfile("noise:-1").ok());
  EXPECT_FALSE(ParseProfile("exact:3").ok());
  EXPECT_EQ(ParseProfile("blur").status().where(), "--profile");
}

TEST(RenderDegraded, ExactIsTheGroundTruth) {
  auto it = Item(violin::Layout::kQ4, {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {9, 9, 9}});
  EXPECT_EQ(RenderDegraded(it, 16, 16, *ParseProfile("exact"), 0).rgb, violin::RenderGroundTruth(it, 16, 16).rgb);
}

TEST(RenderDegraded, LayoutSwapsTheSplitOrientation) {
  auto h2 = Item(violin::Layout::kH2, {{200, 0, 0}, {0, 0, 200}});  // top red, bottom blue
  auto img = RenderDegraded(h2, 4, 4, *ParseProfile("layout-5050"), 0);
  EXPECT_EQ(Px(img, 0, 3), (std::array<uint8_t, 3>{200, 0, 0}));  // left half red, also at the bottom
  EXPECT_EQ(Px(img, 3, 0), (std::array<uint8_t, 3>{0, 0, 200}));  // right half blue, also at the top
}

TEST(RenderDegraded, GradientTextureAndObjectFollowTheirDefinitions) {
  auto it = Item(violin::Layout::kSingle, {{100, 100, 100}});
  auto g = RenderDegraded(it, 5, 1, *ParseProfile("gradient"), 0);
  EXPECT_EQ(Px(g, 0, 0), (std::array<uint8_t, 3>{68, 68, 68}));     // -32
  EXPECT_EQ(Px(g, 2, 0), (std::array<uint8_t, 3>{100, 100, 100}));  // centre unchanged
  EXPECT_EQ(Px(g, 4, 0), (std::array<uint8_t, 3>{132, 132, 132}));  // +32
  auto t = RenderDegraded(it, 16, 16, *ParseProfile("texture"), 0);
  EXPECT_EQ(Px(t, 0, 0)[0], 116);
  EXPECT_EQ(Px(t, 8, 0)[0], 84);
  auto o = RenderDegraded(it, 16, 16, *ParseProfile("object"), 0);
  EXPECT_EQ(Px(o, 8, 8), (std::array<uint8_t, 3>{155, 155, 155}));  // disc in the complement
  EXPECT_EQ(Px(o, 0, 0), (std::array<uint8_t, 3>{100, 100, 100}));
}

TEST(RenderDegraded, HueShiftRotatesTheLabHueAndNoiseIsRepeatable) {
  auto it = Item(violin::Layout::kSingle, {{180, 60, 60}});
  auto img = RenderDegraded(it, 2, 2, *ParseProfile("hue-shift:40"), 0);
  const auto p = Px(img, 0, 0);
  color::Lch before = color::LabToLch(color::Srgb8ToLab({180, 60, 60}));
  color::Lch after = color::LabToLch(color::Srgb8ToLab({p[0], p[1], p[2]}));
  EXPECT_NEAR(after.h - before.h, 40.0, 1.5);  // 8-bit rounding moves the hue slightly
  auto n1 = RenderDegraded(it, 8, 8, *ParseProfile("noise:10"), 3);
  auto n2 = RenderDegraded(it, 8, 8, *ParseProfile("noise:10"), 3);
  EXPECT_EQ(n1.rgb, n2.rgb);
  EXPECT_NE(n1.rgb, violin::RenderGroundTruth(it, 8, 8).rgb);
}

}  // namespace
}  // namespace visalign::server
