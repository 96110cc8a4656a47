#include "visalign/core/json.h"

#include <gtest/gtest.h>

namespace visalign {
namespace {

TEST(Json, ObjectsKeepTheOrderTheirKeysWereWritten) {
  Json j = {{"benchmark", "hues"}, {"schema_version", 1}, {"visalign_version", "0.1.0"}};
  j["inputs"] = Json::object();
  j["alpha"] = 0.05;
  EXPECT_EQ(j.dump(), R"({"benchmark":"hues","schema_version":1,"visalign_version":"0.1.0","inputs":{},"alpha":0.05})");
}

TEST(CanonicalJsonText, SortsEveryObjectsKeysAtEveryDepth) {
  const Json j = {
      {"temperature", 0}, {"image", "data-url"}, {"nested", {{"z", {1, {{"b", 2}, {"a", 1}}}}, {"a", nullptr}}}};
  // The text earlier releases hashed (nlohmann::json's key-sorted dump): arrays keep their order.
  EXPECT_EQ(CanonicalJsonText(j), R"({"image":"data-url","nested":{"a":null,"z":[1,{"a":1,"b":2}]},"temperature":0})");
}

TEST(SameJson, IgnoresKeyOrderButNotValuesOrArrayOrder) {
  const Json written = {{"kind", "openai"}, {"model", "gpt-image-1"}, {"params", {{"quality", "low"}, {"n", 1}}}};
  const Json sorted = {{"model", "gpt-image-1"}, {"params", {{"n", 1}, {"quality", "low"}}}, {"kind", "openai"}};
  EXPECT_NE(written, sorted);  // == compares key order too
  EXPECT_TRUE(SameJson(written, sorted));
  EXPECT_FALSE(SameJson(written, Json{{"kind", "openai"}, {"model", "gpt-image-1"}}));
  EXPECT_FALSE(SameJson(Json{1, 2}, Json{2, 1}));
}

}  // namespace
}  // namespace visalign
