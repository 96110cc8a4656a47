// `visalign violin score` on many images in one process: several IMAGE arguments and --batch
// files give, image for image, the numbers of separate one-image runs, in input order whatever
// --threads; a bad image or line gives an error result for it alone, then exit code 2.
#include <gtest/gtest.h>

#include "testing/cli_runner.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/imaging/image.h"

namespace visalign {
namespace {

using testing::RunVisalign;
using testing::TempDir;

// A textured image (so purity metrics are not zero); `seed` varies the colors and texture.
imaging::Image Textured(int width, int height, int seed) {
  imaging::Image img(width, height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      uint8_t* p = img.pixel(x, y);
      p[0] = static_cast<uint8_t>(40 * seed + 3 * x + (x * y) % 7);
      p[1] = static_cast<uint8_t>(200 - 20 * seed + ((x + seed) % 5) * 9);
      p[2] = static_cast<uint8_t>(90 + 11 * y + seed);
    }
  return img;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  for (std::string_view line : SplitLines(text)) lines.emplace_back(line);
  return lines;
}

Json Without(Json j, std::initializer_list<const char*> keys) {
  for (const char* key : keys) j.erase(key);
  return j;
}

class ViolinScoreMany : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 3; ++i) {
      images_.push_back((dir_ / ("img" + std::to_string(i) + ".png")).string());
      ASSERT_TRUE(imaging::WritePng(images_.back(), Textured(24 + i, 20, i)).ok());
    }
  }
  // The --json object of a one-image run.
  Json Single(const std::vector<std::string>& args) {
    auto r = RunVisalign(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return Json::parse(r.out);
  }
  std::string WriteBatch(const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& line : lines) text += line + "\n";
    const std::string path = (dir_ / "batch.jsonl").string();
    EXPECT_TRUE(WriteFileAtomic(path, text).ok());
    return path;
  }
  TempDir dir_;
  std::vector<std::string> images_;
};

TEST_F(ViolinScoreMany, SeveralImagesGiveTheNumbersOfSeparateRuns) {
  auto json = RunVisalign(
      {"violin", "score", images_[0], images_[1], images_[2], "--target", "#D9B451", "--json", "--threads", "2"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const std::vector<std::string> lines = Lines(json.out);
  ASSERT_EQ(lines.size(), 3u) << json.out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const Json got = Json::parse(lines[i]);
    EXPECT_EQ(got["image"], images_[i]);
    EXPECT_FALSE(got.contains("line"));
    EXPECT_EQ(Without(got, {"image"}), Single({"violin", "score", images_[i], "--target", "#D9B451", "--json"}));
  }

  auto text = RunVisalign({"violin", "score", images_[0], images_[1], "--target", "#D9B451"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  std::string expected;
  for (size_t i = 0; i < 2; ++i) {
    auto one = RunVisalign({"violin", "score", images_[i], "--target", "#D9B451"});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    expected += (i == 0 ? "== " : "\n== ") + images_[i] + " ==\n" + one.out;
  }
  EXPECT_EQ(text.out, expected);
}

TEST_F(ViolinScoreMany, BatchLinesOfEveryFormGiveTheNumbersOfSeparateRunsInInputOrder) {
  // Each target form, as an object and as an argument array, over all images: 18 lines.
  const std::vector<std::vector<std::string>> forms = {
      {"--target", "#D9B451"},
      {"--layout", "q4", "--targets", "#F00,rgb(0, 128, 0),#00F,#FFF", "--weights", "1,2,3,4,5,6"},
      {"--fuzzy", "#B92842,#E3A857"},
  };
  std::vector<std::string> batch;
  std::vector<std::vector<std::string>> single_args;
  for (const auto& form : forms)
    for (const std::string& image : images_) {
      Json object = {{"image", image}}, array = Json::array({image});
      for (size_t k = 0; k < form.size(); k += 2) object[form[k].substr(2)] = form[k + 1];
      for (const std::string& arg : form) array.push_back(arg);
      batch.push_back(object.dump());
      batch.push_back(array.dump());
      std::vector<std::string> args = {"violin", "score", image, "--json"};
      args.insert(args.end(), form.begin(), form.end());
      single_args.push_back(args);
      single_args.push_back(args);
    }
  auto r = RunVisalign({"violin", "score", "--batch", WriteBatch(batch), "--threads", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), batch.size()) << r.out;
  for (size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(batch[i]);
    const Json got = Json::parse(lines[i]);
    EXPECT_EQ(got["line"], i + 1);
    EXPECT_EQ(got["image"], single_args[i][2]);
    EXPECT_EQ(Without(got, {"image", "line"}), Single(single_args[i]));
  }

  // The same file on stdin (`--batch -`) prints the same lines.
  auto piped = testing::RunProgram({"/bin/sh", "-c", std::string("\"$0\" violin score --batch - < \"$1\""),
                                    VISALIGN_TEST_BINARY, (dir_ / "batch.jsonl").string()});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.out, r.out);
}

TEST_F(ViolinScoreMany, BadBatchLinesGiveErrorResultsAndTheOthersAreScored) {
  const std::string file = WriteBatch({
      Json{{"image", images_[0]}, {"target", "red"}}.dump(),
      Json{{"image", (dir_ / "missing.png").string()}, {"target", "red"}}.dump(),
      "",
      Json{{"image", images_[1]}, {"target", "#GGHHII"}}.dump(),
      R"({"image": "a.png", "target": )",
      Json{images_[2], "--fuzzy", "red,blue"}.dump(),
  });
  auto r = RunVisalign({"violin", "score", "--batch", file, "--threads", "2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: 3 of 5 batch lines failed (" + file + "): ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;
  std::vector<Json> got;
  for (const std::string& line : lines) got.push_back(Json::parse(line));
  EXPECT_EQ(got[0]["line"], 1);
  EXPECT_EQ(Without(got[0], {"image", "line"}), Single({"violin", "score", images_[0], "--target", "red", "--json"}));

  EXPECT_EQ(got[1]["line"], 2);
  EXPECT_EQ(got[1]["image"], (dir_ / "missing.png").string());
  EXPECT_NE(got[1]["error"].get<std::string>().find(file + ":2 "), std::string::npos) << got[1];
  EXPECT_FALSE(got[1].contains("raw"));

  EXPECT_EQ(got[2]["line"], 4);
  EXPECT_EQ(got[2]["image"], images_[1]);
  EXPECT_EQ(got[2]["error"], "invalid color \"#GGHHII\" (" + file +
                                 ":4 argument --target): #RRGGBB or #RGB with hexadecimal digits 0-9, A-F");

  EXPECT_EQ(got[3]["line"], 5);
  EXPECT_TRUE(got[3]["image"].is_null());
  EXPECT_NE(got[3]["error"].get<std::string>().find("invalid JSON (syntax error at byte 30) (" + file + ":5)"),
            std::string::npos)
      << got[3];

  EXPECT_EQ(got[4]["line"], 6);
  EXPECT_EQ(Without(got[4], {"image", "line"}),
            Single({"violin", "score", images_[2], "--fuzzy", "red,blue", "--json"}));
}

TEST_F(ViolinScoreMany, AnUnreadableImageAmongSeveralIsReportedAndTheOthersAreScored) {
  const std::string missing = (dir_ / "missing.png").string();
  auto json = RunVisalign({"violin", "score", images_[0], missing, "--target", "red", "--json"});
  EXPECT_EQ(json.exit_code, 2);
  EXPECT_EQ(json.err.rfind("error: 1 of 2 images failed (command line): ", 0), 0u) << json.err;
  const std::vector<std::string> lines = Lines(json.out);
  ASSERT_EQ(lines.size(), 2u) << json.out;
  EXPECT_TRUE(Json::parse(lines[0]).contains("raw"));
  EXPECT_EQ(Json::parse(lines[1])["image"], missing);
  EXPECT_TRUE(Json::parse(lines[1]).contains("error"));

  auto text = RunVisalign({"violin", "score", missing, images_[0], "--target", "red"});
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_EQ(text.out.rfind("== " + missing + " ==\nerror: file does not exist", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("== " + images_[0] + " ==\nmean"), std::string::npos) << text.out;
}

TEST_F(ViolinScoreMany, ImagesAndBatchTogetherOrNeitherAreOneLineErrors) {
  const std::string file = WriteBatch({Json{{"image", images_[0]}, {"target", "red"}}.dump()});
  const std::vector<std::vector<std::string>> cases = {
      {"violin", "score", images_[0], "--batch", file},
      {"violin", "score", "--batch", file, "--target", "red"},
      {"violin", "score", "--target", "red"},
  };
  const char* messages[] = {"error: IMAGE arguments and --batch given (command line)",
                            "error: target arguments with --batch (command line)",
                            "error: no image given (command line)"};
  for (size_t i = 0; i < cases.size(); ++i) {
    auto r = RunVisalign(cases[i]);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err.rfind(messages[i], 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
}  // namespace visalign
