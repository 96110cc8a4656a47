#include <gtest/gtest.h>

#include "visalign/benchmarks/acva/pipeline.h"

namespace visalign::acva {
namespace {

TEST(ParseRunSpecs, OneRunPerLineWithOptionalModelEndpointAndKey) {
  auto specs = ParseRunSpecs(R"({"run": "gpt", "model": "gpt-image-1", "api_key_env": "OPENAI_API_KEY"}

{"run": "sdxl", "model": "sdxl", "endpoint": "http://127.0.0.1:8000"}
{"run": "imported"}
)",
                             "runs.jsonl");
  ASSERT_TRUE(specs.ok()) << specs.status().ToString();
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_EQ((*specs)[0].run, "gpt");
  EXPECT_EQ((*specs)[0].model, "gpt-image-1");
  EXPECT_EQ((*specs)[0].api_key_env, "OPENAI_API_KEY");
  EXPECT_EQ((*specs)[0].endpoint, "");  // the command line's --endpoint
  EXPECT_EQ((*specs)[1].endpoint, "http://127.0.0.1:8000");
  EXPECT_EQ((*specs)[2].model, "");
}

TEST(ParseRunSpecs, ErrorsNameTheLineAndTheField) {
  auto misspelt = ParseRunSpecs("{\"run\": \"a\"}\n{\"run\": \"b\", \"modle\": \"x\"}\n", "runs.jsonl");
  ASSERT_FALSE(misspelt.ok());
  EXPECT_EQ(misspelt.status().ToString(),
            "unknown field \"modle\" (runs.jsonl:2): one of: run, model, endpoint, api_key_env");
  auto no_run = ParseRunSpecs(R"({"model": "x"})", "runs.jsonl");
  ASSERT_FALSE(no_run.ok());
  EXPECT_EQ(no_run.status().where(), "runs.jsonl:1");
  auto number = ParseRunSpecs(R"({"run": "a", "model": 3})", "runs.jsonl");
  ASSERT_FALSE(number.ok());
  EXPECT_EQ(number.status().where(), "runs.jsonl:1 field model");
  EXPECT_FALSE(ParseRunSpecs("[1, 2]", "runs.jsonl").ok());
}

}  // namespace
}  // namespace visalign::acva
