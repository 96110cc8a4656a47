// `visalign violin score` and `visalign violin evaluate` end to end: a generated dataset's own
// ground truth scores zero, a degraded copy does not, problems are counted and --strict fails.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "testing/cli_runner.h"
#include "visalign/benchmarks/violin/manifest.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/imaging/image.h"
#include "visalign/store.h"

namespace visalign {
namespace {

using testing::RunVisalign;
using testing::TempDir;

const std::vector<std::string> kPrecision = {"rgb_ed", "rgb_rm", "de00", "hue", "chroma", "hyab"};
const std::vector<std::string> kPurity = {"sd_n", "ced", "hf"};

class ViolinEval : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = RunVisalign({"violin", "dataset", "--out", (dir_ / "ds").string(), "--scale", "0.01", "--image-size", "64",
                          "--log-level", "error"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::filesystem::path Dataset() const { return dir_ / "ds"; }
  TempDir dir_;
};

TEST_F(ViolinEval, GroundTruthImagesScoreZero) {
  auto r =
      RunVisalign({"violin", "evaluate", "--dataset", Dataset().string(), "--images",
                   "gt=" + (Dataset() / "images").string(), "--out", (dir_ / "out").string(), "--json", "--strict"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = Json::parse(r.out);
  ASSERT_FALSE(j["rows"].empty());
  int scored = 0;
  for (const auto& row : j["rows"]) {
    SCOPED_TRACE(row.dump());
    scored += row["n_scored"].get<int>();
    EXPECT_GT(row["n_scored"].get<int>(), 0);
    EXPECT_EQ(row["n_missing"], 0);
    EXPECT_EQ(row["n_unreadable"], 0);
    for (const auto& m : kPurity) EXPECT_EQ(row["norm"][m].get<double>(), 0.0) << m;
    EXPECT_EQ(row["pur_mean"].get<double>(), 0.0);
    // Fuzzy items (variation 4): the GT is the range's HSL midpoint rounded to 8 bits, so its
    // projection onto the range differs from it by that rounding only (< 1 of 255 per channel).
    const double bound = row["variation"] == 4 ? 1.0 / 255.0 : 0.0;
    for (const auto& m : kPrecision) EXPECT_LE(row["norm"][m].get<double>(), bound) << m;
  }
  auto items = ReadFile(dir_ / "out" / "items.jsonl");
  ASSERT_TRUE(items.ok());
  EXPECT_EQ(static_cast<int>(std::count(items->begin(), items->end(), '\n')), scored);
}

// `violin evaluate` run with relative paths records absolute image paths, so `visalign report`
// run from another folder shows every thumbnail (it once showed "image not readable" for all).
TEST_F(ViolinEval, AReportFromAnotherFolderShowsTheThumbnails) {
  const testing::RunResult evaluate = testing::RunProgram(
      {"sh", "-c",
       fmt::format("cd '{}' && exec '{}' violin evaluate --dataset ds --images gt=ds/images --out eval "
                   "--log-level error",
                   dir_.path().string(), VISALIGN_TEST_BINARY)});
  ASSERT_EQ(evaluate.exit_code, 0) << evaluate.err;
  auto items = ReadFile(dir_ / "eval" / "items.jsonl");
  ASSERT_TRUE(items.ok());
  const Json first = Json::parse(items->substr(0, items->find('\n')));
  EXPECT_EQ(first["path"].get<std::string>().rfind((dir_ / "ds" / "images").string() + "/", 0), 0u) << first.dump();
  ASSERT_NE(std::filesystem::current_path(), dir_.path());
  auto report = RunVisalign({"report", "--results", (dir_ / "eval").string(), "--out", (dir_ / "r.html").string()});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(report.err, "");
  const std::string html = *ReadFile(dir_ / "r.html");
  EXPECT_EQ(html.find("image not readable"), std::string::npos);
  EXPECT_NE(html.find("<img alt=\"\" src=\"data:image/png;base64,"), std::string::npos);
}

TEST_F(ViolinEval, ComparesModelsAndReportsMissingAndUnreadable) {
  // "partial": every GT image but the first, inverted; plus an unreadable file and a stray one.
  const auto images = Dataset() / "images";
  const auto partial = dir_ / "partial";
  std::filesystem::create_directories(partial);
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(images)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 3u);
  for (size_t i = 2; i < files.size(); ++i) {
    auto img = imaging::ReadImage(files[i]);
    ASSERT_TRUE(img.ok());
    for (uint8_t& v : img->rgb) v = static_cast<uint8_t>(255 - v);
    ASSERT_TRUE(imaging::WritePng(partial / files[i].filename(), *img).ok());
  }
  ASSERT_TRUE(WriteFileAtomic(partial / files[1].filename(), "truncated").ok());
  ASSERT_TRUE(WriteFileAtomic(partial / "stray.png", "x").ok());

  auto r = RunVisalign({"violin", "evaluate", "--dataset", Dataset().string(), "--images", "gt=" + images.string(),
                        "--images", "inverted=" + partial.string(), "--out", (dir_ / "cmp").string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = Json::parse(r.out);
  EXPECT_EQ(j["n_missing"], 1);
  EXPECT_EQ(j["n_unreadable"], 1);
  EXPECT_EQ(j["n_unmatched"], 1);
  EXPECT_EQ(j["missing"][0]["model"], "inverted");
  EXPECT_NE(r.err.find("stray.png"), std::string::npos);
  double gt_pre = 0, inverted_pre = 0;
  for (const auto& row : j["rows"]) (row["model"] == "gt" ? gt_pre : inverted_pre) += row["pre_mean"].get<double>();
  EXPECT_LT(gt_pre, 0.01);
  EXPECT_GT(inverted_pre, 0.1);
  auto md = ReadFile(dir_ / "cmp" / "summary.md");
  ASSERT_TRUE(md.ok());
  EXPECT_NE(md->find("| inverted | 1 | en | hex |"), std::string::npos);

  auto strict = RunVisalign({"violin", "evaluate", "--dataset", Dataset().string(), "--images",
                             "inverted=" + partial.string(), "--out", (dir_ / "strict").string(), "--strict"});
  EXPECT_EQ(strict.exit_code, 2);
  EXPECT_NE(strict.err.find("error: 1 missing, 1 unreadable, 1 unmatched images (--strict)"), std::string::npos)
      << strict.err;
}

// The images of the test split only, as `generate --filter split=test` leaves them: scored with
// --split test they cover every selected item (--strict passes); without it coverage is stated,
// a warning names the model, and --strict fails.
TEST_F(ViolinEval, TheSplitSelectsItemsAndCoverageIsStatedEverywhere) {
  auto items = violin::LoadManifest(Dataset());
  ASSERT_TRUE(items.ok());
  const auto test_only = dir_ / "test-only";
  std::filesystem::create_directories(test_only);
  size_t n_test = 0;
  for (const auto& item : *items)
    if (item.split == "test") {
      ++n_test;
      std::filesystem::copy_file(Dataset() / *item.image, test_only / (item.id + ".png"));
    }
  ASSERT_GT(n_test, 0u);
  const std::vector<std::string> base = {
      "violin", "evaluate", "--dataset", Dataset().string(), "--images", "m=" + test_only.string(), "--json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return RunVisalign(args);
  };
  auto split = with({"--split", "test", "--strict", "--by", "prompt_split", "--out", (dir_ / "s").string()});
  ASSERT_EQ(split.exit_code, 0) << split.err;
  auto j = Json::parse(split.out);
  EXPECT_EQ(j["n_items"], n_test);
  EXPECT_EQ(j["split"], "test");
  ASSERT_EQ(j["overall"].size(), 1u);
  EXPECT_EQ(j["overall"][0]["coverage"], 1.0);
  EXPECT_EQ(j["overall"][0]["ci95"]["pre_mean"].size(), 2u);
  for (const auto& row : j["rows"]) EXPECT_TRUE(row.contains("prompt_split")) << row.dump();
  EXPECT_EQ(split.err.find("warning"), std::string::npos) << split.err;

  auto all = with({"--out", (dir_ / "a").string()});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const auto overall = Json::parse(all.out)["overall"][0];
  EXPECT_EQ(overall["n_items"], items->size());
  EXPECT_DOUBLE_EQ(overall["coverage"].get<double>(), double(n_test) / double(items->size()));
  EXPECT_NE(all.err.find(fmt::format("warning: model m: {} of {} items scored", n_test, items->size())),
            std::string::npos)
      << all.err;
  EXPECT_EQ(with({"--strict", "--out", (dir_ / "st").string()}).exit_code, 2);
  // --missing worst counts every missing item as 1 on every normalised metric.
  auto worst = with({"--missing", "worst", "--out", (dir_ / "w").string()});
  ASSERT_EQ(worst.exit_code, 0) << worst.err;
  const double worst_pre = Json::parse(worst.out)["overall"][0]["pre_mean"].get<double>();
  EXPECT_NEAR(worst_pre, double(items->size() - n_test) / double(items->size()),
              overall["pre_mean"].get<double>() + 1e-12);
  EXPECT_NE(worst.err.find("(--missing worst)"), std::string::npos);
  auto csv = ReadFile(dir_ / "w" / "summary.csv");
  ASSERT_TRUE(csv.ok());
  EXPECT_NE(csv->find("\noverall,m,all,all,all,"), std::string::npos);  // "all", as summary.md says
}

// The spellings before docs/cli.md's vocabulary still work for one release, with a warning.
TEST_F(ViolinEval, OldModelSpellingsWorkWithADeprecationWarning) {
  const std::string images = (Dataset() / "images").string();
  auto named = RunVisalign({"violin", "evaluate", "--dataset", Dataset().string(), "--images", images, "--model", "gt",
                            "--out", (dir_ / "a").string(), "--json"});
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_EQ(Json::parse(named.out)["overall"][0]["model"], "gt");
  EXPECT_NE(named.err.find("warning: --model is deprecated for `visalign violin evaluate`: use --name"),
            std::string::npos)
      << named.err;
  auto pair = RunVisalign({"violin", "evaluate", "--dataset", Dataset().string(), "--model", "gt=" + images, "--out",
                           (dir_ / "b").string(), "--json"});
  ASSERT_EQ(pair.exit_code, 0) << pair.err;
  EXPECT_EQ(Json::parse(pair.out)["overall"][0]["model"], "gt");
  EXPECT_NE(pair.err.find("use --images"), std::string::npos) << pair.err;
}

// `violin generate --filter ... --limit N` made N items' images: evaluate takes the same selection
// flags, so that run is scored at full coverage instead of "4 % coverage, 462 missing".
TEST_F(ViolinEval, FilterAndLimitSelectTheItemsAsGenerateDoes) {
  auto items = violin::LoadManifest(Dataset());
  ASSERT_TRUE(items.ok());
  const auto some = dir_ / "some";
  std::filesystem::create_directories(some);
  std::vector<std::string> chosen;
  for (const auto& item : *items)
    if (item.variation == 2 && chosen.size() < 5) {
      chosen.push_back(item.id);
      std::filesystem::copy_file(Dataset() / *item.image, some / (item.id + ".PNG"));  // any case
    }
  ASSERT_EQ(chosen.size(), 5u);
  auto r =
      RunVisalign({"violin", "evaluate", "--dataset", Dataset().string(), "--images", "m=" + some.string(), "--filter",
                   "variation=2", "--limit", "5", "--strict", "--json", "--out", (dir_ / "o").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = Json::parse(r.out);
  EXPECT_EQ(j["n_items"], 5);
  EXPECT_EQ(j["overall"][0]["coverage"], 1.0);
  EXPECT_EQ(j["selection"], Json::parse(R"({"filters": {"variation": ["2"]}, "limit": 5})"));
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  auto bad = RunVisalign({"violin", "evaluate", "--dataset", Dataset().string(), "--images", some.string(), "--filter",
                          "colour=red", "--out", (dir_ / "b").string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err.rfind("error: unknown filter key \"colour\"", 0), 0u) << bad.err;
}

// An ACVA generation run in the same store is named for what it is, not "another dataset version".
TEST_F(ViolinEval, AnAcvaRunIsRefusedAsSuch) {
  {
    auto st = store::OpenStore((dir_ / "store").string());
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    store::RunInfo info;
    info.name = "concepts";
    info.benchmark = "acva";
    info.dataset_fingerprint = "concept-set";
    info.identity = {{"backend", "directory"}};
    ASSERT_TRUE((*st)->OpenRun(info).ok());
  }
  auto r = RunVisalign({"violin", "evaluate", "--dataset", Dataset().string(), "--store", (dir_ / "store").string(),
                        "--run", "concepts", "--out", (dir_ / "x").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: run \"concepts\" was made for the acva benchmark, not VIOLIN", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("visalign acva analyze --run concepts"), std::string::npos) << r.err;
}

TEST_F(ViolinEval, BadEvaluationOptionsAreOneLineErrors) {
  const std::vector<std::vector<std::string>> bad = {{"--split", "validation"},
                                                     {"--by", "colour"},
                                                     {"--missing", "zero"},
                                                     {"--background", "transparent-ish"},
                                                     {"--bootstrap", "5"}};
  for (const auto& extra : bad) {
    std::vector<std::string> args = {
        "violin", "evaluate",           "--dataset", Dataset().string(), "--images", (Dataset() / "images").string(),
        "--out",  (dir_ / "x").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = RunVisalign(args);
    EXPECT_EQ(r.exit_code, 2) << extra[0];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  }
}

TEST(ViolinScore, PrintsRawAndNormalisedMetricsAsJson) {
  TempDir dir;
  imaging::Image img(10, 8);
  for (size_t i = 0; i < img.rgb.size(); i += 3) img.rgb[i] = 200, img.rgb[i + 1] = 100, img.rgb[i + 2] = 50;
  ASSERT_TRUE(imaging::WritePng(dir / "a.png", img).ok());
  auto r = RunVisalign({"violin", "score", (dir / "a.png").string(), "--target", "rgb(210, 100, 50)", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = Json::parse(r.out);
  EXPECT_EQ(j.size(), 4u);
  EXPECT_DOUBLE_EQ(j["raw"]["rgb_ed"].get<double>(), 10.0);
  EXPECT_EQ(j["raw"]["sd"].get<double>(), 0.0);
  EXPECT_EQ(j["norm"]["sd_n"].get<double>(), 0.0);
  EXPECT_EQ(j["pur_mean"].get<double>(), 0.0);

  auto h2 = RunVisalign({"violin", "score", (dir / "a.png").string(), "--layout", "h2", "--targets",
                         "rgb(200, 100, 50),#C86432", "--json"});
  ASSERT_EQ(h2.exit_code, 0) << h2.err;
  EXPECT_EQ(Json::parse(h2.out)["pre_mean"].get<double>(), 0.0);

  auto fuzzy = RunVisalign({"violin", "score", (dir / "a.png").string(), "--fuzzy", "#C86432,#C86432", "--json"});
  ASSERT_EQ(fuzzy.exit_code, 0) << fuzzy.err;
  EXPECT_LT(Json::parse(fuzzy.out)["raw"]["rgb_ed"].get<double>(), 1e-9);
}

TEST(ViolinScore, BadArgumentsExitTwoWithAClearMessage) {
  TempDir dir;
  ASSERT_TRUE(imaging::WritePng(dir / "a.png", imaging::Image(4, 4)).ok());
  const std::string a = (dir / "a.png").string();
  auto none = RunVisalign({"violin", "score", a});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("exactly one of --target"), std::string::npos) << none.err;
  auto count = RunVisalign({"violin", "score", a, "--layout", "q4", "--targets", "red,blue"});
  EXPECT_EQ(count.exit_code, 2);
  EXPECT_NE(count.err.find("2 target colors for layout q4"), std::string::npos) << count.err;
  auto color = RunVisalign({"violin", "score", a, "--target", "#GGHHII"});
  EXPECT_EQ(color.exit_code, 2);
  auto missing = RunVisalign({"violin", "score", (dir / "nope.png").string(), "--target", "red"});
  EXPECT_EQ(missing.exit_code, 2);
  auto garbage = RunVisalign({"violin", "score", a, "--target", "red", "--weights", "1,2"});
  EXPECT_EQ(garbage.exit_code, 2);
}

// Files that are not PNG, JPEG or WebP, damaged ones and oversized ones: one line on stderr naming
// the file and the real cause, exit code 2, nothing on stdout.
TEST(ViolinScore, BadImagesAreOneLineErrorsNamingTheCause) {
  TempDir dir;
  ASSERT_TRUE(imaging::WritePng(dir / "ok.png", imaging::Image(16, 16)).ok());
  std::string png;
  ASSERT_TRUE(ReadFileInto(dir / "ok.png", png).ok());
  std::string huge = png;  // IHDR claims 100000 x 100000 (CRC not fixed: the size is read first)
  for (int i = 0; i < 4; ++i) huge[16 + i] = huge[20 + i] = static_cast<char>(100000u >> (24 - 8 * i));
  const std::vector<std::pair<std::string, std::string>> files = {
      {"scan.tiff", std::string("II*\0\x08\0\0\0", 8)},
      {"anim.gif", "GIF89a\x01\x00\x01\x00\x80\x00\x00"},
      {"photo.heic", std::string("\0\0\0\x18"
                                 "ftypheic\0\0\0\0mif1heic",
                                 24)},
      {"photo.avif", std::string("\0\0\0\x18"
                                 "ftypavif\0\0\0\0avifmif1",
                                 24)},
      {"logo.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"/>"},
      {"doc.pdf", "%PDF-1.7\n"},
      {"cut.png", png.substr(0, png.size() / 2)},
      {"page.png", "<html><title>502 Bad Gateway</title></html>"},
  };
  const std::map<std::string, std::string> expected = {
      {"scan.tiff", "unsupported image format TIFF"},
      {"anim.gif", "unsupported image format GIF"},
      {"photo.heic", "unsupported image format HEIC/HEIF"},
      {"photo.avif", "unsupported image format AVIF"},
      {"logo.svg", "unsupported image format SVG"},
      {"doc.pdf", "unsupported image format PDF"},
      {"cut.png", "cannot decode PNG"},
      {"page.png", "cannot decode image"},
  };
  for (const auto& [name, bytes] : files) {
    ASSERT_TRUE(WriteFileAtomic(dir / name, bytes).ok());
    auto r = RunVisalign({"violin", "score", (dir / name).string(), "--target", "red"});
    EXPECT_EQ(r.exit_code, 2) << name;
    EXPECT_TRUE(r.out.empty()) << name << ": " << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << name << ": " << r.err;
    EXPECT_EQ(r.err.rfind("error: " + expected.at(name), 0), 0u) << name << ": " << r.err;
    EXPECT_NE(r.err.find((dir / name).string()), std::string::npos) << r.err;
  }
  ASSERT_TRUE(WriteFileAtomic(dir / "huge.png", huge).ok());
  auto r = RunVisalign({"violin", "score", (dir / "huge.png").string(), "--target", "red"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: image of 100000x100000 pixels (" + (dir / "huge.png").string() +
                       "): at most 67108864 pixels (the image size limit)\n");
  // --max-image-pixels moves the limit, for every command.
  r = RunVisalign({"violin", "score", (dir / "huge.png").string(), "--target", "red", "--max-image-pixels", "100"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: image of 100000x100000 pixels (" + (dir / "huge.png").string() +
                       "): at most 100 pixels (the image size limit)\n");
}

}  // namespace
}  // namespace visalign
