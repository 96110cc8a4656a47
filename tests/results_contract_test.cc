// The results contract (docs/architecture.md, "Results contract"): every benchmark's output folder
// has summary.json opening with benchmark, schema_version and visalign_version, recording the
// fingerprints of its inputs and keeping the documented key order, plus items.jsonl, summary.csv and summary.md (the
// nonsense baseline's `hues nonsense --out` too).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>

#include "testing/cli_runner.h"
#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/core/results.h"
#include "visalign/core/untrusted.h"

namespace visalign {
namespace {

namespace fs = std::filesystem;
using testing::RunVisalign;
using testing::TempDir;

// summary.json's top-level keys in the order docs/architecture.md ("Key order") documents after the
// header; a trailing '?' marks a key that appears only when it applies.
const std::map<std::string, std::vector<std::string>> kDocumentedKeys = {
    {"violin", {"inputs",         "weights",     "normalization", "split",         "selection",      "by",
                "missing_policy", "alpha",       "bootstrap",     "n_items",       "n_common_items", "n_outside_split",
                "rows",           "overall",     "common",        "n_missing",     "missing",        "n_unreadable",
                "unreadable",     "n_unmatched", "unmatched",     "n_transparent", "transparent",    "probes?",
                "refusals?"}},
    {"hues", {"inputs", "settings", "humans", "models", "families?", "uncatalogued_models?"}},
    {"hues-nonsense", {"inputs", "settings", "classes", "models"}},
    {"acva",
     {"concept_set", "n_concepts", "n_pairs", "options", "models", "correlations", "quadrant_medians", "pooled",
      "weights_comparison", "comparisons", "tiers", "inputs", "judge", "generation", "embeddings"}}};

// summary.json of `dir`, after checking the contract's files, its header and its key order.
Json ExpectContract(const fs::path& dir, const std::string& benchmark) {
  for (const char* f : {"summary.json", "items.jsonl", "summary.csv", "summary.md"})
    EXPECT_TRUE(fs::is_regular_file(dir / f)) << dir / f;
  Result<Json> read = ReadJsonFile(dir / "summary.json");
  EXPECT_TRUE(read.ok()) << read.status().ToString();
  if (!read.ok()) return Json();
  const Json& s = *read;
  EXPECT_EQ(s["benchmark"], benchmark);
  EXPECT_EQ(s["schema_version"], kResultsSchemaVersion);
  const auto version = RunVisalign({"--version"});
  EXPECT_EQ(version.out, "visalign " + s["visalign_version"].get<std::string>() + "\n");
  EXPECT_TRUE(s["inputs"].is_object()) << s.dump();
  std::vector<std::string> keys, expected = {"benchmark", "schema_version", "visalign_version"};
  for (const auto& [key, value] : s.items()) keys.push_back(key);
  for (std::string key : kDocumentedKeys.at(benchmark)) {
    const bool optional = key.back() == '?';
    if (optional) key.pop_back();
    if (!optional || s.contains(key)) expected.push_back(key);
  }
  EXPECT_EQ(keys, expected) << "summary.json of " << benchmark << " is not in the documented key order";
  return s;
}

std::string Sha256Of(const fs::path& path) {
  Result<std::string> sha = Sha256File(path);
  EXPECT_TRUE(sha.ok()) << sha.status().ToString();
  return sha.ok() ? *sha : std::string();
}

size_t Lines(const fs::path& path) {
  Result<std::string> read = ReadFile(path);
  const std::string text = read.ok() ? *read : std::string();
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(ResultsContract, Violin) {
  TempDir dir;
  ASSERT_EQ(RunVisalign({"violin", "dataset", "--out", (dir / "ds").string(), "--scale", "0.01", "--image-size", "64",
                         "--log-level", "error"})
                .exit_code,
            0);
  // The same images as a folder and as a run imported into the store.
  auto imported =
      RunVisalign({"violin", "generate", "--dataset", (dir / "ds").string(), "--run", "imported", "--backend",
                   "directory", "--path", (dir / "ds" / "images").string(), "--store", (dir / "store").string()});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  auto r = RunVisalign({"violin", "evaluate", "--dataset", (dir / "ds").string(), "--images",
                        "gt=" + (dir / "ds" / "images").string(), "--store", (dir / "store").string(), "--run",
                        "imported", "--out", (dir / "out").string(), "--bootstrap", "100", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json s = ExpectContract(dir / "out", "violin");
  // --json prints the document summary.json holds, in the same key order (nothing re-sorts it).
  Result<Json> printed = ParseJson(r.out);
  ASSERT_TRUE(printed.ok()) << printed.status().ToString();
  EXPECT_EQ(printed->dump(), s.dump());
  EXPECT_EQ(s["inputs"]["dataset"]["manifest_sha256"], Sha256Of(dir / "ds" / "manifest.jsonl"));
  ASSERT_EQ(s["inputs"]["models"].size(), 2u);
  const Json& folder = s["inputs"]["models"][0];
  EXPECT_EQ(folder["model"], "gt");
  EXPECT_EQ(folder["kind"], "folder");
  EXPECT_EQ(fs::path(folder["path"].get<std::string>()), fs::absolute(dir / "ds" / "images").lexically_normal());
  const Json& run = s["inputs"]["models"][1];
  EXPECT_EQ(run["model"], "imported");
  EXPECT_EQ(run["kind"], "run");
  EXPECT_EQ(run["run"], "imported");
  EXPECT_EQ(fs::path(run["path"].get<std::string>()), fs::absolute(dir / "store").lexically_normal());
  EXPECT_EQ(run["identity"]["backend"], "directory") << run.dump();
  EXPECT_FALSE(s["rows"].empty());  // the keys existing readers use are still there
}

TEST(ResultsContract, Hues) {
  TempDir dir;
  auto r = RunVisalign({"hues", "evaluate", "--predictions", (testing::DataDir() / "hues/peer-sample").string(),
                        "--out", (dir / "eval").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json s = ExpectContract(dir / "eval", "hues");
  const Json& humans = s["inputs"]["humans"];
  EXPECT_EQ(humans["sha256"], Sha256Of(humans["path"].get<std::string>()));
  ASSERT_EQ(s["inputs"]["predictions"].size(), 2u);
  for (const Json& p : s["inputs"]["predictions"]) {
    EXPECT_EQ(p["sha256"], Sha256Of(p["path"].get<std::string>())) << p.dump();
    EXPECT_TRUE(p["model"].is_string());
  }
  EXPECT_TRUE(s["inputs"].contains("macro_map"));
  const Json& exclusions = s["inputs"]["humans_exclusions"];  // the colorblind players left out
  EXPECT_EQ(exclusions["sha256"], Sha256Of(testing::DataDir() / "hues/colorblind_ids.txt")) << s["inputs"].dump();
  // items.jsonl: one line per (model, word) result, as words.csv has one row per result.
  EXPECT_EQ(Lines(dir / "eval" / "items.jsonl"), Lines(dir / "eval" / "words.csv") - 1);
  const std::string items = *ReadFile(dir / "eval" / "items.jsonl");
  const Json first = Json::parse(items.substr(0, items.find('\n')));
  for (const char* key : {"model", "word", "category", "top1", "mahalanobis_d2", "hotelling", "q_value", "reject"})
    EXPECT_TRUE(first.contains(key)) << key;
  EXPECT_EQ(*ReadFile(dir / "eval" / "summary.csv"), *ReadFile(dir / "eval" / "models.csv"));
  EXPECT_EQ(s["models"].size(), 2u);  // existing keys unchanged
}

TEST(ResultsContract, HuesNonsense) {
  TempDir dir;
  // Two models answering every nonsense word: one with Neutral cells (top-1 I18), one with Red cells (top-1 A14).
  Result<CsvTable> words = ReadCsv(testing::DataDir() / "hues/nonsense16.csv");
  ASSERT_TRUE(words.ok()) << words.status().ToString();
  const std::vector<std::string> grey = {"I18", "I17", "I16", "I19", "I20"}, red = {"A14", "A15", "A16", "A17", "A18"};
  std::string jsonl;
  for (const auto& [model, cells] : {std::pair{"grey", grey}, std::pair{"red", red}})
    for (const auto& row : words->rows) {
      Json top = Json::array();
      for (size_t k = 0; k < cells.size(); ++k) top.push_back({{"cell", cells[k]}, {"similarity", 0.3 - 0.01 * k}});
      jsonl += Json{{"model", model}, {"word", row[0]}, {"top", top}}.dump() + "\n";
    }
  const fs::path predictions = dir.Write("p.jsonl", jsonl);
  auto r = RunVisalign({"hues", "nonsense", "--predictions", predictions.string(), "--out", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json s = ExpectContract(dir / "out", "hues-nonsense");
  ASSERT_EQ(s["inputs"]["predictions"].size(), 2u);
  EXPECT_EQ(s["inputs"]["predictions"][1]["model"], "red");
  EXPECT_EQ(s["inputs"]["predictions"][1]["sha256"], Sha256Of(predictions));
  EXPECT_EQ(s["inputs"]["vocabulary"]["sha256"], Sha256Of(testing::DataDir() / "hues/nonsense16.csv"));
  EXPECT_EQ(s["inputs"]["macro_map"]["sha256"], Sha256Of(testing::DataDir() / "hues/macro_regions.csv"));
  EXPECT_EQ(s["classes"], Json::parse(R"({"neutral_collapse": 1, "specific_color_collapse": 1,
                                          "selective_collapse": 0, "high_entropy": 0})"));
  EXPECT_EQ(s["models"][1]["onto"], "Red");
  // items.jsonl: one line per (model, nonsense word); summary.csv: one row per model.
  EXPECT_EQ(Lines(dir / "out" / "items.jsonl"), 2 * words->rows.size());
  const std::string items = *ReadFile(dir / "out" / "items.jsonl");
  EXPECT_EQ(Json::parse(items.substr(0, items.find('\n'))),
            Json::parse(R"({"model": "grey", "word": ")" + words->rows[0][0] + R"(", "group": ")" + words->rows[0][1] +
                        R"(", "top1": "I18", "top1_macro": "Neutral"})"));
  Result<CsvTable> csv = ReadCsv(dir / "out" / "summary.csv");
  ASSERT_TRUE(csv.ok()) << csv.status().ToString();
  ASSERT_EQ(csv->rows.size(), 2u);
  EXPECT_EQ(csv->rows[1][0] + "," + csv->rows[1][1] + "," + csv->rows[1][2], "red,specific_color_collapse,Red");
}

TEST(ResultsContract, Acva) {
  TempDir dir;
  std::ofstream(dir / "concepts.jsonl")
      << R"({"id": "oath", "word": "誓言", "gloss_en": "oath", "category": "communication", "rubric": [{"id": "speaker", "text_zh": "是否有作出承诺的主体？", "text_en": "Is there a party who commits?", "weight": 1, "framework": "componential"}]})"
      << "\n"
      << R"({"id": "promise", "word": "诺言", "gloss_en": "promise", "category": "communication", "rubric": [{"id": "trust", "text_zh": "是否有信任？", "text_en": "Is trust shown?", "weight": 1, "framework": "frame"}]})"
      << "\n";
  std::ofstream(dir / "pairs.jsonl") << R"({"a": "oath", "b": "promise"})"
                                     << "\n";
  auto server = acva::ReferenceServer::Start({});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::string clip_model = (testing::SharedDir() / "fixtures" / "clip-tiny").string();
  auto r = RunVisalign({"acva",
                        "run",
                        "--run",
                        "varied",
                        "--model",
                        "varied",
                        "--endpoint",
                        (*server)->url(),
                        "--seed",
                        "0",
                        "--param",
                        "seed={seed}",
                        "--samples",
                        "2",
                        "--judge-endpoint",
                        (*server)->url(),
                        "--judge-model",
                        "ref",
                        "--clip-model",
                        clip_model,
                        "--bootstrap",
                        "100",
                        "--store",
                        (dir / "store").string(),
                        "--concepts",
                        (dir / "concepts.jsonl").string(),
                        "--pairs",
                        (dir / "pairs.jsonl").string(),
                        "--out",
                        (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json s = ExpectContract(dir / "out", "acva");
  const Json& inputs = s["inputs"];
  EXPECT_EQ(inputs["concept_set"], s["concept_set"]);
  EXPECT_FALSE(inputs["concept_set"].get<std::string>().empty());
  ASSERT_EQ(inputs["runs"].size(), 1u);
  EXPECT_EQ(inputs["runs"][0]["run"], "varied");
  EXPECT_EQ(inputs["runs"][0]["identity"]["model"], "varied") << inputs["runs"][0].dump();
  EXPECT_EQ(inputs["judge"]["model"], "ref");
  EXPECT_TRUE(inputs["judge"]["prompt_hashes"].is_object());
  auto clip = clip::LoadClipModel(clip_model);
  ASSERT_TRUE(clip.ok()) << clip.status().ToString();
  EXPECT_EQ(inputs["clip_fingerprint"], *clip->Fingerprint());
  EXPECT_EQ(Lines(dir / "out" / "items.jsonl"), 4u);  // 2 concepts x 2 samples
}

}  // namespace
}  // namespace visalign
