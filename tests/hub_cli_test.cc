// Models by name on the command line, against a local imitation of the Hub (src/hub/fake_hub_testing.h):
// `clip resolve` in both name forms, --clip-model NAME in `clip info` and `hues run` giving exactly the
// results of the fixture folder, two processes sharing one download, offline mode, one-line errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "hub/fake_hub_testing.h"
#include "testing/cli_runner.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/hub/hub.h"

namespace visalign {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::RunVisalign;

constexpr char kCommit[] = "89abcdef0123456789abcdef0123456789abcdef";

std::string Bytes(const std::string& path) { return ReadFile(testing::SharedDir() / "fixtures" / path).value(); }

class HubCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // what open_clip's ViT-B-16-SigLIP/webli names
    hub_.AddRepo("timm/ViT-B-16-SigLIP", hub::testing::SiglipTinyRepo(testing::SharedDir() / "fixtures", kCommit));
    hub::testing::FakeRepo clip;
    clip.commit = kCommit;
    clip.files = {{"open_clip_config.json", Bytes("clip-tiny/config.json")},
                  {"open_clip_model.safetensors", Bytes("clip-tiny/model.safetensors")}};
    hub_.AddRepo("test/clip-tiny", clip);
    ASSERT_TRUE(hub_.Start().ok());
    env_ = {{"VISALIGN_CACHE", (tmp_ / "cache").string()},
            {"HF_ENDPOINT", hub_.url()},
            {"HF_TOKEN", ""},
            {"HF_HUB_OFFLINE", ""}};
  }

  testing::TempDir tmp_;
  hub::testing::FakeHub hub_;
  std::map<std::string, std::string> env_;
};

TEST_F(HubCliTest, ResolvePrintsRepositoryCommitFilesPreprocessingAndNativeSupport) {
  const testing::RunResult r = RunVisalign({"clip", "resolve", "ViT-B-16-SigLIP/webli", "--json"}, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["repository"], "timm/ViT-B-16-SigLIP");
  EXPECT_EQ(j["commit"], kCommit);
  EXPECT_EQ(j["model"], "ViT-B-16-SigLIP");
  EXPECT_EQ(j["tag"], "webli");
  EXPECT_EQ(j["native"], true);
  EXPECT_EQ(j["preprocess"]["resize_mode"], "squash");
  EXPECT_EQ(j["preprocess"]["mean"], Json::parse("[0.5, 0.5, 0.5]"));
  std::vector<std::string> files;
  for (const auto& f : j["files"]) files.push_back(f["name"]);
  EXPECT_THAT(files, ::testing::Contains("open_clip_pytorch_model.bin"));
  const testing::RunResult text = RunVisalign({"clip", "resolve", "hf-hub:test/clip-tiny"}, env_);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr(fmt::format("commit      {}", kCommit)));
  EXPECT_THAT(text.out, HasSubstr("native      yes (ViT)"));
  EXPECT_THAT(text.err, HasSubstr("download open_clip_model.safetensors"));  // the progress line: bytes and rate
  EXPECT_THAT(text.err, HasSubstr("MB/s"));
}

TEST_F(HubCliTest, InfoAndHuesRunByNameMatchTheFixtureFolder) {
  const testing::RunResult info =
      RunVisalign({"clip", "info", "--clip-model", "hf-hub:test/clip-tiny", "--json"}, env_);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const fs::path out = tmp_ / "runs";
  const testing::RunResult by_name = RunVisalign(
      {"hues", "run", "--clip-model", "hf-hub:test/clip-tiny", "--out", (out / "a").string(), "--json"}, env_);
  ASSERT_EQ(by_name.exit_code, 0) << by_name.err;
  const testing::RunResult by_folder =
      RunVisalign({"hues", "run", "--clip-model", (testing::SharedDir() / "fixtures/clip-tiny").string(), "--name",
                   "clip-tiny", "--out", (out / "b").string(), "--json"},
                  env_);
  ASSERT_EQ(by_folder.exit_code, 0) << by_folder.err;
  EXPECT_EQ(ReadFile(out / "a" / "clip-tiny" / "results.csv").value(),
            ReadFile(out / "b" / "clip-tiny" / "results.csv").value());
}

// A --published-style sweep: a models file of fixture repositories (an open_clip tag and an hf-hub name)
// ends with the predictions of running each fixture folder directly, and each download is deleted once
// its predictions are written.
TEST_F(HubCliTest, ModelsFileSweepMatchesTheFolderRunsAndDeletesEachDownload) {
  const fs::path list =
      tmp_.Write("models.txt", "# two fixture repositories\nViT-B-16-SigLIP/webli\n\nhf-hub:test/clip-tiny\n");
  const fs::path out = tmp_ / "sweep";
  const testing::RunResult sweep =
      RunVisalign({"hues", "run", "--models-file", list.string(), "--out", out.string()}, env_);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  const std::map<std::string, std::string> folders = {{"ViT-B-16-SigLIP-webli", "siglip-tiny"},
                                                      {"clip-tiny", "clip-tiny"}};
  for (const auto& [name, fixture] : folders) {
    const fs::path direct = tmp_ / "direct";
    const testing::RunResult one =
        RunVisalign({"hues", "run", "--clip-model", (testing::SharedDir() / "fixtures" / fixture).string(), "--name",
                     name, "--out", direct.string()},
                    env_);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    EXPECT_EQ(ReadFile(out / name / "results.csv").value(), ReadFile(direct / name / "results.csv").value()) << name;
  }
  const fs::path blobs = tmp_ / "cache" / "models--test--clip-tiny" / "blobs";
  EXPECT_FALSE(fs::exists(blobs / Sha256Hex(Bytes("clip-tiny/model.safetensors"))));
  EXPECT_THAT(sweep.err, HasSubstr("deleted its downloaded weights"));
  // Re-running skips both (their run records match) without downloading again.
  const int gets = hub_.content().gets();
  const testing::RunResult again =
      RunVisalign({"hues", "run", "--models-file", list.string(), "--out", out.string(), "--keep-checkpoints"}, env_);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("already done"));
  EXPECT_GT(hub_.content().gets(), gets);  // the weights came back to compute the fingerprint ...
  EXPECT_TRUE(fs::exists(blobs / Sha256Hex(Bytes("clip-tiny/model.safetensors"))));  // ... and are kept now
}

// --disk-budget: with --keep-checkpoints the weights of models already run are kept while they fit and
// deleted oldest first when the next download would pass the budget; a model that cannot fit fails
// alone, in one line naming the sizes. (siglip-tiny: 1.5 MB of weights and a 0.25 MB tokenizer, run
// first; clip-tiny: 13.7 MB.)
TEST_F(HubCliTest, DiskBudgetEvictsKeptWeightsOldestFirstAndFailsAModelThatCannotFit) {
  const fs::path list = tmp_.Write("models.txt", "ViT-B-16-SigLIP/webli\nhf-hub:test/clip-tiny\n");
  const fs::path siglip_blob = tmp_ / "cache" / "models--timm--ViT-B-16-SigLIP" / "blobs" /
                               Sha256Hex(Bytes("siglip-tiny-bin/open_clip_pytorch_model.bin"));
  const fs::path clip_blob =
      tmp_ / "cache" / "models--test--clip-tiny" / "blobs" / Sha256Hex(Bytes("clip-tiny/model.safetensors"));
  const testing::RunResult fits = RunVisalign({"hues", "run", "--models-file", list.string(), "--out",
                                               (tmp_ / "a").string(), "--keep-checkpoints", "--disk-budget", "14500KB"},
                                              env_);
  ASSERT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_THAT(fits.err,
              HasSubstr("ViT-B-16-SigLIP/webli: deleted its weights (1514183 bytes) to stay within --disk-budget"));
  EXPECT_FALSE(fs::exists(siglip_blob));
  EXPECT_TRUE(fs::exists(clip_blob));
  EXPECT_LE(hub::CacheBlobBytes(tmp_ / "cache"), 14'500'000u);
  EXPECT_TRUE(fs::exists(tmp_ / "a" / "clip-tiny" / "results.csv"));
  EXPECT_TRUE(fs::exists(tmp_ / "a" / "ViT-B-16-SigLIP-webli" / "results.csv"));

  fs::remove_all(tmp_ / "cache");
  const testing::RunResult tight = RunVisalign(
      {"hues", "run", "--models-file", list.string(), "--out", (tmp_ / "b").string(), "--disk-budget", "1MB"}, env_);
  EXPECT_EQ(tight.exit_code, 2);
  EXPECT_THAT(tight.err, HasSubstr("error: 2 of 2 models failed, the first with: \"open_clip_pytorch_model.bin\" needs "
                                   "1.5 MB more, the cache holds"));
  EXPECT_THAT(tight.err, HasSubstr("and --disk-budget is 1.0 MB"));
  EXPECT_FALSE(fs::exists(clip_blob));

  const testing::RunResult single = RunVisalign(
      {"hues", "run", "--clip-model", "hf-hub:test/clip-tiny", "--out", (tmp_ / "c").string(), "--disk-budget", "1GB"},
      env_);
  EXPECT_EQ(single.exit_code, 2);
  EXPECT_THAT(single.err, HasSubstr("error: --disk-budget without a sweep"));
  const testing::RunResult garbage = RunVisalign(
      {"hues", "run", "--models-file", list.string(), "--out", (tmp_ / "d").string(), "--disk-budget", "lots"}, env_);
  EXPECT_EQ(garbage.exit_code, 2);
  EXPECT_THAT(garbage.err, HasSubstr("--disk-budget"));
}

TEST_F(HubCliTest, TwoProcessesDownloadTheSameFileOnce) {
  hub_.content().SendSlowly(true);
  const testing::Child a = testing::StartVisalign({"clip", "resolve", "ViT-B-16-SigLIP/webli"}, tmp_.path(), "a", env_);
  const testing::Child b = testing::StartVisalign({"clip", "resolve", "ViT-B-16-SigLIP/webli"}, tmp_.path(), "b", env_);
  const testing::RunResult ra = testing::Wait(a);
  const testing::RunResult rb = testing::Wait(b);
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  EXPECT_EQ(hub_.content().gets(), 2);  // the weights and spiece.model, each once
  const fs::path blobs = tmp_ / "cache" / "models--timm--ViT-B-16-SigLIP" / "blobs";
  EXPECT_EQ(Sha256File(blobs / Sha256Hex(Bytes("siglip-tiny-bin/open_clip_pytorch_model.bin"))).value(),
            Sha256Hex(Bytes("siglip-tiny-bin/open_clip_pytorch_model.bin")));
}

TEST_F(HubCliTest, OfflineUsesTheCacheOnly) {
  const testing::RunResult cold = RunVisalign({"--offline", "clip", "resolve", "hf-hub:test/clip-tiny"}, env_);
  EXPECT_EQ(cold.exit_code, 2);
  EXPECT_THAT(cold.err, HasSubstr("is not in the cache"));
  ASSERT_EQ(RunVisalign({"clip", "resolve", "hf-hub:test/clip-tiny"}, env_).exit_code, 0);
  std::map<std::string, std::string> offline = env_;
  offline["HF_HUB_OFFLINE"] = "1";
  offline["HF_ENDPOINT"] = "http://127.0.0.1:9";  // nothing listens there
  const testing::RunResult warm = RunVisalign({"clip", "info", "--clip-model", "hf-hub:test/clip-tiny"}, offline);
  EXPECT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_THAT(warm.out, HasSubstr("fingerprint"));
}

TEST_F(HubCliTest, BadNamesAndHubErrorsAreOneLine) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"clip", "resolve", "ViT-B-32/laion2b_s34b_b79"}, "nearest: ViT-B-32/laion2b_s34b_b79k"},
      {{"clip", "resolve", "hf-hub:nobody"}, "hf-hub:ORG/NAME"},
      {{"clip", "resolve", "hf-hub:test/missing"}, "repository test/missing not found (HTTP 404)"},
      {{"clip", "info", "--clip-model", "ViT-B-32/nope"}, "(--clip-model)"},
  };
  for (const Case& c : cases) {
    const testing::RunResult r = RunVisalign(c.args, env_);
    EXPECT_EQ(r.exit_code, 2) << c.args.back();
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args.back();
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace visalign
