// `visalign hues run` with the tiny random-weight CLIP fixture: published-format output that
// `hues evaluate` consumes, similarities that agree with `visalign clip embed` on a solid patch,
// and the board-embedding cache; a `clip random-model` model is labelled random; processes sharing a
// store (embedded or PostgreSQL) run each model of --models once.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "testing/cli_runner.h"
#include "testing/postgres_server.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/imaging/image.h"

namespace visalign {
namespace {

using testing::RunVisalign;
using testing::SharedDir;
using testing::TempDir;
namespace fs = std::filesystem;

std::string Model() { return (SharedDir() / "fixtures/clip-tiny").string(); }

TEST(HuesRun, ModelsFolderRunsEveryModelResumablyPastAFailingOne) {
  TempDir dir;
  const fs::path models = dir / "models";
  fs::create_directories(models);
  for (const char* fixture : {"clip-tiny", "clip-rn-tiny", "clip-convnext-tiny"}) {
    fs::create_directory_symlink(SharedDir() / "fixtures" / fixture, models / fixture);
  }
  fs::create_directories(models / "zz-hf-text");  // a tower visalign does not run: reported, not fatal
  fs::create_symlink(SharedDir() / "fixtures/clip-tiny/model.safetensors", models / "zz-hf-text/model.safetensors");
  ASSERT_TRUE(WriteFileAtomic(
                  models / "zz-hf-text/open_clip_config.json",
                  R"({"model_cfg": {"embed_dim": 8, "vision_cfg": {}, "text_cfg": {"hf_model_name": "roberta-base"}}})")
                  .ok());
  const std::string out = (dir / "runs").string();
  const auto statuses = [](const testing::RunResult& r) {
    std::map<std::string, std::string> s;
    const Json j = Json::parse(r.out);
    for (const auto& m : j["models"]) s[m["model"]] = m["status"];
    return s;
  };
  auto first = RunVisalign({"hues", "run", "--models", models.string(), "--no-cache", "--out", out, "--json"});
  EXPECT_NE(first.exit_code, 0);
  EXPECT_NE(first.err.find("\nerror: 1 of 4 models failed, the first with: "), std::string::npos) << first.err;
  EXPECT_EQ(first.err.find("error: "), first.err.rfind("error: ")) << "one error line: " << first.err;
  EXPECT_NE(first.err.find("warning: zz-hf-text: failed: "), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("Hugging Face text tower"), std::string::npos) << first.err;
  EXPECT_EQ(
      statuses(first),
      (std::map<std::string, std::string>{
          {"clip-convnext-tiny", "done"}, {"clip-rn-tiny", "done"}, {"clip-tiny", "done"}, {"zz-hf-text", "failed"}}));
  const std::string rn_csv = *ReadFile(dir / "runs/clip-rn-tiny/results.csv");
  EXPECT_EQ(ReadCsv(dir / "runs/clip-convnext-tiny/results.csv")->rows.size(), 100u * 5);

  fs::remove_all(models / "zz-hf-text");
  auto again = RunVisalign({"hues", "run", "--models", models.string(), "--no-cache", "--out", out, "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(statuses(again),
            (std::map<std::string, std::string>{
                {"clip-convnext-tiny", "skipped"}, {"clip-rn-tiny", "skipped"}, {"clip-tiny", "skipped"}}));

  // Another template is another run: its folders are not replaced silently; with --overwrite every
  // model runs again, with a changed result.
  auto refused = RunVisalign(
      {"hues", "run", "--models", models.string(), "--template", "the color {}", "--no-cache", "--out", out});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("error: 3 of 3 models failed, the first with: " + out +
                             "/clip-convnext-tiny holds the predictions of another run (template \"{}\")"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(*ReadFile(dir / "runs/clip-rn-tiny/results.csv"), rn_csv);
  auto other = RunVisalign({"hues", "run", "--models", models.string(), "--template", "the color {}", "--no-cache",
                            "--overwrite", "--out", out, "--json"});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(statuses(other)["clip-rn-tiny"], "done");
  EXPECT_NE(*ReadFile(dir / "runs/clip-rn-tiny/results.csv"), rn_csv);

  auto with_name = RunVisalign({"hues", "run", "--models", models.string(), "--name", "x", "--out", out});
  EXPECT_EQ(with_name.exit_code, 2) << with_name.err;
  auto both = RunVisalign({"hues", "run", "--models", models.string(), "--clip-model", Model(), "--out", out});
  EXPECT_EQ(both.exit_code, 2) << both.err;
}

// The README's order: one model with the nonsense words, then the whole folder into the same --out.
// The folder run finds that model done (its predictions have these words and more) instead of
// replacing them, so `hues nonsense` still finds its words; a plain single-model run that would
// drop them is refused.
TEST(HuesRun, AModelRunWithMoreWordsIsKeptByAFolderRunAndNeverSilentlyReplaced) {
  TempDir dir;
  const fs::path models = dir / "models";
  fs::create_directories(models);
  fs::create_directory_symlink(SharedDir() / "fixtures/clip-tiny", models / "clip-tiny");
  const std::string out = (dir / "runs").string();
  ASSERT_EQ(RunVisalign({"hues", "run", "--clip-model", (models / "clip-tiny").string(), "--nonsense", "--no-cache",
                         "--out", out})
                .exit_code,
            0);
  const std::string with_nonsense = *ReadFile(dir / "runs/clip-tiny/results.csv");
  auto folder = RunVisalign({"hues", "run", "--models", models.string(), "--no-cache", "--out", out, "--json"});
  ASSERT_EQ(folder.exit_code, 0) << folder.err;
  EXPECT_EQ(Json::parse(folder.out)["models"][0]["status"], "skipped");
  EXPECT_EQ(*ReadFile(dir / "runs/clip-tiny/results.csv"), with_nonsense);
  auto nonsense = RunVisalign({"hues", "nonsense", "--predictions", out, "--out", (dir / "nonsense").string()});
  EXPECT_EQ(nonsense.exit_code, 0) << nonsense.err;
  auto fewer =
      RunVisalign({"hues", "run", "--clip-model", (models / "clip-tiny").string(), "--no-cache", "--out", out});
  EXPECT_EQ(fewer.exit_code, 2);
  EXPECT_EQ(fewer.err, "error: " + out +
                           "/clip-tiny holds the predictions of another run (more words, e.g. --nonsense) "
                           "(--out " +
                           out + "): another --out (or --name), or --overwrite to replace them\n");
  EXPECT_EQ(*ReadFile(dir / "runs/clip-tiny/results.csv"), with_nonsense);
  ASSERT_EQ(RunVisalign({"hues", "run", "--clip-model", (models / "clip-tiny").string(), "--no-cache", "--overwrite",
                         "--out", out})
                .exit_code,
            0);
  EXPECT_EQ(ReadCsv(dir / "runs/clip-tiny/results.csv")->rows.size(), 100u * 5);
}

// Models with the same preprocessing share the board's pixels (prepared once, said in the JSON and
// the log), and each model's predictions are byte-identical to running it alone.
TEST(HuesRun, ModelsFolderPreparesTheBoardOncePerPreprocessing) {
  TempDir dir;
  const fs::path models = dir / "models";
  fs::create_directories(models);
  const std::vector<std::string> fixtures = {"clip-rn-tiny", "clip-tiny", "siglip-tiny"};
  for (const std::string& fixture : fixtures)
    fs::create_directory_symlink(SharedDir() / "fixtures" / fixture, models / fixture);
  auto together = RunVisalign(
      {"hues", "run", "--models", models.string(), "--no-cache", "--out", (dir / "together").string(), "--json"});
  ASSERT_EQ(together.exit_code, 0) << together.err;
  const Json listed = Json::parse(together.out);
  std::map<std::string, std::string> board_pixels;
  for (const auto& m : listed["models"]) board_pixels[m["model"]] = m["board_pixels"];
  // clip-rn-tiny and clip-tiny: 64 px, shortest side, OpenAI mean/std; siglip-tiny: squashed, 0.5.
  EXPECT_EQ(board_pixels, (std::map<std::string, std::string>{
                              {"clip-rn-tiny", "prepared"}, {"clip-tiny", "shared"}, {"siglip-tiny", "prepared"}}));
  EXPECT_NE(together.err.find("clip-tiny: board pixels shared"), std::string::npos) << together.err;
  for (const std::string& fixture : fixtures) {
    SCOPED_TRACE(fixture);
    auto alone = RunVisalign({"hues", "run", "--clip-model", (SharedDir() / "fixtures" / fixture).string(),
                              "--no-cache", "--out", (dir / "alone").string()});
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    EXPECT_EQ(*ReadFile(dir / "together" / fixture / "results.csv"),
              *ReadFile(dir / "alone" / fixture / "results.csv"));
    EXPECT_EQ(*ReadFile(dir / "together" / fixture / "predictions.jsonl"),
              *ReadFile(dir / "alone" / fixture / "predictions.jsonl"));
  }
}

// Processes given the same --models, --out and --store share the models, on either kind of store:
// each model is run by exactly one of them, the others skip it, and all end with every model done.
TEST(HuesRun, ProcessesSharingAStoreRunEachModelOnce) {
  TempDir dir;
  const fs::path models = dir / "models";
  fs::create_directories(models);
  const std::vector<std::string> fixtures = {"clip-tiny", "clip-rn-tiny", "clip-convnext-tiny"};
  for (const std::string& fixture : fixtures)
    fs::create_directory_symlink(SharedDir() / "fixtures" / fixture, models / fixture);
  auto server = testing::PostgresServer::Shared();
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::vector<std::vector<std::string>> stores = {
      {"--store", (dir / "store").string()},
      {"--store", (*server)->CreateDatabase().value(), "--image-root", (dir / "pg-images").string()}};
  for (const std::vector<std::string>& store : stores) {
    SCOPED_TRACE(store[1]);
    const std::string out = (dir / ("runs-" + std::to_string(&store - &stores[0]))).string();
    std::vector<std::string> args = {"--json", "hues", "run", "--models", models.string(), "--no-cache", "--out", out};
    args.insert(args.end(), store.begin(), store.end());
    std::vector<testing::Child> processes;
    for (int p = 0; p < 2; ++p)
      processes.push_back(testing::StartVisalign(args, dir.path(), "hues" + std::to_string(p)));
    std::map<std::string, int> done, skipped;
    for (const testing::Child& child : processes) {
      testing::RunResult r = testing::Wait(child);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const Json j = Json::parse(r.out);
      EXPECT_EQ(j["models"].size(), fixtures.size()) << r.out;
      for (const auto& m : j["models"]) ++(m["status"] == "done" ? done : skipped)[m["model"].get<std::string>()];
    }
    for (const std::string& fixture : fixtures) {
      EXPECT_EQ(done[fixture], 1) << fixture;
      EXPECT_EQ(skipped[fixture], 1) << fixture;
      EXPECT_EQ(ReadCsv(fs::path(out) / fixture / "results.csv")->rows.size(), 100u * 5) << fixture;
    }
  }
}

TEST(HuesRun, WritesPublishedFormatThatEvaluateConsumesAndCachesTheBoard) {
  TempDir dir;
  const std::string cache = (dir / "cache").string(), out = (dir / "runs").string();
  auto first =
      RunVisalign({"hues", "run", "--clip-model", Model(), "--nonsense", "--cache", cache, "--out", out, "--json"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto j1 = Json::parse(first.out);
  EXPECT_EQ(j1["model"], "clip-tiny");
  EXPECT_EQ(j1["words"], 120);  // 100 clue words, the 16 nonsense items, HER, HIM, HE, SHE
  EXPECT_FALSE(j1["cache_hit"].get<bool>());
  EXPECT_TRUE(fs::exists(j1["cache_file"].get<std::string>()));

  auto results = ReadCsv(dir / "runs/clip-tiny/results.csv");
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ(results->header,
            (std::vector<std::string>{"word", "coordenada_x", "coordenada_y", "R", "G", "B", "distance"}));
  EXPECT_EQ(results->rows.size(), 120u * 5);
  EXPECT_EQ(results->rows[0][0], "SALMON");
  const std::string csv1 = *ReadFile(dir / "runs/clip-tiny/results.csv");

  auto second =
      RunVisalign({"hues", "run", "--clip-model", Model(), "--nonsense", "--cache", cache, "--out", out, "--json"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(Json::parse(second.out)["cache_hit"].get<bool>());
  EXPECT_EQ(*ReadFile(dir / "runs/clip-tiny/results.csv"), csv1);  // cached embeddings give identical output

  auto plain_run =
      RunVisalign({"hues", "run", "--clip-model", Model(), "--cache", cache, "--out", (dir / "u.csv").string()});
  ASSERT_EQ(plain_run.exit_code, 0) << plain_run.err;
  // The same 100 words without the nonsense words; the text batch differs (100 vs 120 prompts), which
  // may move similarities in the last float digits only.
  auto plain = ReadCsv(dir / "u.csv");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ASSERT_EQ(plain->rows.size(), 100u * 5);
  for (size_t i = 0; i < plain->rows.size(); ++i) {
    EXPECT_EQ(plain->rows[i][0] + plain->rows[i][1] + plain->rows[i][2],
              results->rows[i][0] + results->rows[i][1] + results->rows[i][2])
        << i;
    EXPECT_NEAR(std::stod(plain->rows[i][6]), std::stod(results->rows[i][6]), 1e-6) << i;
  }

  auto evaluate = RunVisalign({"hues", "evaluate", "--predictions", out, "--out", (dir / "eval").string()});
  ASSERT_EQ(evaluate.exit_code, 0) << evaluate.err;
  EXPECT_NE(evaluate.out.find("clip-tiny"), std::string::npos);
  auto nonsense =
      RunVisalign({"hues", "nonsense", "--predictions", out, "--json", "--out", (dir / "nonsense").string()});
  ASSERT_EQ(nonsense.exit_code, 0) << nonsense.err;
  EXPECT_EQ(Json::parse(nonsense.out)["models"][0]["groups"].size(), 4u);
  auto published = RunVisalign({"hues", "nonsense", "--predictions", out, "--vocabulary", "published", "--json",
                                "--out", (dir / "published").string()});
  ASSERT_EQ(published.exit_code, 0) << published.err;
  const auto groups = Json::parse(published.out)["models"][0]["groups"];
  ASSERT_EQ(groups.size(), 4u);  // number, random_string, pseudoword, stop_word in file order
  EXPECT_EQ(groups[0]["top1"].size(), 1u);
  EXPECT_FALSE(groups[0]["collapsed"].get<bool>());  // a one-word group never collapses
  EXPECT_EQ(groups[3]["top1"].size(), 7u);
}

TEST(HuesRun, TopSimilarityEqualsClipEmbedOfASolidPatch) {
  TempDir dir;
  auto run = RunVisalign({"hues", "run", "--clip-model", Model(), "--template", "the color of {}", "--no-cache",
                          "--out", (dir / "p.jsonl").string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string first_line = ReadFile(dir / "p.jsonl")->substr(0, ReadFile(dir / "p.jsonl")->find('\n'));
  const auto salmon = Json::parse(first_line);
  ASSERT_EQ(salmon["word"], "SALMON");
  const std::string cell = salmon["top"][0]["cell"];
  const double similarity = salmon["top"][0]["similarity"];

  // The same cell as a 64×64 PNG (the fixture's input size), embedded by `clip embed`.
  auto board = ReadCsv(testing::DataDir() / "hues/board.csv");
  ASSERT_TRUE(board.ok());
  imaging::Image patch(64, 64);
  for (const auto& row : board->rows)
    if (row[0] == cell)
      for (size_t i = 0; i < patch.rgb.size(); i += 3)
        for (int c = 0; c < 3; ++c) patch.rgb[i + c] = static_cast<uint8_t>(std::stoi(row[3 + c]));
  ASSERT_TRUE(imaging::WritePng(dir / "patch.png", patch).ok());
  auto embed = RunVisalign({"clip", "embed", "--clip-model", Model(), "--image", (dir / "patch.png").string(), "--text",
                            "the color of SALMON", "--normalize", "--json"});
  ASSERT_EQ(embed.exit_code, 0) << embed.err;
  const auto e = Json::parse(embed.out);
  const auto& a = e["images"][0]["embedding"];
  const auto& b = e["texts"][0]["embedding"];
  double dot = 0;
  for (size_t i = 0; i < a.size(); ++i) dot += a[i].get<double>() * b[i].get<double>();
  EXPECT_NEAR(similarity, dot, 1e-5);
}

TEST(HuesRun, BadArgumentsAreClearErrors) {
  TempDir dir;
  auto no_placeholder = RunVisalign({"hues", "run", "--clip-model", Model(), "--template", "a photo", "--no-cache",
                                     "--out", (dir / "x.csv").string()});
  EXPECT_EQ(no_placeholder.exit_code, 2);
  EXPECT_NE(no_placeholder.err.find("--template"), std::string::npos) << no_placeholder.err;
  auto missing =
      RunVisalign({"hues", "run", "--clip-model", (dir / "nope").string(), "--out", (dir / "x.csv").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope"), std::string::npos) << missing.err;
}

TEST(HuesRun, RandomModelIsLabelledOnStderrAndInTheJson) {
  TempDir dir;
  const std::string model = (dir / "clip-random").string();
  ASSERT_EQ(RunVisalign({"clip", "random-model", "--out", model, "--seed", "0"}).exit_code, 0);
  const std::string label = "RANDOM (visalign clip random-model, arch tiny, seed 0): its numbers mean nothing";
  auto run =
      RunVisalign({"hues", "run", "--clip-model", model, "--no-cache", "--out", (dir / "runs").string(), "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("warning: --clip-model " + model + " has weights " + label), std::string::npos) << run.err;
  const auto j = Json::parse(run.out);
  EXPECT_EQ(j["words"], 100);
  EXPECT_EQ(j["random_weights"]["label"], label);
  auto text = RunVisalign({"hues", "run", "--clip-model", model, "--no-cache", "--out", (dir / "w.csv").string()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("weights " + label + "\n"), std::string::npos) << text.out;
  // The fixture is not labelled.
  auto fixture =
      RunVisalign({"hues", "run", "--clip-model", Model(), "--no-cache", "--out", (dir / "f.csv").string(), "--json"});
  ASSERT_EQ(fixture.exit_code, 0) << fixture.err;
  EXPECT_TRUE(Json::parse(fixture.out)["random_weights"].is_null());
  EXPECT_EQ(fixture.err.find("RANDOM"), std::string::npos);
}

}  // namespace
}  // namespace visalign
