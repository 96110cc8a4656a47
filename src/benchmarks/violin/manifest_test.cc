#include "visalign/benchmarks/violin/manifest.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "testing/dirs.h"
#include "visalign/core/io.h"

namespace visalign::violin {
namespace {

namespace fs = std::filesystem;

ManifestItem H2Item() {
  ManifestItem item;
  item.id = "v2-t03-00007";
  item.variation = 2;
  item.template_id = "v2-h2-03";
  item.prompt = "Top \"#72672C\", bottom #D9B451.";
  item.layout = Layout::kH2;
  item.targets = {{0x72, 0x67, 0x2C}, {0xD9, 0xB4, 0x51}};
  item.levels = {3, 3};
  item.target_names = {"light olive brown", "light yellow"};
  item.image = "images/v2-t03-00007.png";
  item.split = "train";
  item.prompt_split = "test";
  item.hue_split1 = "train";
  item.hue_split2 = "train";
  return item;
}

const std::string kH2Line =
    R"({"id":"v2-t03-00007","variation":2,"language":"en","notation":"hex","template_id":"v2-h2-03",)"
    R"("prompt":"Top \"#72672C\", bottom #D9B451.","layout":"h2","targets":["#72672C","#D9B451"],"fuzzy":null,)"
    R"("levels":[3,3],"target_names":["light olive brown","light yellow"],"image":"images/v2-t03-00007.png",)"
    R"("split":"train","prompt_split":"test","hue_split1":"train","hue_split2":"train"})";

TEST(Manifest, LineHasFixedKeyOrderAndRoundTrips) {
  EXPECT_EQ(ManifestLine(H2Item()), kH2Line);
  auto back = ParseManifestLine(kH2Line, "m:1");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ManifestLine(*back), kH2Line);
  EXPECT_EQ(back->targets[1], (color::Srgb8{0xD9, 0xB4, 0x51}));
}

TEST(Manifest, FuzzyAndUtf8AndNullImageRoundTrip) {
  ManifestItem item;
  item.id = "v4-t01-00001";
  item.variation = 4;
  item.language = "zh";
  item.template_id = "t";
  item.prompt = "生成一张颜色为 #B92842 的纯色图像。";
  item.targets = {{1, 2, 3}};
  item.fuzzy = std::make_pair(color::Srgb8{0, 0, 0}, color::Srgb8{2, 4, 6});
  item.levels = {2};
  item.target_names = {"between a and b"};
  item.split = item.prompt_split = item.hue_split1 = item.hue_split2 = "test";
  const std::string line = ManifestLine(item);
  EXPECT_NE(line.find("\"prompt\":\"生成一张颜色为 #B92842 的纯色图像。\""), std::string::npos) << line;
  EXPECT_NE(line.find("\"fuzzy\":[\"#000000\",\"#020406\"]"), std::string::npos) << line;
  EXPECT_NE(line.find("\"image\":null"), std::string::npos) << line;
  auto back = ParseManifestLine(line, "m:1");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ManifestLine(*back), line);
  EXPECT_FALSE(back->image.has_value());
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  s.replace(s.find(from), from.size(), to);
  return s;
}

TEST(Manifest, RejectsBadLinesNamingLineAndField) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"not json", "invalid JSON (syntax error at byte 2) (m:4)"},
      {"[1, 2]", "not a JSON object (m:4)"},
      {Replace(kH2Line, "\"#D9B451\"]", "\"#D9B45\"]"), "invalid color \"#D9B45\" (m:4 field targets): #RRGGBB"},
      {Replace(kH2Line, ",\"#D9B451\"]", "]"), "(m:4 field targets): a list of 2"},
      {Replace(kH2Line, "\"fuzzy\":null", "\"fuzzy\":[\"#000000\",\"#FFFFFF\"]"), "a fuzzy range on a h2 item"},
      {Replace(kH2Line, "\"levels\":[3,3]", "\"levels\":[3,4]"), "unexpected level 4 (m:4 field levels)"},
      {Replace(kH2Line, "\"split\":\"train\"", "\"split\":\"dev\""), "unexpected value \"dev\" (m:4 field split)"},
      {Replace(kH2Line, "\"variation\":2", "\"variation\":9"), "out of range: 9 (m:4 field variation)"},
      {Replace(kH2Line, "\"layout\":\"h2\"", "\"layout\":\"h3\""), "unknown layout \"h3\" (m:4 field layout)"},
      {Replace(kH2Line, "images/v2-t03-00007.png", "../escape.png"), "unsafe image path"},
      {Replace(kH2Line, "\"language\":\"en\",", ""), "missing field \"language\" (m:4)"},
  };
  for (const auto& [line, message] : cases) {
    auto r = ParseManifestLine(line, "m:4");
    ASSERT_FALSE(r.ok()) << line;
    EXPECT_NE(r.status().ToString().find(message), std::string::npos) << r.status().ToString();
  }
}

TEST(Manifest, LoadNamesDuplicateIdsAndFingerprintsTheFile) {
  const visalign::testing::TempDir tmp;
  const fs::path& dir = tmp.path();
  ASSERT_TRUE(WriteFileAtomic(dir / "manifest.jsonl", kH2Line + "\n").ok());
  auto one = LoadManifest(dir);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->size(), 1u);
  auto fp = ManifestFingerprint(dir);
  ASSERT_TRUE(fp.ok());
  EXPECT_EQ(*fp, Sha256Hex(kH2Line + "\n"));

  ASSERT_TRUE(WriteFileAtomic(dir / "manifest.jsonl", kH2Line + "\n" + kH2Line + "\n").ok());
  auto dup = LoadManifest(dir);
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().ToString().find("duplicate id \"v2-t03-00007\" (first on line 1)"), std::string::npos);
  EXPECT_NE(dup.status().where().find("manifest.jsonl:2 field id"), std::string::npos) << dup.status().ToString();
}

TEST(Layout, NamesAndBlockCounts) {
  for (Layout l : {Layout::kSingle, Layout::kH2, Layout::kV2, Layout::kQ4}) EXPECT_EQ(*ParseLayout(LayoutName(l)), l);
  EXPECT_EQ(BlockCount(Layout::kSingle), 1);
  EXPECT_EQ(BlockCount(Layout::kV2), 2);
  EXPECT_EQ(BlockCount(Layout::kQ4), 4);
  EXPECT_FALSE(ParseLayout("q2").ok());
}

struct RectCase {
  Layout layout;
  int index, width, height;
  Rect expected;
};

TEST(Layout, BlockRectsSplitAtFloorOfHalf) {
  const std::vector<RectCase> cases{
      {Layout::kSingle, 0, 7, 5, {0, 0, 7, 5}},
      {Layout::kH2, 0, 7, 5, {0, 0, 7, 2}},  // rows split at floor(5/2) = 2
      {Layout::kH2, 1, 7, 5, {0, 2, 7, 3}},
      {Layout::kV2, 0, 7, 5, {0, 0, 3, 5}},  // columns split at floor(7/2) = 3
      {Layout::kV2, 1, 7, 5, {3, 0, 4, 5}},
      {Layout::kQ4, 0, 7, 5, {0, 0, 3, 2}},
      {Layout::kQ4, 1, 7, 5, {3, 0, 4, 2}},
      {Layout::kQ4, 2, 7, 5, {0, 2, 3, 3}},
      {Layout::kQ4, 3, 7, 5, {3, 2, 4, 3}},
      {Layout::kH2, 0, 1, 1, {0, 0, 1, 0}},  // a 1-pixel image has an empty top block
  };
  for (const RectCase& c : cases) {
    Rect r = BlockRect(c.layout, c.index, c.width, c.height);
    EXPECT_EQ(std::tie(r.x, r.y, r.w, r.h), std::tie(c.expected.x, c.expected.y, c.expected.w, c.expected.h))
        << LayoutName(c.layout) << " block " << c.index;
  }
}

}  // namespace
}  // namespace visalign::violin
