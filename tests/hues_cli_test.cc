// `visalign hues ...` end to end: outputs, formats, warnings and the error contract on bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "testing/cli_runner.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"

namespace visalign {
namespace {

using testing::DataDir;
using testing::RunVisalign;
using testing::TempDir;
namespace fs = std::filesystem;

fs::path Write(const fs::path& p, const std::string& contents) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << contents;
  return p;
}
std::string Slurp(const fs::path& p) { return *ReadFile(p); }
size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

// Exit code 2, one `error:` line naming everything in `fragments`.
void ExpectUserError(const testing::RunResult& r, const std::vector<std::string>& fragments) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("error: "), r.err.find("error: ")) << r.err;
  EXPECT_NE(r.err.find("error: "), std::string::npos) << r.err;
  for (const auto& f : fragments) EXPECT_NE(r.err.find(f), std::string::npos) << "missing '" << f << "' in " << r.err;
}

TEST(HuesCli, BoardJsonListsEveryCell) {
  auto r = RunVisalign({"hues", "board", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = Json::parse(r.out);
  EXPECT_EQ(j["chromaticity"], "display");
  ASSERT_EQ(j["cells"].size(), 480u);
  const auto& i18 = j["cells"][8 * 30 + 17];
  EXPECT_EQ(i18["cell"], "I18");
  EXPECT_EQ(i18["rgb"], Json({191, 193, 194}));
  EXPECT_TRUE(i18["neutral"].get<bool>());
  for (const char* key : {"xy", "lab", "macro", "macro_confidence"}) EXPECT_TRUE(i18.contains(key)) << key;
  auto srgb = Json::parse(RunVisalign({"hues", "board", "--chromaticity", "srgb", "--json"}).out);
  EXPECT_NE(srgb["cells"][0]["xy"], j["cells"][0]["xy"]);
}

TEST(HuesCli, MacroMapCommandRegeneratesTheShippedFile) {
  auto r = RunVisalign({"hues", "macro-map", "--out", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, Slurp(DataDir() / "hues/macro_regions.csv"));
}

TEST(HuesCli, RegionsReplacesTheMacroMapAndMacroMapStillWorksWithAWarning) {
  TempDir dir;
  // The shipped map with A1 repainted Pink at agreement 0.75.
  std::string csv = Slurp(DataDir() / "hues/macro_regions.csv");
  csv.replace(csv.find("A1,Brown,1,false"), 16, "A1,Pink,0.75,false");
  const fs::path regions = Write(dir.path() / "consensus.csv", csv);
  for (const std::string flag : {"--regions", "--macro-map"}) {
    SCOPED_TRACE(flag);
    auto r = RunVisalign({"hues", "board", flag, regions.string(), "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = Json::parse(r.out);
    EXPECT_EQ(j["macro_map"], regions.string());
    EXPECT_EQ(j["cells"][0]["macro"], "Pink");
    EXPECT_EQ(j["cells"][0]["macro_confidence"], 0.75);
    EXPECT_EQ(r.err.find("deprecated") != std::string::npos, flag == "--macro-map") << r.err;
  }
  ExpectUserError(RunVisalign({"hues", "board", "--regions", (dir.path() / "missing.csv").string()}), {"missing.csv"});
}

TEST(HuesCli, ExportRegionsNeedsAStudyStoreAndCreatesNone) {
  TempDir dir;
  const fs::path store = dir.path() / "no-store";
  ExpectUserError(
      RunVisalign({"hues", "export-regions", "--store", store.string(), "--out", (dir.path() / "m.csv").string()}),
      {"no study store in " + store.string(), "(--store)"});
  EXPECT_FALSE(fs::exists(store));
  EXPECT_FALSE(fs::exists(dir.path() / "m.csv"));
}

TEST(HuesCli, HumansJsonHasWordsCategoriesDemographicsAndTheThreshold) {
  auto r = RunVisalign({"hues", "humans", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = Json::parse(r.out);
  EXPECT_NEAR(j["threshold"]["d2"].get<double>(), 5.991464547107979, 1e-12);
  EXPECT_EQ(j["answers"], 3819);
  EXPECT_EQ(j["excluded_colorblind"]["users"], 9);
  ASSERT_EQ(j["words"].size(), 100u);
  const auto& w = j["words"][0];
  EXPECT_EQ(w["word"], "SALMON");
  EXPECT_EQ(w["category"], "Animal");
  EXPECT_EQ(w["mean"].size(), 2u);
  EXPECT_EQ(w["cov"].size(), 2u);
  EXPECT_EQ(w["cov"][0][1], w["cov"][1][0]);
  EXPECT_GE(w["loo_fail_rate"].get<double>(), 0.0);
  EXPECT_EQ(j["categories"].size(), 7u);
  std::set<std::string> dimensions;
  for (const auto& g : j["demographics"]) dimensions.insert(g["dimension"]);
  EXPECT_EQ(dimensions, (std::set<std::string>{"age", "gender", "language"}));

  auto sigma = Json::parse(RunVisalign({"hues", "humans", "--threshold", "sigma:2", "--json"}).out);
  EXPECT_EQ(sigma["threshold"]["d2"], 4.0);
  EXPECT_GT(sigma["fail_rate"].get<double>(), j["fail_rate"].get<double>());  // d² > 4 fails more often
  auto all = Json::parse(RunVisalign({"hues", "humans", "--include-colorblind", "--json"}).out);
  EXPECT_EQ(all["answers"], 3899);

  auto text = RunVisalign({"hues", "humans"});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("Pop Culture"), std::string::npos);
  ExpectUserError(RunVisalign({"hues", "humans", "--threshold", "chi2:2"}), {"chi2:2", "--threshold"});
}

TEST(HuesCli, EvaluateWritesEveryOutputWithTheDocumentedColumns) {
  TempDir out;
  const auto sample = DataDir() / "hues/peer-sample";
  const auto catalog = Write(
      out / "catalog.csv", "model,architecture,dataset\nRN50-openai,ResNet,OpenAI\nViT-B-16-SigLIP-webli,ViT,WebLI\n");
  auto r = RunVisalign({"hues", "evaluate", "--predictions", sample.string(), "--catalog", catalog.string(), "--out",
                        (out / "eval").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Count(r.err, "ViT-B-16-SigLIP-webli: negative similarities"), 1u) << r.err;
  EXPECT_EQ(Count(r.err, "RN50-openai: negative"), 0u) << r.err;
  const std::string words = Slurp(out / "eval/words.csv");
  EXPECT_EQ(words.substr(0, words.find('\n')),
            "model,word,category,n_humans,top1,top1_macro,human_macro,mahalanobis_d2,mahalanobis_outlier,"
            "hotelling_t2,hotelling_f,p_value,q_value,reject");
  EXPECT_EQ(Count(words, "\n"), 201u);
  EXPECT_NE(words.find("RN50-openai,SALMON,Animal,"), std::string::npos);
  for (const char* f : {"models.csv", "categories.csv", "hotelling.csv", "summary.json", "summary.md", "families.csv"})
    EXPECT_TRUE(fs::exists(out / "eval" / f)) << f;
  const auto summary = Json::parse(Slurp(out / "eval/summary.json"));
  EXPECT_EQ(summary["models"].size(), 2u);
  EXPECT_EQ(summary["settings"]["model_weights"], "similarity");
  EXPECT_EQ(summary["families"].size(), 4u);  // 2 architectures + 2 datasets
  const std::string categories = Slurp(out / "eval/categories.csv");
  EXPECT_EQ(Count(categories, "\n"), 1u + 2 * 7);
  EXPECT_EQ(categories.substr(0, categories.find('\n')),
            "model,category,n_words,mahalanobis_fail_rate,hotelling_fail_rate,human_fail_rate,"
            "hotelling_fail_rate_uncorrected");
  const std::string families = Slurp(out / "eval/families.csv");
  EXPECT_EQ(families.substr(0, families.find('\n')),
            "kind,family,n_models,models,mahalanobis_fail_rate,hotelling_fail_rate,human_fail_rate,"
            "hotelling_fail_rate_uncorrected,mahalanobis_fail_rate_median,mahalanobis_fail_rate_q1,"
            "mahalanobis_fail_rate_q3,mahalanobis_fail_rate_min,mahalanobis_fail_rate_max,hotelling_fail_rate_median,"
            "hotelling_fail_rate_q1,hotelling_fail_rate_q3,hotelling_fail_rate_min,hotelling_fail_rate_max,"
            "hotelling_fail_rate_uncorrected_median,hotelling_fail_rate_uncorrected_q1,"
            "hotelling_fail_rate_uncorrected_q3,hotelling_fail_rate_uncorrected_min,"
            "hotelling_fail_rate_uncorrected_max");
  EXPECT_EQ(summary["inputs"]["catalog"].size(), 2u);  // the shipped catalog, then the override

  // Without --catalog the shipped catalog of the 162 published models gives the families.
  auto shipped =
      RunVisalign({"hues", "evaluate", "--predictions", sample.string(), "--out", (out / "shipped").string()});
  ASSERT_EQ(shipped.exit_code, 0) << shipped.err;
  EXPECT_EQ(Count(shipped.err, "not in the model-family catalog"), 0u) << shipped.err;
  const auto shipped_summary = Json::parse(Slurp(out / "shipped/summary.json"));
  EXPECT_EQ(shipped_summary["models"][0]["family"], (Json{{"architecture", "ResNet"}, {"dataset", "OpenAI-WIT"}}));
  EXPECT_EQ(shipped_summary["models"][1]["family"], (Json{{"architecture", "SigLIP"}, {"dataset", "WebLI"}}));
  // RN50-openai alone in ResNet: 43 of 100 words with p <= 0.05 on the shipped human data; its spread is that value.
  const auto& resnet = shipped_summary["families"][0];
  ASSERT_EQ(resnet["family"], "ResNet");
  EXPECT_EQ(resnet["hotelling_fail_rate_uncorrected"], 0.43);
  EXPECT_EQ(resnet["hotelling_fail_rate_uncorrected_spread"],
            (Json{{"median", 0.43}, {"q1", 0.43}, {"q3", 0.43}, {"min", 0.43}, {"max", 0.43}}));
  // The Sesame Street answers are paired by character: 54 Spanish answers count for the other clue's word.
  EXPECT_EQ(shipped_summary["settings"]["pairing"], (Json{{"rule", "character"}, {"answers_moved", 54}}));
  // Paired by clue id instead, one more of RN50-openai's words (the Bert/Ernie pair) has p <= 0.05.
  auto by_clue = RunVisalign({"hues", "evaluate", "--predictions", sample.string(), "--pairing", "clue-id", "--out",
                              (out / "by-clue").string()});
  ASSERT_EQ(by_clue.exit_code, 0) << by_clue.err;
  const auto by_clue_summary = Json::parse(Slurp(out / "by-clue/summary.json"));
  EXPECT_EQ(by_clue_summary["settings"]["pairing"], (Json{{"rule", "clue-id"}, {"answers_moved", 0}}));
  EXPECT_EQ(by_clue_summary["families"][0]["hotelling_fail_rate_uncorrected"], 0.44);
  auto bad = RunVisalign(
      {"hues", "evaluate", "--predictions", sample.string(), "--pairing", "clueId", "--out", (out / "bad").string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--pairing"), std::string::npos) << bad.err;

  auto uniform = RunVisalign({"hues", "evaluate", "--predictions", sample.string(), "--model-weights", "uniform",
                              "--out", (out / "uniform").string()});
  ASSERT_EQ(uniform.exit_code, 0) << uniform.err;
  EXPECT_EQ(Count(uniform.err, "negative similarities"), 0u);
  EXPECT_NE(Slurp(out / "uniform/words.csv"), words);
}

TEST(HuesCli, EvaluateBadInputIsOneClearErrorWithExitCode2) {
  TempDir dir;
  const std::string h = "word,coordenada_x,coordenada_y,R,G,B,distance\n";
  const std::string salmon = *ReadFile(DataDir() / "hues/peer-sample/RN50-openai/results.csv");
  const std::string first5 = salmon.substr(0, [&] {
    size_t pos = 0;
    for (int i = 0; i < 6; ++i) pos = salmon.find('\n', pos) + 1;
    return pos;
  }());
  auto evaluate = [&](const fs::path& p) {
    return RunVisalign({"hues", "evaluate", "--predictions", p.string(), "--out", (dir / "out").string()});
  };
  ExpectUserError(evaluate(Write(dir / "q31/results.csv", h + "SALMON,Q,31,227,147,113,0.2\n")),
                  {"\"Q31\"", "q31/results.csv:2"});
  ExpectUserError(evaluate(Write(dir / "word/results.csv", first5 + "PURPLISH,G,10,227,147,113,0.2\n")),
                  {"unknown word \"PURPLISH\"", "word/results.csv:7"});
  ExpectUserError(evaluate(Write(dir / "few/results.csv", first5.substr(0, first5.rfind("SALMON")))),
                  {"4 predictions for word \"SALMON\"", "few/results.csv:2", "exactly 5"});
  ExpectUserError(evaluate(Write(dir / "nan/results.csv", h + "SALMON,G,10,227,147,113,n/a\n")),
                  {"\"n/a\"", "nan/results.csv:2", "distance"});
  ExpectUserError(evaluate(Write(dir / "empty/results.csv", "")), {"empty", "empty/results.csv"});
  ExpectUserError(evaluate(dir / "nowhere"), {"nowhere"});
  ExpectUserError(RunVisalign({"hues", "evaluate", "--predictions", (DataDir() / "hues/peer-sample").string(),
                               "--humans", Write(dir / "h.csv", "userId,clueId,coordinate\nu,1,Z0\n").string(), "--out",
                               (dir / "out").string()}),
                  {"\"Z0\"", "h.csv:2", "coordinate"});
}

// The model zoo: the 162 published models, the families evaluate uses, and support from the loader.
TEST(HuesCli, ModelsListsTheCatalogWithFamiliesAndSupport) {
  auto json = RunVisalign({"hues", "models", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const Json j = Json::parse(json.out);
  ASSERT_EQ(j["models"].size(), 162u);
  std::map<std::string, Json> by_name;
  for (const auto& m : j["models"]) by_name[m["model"]] = m;
  EXPECT_EQ(by_name["RN50-openai"]["support"], "native");
  EXPECT_EQ(by_name["RN50-openai"]["vision_tower"], "ModifiedResNet");
  EXPECT_EQ(by_name["RN50-openai"]["architecture"], "ResNet");
  EXPECT_EQ(by_name["RN50-openai"]["dataset"], "OpenAI-WIT");
  EXPECT_EQ(by_name["EVA02-B-16-merged2b_s8b_b131k"]["support"], "native");
  // MobileCLIP: FastViT MCi, MCi ViT and MobileCLIP2-L-14's timm CLIP ViT all native; what is left
  // through embeddings names its Hugging Face text tower.
  EXPECT_EQ(by_name["MobileCLIP-B-datacompdr"]["support"], "native");
  EXPECT_EQ(by_name["MobileCLIP2-S4-dfndr2b"]["vision_tower"], "FastViT MCi (timm)");
  EXPECT_EQ(by_name["MobileCLIP2-L-14-dfndr2b"]["support"], "native");
  EXPECT_EQ(by_name["roberta-ViT-B-32-laion2b_s12b_b32k"]["support"], "embeddings");
  EXPECT_NE(by_name["roberta-ViT-B-32-laion2b_s12b_b32k"]["reason"].get<std::string>().find("roberta-base"),
            std::string::npos);

  // The same families as hues evaluate's catalog (data/hues/model_catalog.csv), row for row.
  const CsvTable catalog = *ReadCsv(DataDir() / "hues/model_catalog.csv");
  auto csv = RunVisalign({"hues", "models", "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const CsvTable listed = *ParseCsv(csv.out, "hues models --format csv");
  ASSERT_EQ(listed.rows.size(), catalog.rows.size());
  EXPECT_EQ(listed.header, (std::vector<std::string>{"model", "architecture", "dataset", "open_clip_model",
                                                     "pretrained", "support", "vision_tower", "reason"}));
  std::map<std::string, std::vector<std::string>> shipped;
  for (const auto& row : catalog.rows) shipped[row[0]] = row;
  for (const auto& row : listed.rows) {
    ASSERT_TRUE(shipped.count(row[0])) << row[0];
    EXPECT_EQ(std::vector<std::string>(row.begin(), row.begin() + 5), shipped[row[0]]) << row[0];
  }

  // What runs natively, pinned: every family but the Hugging Face text towers (RoBERTa, XLM-R, NLLB).
  // PE-Core, CoCa, EVA02-E and MobileCLIP2-L-14 (11 models), ViTamin (9) and MobileCLIP's FastViT MCi
  // and MCi ViT (9) since issue 31's last steps.
  std::map<std::string, int> support;
  for (const auto& m : j["models"]) ++support[m["support"].get<std::string>()];
  EXPECT_EQ(support["native"], 124 + 11 + 9 + 9);
  EXPECT_EQ(support["embeddings"], 38 - 11 - 9 - 9);
  for (const char* name :
       {"ViT-L-14-CLIPA-datacomp1b", "ViT-H-14-worldwide-metaclip2_worldwide", "ViT-SO400M-16-SigLIP-i18n-256-webli",
        "PE-Core-B-16-meta", "coca_ViT-L-14-laion2b_s13b_b90k", "EVA02-E-14-plus-laion2b_s9b_b144k",
        "MobileCLIP2-L-14-dfndr2b", "ViTamin-XL-256-datacomp1b"}) {
    EXPECT_EQ(by_name[name]["support"], "native") << name;
  }
  auto text = RunVisalign({"hues", "models"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("162 models: 153 native"), std::string::npos) << text.out;

  TempDir dir;
  const fs::path mine =
      Write(dir / "mine.csv", "model,architecture,dataset,open_clip_model,pretrained\nmy-net,Mine,Private,,\n");
  auto extra = RunVisalign({"hues", "models", "--catalog", mine.string(), "--json"});
  ASSERT_EQ(extra.exit_code, 0) << extra.err;
  EXPECT_EQ(Json::parse(extra.out)["models"].size(), 163u);
  ExpectUserError(RunVisalign({"hues", "models", "--catalog", (dir / "none.csv").string()}), {"none.csv"});
}

TEST(HuesCli, NonsenseClassifiesJsonlPredictions) {
  TempDir dir;
  auto vocabulary = ReadCsv(DataDir() / "hues/nonsense16.csv");
  ASSERT_TRUE(vocabulary.ok());
  std::string jsonl;
  for (const auto& row : vocabulary->rows) {
    Json top = Json::array();
    for (int k = 0; k < 5; ++k) top.push_back({{"cell", k == 0 ? "I18" : "A1"}, {"similarity", 0.3 - 0.01 * k}});
    jsonl += Json{{"model", "grey"}, {"word", row[0]}, {"top", top}}.dump() + "\n";
  }
  auto r = RunVisalign({"hues", "nonsense", "--predictions", Write(dir / "p.jsonl", jsonl).string(), "--json", "--out",
                        (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = Json::parse(r.out)["models"][0];
  EXPECT_EQ(j["model"], "grey");
  EXPECT_EQ(j["class"], "neutral_collapse");
  EXPECT_EQ(j["entropy_bits"], 0.0);
  EXPECT_EQ(j["prior_cell"], "I18");
  EXPECT_EQ(j["prior_count"], 16);
  ExpectUserError(RunVisalign({"hues", "nonsense", "--predictions", (DataDir() / "hues/peer-sample").string(), "--out",
                               (dir / "none").string()}),
                  {"nonsense word", "RN50-openai"});
}

}  // namespace
}  // namespace visalign
