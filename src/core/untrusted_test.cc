#include "visalign/core/untrusted.h"

#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "testing/dirs.h"
#include "visalign/core/io.h"

namespace visalign {
namespace {

std::string Nested(int depth, std::string_view open = "[", std::string_view close = "]") {
  std::string s;
  for (int i = 0; i < depth; ++i) s += open;
  for (int i = 0; i < depth; ++i) s += close;
  return s;
}

TEST(ParseJson, ReadsOrdinaryDocuments) {
  auto j = ParseJson(R"({"model_cfg": {"embed_dim": 512, "name": "ViT-B-32"}, "list": [1, 2.5, null]})");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)["model_cfg"]["embed_dim"], 512);
  EXPECT_EQ((*j)["list"].size(), 3u);
}

TEST(ParseJson, AcceptsNestingUpToTheLimit) { EXPECT_TRUE(ParseJson(Nested(kMaxJsonDepth)).ok()); }

TEST(ParseJson, RefusesNestingBeyondTheLimitWhileParsing) {
  auto j = ParseJson(Nested(kMaxJsonDepth + 1));
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(j.status().what(), "JSON nested deeper than 64 levels");
}

TEST(ParseJson, RefusesTheHundredThousandLevelConfigOfTheReproducer) {
  // {"model_cfg":{"embed_dim":[[[...]]]}}, 100,000 deep: crashed `clip info` when the error was built.
  const std::string doc = R"({"model_cfg":{"embed_dim":)" + Nested(100000) + "}}";
  auto j = ParseJson(doc);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().what(), "JSON nested deeper than 64 levels");
  // Not even closed: the parser stops at the limit, before reading the rest.
  EXPECT_FALSE(ParseJson(std::string(1000000, '{')).ok());
}

TEST(ParseJson, KeepsKeysInTheOrderOfTheText) {
  auto j = ParseJson(R"({"z": 1, "a": {"y": [true, "s"], "b": null}, "m": 2.5})");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(j->dump(), R"({"z":1,"a":{"y":[true,"s"],"b":null},"m":2.5})");
}

TEST(ParseJson, ARepeatedKeyKeepsItsFirstPlaceAndItsLastValue) {
  auto j = ParseJson(R"({"a": 1, "b": {"x": 1, "x": [2]}, "a": 3})");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(j->dump(), R"({"a":3,"b":{"x":[2]}})");
}

TEST(ParseJson, ReadsAnObjectOfManyKeysInOrder) {
  // A tokenizer's vocabulary: 50 000 keys (a builder searching each key's object linearly would
  // take seconds; ParseJson indexes the open object's keys).
  constexpr int kKeys = 50000;
  std::string text = "{";
  for (int i = 0; i < kKeys; ++i) text += (i ? ",\"" : "\"") + std::to_string(kKeys - i) + "\":" + std::to_string(i);
  text += "}";
  auto j = ParseJson(text);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  ASSERT_EQ(j->size(), static_cast<size_t>(kKeys));
  EXPECT_EQ(j->begin().key(), std::to_string(kKeys));
  EXPECT_EQ(std::prev(j->end()).key(), "1");
  EXPECT_EQ((*j)["1"], kKeys - 1);
}

TEST(ReadJsonFile, NamesTheFileOfABrokenDocument) {
  testing::TempDir dir;
  const std::string path = (dir / "summary.json").string();
  ASSERT_TRUE(WriteFileAtomic(path, "{\"a\": [1,}").ok());
  Result<Json> j = ReadJsonFile(path);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(j.status().where(), path);
  EXPECT_EQ(j.status().what(), "invalid JSON (syntax error at byte 10)");
  ASSERT_TRUE(WriteFileAtomic(path, "{\"a\": [1]}").ok());
  EXPECT_EQ(ReadJsonFile(path)->dump(), R"({"a":[1]})");
  EXPECT_FALSE(ReadJsonFile(path + ".missing").ok());
}

TEST(ParseJson, NamesTheByteOfASyntaxError) {
  auto j = ParseJson(R"({"a": tru})");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().what(), "invalid JSON (syntax error at byte 10)");  // bytes count from 1: the "}"
  EXPECT_FALSE(ParseJson("").ok());
  EXPECT_FALSE(ParseJson("{} trailing").ok());
}

TEST(QuoteText, QuotesShortTextAsItIs) {
  EXPECT_EQ(QuoteText("#GGHHII"), "\"#GGHHII\"");
  EXPECT_EQ(QuoteText("grün"), "\"grün\"");
  EXPECT_EQ(QuoteText(R"(say "hi" \o/)"), R"("say \"hi\" \\o/")");
}

TEST(QuoteText, EscapesControlBytesSoTheMessageStaysOneHarmlessLine) {
  const std::string hostile = std::string("a\nb\rc\td") + '\0' + "e\x1b[31mred\x7f";
  EXPECT_EQ(QuoteText(hostile), R"("a\nb\rc\td\x00e\x1B[31mred\x7F")");
  // C1 controls (U+009B is CSI on some terminals) and bytes that are not UTF-8.
  EXPECT_EQ(QuoteText("\xC2\x9B"
                      "2J \xFF\xC3"),
            R"("\xC2\x9B2J \xFF\xC3")");
}

TEST(QuoteText, CutsLongTextAndGivesItsSize) {
  const std::string field(200'000'000 / 1000, 'x');  // stands for the 200 MB CSV field
  const std::string q = QuoteText(field);
  EXPECT_EQ(q, "\"" + std::string(kQuoteLimit, 'x') + "\"... (200000 bytes)");
  // A multi-byte character is never split.
  const std::string euros = "€€€€€€";  // 3 bytes each
  EXPECT_EQ(QuoteText(euros, 7), "\"€€\"... (18 bytes)");
}

TEST(QuoteJson, WritesSmallValuesAsCompactJson) {
  EXPECT_EQ(QuoteJson(Json::parse(R"({"a": [1, "x", null], "b": true})")), R"({"a":[1,"x",null],"b":true})");
  EXPECT_EQ(QuoteJson(Json("line\nbreak")), R"("line\nbreak")");
  EXPECT_EQ(QuoteJson(Json::array()), "[]");
}

TEST(QuoteJson, StopsAtTheLimitWithoutRecursingIntoADeepValue) {
  Json deep = Json::array();
  for (int i = 0; i < 100000; ++i) deep = Json::array({std::move(deep)});
  const std::string q = QuoteJson(deep);
  EXPECT_EQ(q, std::string(kQuoteLimit, '[') + "...");
}

TEST(QuoteJson, StopsAtTheLimitOfAWideValue) {
  Json wide = Json::array();
  for (int i = 0; i < 100000; ++i) wide.push_back(i);
  const std::string q = QuoteJson(wide, 10);
  EXPECT_EQ(q, "[0,1,2,3,4...");
  EXPECT_EQ(QuoteJson(Json(std::string(1000, 'y')), 5), "\"yyyy...");
}

TEST(EscapeControlBytes, StatusToStringIsAlwaysOneBoundedLine) {
  const std::string field = std::string("evil\nerror: fake line") + '\0' + "hidden";
  const Status s = Status::InvalidArgument("not a number: " + field, "table.csv:3 column x", "a number");
  EXPECT_EQ(s.ToString(), R"(not a number: evil\nerror: fake line\x00hidden (table.csv:3 column x): a number)");
  const Status huge = Status::InvalidArgument(std::string(1'000'000, 'z'), "table.csv:4", "a number");
  EXPECT_EQ(huge.ToString(), std::string(1000, 'z') + "... (1000000 bytes) (table.csv:4): a number");
  // Every part huge, and escaping widening each control byte to four: still one line within the bound.
  const std::string controls(100'000, '\x01');
  for (const Status& s :
       {Status::InvalidArgument(controls, controls, controls),
        Status::InvalidArgument(std::string(5000, 'w'), std::string(5000, 'h'), std::string(5000, 'e'))}) {
    const std::string line = s.ToString();
    EXPECT_LE(line.size(), 2000u);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_EQ(line.find('\x01'), std::string::npos);
  }
}

}  // namespace
}  // namespace visalign
