// Untrusted input through the release CLI: the hand-made probes that once crashed visalign or
// printed unbounded, multi-line or terminal-escaping errors. Every one must end with exit code 2 (or
// a completed run that counts the failure) and error lines that are single, short and printable.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <string>

#include "testing/cli_runner.h"
#include "testing/dirs.h"
#include "visalign/backends/http_server.h"
#include "visalign/benchmarks/acva/pipeline.h"

namespace visalign {
namespace {

using testing::RunResult;
using testing::RunVisalign;

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// stderr is exactly one "error: " line, short and free of control bytes.
void ExpectOneCleanErrorLine(const RunResult& r, const std::string& contains) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_LT(r.err.size(), 1000u) << r.err.substr(0, 1000);
  EXPECT_EQ(std::count_if(r.err.begin(), r.err.end() - 1,
                          [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }),
            0)
      << r.err;
  EXPECT_NE(r.err.find(contains), std::string::npos) << r.err;
}

class UntrustedInput : public ::testing::Test {
 protected:
  // A CLIP model folder whose config is `config` (the weights file only needs to exist: the config
  // is read and refused first).
  std::string ModelDir(const std::string& config) {
    const auto dir = scratch_.path() / "model";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "open_clip_config.json") << config;
    std::ofstream(dir / "open_clip_model.safetensors") << "";
    return dir.string();
  }
  testing::TempDir scratch_;
};

TEST_F(UntrustedInput, AConfigNestedTooDeepIsOneErrorNotAStackOverflow) {
  // Was SIGSEGV (rc 139): the error message serialised the value recursively.
  const auto r =
      RunVisalign({"clip", "info", "--clip-model", ModelDir(R"({"model_cfg":{"embed_dim":)" + Nested(100000) + "}}")});
  ExpectOneCleanErrorLine(r, "JSON nested deeper than 64 levels");
}

TEST_F(UntrustedInput, AnAbsurdMlpRatioIsRefused) {
  // Was undefined behaviour (1e300 converted to int; the CLI then reported a shape [-2147483648, 64]).
  const std::string config = R"({"model_cfg": {"embed_dim": 64, "vision_cfg": {"image_size": 64, "layers": 2,
      "width": 64, "head_width": 16, "patch_size": 16, "mlp_ratio": 1e300}, "text_cfg": {"width": 64, "heads": 4,
      "layers": 2}}})";
  ExpectOneCleanErrorLine(RunVisalign({"clip", "info", "--clip-model", ModelDir(config)}),
                          "field \"mlp_ratio\" is 1e+300");
}

TEST_F(UntrustedInput, AHostileCsvFieldIsQuotedShortAndEscaped) {
  // A 10 MB field with a line break, a terminal escape and a NUL: the error line was as long as the
  // field, split in two, coloured the terminal, and was cut at the NUL (losing file:line).
  const auto csv = scratch_.path() / "results.csv";
  std::string field = "\"0.5\nerror: forged line \x1b[31mred\x1b[0m" + std::string(1, '\0') + "tail";
  field += std::string(10'000'000, 'x') + "\"";
  std::ofstream(csv, std::ios::binary) << "word,coordenada_x,coordenada_y,distance\nSALMON,G,10," << field << "\n";
  const auto r =
      RunVisalign({"hues", "evaluate", "--predictions", csv.string(), "--out", (scratch_.path() / "out").string()});
  ExpectOneCleanErrorLine(r, "not a number: \"0.5\\nerror: forged line \\x1B[31mred\\x1B[0m\\x00tail");
  EXPECT_NE(r.err.find("results.csv:2 column distance"), std::string::npos) << r.err;
}

// A judge that answers every question with a reply that once killed the process (SIGABRT from a
// type_error escaping a worker thread, SIGSEGV from recursion): the run must finish, counting them.
TEST_F(UntrustedInput, AHostileJudgeCannotKillAJudgingRun) {
  const auto concepts = scratch_.path() / "concepts.jsonl";
  std::ofstream(concepts)
      << R"({"id": "hope", "word": "希望", "gloss_en": "hope", "category": "emotion", "rubric": [{"id": "future", )"
         R"("text_zh": "是否有期待的结果？", "text_en": "Is a desired outcome shown?", "weight": 1, "framework": "frame"}]})"
      << "\n"
      << R"({"id": "truth", "word": "真理", "gloss_en": "truth", "category": "epistemic", "rubric": [{"id": "reveal", )"
         R"("text_zh": "是否有揭示？", "text_en": "Is something revealed?", "weight": 1, "framework": "image-schema"}]})"
      << "\n";
  const auto pairs = scratch_.path() / "pairs.jsonl";
  std::ofstream(pairs) << R"({"a": "hope", "b": "truth"})"
                       << "\n";
  const std::string store = (scratch_.path() / "store").string();
  auto images = acva::ReferenceServer::Start({});
  ASSERT_TRUE(images.ok()) << images.status().ToString();
  const auto generated =
      RunVisalign({"acva", "generate", "--run", "r", "--endpoint", (*images)->url(), "--model", "varied", "--samples",
                   "2", "--store", store, "--concepts", concepts.string(), "--pairs", pairs.string()});
  ASSERT_EQ(generated.exit_code, 0) << generated.err;

  const std::string replies[] = {
      R"({"choices":[1]})",
      R"({"choices":)" + Nested(100000) + "}",
      R"({"choices":[{"message":{"content":"\u001b]0;owned\u0007 not json"}}]})",
  };
  std::atomic<size_t> served{0};
  backends::HttpServer judge({});
  judge.Route("POST", "/v1/chat/completions",
              [&](const backends::HttpServerRequest&, backends::HttpServerResponse& res) {
                res.Set(200, replies[served++ % std::size(replies)], "application/json");
              });
  ASSERT_TRUE(judge.Start().ok());
  const auto r = RunVisalign({"acva", "judge", "--judge-endpoint", judge.url(), "--judge-model", "hostile", "--run",
                              "r", "--store", store, "--concepts", concepts.string(), "--pairs", pairs.string(),
                              "--judge-reply-attempts", "1"});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << r.exit_code << ": " << r.err;
  EXPECT_GT(served.load(), 0u);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\a'), std::string::npos) << r.err;
}

}  // namespace
}  // namespace visalign
