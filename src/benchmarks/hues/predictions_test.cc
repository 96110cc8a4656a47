// Prediction files: the published CSV format, JSONL, folders, writers, and bad input.
#include <gtest/gtest.h>

#include "benchmarks/hues/test_support.h"
#include "visalign/benchmarks/hues/hues.h"

namespace visalign::hues {
namespace {

using testing::Data;
using testing::Scratch;
using testing::TestBoard;
using testing::TestNonsense;
using testing::TestVocabulary;

constexpr char kPeerHeader[] = "word,coordenada_x,coordenada_y,R,G,B,distance\n";
// SALMON's five published RN50 rows (data/hues/peer-sample/RN50-openai/results.csv).
constexpr char kSalmon[] =
    "SALMON,G,10,227,147,113,0.21444836258888245\n"
    "SALMON,F,9,219,128,88,0.21349972486495972\n"
    "SALMON,G,11,225,146,123,0.21344588696956635\n"
    "SALMON,F,10,220,130,98,0.21337676048278809\n"
    "SALMON,H,13,224,161,135,0.21255570650100708\n";

class HuesPredictions : public ::testing::Test {
 protected:
  Result<std::vector<ModelPredictions>> Load(const std::filesystem::path& p,
                                             PredictionFormat f = PredictionFormat::kAuto) {
    return LoadPredictions(p, f, vocabulary_, board_, nonsense_);
  }
  // Expects an error whose text contains every fragment.
  void ExpectError(const std::string& name, const std::string& contents, const std::vector<std::string>& fragments) {
    auto r = Load(dir_.Write(name, contents));
    ASSERT_FALSE(r.ok()) << name;
    for (const auto& f : fragments)
      EXPECT_NE(r.status().ToString().find(f), std::string::npos) << r.status().ToString();
  }
  Scratch dir_;
  Board board_ = TestBoard();
  Vocabulary vocabulary_ = TestVocabulary();
  std::vector<NonsenseWord> nonsense_ = TestNonsense();
};

TEST_F(HuesPredictions, PublishedFolderLoadsAsIs) {
  auto models = Load(Data("hues/peer-sample"));
  ASSERT_TRUE(models.ok()) << models.status().ToString();
  ASSERT_EQ(models->size(), 2u);
  const ModelPredictions& rn50 = (*models)[0];
  EXPECT_EQ(rn50.name, "RN50-openai");
  for (const auto& word : rn50.words) EXPECT_EQ(word.size(), 5u);
  EXPECT_EQ(rn50.words[0][0].cell, *ParseCell("G10"));
  EXPECT_DOUBLE_EQ(rn50.words[0][0].similarity, 0.21444836258888245);
  EXPECT_EQ((*models)[1].name, "ViT-B-16-SigLIP-webli");
}

TEST_F(HuesPredictions, SingleFileIsNamedByItsFolderOrStem) {
  auto a = Load(dir_.Write("clipA/results.csv", std::string(kPeerHeader) + kSalmon));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)[0].name, "clipA");
  EXPECT_TRUE((*a)[0].words[1].empty());  // WHALE missing
  auto b = Load(dir_.Write("clipB.csv", std::string(kPeerHeader) + kSalmon));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)[0].name, "clipB");
}

TEST_F(HuesPredictions, FoldersWithoutResultsAreSkippedAndEmptyFoldersAreErrors) {
  dir_.Write("runs/m1/results.csv", std::string(kPeerHeader) + kSalmon);
  dir_.Write("runs/notes/readme.txt", "not a model");
  auto models = Load(dir_.path() / "runs");
  ASSERT_TRUE(models.ok()) << models.status().ToString();
  ASSERT_EQ(models->size(), 1u);
  dir_.Write("empty/x/readme.txt", "");
  EXPECT_EQ(Load(dir_.path() / "empty").status().code(), StatusCode::kNotFound);
}

TEST_F(HuesPredictions, SpanishAndNonsenseWordsAreAccepted) {
  std::string csv = kPeerHeader;
  for (int k = 0; k < 5; ++k) csv += "BALLENA,M,24,93,172,174,0.1\n";
  for (int k = 0; k < 5; ++k) csv += "glimbor,I,18,191,193,194,0.1\n";
  auto m = Load(dir_.Write("m.csv", csv));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)[0].words[1].size(), 5u);  // WHALE
  EXPECT_EQ((*m)[0].nonsense.at("GLIMBOR").size(), 5u);
}

TEST_F(HuesPredictions, BadInputNamesFileLineAndValue) {
  const std::string h = kPeerHeader;
  ExpectError("q31.csv", h + "SALMON,Q,31,227,147,113,0.2\n", {"\"Q31\"", "q31.csv:2"});
  ExpectError("word.csv", h + kSalmon + "SALMONN,G,10,227,147,113,0.2\n", {"unknown word \"SALMONN\"", "word.csv:7"});
  ExpectError("four.csv", h + std::string(kSalmon).substr(0, std::string(kSalmon).rfind("SALMON,H")),
              {"4 predictions for word \"SALMON\"", "four.csv:2", "exactly 5"});
  ExpectError("nan.csv", h + "SALMON,G,10,227,147,113,high\n", {"\"high\"", "nan.csv:2", "column distance"});
  ExpectError("empty.csv", "", {"empty", "empty.csv"});
  ExpectError("header.csv", h, {"no predictions", "header.csv"});
  ExpectError("rgb.csv", h + "SALMON,G,10,1,2,3,0.2\n", {"RGB (1, 2, 3) for cell G10", "rgb.csv:2", "(227, 147, 113)"});
  ExpectError("order.csv",
              h + "SALMON,G,10,227,147,113,0.1\nSALMON,G,10,227,147,113,0.2\nSALMON,G,10,227,147,113,0.1\n"
                  "SALMON,G,10,227,147,113,0.1\nSALMON,G,10,227,147,113,0.1\n",
              {"order.csv:2", "best first"});
  ExpectError("j.jsonl", "{\"word\":\"SALMON\",\"top\":[{\"cell\":\"Z9\",\"similarity\":1}]}\n",
              {"\"Z9\"", "j.jsonl:1", "top[0]"});
  ExpectError("k.jsonl", "{\"word\":\"SALMON\",\"top\":[{\"cell\":\"A1\",\"similarity\":\"x\"}]}\n",
              {"similarity \"x\"", "k.jsonl:1"});
  ExpectError("l.jsonl", "not json\n", {"invalid JSON (syntax error at byte 2)", "l.jsonl:1"});
}

TEST_F(HuesPredictions, JsonlGroupsLinesByModel) {
  std::string jsonl;
  for (const char* model : {"a", "b"}) {
    jsonl += std::string("{\"model\":\"") + model + "\",\"word\":\"SALMON\",\"top\":[";
    for (int k = 0; k < 5; ++k)
      jsonl += std::string(k ? "," : "") + "{\"cell\":\"A" + std::to_string(k + 1) +
               "\",\"similarity\":" + std::to_string(0.5 - 0.1 * k) + "}";
    jsonl += "]}\r\n\n";
  }
  auto models = Load(dir_.Write("both.jsonl", jsonl));
  ASSERT_TRUE(models.ok()) << models.status().ToString();
  ASSERT_EQ(models->size(), 2u);
  EXPECT_EQ((*models)[1].name, "b");
  EXPECT_EQ((*models)[1].words[0][4].cell, *ParseCell("A5"));
}

TEST_F(HuesPredictions, WritersRoundTrip) {
  auto sample = Load(Data("hues/peer-sample/ViT-B-16-SigLIP-webli/results.csv"));
  ASSERT_TRUE(sample.ok());
  ModelPredictions model = (*sample)[0];
  model.nonsense["THE"] = model.words[0];
  const auto csv_path = dir_.Write("w/results.csv", PeerCsv(model, vocabulary_, board_, nonsense_));
  const auto jsonl_path = dir_.Write("w.jsonl", PredictionsJsonl(model, vocabulary_, nonsense_));
  for (const auto& path : {csv_path, jsonl_path}) {
    auto back = Load(path);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ((*back)[0].name, path == csv_path ? "w" : "ViT-B-16-SigLIP-webli");
    for (size_t w = 0; w < model.words.size(); ++w)
      for (size_t k = 0; k < 5; ++k) {
        EXPECT_EQ((*back)[0].words[w][k].cell, model.words[w][k].cell);
        EXPECT_EQ((*back)[0].words[w][k].similarity, model.words[w][k].similarity);  // exact round trip
      }
    EXPECT_EQ((*back)[0].nonsense.at("THE").size(), 5u);
  }
}

}  // namespace
}  // namespace visalign::hues
