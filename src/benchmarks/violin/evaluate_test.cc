#include <gtest/gtest.h>

#include <zlib.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <random>

#include "testing/dirs.h"
#include "visalign/benchmarks/violin/evaluate.h"
#include "visalign/core/io.h"

namespace visalign::violin {
namespace {

namespace fs = std::filesystem;
using color::Srgb8;

using ScratchDir = visalign::testing::TempDir;

ManifestItem Item(std::string id, int variation, Srgb8 target, std::string language = "en",
                  std::string notation = "hex") {
  ManifestItem item;
  item.id = std::move(id);
  item.variation = variation;
  item.language = std::move(language);
  item.notation = std::move(notation);
  item.layout = Layout::kSingle;
  item.targets = {target};
  return item;
}

// An 8-bit RGBA PNG of one colour, assembled chunk by chunk (EncodePng writes RGB only).
std::string RgbaPng(uint32_t w, uint32_t h, std::array<uint8_t, 4> rgba) {
  auto chunk = [](const std::string& type, const std::string& data) {
    std::string out;
    auto put32 = [&out](uint32_t v) {
      for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
    };
    put32(static_cast<uint32_t>(data.size()));
    const std::string body = type + data;
    out += body;
    put32(static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size())));
    return out;
  };
  std::string ihdr;
  for (uint32_t v : {w, h})
    for (int shift = 24; shift >= 0; shift -= 8) ihdr.push_back(static_cast<char>(v >> shift));
  ihdr += std::string("\x08\x06\x00\x00\x00", 5);
  std::string raw;
  for (uint32_t y = 0; y < h; ++y) {
    raw.push_back(0);
    for (uint32_t x = 0; x < w; ++x) raw.append(reinterpret_cast<const char*>(rgba.data()), 4);
  }
  uLongf size = compressBound(raw.size());
  std::string z(size, '\0');
  compress2(reinterpret_cast<Bytef*>(z.data()), &size, reinterpret_cast<const Bytef*>(raw.data()), raw.size(), 6);
  z.resize(size);
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", z) + chunk("IEND", "");
}

imaging::Image Solid(int w, int h, Srgb8 c) {
  imaging::Image img(w, h);
  for (size_t i = 0; i < img.rgb.size(); i += 3) img.rgb[i] = c.r, img.rgb[i + 1] = c.g, img.rgb[i + 2] = c.b;
  return img;
}

// Three items: a (v1), b (v1), z (v5, zh). Folder: a.png exact, a__1.png off by ΔR = 10,
// b missing, z.png exact, junk.png (no such id), notes.txt (ignored).
struct Fixture {
  ScratchDir dir;
  std::vector<ManifestItem> items = {Item("a", 1, {100, 100, 100}), Item("b", 1, {0, 0, 0}),
                                     Item("z", 5, {10, 20, 30}, "zh")};
  Fixture() {
    EXPECT_TRUE(imaging::WritePng(dir.path() / "a.png", Solid(6, 6, {100, 100, 100})).ok());
    EXPECT_TRUE(imaging::WritePng(dir.path() / "a__1.png", Solid(6, 6, {110, 100, 100})).ok());
    EXPECT_TRUE(imaging::WritePng(dir.path() / "z.PNG", Solid(6, 6, {10, 20, 30})).ok());
    EXPECT_TRUE(imaging::WritePng(dir.path() / "junk.png", Solid(2, 2, {0, 0, 0})).ok());
    EXPECT_TRUE(WriteFileAtomic(dir.path() / "notes.txt", "not an image").ok());
  }
};

TEST(CollectImageDirectory, MatchesIdsAndSamplesAndReportsTheRest) {
  Fixture f;
  auto images = CollectImageDirectory(f.dir.path(), "m", f.items);
  ASSERT_TRUE(images.ok()) << images.status().ToString();
  ASSERT_EQ(images->sources.size(), 3u);
  EXPECT_EQ(images->sources[0].item_id, "a");
  EXPECT_EQ(images->sources[0].k, 0);
  EXPECT_EQ(images->sources[1].item_id, "a");
  EXPECT_EQ(images->sources[1].k, 1);
  EXPECT_EQ(images->sources[2].item_id, "z");
  ASSERT_EQ(images->unmatched.size(), 1u);
  EXPECT_EQ(images->unmatched[0].filename(), "junk.png");
}

TEST(CollectImageDirectory, TwoFilesForOneSampleAreAnError) {
  Fixture f;
  ASSERT_TRUE(imaging::WritePng(f.dir.path() / "a__0.jpg", Solid(2, 2, {0, 0, 0})).ok());
  auto images = CollectImageDirectory(f.dir.path(), "m", f.items);
  EXPECT_EQ(images.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(CollectImageDirectory(f.dir.path() / "nope", "m", f.items).ok());
}

TEST(Evaluate, CountsScoredMissingAndUnreadablePerGroup) {
  Fixture f;
  ASSERT_TRUE(WriteFileAtomic(f.dir.path() / "b.png", "<html>502</html>").ok());  // unreadable
  auto images = CollectImageDirectory(f.dir.path(), "m", f.items);
  ASSERT_TRUE(images.ok());
  EvaluateOptions options;
  options.show_progress = false;
  std::vector<std::string> order;
  options.on_image = [&](const ImageScore& s) {
    order.push_back(s.item->id + "/" + std::to_string(s.k));
    return Status::Ok();
  };
  auto summary = Evaluate(f.items, {*images}, options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(order, (std::vector<std::string>{"a/0", "a/1", "z/0"}));
  ASSERT_EQ(summary->rows.size(), 2u);  // (m, 1, en, hex) and (m, 5, zh, hex)
  const SummaryRow& v1 = summary->rows[0];
  EXPECT_EQ(v1.variation, 1);
  EXPECT_EQ(v1.n_scored, 2u);
  EXPECT_EQ(v1.n_missing, 0u);
  EXPECT_EQ(v1.n_unreadable, 1u);
  // Mean over a (exact) and a__1 (ΔR = 10): rgb_ed = 5.
  ASSERT_TRUE(v1.mean_raw.has_value());
  EXPECT_DOUBLE_EQ((*v1.mean_raw)[static_cast<size_t>(Metric::kRgbEd)], 5.0);
  const SummaryRow& v5 = summary->rows[1];
  EXPECT_EQ(v5.language, "zh");
  EXPECT_EQ(v5.n_scored, 1u);
  EXPECT_EQ(*v5.pre_mean, 0.0);
  ASSERT_EQ(summary->unreadable.size(), 1u);
  EXPECT_EQ(summary->unreadable[0].item_id, "b");
  EXPECT_EQ(summary->unmatched.size(), 1u);
}

TEST(Evaluate, MinMaxNormalisationScalesToTheRangeOverTheEvaluatedImages) {
  // a/0 and z/0 are exact (rgb_ed 0), a/1 is off by ΔR = 10 (rgb_ed 10): min-max gives a/1 rgb_ed 1 and the
  // others 0; the purity metrics of solid images are all 0 (max = min), so they normalise to 0.
  Fixture f;
  auto images = CollectImageDirectory(f.dir.path(), "m", f.items);
  ASSERT_TRUE(images.ok());
  EvaluateOptions options;
  options.show_progress = false;
  options.normalization = Normalization::kMinMax;
  options.weights = *ParseWeights("1,0,0,0,0,0,0,1,0");  // pre_mean = rgb_ed, pur_mean = ced
  std::vector<std::pair<std::string, double>> streamed;
  options.on_image = [&](const ImageScore& s) {
    streamed.push_back({s.item->id + "/" + std::to_string(s.k), s.metrics.norm[static_cast<size_t>(Metric::kRgbEd)]});
    return Status::Ok();
  };
  auto summary = Evaluate(f.items, {*images}, options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(streamed, (std::vector<std::pair<std::string, double>>{{"a/0", 0.0}, {"a/1", 1.0}, {"z/0", 0.0}}));
  EXPECT_EQ(summary->raw_min[static_cast<size_t>(Metric::kRgbEd)], 0.0);
  EXPECT_DOUBLE_EQ(summary->raw_max[static_cast<size_t>(Metric::kRgbEd)], 10.0);
  ASSERT_EQ(summary->rows.size(), 2u);
  EXPECT_DOUBLE_EQ(*summary->rows[0].pre_mean, 0.5);  // mean of a/0 (0) and a/1 (1)
  EXPECT_EQ(*summary->rows[0].pur_mean, 0.0);
  EXPECT_EQ(*summary->rows[1].pre_mean, 0.0);
  const auto json = SummaryJson(*summary, options.weights);
  EXPECT_EQ(json["normalization"]["mode"], "minmax");
  EXPECT_DOUBLE_EQ(json["normalization"]["raw_max"]["rgb_ed"].get<double>(), 10.0);
  EXPECT_EQ(json["weights"]["ced"], 1.0);

  options.normalization = Normalization::kFixed;  // the documented maximum: 10 / (255 sqrt 3), averaged with 0
  auto fixed = Evaluate(f.items, {*images}, options);
  ASSERT_TRUE(fixed.ok());
  EXPECT_DOUBLE_EQ(*fixed->rows[0].pre_mean, 10.0 / (255.0 * std::sqrt(3.0)) / 2);
  EXPECT_EQ(SummaryJson(*fixed, options.weights)["normalization"], (Json{{"mode", "fixed"}}));
}

TEST(Evaluate, MissingItemsAreListedAndRowsWithoutImagesHaveNoMeans) {
  Fixture f;
  std::vector<ModelImages> models = {{"empty", {}, {}}};
  EvaluateOptions options;
  options.show_progress = false;
  auto summary = Evaluate(f.items, models, options);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->missing.size(), 3u);
  EXPECT_EQ(summary->rows[0].n_missing, 2u);
  EXPECT_FALSE(summary->rows[0].pre_mean.has_value());
  EXPECT_NE(SummaryMarkdown(*summary).find("| empty | 1 | en | hex | – |"), std::string::npos);
}

TEST(Evaluate, UnknownIdsAndDuplicateSamplesAreRejected) {
  Fixture f;
  EvaluateOptions options;
  options.show_progress = false;
  EXPECT_EQ(Evaluate(f.items, {{"m", {{"nope", 0, "x.png"}}, {}}}, options).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Evaluate(f.items, {{"m", {{"a", 0, "x.png"}, {"a", 0, "y.png"}}, {}}}, options).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(Evaluate, ResultsDoNotDependOnTheThreadCount) {
  ScratchDir dir;
  std::vector<ManifestItem> items;
  std::mt19937 rng(3);
  for (int i = 0; i < 40; ++i) {
    items.push_back(Item("i" + std::to_string(i), 1 + i % 3, {uint8_t(rng()), uint8_t(rng()), uint8_t(rng())}));
    imaging::Image img(9 + i % 4, 7);
    for (uint8_t& v : img.rgb) v = uint8_t(rng());
    ASSERT_TRUE(imaging::WritePng(dir.path() / (items.back().id + ".png"), img).ok());
  }
  auto images = CollectImageDirectory(dir.path(), "noise", items);
  ASSERT_TRUE(images.ok());
  std::string reference;
  for (int threads : {1, 2, 3}) {
    EvaluateOptions options;
    options.show_progress = false;
    options.threads = threads;
    auto summary = Evaluate(items, {*images}, options);
    ASSERT_TRUE(summary.ok());
    const std::string json = SummaryJson(*summary, options.weights).dump();
    if (reference.empty()) reference = json;
    EXPECT_EQ(json, reference) << threads << " threads";
  }
}

TEST(EvaluateToDirectory, WritesItemsAndSummaryFiles) {
  Fixture f;
  auto images = CollectImageDirectory(f.dir.path(), "m", f.items);
  ASSERT_TRUE(images.ok());
  ScratchDir out;
  EvaluateOptions options;
  options.show_progress = false;
  auto summary = EvaluateToDirectory(f.items, {*images}, options, out.path());
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  auto jsonl = ReadFile(out.path() / "items.jsonl");
  ASSERT_TRUE(jsonl.ok());
  EXPECT_EQ(std::count(jsonl->begin(), jsonl->end(), '\n'), 3);
  auto first = Json::parse(jsonl->substr(0, jsonl->find('\n')));
  EXPECT_EQ(first["id"], "a");
  EXPECT_EQ(first["model"], "m");
  EXPECT_EQ(first["norm"]["sd_n"], 0.0);
  auto csv = ReadFile(out.path() / "summary.csv");
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(csv->substr(0, csv->find('\n')),
            "scope,model,variation,language,notation,rgb_ed,rgb_rm,de00,hue,chroma,hyab,pre_mean,sd_n,ced,hf,pur_mean,"
            "n_scored,n_missing,n_unreadable,n_items,coverage,rgb_ed_lo,rgb_ed_hi,rgb_rm_lo,rgb_rm_hi,de00_lo,de00_hi,"
            "hue_lo,hue_hi,chroma_lo,chroma_hi,hyab_lo,hyab_hi,pre_mean_lo,pre_mean_hi,sd_n_lo,sd_n_hi,ced_lo,ced_hi,"
            "hf_lo,hf_hi,pur_mean_lo,pur_mean_hi");
  // Every scored line says what was asked and what the image held.
  EXPECT_EQ(first["targets"], Json::array({"#646464"}));
  EXPECT_EQ(first["blocks"][0]["mean"], Json::array({100.0, 100.0, 100.0}));
  EXPECT_EQ(first["blocks"][0]["target"], Json::array({100.0, 100.0, 100.0}));
  EXPECT_EQ(first["alpha_min"], 255);
  EXPECT_TRUE(first.contains("prompt"));
  auto json = ReadFile(out.path() / "summary.json");
  ASSERT_TRUE(json.ok());
  auto j = Json::parse(*json);
  EXPECT_EQ(j["n_missing"], 1);
  EXPECT_EQ(j["missing"][0]["id"], "b");
  EXPECT_FALSE(fs::exists(out.path() / "items.jsonl.partial"));
  // The overall row's variation reads "all" in summary.csv, as in summary.md.
  EXPECT_NE(csv->find("\noverall,m,all,all,all,"), std::string::npos) << *csv;
  // Item b has no image: summary.md opens with the coverage warning, in SummaryWarnings' words.
  const std::vector<std::string> warnings = SummaryWarnings(j);
  ASSERT_EQ(warnings,
            std::vector<std::string>{
                "coverage below 100 %: model m has a scored image for 2 of 3 items (66.6 %; 1 without any image, "
                "0 unreadable images), so its means cover only the items it has images for."});
  auto md = ReadFile(out.path() / "summary.md");
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(md->rfind("**Warning:** " + warnings[0] + "\n\n", 0), 0u) << *md;
}

// items.jsonl records each image's absolute path, so a reader elsewhere (`visalign report` run from
// another folder) finds it; a relative path is taken from the working directory.
TEST(EvaluateToDirectory, ItemsRecordAbsoluteImagePaths) {
  const ManifestItem item = Item("a", 1, {1, 2, 3});
  const Json line = ImageScoreJson({&item, "m", 0, "images/../images/a.png", {}});
  EXPECT_EQ(line["path"], (fs::current_path() / "images" / "a.png").string());
}

TEST(Evaluate, TheCoverageWarningSaysWhatMissingImagesCountAs) {
  Fixture f;
  auto images = CollectImageDirectory(f.dir.path(), "m", f.items);
  ASSERT_TRUE(images.ok());
  EvaluateOptions options;
  options.show_progress = false;
  options.missing = MissingPolicy::kWorst;
  auto summary = Evaluate(f.items, {*images}, options);
  ASSERT_TRUE(summary.ok());
  const Json j = Json::parse(SummaryJson(*summary, {}).dump());
  EXPECT_NE(SummaryWarnings(j).at(0).find("so its means count each missing image as the worst value."),
            std::string::npos);
}

// Six items, three per split; "m" has an image for every item but test item t3 (missing), whose
// pre_mean is known exactly: solid images off their target by a red step only.
struct SplitFixture {
  ScratchDir dir;
  std::vector<ManifestItem> items;
  SplitFixture() {
    for (int i = 0; i < 6; ++i) {
      ManifestItem item = Item((i < 3 ? "r" : "t") + std::to_string(i), 1, {100, 100, 100});
      item.split = i < 3 ? "train" : "test";
      item.prompt_split = i % 2 == 0 ? "train" : "test";
      items.push_back(item);
      if (i != 3)
        EXPECT_TRUE(
            imaging::WritePng(dir.path() / (item.id + ".png"), Solid(4, 4, {uint8_t(100 + 10 * i), 100, 100})).ok());
    }
  }
  Summary Run(EvaluateOptions options) {
    options.show_progress = false;
    auto images = CollectImageDirectory(dir.path(), "m", items);
    EXPECT_TRUE(images.ok());
    auto summary = Evaluate(items, {*images}, options);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    return *summary;
  }
};

TEST(Evaluate, TheSplitSelectsItemsAndImagesOfOtherItemsAreCountedNotScored) {
  SplitFixture f;
  EvaluateOptions options;
  options.split = "test";
  const Summary s = f.Run(options);
  EXPECT_EQ(s.n_items, 3u);
  EXPECT_EQ(s.n_outside_split, 3u);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].n_items, 3u);
  EXPECT_EQ(s.rows[0].n_scored, 2u);
  EXPECT_EQ(s.rows[0].n_missing, 1u);
  EXPECT_DOUBLE_EQ(s.rows[0].coverage(), 2.0 / 3.0);
  ASSERT_EQ(s.missing.size(), 1u);
  EXPECT_EQ(s.missing[0].item_id, "t3");
  options.split = "validation";
  EXPECT_EQ(Evaluate(f.items, {}, options).status().ToString(),
            "unknown split \"validation\" (split): train, test or all");
}

TEST(Evaluate, RowsAreGroupedByAnyManifestColumn) {
  SplitFixture f;
  EvaluateOptions options;
  options.by = {"split", "prompt_split"};
  const Summary s = f.Run(options);
  ASSERT_EQ(s.rows.size(), 4u);  // (test, test) (test, train) (train, test) (train, train)
  EXPECT_EQ(s.rows[0].by_values, (std::vector<std::string>{"test", "test"}));  // t3 (missing), t5
  EXPECT_EQ(s.rows[0].n_items, 2u);
  EXPECT_EQ(s.rows[0].n_scored, 1u);
  EXPECT_EQ(s.overall[0].by_values, (std::vector<std::string>{"all", "all"}));
  EXPECT_NE(SummaryCsv(s).find(",split,prompt_split,"), std::string::npos);
  EXPECT_NE(SummaryMarkdown(s).find("| m | 1 | en | hex | test | test |"), std::string::npos);
  options.by = {"colour"};
  EXPECT_EQ(Evaluate(f.items, {}, options).status().what(), "unknown manifest column \"colour\"");
}

TEST(Evaluate, OverallRowsHaveSeededBootstrapIntervalsAroundTheMean) {
  SplitFixture f;
  const Summary s = f.Run({});
  ASSERT_EQ(s.overall.size(), 1u);
  const SummaryRow& all = s.overall[0];
  EXPECT_EQ(all.scope, "overall");
  EXPECT_EQ(all.n_items, 6u);
  EXPECT_EQ(all.n_scored, 5u);
  ASSERT_TRUE(all.ci.has_value());
  // rgb_ed of item i is 10 i / (255 sqrt 3) normalised; the mean over the five scored items.
  const double unit = 10.0 / (255.0 * std::sqrt(3.0));
  const size_t ed = static_cast<size_t>(Metric::kRgbEd);
  EXPECT_NEAR((*all.mean_norm)[ed], unit * (0 + 1 + 2 + 4 + 5) / 5.0, 1e-15);
  EXPECT_LE(all.ci->norm[ed].lo, (*all.mean_norm)[ed]);
  EXPECT_GE(all.ci->norm[ed].hi, (*all.mean_norm)[ed]);
  EXPECT_GE(all.ci->norm[ed].lo, 0.0);
  EXPECT_LE(all.ci->norm[ed].hi, unit * 5);
  EXPECT_LT(all.ci->norm[ed].lo, all.ci->norm[ed].hi);
  // Deterministic for a seed, different for another.
  EXPECT_EQ(SummaryJson(f.Run({}), {}).dump(), SummaryJson(s, {}).dump());
  EvaluateOptions other;
  other.bootstrap.seed = 7;
  EXPECT_NE(f.Run(other).overall[0].ci->norm[ed].lo + f.Run(other).overall[0].ci->norm[ed].hi,
            all.ci->norm[ed].lo + all.ci->norm[ed].hi);
}

TEST(Evaluate, TheWorstPolicyScoresMissingItemsOneOnEveryNormalisedMetric) {
  SplitFixture f;
  EvaluateOptions options;
  options.missing = MissingPolicy::kWorst;
  const Summary s = f.Run(options);
  const SummaryRow& all = s.overall[0];
  const double unit = 10.0 / (255.0 * std::sqrt(3.0));
  EXPECT_NEAR((*all.mean_norm)[static_cast<size_t>(Metric::kRgbEd)], (unit * 12 + 1.0) / 6.0, 1e-15);
  EXPECT_NEAR(*all.pur_mean, 1.0 / 6.0, 1e-15);  // solids are pure; the missing item counts 1
  // Raw means have no worst value: they stay over scored images.
  EXPECT_NEAR((*all.mean_raw)[static_cast<size_t>(Metric::kRgbEd)], 12.0 * 10 / 5, 1e-12);
  EXPECT_EQ(ParseMissingPolicy("worst").value(), MissingPolicy::kWorst);
  EXPECT_FALSE(ParseMissingPolicy("zero").ok());
}

TEST(Evaluate, ModelsAreComparedOnTheItemsEveryModelHas) {
  SplitFixture f;
  auto full = CollectImageDirectory(f.dir.path(), "full", f.items);
  ASSERT_TRUE(full.ok());
  ModelImages half{"half", {}, {}};
  for (const ImageSource& source : full->sources)
    if (source.item_id == "r0" || source.item_id == "r2") half.sources.push_back(source);
  EvaluateOptions options;
  options.show_progress = false;
  auto s = Evaluate(f.items, {*full, half}, options);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->n_common_items, 2u);
  ASSERT_EQ(s->common.size(), 2u);
  for (const SummaryRow& row : s->common) {
    EXPECT_EQ(row.n_items, 2u);
    EXPECT_EQ(row.n_scored, 2u);
    EXPECT_NEAR((*row.mean_norm)[static_cast<size_t>(Metric::kRgbEd)], 10.0 / (255.0 * std::sqrt(3.0)), 1e-15);
  }
  EXPECT_DOUBLE_EQ(s->overall[1].coverage(), 2.0 / 6.0);
  EXPECT_NE(SummaryMarkdown(*s).find("Models compared on the 2 of 6 items"), std::string::npos);
}

TEST(Evaluate, TransparentPixelsAreCompositedOverTheBackgroundAndReported) {
  ScratchDir dir;
  std::vector<ManifestItem> items = {Item("a", 1, {255, 255, 255})};
  // A fully transparent PNG whose hidden RGB is black.
  const std::string png = RgbaPng(4, 4, {0, 0, 0, 0});
  ASSERT_TRUE(WriteFileAtomic(dir.path() / "a.png", png).ok());
  auto images = CollectImageDirectory(dir.path(), "m", items);
  ASSERT_TRUE(images.ok());
  EvaluateOptions options;
  options.show_progress = false;
  auto white = Evaluate(items, {*images}, options);
  ASSERT_TRUE(white.ok());
  EXPECT_EQ(*white->rows[0].pre_mean, 0.0);  // composited over white = the white target
  ASSERT_EQ(white->transparent.size(), 1u);
  EXPECT_EQ(white->transparent[0].reason, "alpha_min 0");
  options.alpha = {imaging::AlphaPolicy::Mode::kComposite, {0, 0, 0}};
  EXPECT_GT(*Evaluate(items, {*images}, options)->rows[0].pre_mean, 0.5);
  options.alpha = {imaging::AlphaPolicy::Mode::kDrop, {}};
  EXPECT_GT(*Evaluate(items, {*images}, options)->rows[0].pre_mean, 0.5);  // the hidden black
}

}  // namespace
}  // namespace visalign::violin
