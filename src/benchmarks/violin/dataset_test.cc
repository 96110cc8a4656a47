#include "visalign/benchmarks/violin/dataset.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "dataset_sampling.h"
#include "testing/dirs.h"
#include "visalign/core/io.h"

namespace visalign::violin {
namespace {

namespace fs = std::filesystem;

DatasetOptions Options(double scale, uint64_t seed = 1) {
  DatasetOptions o;
  o.scale = scale;
  o.seed = seed;
  o.write_images = false;
  o.show_progress = false;
  return o;
}

std::vector<ManifestItem> Build(const DatasetOptions& o) {
  auto items = BuildItems(o);
  EXPECT_TRUE(items.ok()) << items.status().ToString();
  return items.ok() ? *items : std::vector<ManifestItem>{};
}

const std::vector<ManifestItem>& FullScale() {
  static const std::vector<ManifestItem> items = Build(Options(1.0));
  return items;
}

std::string Lines(const std::vector<ManifestItem>& items) {
  std::string s;
  for (const ManifestItem& it : items) s += ManifestLine(it) + "\n";
  return s;
}

// The color texts of a prompt in order of appearance: #RRGGBB, rgb(...) and hsl(...).
std::vector<std::string> ColorTexts(const std::string& prompt) {
  static const std::regex kColor(R"(#[0-9A-F]{6}|rgb\([^)]*\)|hsl\([^)]*\))");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(prompt.begin(), prompt.end(), kColor); it != std::sregex_iterator(); ++it)
    out.push_back(it->str());
  return out;
}

// CSS Color 4 hsl() -> sRGB, written independently of the color module:
// f(n) = l - a * max(-1, min(k - 3, 9 - k, 1)), k = (n + h/30) mod 12, a = s * min(l, 1 - l).
color::Srgb8 CssHslTo8Bit(double h, double s, double l) {
  auto f = [&](double n) {
    double k = std::fmod(n + h / 30.0, 12.0);
    double a = s * std::min(l, 1 - l);
    double v = l - a * std::max(-1.0, std::min({k - 3, 9 - k, 1.0}));
    return static_cast<uint8_t>(std::lround(v * 255));
  };
  return {f(0), f(8), f(4)};
}

TEST(DatasetCounts, ScaleOneHasThePublishedSizes) {
  const Json c = CountItems(FullScale());
  EXPECT_EQ(c["items"], 48320);
  EXPECT_EQ(c["variation"], (Json{{"1", 3020}, {"2", 12080}, {"3", 18120}, {"4", 3020}, {"5", 6040}, {"6", 6040}}));
  EXPECT_EQ(nlohmann::json(c["by_variation"]["5"]["language"]), (nlohmann::json{{"zh", 3020}, {"fr", 3020}}));
  EXPECT_EQ(nlohmann::json(c["by_variation"]["6"]["notation"]), (nlohmann::json{{"rgb", 3020}, {"hsl", 3020}}));
  // Levels proportional to 13 : 29 : 267 colors per group (127 / 283 / 2610 of 3020).
  EXPECT_EQ(c["by_variation"]["1"]["level"], (Json{{"1", 127}, {"2", 283}, {"3", 2610}}));
  EXPECT_EQ(c["by_variation"]["5"]["level"], (Json{{"1", 254}, {"2", 566}, {"3", 5220}}));
  EXPECT_EQ(c["by_variation"]["3"]["layout"], (Json{{"q4", 18120}}));
  // Variation 2 uses 10 h2 and 10 v2 templates, balanced.
  EXPECT_EQ(c["by_variation"]["2"]["layout"], (Json{{"h2", 6040}, {"v2", 6040}}));
}

TEST(DatasetCounts, SmallScaleIsStillStratified) {
  const std::vector<ManifestItem> items = Build(Options(0.01));
  const Json c = CountItems(items);
  EXPECT_EQ(c["variation"], (Json{{"1", 30}, {"2", 121}, {"3", 181}, {"4", 30}, {"5", 60}, {"6", 60}}));
  for (const auto& [v, per] : c["by_variation"].items()) {
    EXPECT_EQ(per["level"].size(), 3u) << "variation " << v << " misses a level";
    EXPECT_EQ(per["split"].size(), 2u) << "variation " << v;
  }
  // Tiny scales keep one item per group at least.
  EXPECT_EQ(Build(Options(1e-6)).size(), 8u);
}

TEST(DatasetItems, IdsAreUniqueAndShaped) {
  std::set<std::string> ids;
  const std::regex kId(R"(v[1-6]-t[0-9]{2}-[0-9]{5})");
  for (const ManifestItem& it : FullScale()) {
    EXPECT_TRUE(std::regex_match(it.id, kId)) << it.id;
    EXPECT_TRUE(ids.insert(it.id).second) << it.id;
  }
}

TEST(DatasetItems, SingleColorPromptsAreDistinctWithinALevelAtScaleOne) {
  // Across levels a prompt may repeat: level-1/2 representatives are level-3 centroids.
  std::set<std::pair<int, std::string>> prompts;
  for (const ManifestItem& it : FullScale()) {
    if (it.variation == 1) {
      EXPECT_TRUE(prompts.insert({it.levels[0], it.prompt}).second) << it.prompt;
    }
  }
}

TEST(DatasetItems, RepeatedPromptsAlwaysDenoteTheSameGroundTruth) {
  // Prompts repeat across levels (a representative is also a centroid) and among level-2 fuzzy
  // pairs; a server answering by prompt text must still find one right answer.
  std::map<std::string, std::string> gt_of_prompt;
  size_t repeats = 0;
  for (const ManifestItem& it : FullScale()) {
    std::string gt = std::string(LayoutName(it.layout));
    for (const color::Srgb8& c : it.targets) gt += color::ToHex(c);
    auto [pos, inserted] = gt_of_prompt.emplace(it.prompt, gt);
    repeats += !inserted;
    EXPECT_EQ(pos->second, gt) << it.prompt;
  }
  EXPECT_GT(repeats, 0u);
}

TEST(DatasetItems, MultiBlockTargetsAreDistinctWithinAnItemAndShareTheLevel) {
  for (const ManifestItem& it : FullScale()) {
    ASSERT_EQ(it.targets.size(), static_cast<size_t>(BlockCount(it.layout)));
    ASSERT_EQ(it.levels.size(), it.targets.size());
    std::set<std::string> names(it.target_names.begin(), it.target_names.end());
    EXPECT_EQ(names.size(), it.target_names.size()) << it.id;
    for (int l : it.levels) EXPECT_EQ(l, it.levels.front()) << it.id;
  }
}

TEST(DatasetNotation, PromptColorsParseBackToTheTargets) {
  size_t checked = 0;
  for (const ManifestItem& it : FullScale()) {
    const std::vector<std::string> texts = ColorTexts(it.prompt);
    if (it.fuzzy) {
      ASSERT_EQ(texts.size(), 2u) << it.prompt;
      EXPECT_EQ(color::ParseColor(texts[0])->rgb8, it.fuzzy->first) << it.prompt;
      EXPECT_EQ(color::ParseColor(texts[1])->rgb8, it.fuzzy->second) << it.prompt;
      continue;
    }
    ASSERT_EQ(texts.size(), it.targets.size()) << it.prompt;  // templates name blocks in layout order
    for (size_t b = 0; b < texts.size(); ++b) {
      auto parsed = color::ParseColor(texts[b]);
      ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
      EXPECT_EQ(color::NotationName(parsed->notation), it.notation) << it.prompt;
      EXPECT_EQ(parsed->rgb8, it.targets[b]) << it.id << ": " << it.prompt;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3020u + 2 * 12080 + 4 * 18120 + 6040 + 6040);
}

TEST(DatasetNotation, HslTargetsAreWhatTheRoundedNumbersDenote) {
  const std::regex kHsl(R"(hsl\((\d+), (\d+)%, (\d+)%\))");
  size_t checked = 0, differs_from_source = 0;
  for (const ManifestItem& it : FullScale()) {
    if (it.notation != "hsl") continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(it.prompt, m, kHsl)) << it.prompt;
    const double h = std::stod(m[1]), s = std::stod(m[2]) / 100, l = std::stod(m[3]) / 100;
    EXPECT_LT(h, 360);
    EXPECT_EQ(it.targets[0], CssHslTo8Bit(h, s, l)) << it.prompt;
    auto source = color::IsccNbs::Default().value()->FindName(it.target_names[0]);
    if (!(source.rgb == it.targets[0])) ++differs_from_source;
    ++checked;
  }
  EXPECT_EQ(checked, 3020u);
  // Rounding to whole degrees and percents moves most centroids by a step or two.
  EXPECT_GT(differs_from_source, 0u);
}

TEST(DatasetNotation, HandComputedHslCases) {
  EXPECT_EQ(CssHslTo8Bit(0, 1, 0.5), (color::Srgb8{255, 0, 0}));
  EXPECT_EQ(CssHslTo8Bit(120, 1, 0.25), (color::Srgb8{0, 128, 0}));  // 127.5 rounds up
  EXPECT_EQ(CssHslTo8Bit(210, 0.5, 0.6), (color::Srgb8{102, 153, 204}));
}

TEST(DatasetFuzzy, TargetIsTheHslMidpointOfTheRange) {
  size_t n = 0;
  for (const ManifestItem& it : FullScale()) {
    if (it.variation != 4) continue;
    ASSERT_TRUE(it.fuzzy.has_value());
    EXPECT_EQ(it.targets[0], HslMidpoint(it.fuzzy->first, it.fuzzy->second)) << it.id;
    EXPECT_EQ(it.target_names[0].rfind("between ", 0), 0u);
    ++n;
  }
  EXPECT_EQ(n, 3020u);
}

TEST(DatasetSplits, TrainTestIsEightToTwoInEveryStratum) {
  std::map<std::tuple<int, std::string, std::string, int>, std::pair<int, int>> strata;  // test, total
  for (const ManifestItem& it : FullScale()) {
    auto& [test, total] = strata[{it.variation, it.language, it.notation, it.levels.front()}];
    test += it.split == "test";
    ++total;
  }
  EXPECT_EQ(strata.size(), 8u * 3);  // 8 (variation, language, notation) groups x 3 levels
  for (const auto& [key, counts] : strata)
    EXPECT_LE(std::abs(counts.first - 0.2 * counts.second), 0.5) << std::get<0>(key) << " " << std::get<3>(key);
}

TEST(DatasetSplits, PromptAndHueSplitsFollowTheirRules) {
  std::map<std::string, std::string> template_split;
  for (const ManifestItem& it : FullScale()) {
    auto [pos, inserted] = template_split.emplace(it.template_id, it.prompt_split);
    EXPECT_EQ(pos->second, it.prompt_split) << it.template_id;  // one split per template
    const double hue = color::RgbToHsl(color::FromSrgb8(it.targets.front())).h;
    EXPECT_EQ(it.hue_split1, hue >= 280 && hue <= 320 ? "test" : "train") << it.id << " hue " << hue;
    const bool train2 = (hue >= 0 && hue < 60) || (hue >= 120 && hue < 180) || (hue >= 240 && hue < 300);
    EXPECT_EQ(it.hue_split2, train2 ? "train" : "test") << it.id << " hue " << hue;
  }
  EXPECT_EQ(template_split.size(), 100u);
  const Json c = CountItems(FullScale());
  EXPECT_GT(c["hue_split1"]["test"].get<int>(), 0);
  EXPECT_GT(c["hue_split2"]["test"].get<int>(), 0);
  EXPECT_GT(c["prompt_split"]["test"].get<int>(), 0);
}

TEST(DatasetDeterminism, SameSeedSameItemsOtherSeedOtherItems) {
  const std::string a = Lines(Build(Options(0.05, 11)));
  EXPECT_EQ(a, Lines(Build(Options(0.05, 11))));
  EXPECT_NE(a, Lines(Build(Options(0.05, 12))));
}

TEST(DatasetDeterminism, AVariationDoesNotDependOnWhichOthersAreGenerated) {
  DatasetOptions only3 = Options(0.05, 5);
  only3.variations = {3};
  std::vector<ManifestItem> all = Build(Options(0.05, 5)), subset;
  std::copy_if(all.begin(), all.end(), std::back_inserter(subset),
               [](const ManifestItem& it) { return it.variation == 3; });
  EXPECT_EQ(Lines(Build(only3)), Lines(subset));
}

TEST(DatasetOptions, RejectsOutOfRangeValues) {
  auto bad = [](auto mutate, const std::string& message) {
    DatasetOptions o = Options(1.0);
    mutate(o);
    Status st = ValidateOptions(o);
    EXPECT_FALSE(st.ok()) << message;
    EXPECT_NE(st.ToString().find(message), std::string::npos) << st.ToString();
  };
  bad([](DatasetOptions& o) { o.variations = {1, 7}; }, "variation 7 does not exist (variations)");
  bad([](DatasetOptions& o) { o.variations = {2, 2}; }, "variation 2 given twice");
  bad([](DatasetOptions& o) { o.variations = {}; }, "no variations selected");
  bad([](DatasetOptions& o) { o.scale = 0; }, "scale 0 out of range (scale)");
  bad([](DatasetOptions& o) { o.scale = -1; }, "scale -1 out of range");
  bad([](DatasetOptions& o) { o.scale = std::nan(""); }, "out of range (scale)");
  bad([](DatasetOptions& o) { o.image_size = 1; }, "image size 1 out of range (ground-truth image size)");
  EXPECT_TRUE(ValidateOptions(Options(0.01)).ok());
}

// Every pixel, checked against the layout rule computed here from scratch.
void ExpectExactGroundTruth(const ManifestItem& item, int w, int h) {
  const imaging::Image img = RenderGroundTruth(item, w, h);
  ASSERT_EQ(img.width, w);
  ASSERT_EQ(img.height, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const bool right = x >= w / 2, bottom = y >= h / 2;
      size_t block = 0;
      if (item.layout == Layout::kH2) block = bottom;
      if (item.layout == Layout::kV2) block = right;
      if (item.layout == Layout::kQ4) block = 2 * bottom + right;
      const color::Srgb8 want = item.targets[block];
      const uint8_t* p = img.pixel(x, y);
      ASSERT_TRUE(p[0] == want.r && p[1] == want.g && p[2] == want.b)
          << LayoutName(item.layout) << " " << w << "x" << h << " pixel (" << x << ", " << y << ")";
    }
  }
}

TEST(GroundTruth, EveryPixelEqualsItsBlockTargetForEveryLayoutAndOddSizes) {
  ManifestItem item;
  const std::vector<color::Srgb8> colors{{0xD9, 0xB4, 0x51}, {0x72, 0x67, 0x2C}, {0, 0, 0}, {255, 255, 254}};
  for (Layout layout : {Layout::kSingle, Layout::kH2, Layout::kV2, Layout::kQ4}) {
    item.layout = layout;
    item.targets.assign(colors.begin(), colors.begin() + BlockCount(layout));
    for (auto [w, h] : std::vector<std::pair<int, int>>{{256, 256}, {7, 5}, {5, 7}, {2, 3}, {1, 1}, {255, 129}})
      ExpectExactGroundTruth(item, w, h);
  }
}

TEST(GroundTruth, MismatchedTargetsOrSizesGiveAnEmptyImage) {
  ManifestItem item;
  item.layout = Layout::kQ4;
  item.targets = {{1, 2, 3}};
  EXPECT_EQ(RenderGroundTruth(item, 8, 8).width, 0);
  item.layout = Layout::kSingle;
  EXPECT_EQ(RenderGroundTruth(item, 0, 8).rgb.size(), 0u);
}

class GenerateTest : public ::testing::Test {
 protected:
  DatasetOptions Small(const fs::path& out) {
    DatasetOptions o = Options(0.002, 3);  // 96 items of every variation
    o.write_images = true;
    o.image_size = 33;
    o.out_dir = out;
    return o;
  }
  visalign::testing::TempDir scratch_;
  const fs::path dir_ = scratch_.path();
};

std::map<std::string, std::string> Sha256Tree(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = Sha256File(e.path()).value();
  return out;
}

TEST_F(GenerateTest, WritesManifestImagesAndSummaryThatReadBack) {
  auto report = GenerateDataset(Small(dir_ / "a"));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->items, 96u);
  EXPECT_EQ(report->images, 96u);
  auto items = LoadManifest(dir_ / "a");
  ASSERT_TRUE(items.ok()) << items.status().ToString();
  ASSERT_EQ(items->size(), 96u);
  for (const ManifestItem& it : *items) {
    auto img = imaging::ReadImage(dir_ / "a" / *it.image);
    ASSERT_TRUE(img.ok()) << img.status().ToString();
    EXPECT_EQ(img->rgb, RenderGroundTruth(it, 33, 33).rgb) << it.id;
  }
  auto summary = ReadFile(dir_ / "a" / "summary.json");
  ASSERT_TRUE(summary.ok());
  const Json s = Json::parse(*summary);
  EXPECT_EQ(s["counts"]["items"], 96);
  EXPECT_EQ(s["options"]["seed"], 3);
  EXPECT_EQ(s["manifest_sha256"], ManifestFingerprint(dir_ / "a").value());
}

TEST_F(GenerateTest, SameSeedGivesByteIdenticalFiles) {
  ASSERT_TRUE(GenerateDataset(Small(dir_ / "a")).ok());
  ASSERT_TRUE(GenerateDataset(Small(dir_ / "b")).ok());
  const auto a = Sha256Tree(dir_ / "a");
  EXPECT_EQ(a.size(), 96u + 2);
  EXPECT_EQ(a, Sha256Tree(dir_ / "b"));
}

TEST_F(GenerateTest, RefusesANonEmptyDirectoryUnlessForcedAndThenReplacesOnlyItsOwnFiles) {
  fs::create_directories(dir_ / "images");
  ASSERT_TRUE(WriteFileAtomic(dir_ / "notes.txt", "mine").ok());
  ASSERT_TRUE(WriteFileAtomic(dir_ / "images" / "v9-t01-99999.png", "stale").ok());
  auto refused = GenerateDataset(Small(dir_));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("output directory is not empty"), std::string::npos);
  DatasetOptions forced = Small(dir_);
  forced.force = true;
  ASSERT_TRUE(GenerateDataset(forced).ok());
  EXPECT_TRUE(fs::exists(dir_ / "notes.txt"));
  EXPECT_FALSE(fs::exists(dir_ / "images" / "v9-t01-99999.png"));
}

// Ctrl-C during the images leaves images/ without summary.json: the same command runs again
// without --force; a folder holding anything else still needs it.
TEST_F(GenerateTest, AnInterruptedDatasetIsReplacedWithoutForce) {
  fs::create_directories(dir_ / "images");
  ASSERT_TRUE(WriteFileAtomic(dir_ / "images" / "v1-t00-00000.png", "half").ok());
  ASSERT_TRUE(WriteFileAtomic(dir_ / "images" / "v1-t00-00001.png.tmp", "half").ok());
  auto again = GenerateDataset(Small(dir_));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(fs::exists(dir_ / "images" / "v1-t00-00001.png.tmp"));
  EXPECT_EQ(Sha256Tree(dir_).size(), 96u + 2);
  ASSERT_TRUE(WriteFileAtomic(dir_ / "images" / "v1-t00-00000.png", "replaced").ok());  // now complete: summary.json
  EXPECT_FALSE(GenerateDataset(Small(dir_)).ok());
  fs::remove(dir_ / "summary.json");
  ASSERT_TRUE(WriteFileAtomic(dir_ / "images" / "photo.jpg", "mine").ok());
  EXPECT_FALSE(GenerateDataset(Small(dir_)).ok());
}

TEST_F(GenerateTest, NoImagesWritesNullImageFields) {
  DatasetOptions o = Small(dir_);
  o.write_images = false;
  auto report = GenerateDataset(o);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->images, 0u);
  EXPECT_FALSE(fs::exists(dir_ / "images"));
  EXPECT_FALSE(LoadManifest(dir_).value().front().image.has_value());
}

}  // namespace
}  // namespace visalign::violin
