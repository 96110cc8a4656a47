#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "visalign/io.h"
#include "visalign/violin_eval.h"

namespace visalign::violin {
namespace {

namespace fs = std::filesystem;
using color::Srgb8;

class ScratchDir {
 public:
  ScratchDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("violin_eval_test_" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

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
  auto first = nlohmann::json::parse(jsonl->substr(0, jsonl->find('\n')));
  EXPECT_EQ(first["id"], "a");
  EXPECT_EQ(first["model"], "m");
  EXPECT_EQ(first["norm"]["sd_n"], 0.0);
  auto csv = ReadFile(out.path() / "summary.csv");
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(csv->substr(0, csv->find('\n')),
            "model,variation,language,notation,rgb_ed,rgb_rm,de00,hue,chroma,hyab,pre_mean,sd_n,ced,hf,pur_mean,"
            "n_scored,n_missing,n_unreadable");
  auto json = ReadFile(out.path() / "summary.json");
  ASSERT_TRUE(json.ok());
  auto j = nlohmann::json::parse(*json);
  EXPECT_EQ(j["n_missing"], 1);
  EXPECT_EQ(j["missing"][0]["id"], "b");
  EXPECT_TRUE(fs::exists(out.path() / "summary.md"));
  EXPECT_FALSE(fs::exists(out.path() / "items.jsonl.partial"));
}

}  // namespace
}  // namespace visalign::violin
