// `violin score` arguments: each target form to its TargetSpec, mixed or malformed forms to an
// error naming the argument, and both batch line forms to the same ScoreArgs.
#include <gtest/gtest.h>

#include "visalign/benchmarks/violin/evaluate.h"

namespace visalign::violin {
namespace {

using color::Srgb8;

TEST(ParseTargetSpec, BuildsEachTargetForm) {
  const Result<TargetSpec> single = ParseTargetSpec({.target = "#D9B451"});
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  EXPECT_EQ(single->layout, Layout::kSingle);
  EXPECT_EQ(single->targets, (std::vector<Srgb8>{{217, 180, 81}}));
  EXPECT_FALSE(single->fuzzy);

  const Result<TargetSpec> q4 = ParseTargetSpec({.layout = "q4", .targets = "#F00,rgb(0, 128, 0),#00F,#FFF"});
  ASSERT_TRUE(q4.ok()) << q4.status().ToString();
  EXPECT_EQ(q4->layout, Layout::kQ4);
  EXPECT_EQ(q4->targets, (std::vector<Srgb8>{{255, 0, 0}, {0, 128, 0}, {0, 0, 255}, {255, 255, 255}}));

  const Result<TargetSpec> fuzzy = ParseTargetSpec({.fuzzy = "#B92842,#E3A857"});
  ASSERT_TRUE(fuzzy.ok()) << fuzzy.status().ToString();
  EXPECT_EQ(fuzzy->layout, Layout::kSingle);
  ASSERT_TRUE(fuzzy->fuzzy);
  EXPECT_EQ(fuzzy->fuzzy->first, (Srgb8{0xB9, 0x28, 0x42}));
  EXPECT_EQ(fuzzy->fuzzy->second, (Srgb8{0xE3, 0xA8, 0x57}));
}

TEST(ParseTargetSpec, RejectsMissingMixedAndMalformedForms) {
  struct Bad {
    TargetArgs args;
    const char* message;  // ToString() contains it
  };
  const Bad cases[] = {
      {{}, "no target or more than one target form given (target arguments): exactly one of --target"},
      {{.target = "red", .fuzzy = "red,blue"}, "more than one target form"},
      {{.targets = "red,blue"}, "--targets without --layout (target arguments)"},
      {{.target = "red", .layout = "h2"}, "--layout without --targets"},
      {{.layout = "x4", .targets = "red,blue"}, "unknown layout \"x4\""},
      {{.layout = "q4", .targets = "red,blue"}, "2 target colors for layout q4 (target): 4 colors"},
      {{.target = "red,blue"}, "--target takes one color (argument --target \"red,blue\")"},
      {{.target = "#GGHHII"}, "invalid color \"#GGHHII\" (argument --target): #RRGGBB"},
      {{.layout = "h2", .targets = "red,nope"}, "invalid color \"nope\" (argument --targets)"},
      {{.fuzzy = "red"}, "1 colors (argument --fuzzy \"red\"): two colors LOW,HIGH"},
  };
  for (const Bad& c : cases) {
    const Result<TargetSpec> got = ParseTargetSpec(c.args);
    ASSERT_FALSE(got.ok()) << c.message;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(got.status().ToString().find(c.message), std::string::npos) << got.status().ToString();
  }
}

void ExpectArgs(const ScoreArgs& got, const ScoreArgs& expected) {
  EXPECT_EQ(got.image, expected.image);
  EXPECT_EQ(got.target.target, expected.target.target);
  EXPECT_EQ(got.target.layout, expected.target.layout);
  EXPECT_EQ(got.target.targets, expected.target.targets);
  EXPECT_EQ(got.target.fuzzy, expected.target.fuzzy);
  EXPECT_EQ(got.weights, expected.weights);
}

TEST(ParseScoreLine, ObjectAndArgumentArrayGiveTheSameArguments) {
  const ScoreArgs q4{"b.png", {.layout = "q4", .targets = "#F00,#0F0,#00F,#FFF"}, "1,0,0,0,0,0"};
  const char* q4_lines[] = {
      R"({"image": "b.png", "layout": "q4", "targets": "#F00,#0F0,#00F,#FFF", "weights": "1,0,0,0,0,0"})",
      R"(["b.png", "--layout", "q4", "--targets", "#F00,#0F0,#00F,#FFF", "--weights", "1,0,0,0,0,0"])",
      R"(["--layout=q4", "--targets=#F00,#0F0,#00F,#FFF", "b.png", "--weights=1,0,0,0,0,0"])",
  };
  for (const char* line : q4_lines) {
    SCOPED_TRACE(line);
    const Result<ScoreArgs> got = ParseScoreLine(line);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ExpectArgs(*got, q4);
  }
  const Result<ScoreArgs> single = ParseScoreLine(R"json(  ["a.png", "--target", "rgb(1, 2, 3)"]  )json");
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  ExpectArgs(*single, {"a.png", {.target = "rgb(1, 2, 3)"}, ""});
  const Result<ScoreArgs> fuzzy = ParseScoreLine(R"({"fuzzy": "#B92842,#E3A857", "image": "c.png"})");
  ASSERT_TRUE(fuzzy.ok()) << fuzzy.status().ToString();
  ExpectArgs(*fuzzy, {"c.png", {.fuzzy = "#B92842,#E3A857"}, ""});
}

TEST(ParseScoreLine, RejectsMalformedLinesSayingWhatIsWrong) {
  struct Bad {
    const char* line;
    StatusCode code;
    const char* message;  // ToString() contains it
  };
  const Bad cases[] = {
      {R"({"image": "a.png", "target": )", StatusCode::kCorrupt, "invalid JSON (syntax error at byte 30)"},
      {"a.png --target red", StatusCode::kCorrupt, "a JSON object {\"image\": PATH"},
      {R"("a.png")", StatusCode::kInvalidArgument, "a JSON string line"},
      {R"({"target": "red"})", StatusCode::kInvalidArgument, "no image: a member \"image\": PATH"},
      {R"({"image": "a.png", "taget": "red"})", StatusCode::kInvalidArgument, "unknown member \"taget\""},
      {R"({"image": "a.png", "target": 7})", StatusCode::kInvalidArgument, "a number value (member target)"},
      {R"(["--target", "red"])", StatusCode::kInvalidArgument, "no image"},
      {R"(["a.png", "b.png", "--target", "red"])", StatusCode::kInvalidArgument, "more than one image"},
      {R"(["a.png", "--colour", "red"])", StatusCode::kInvalidArgument, "unknown option \"--colour\""},
      {R"(["a.png", "-t", "red"])", StatusCode::kInvalidArgument, "unknown option \"-t\""},
      {R"(["a.png", "--image", "b.png"])", StatusCode::kInvalidArgument, "unknown option \"--image\""},
      {R"(["a.png", "--target"])", StatusCode::kInvalidArgument, "--target without a value"},
      {R"(["a.png", "--target", "red", "--target=blue"])", StatusCode::kInvalidArgument, "--target given twice"},
      {R"(["a.png", "--target", 255])", StatusCode::kInvalidArgument, "a number argument (argument 3)"},
  };
  for (const Bad& c : cases) {
    const Result<ScoreArgs> got = ParseScoreLine(c.line);
    ASSERT_FALSE(got.ok()) << c.line;
    EXPECT_EQ(got.status().code(), c.code) << c.line;
    EXPECT_NE(got.status().ToString().find(c.message), std::string::npos)
        << c.line << " -> " << got.status().ToString();
  }
}

}  // namespace
}  // namespace visalign::violin
