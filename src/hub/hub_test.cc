// Models by name against a local imitation of the Hub (fake_hub_testing.h): both name forms, the cache
// layout, safetensors preferred, a gated repository, 404s, a broken config, a cut transfer resumed, a
// corrupted file, offline use and the commit in the fingerprint.
#include "visalign/hub/hub.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <unistd.h>

#include "hub/fake_hub_testing.h"
#include "hub/hub_http.h"
#include "testing/dirs.h"
#include "visalign/core/io.h"

namespace visalign::hub {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kCommit[] = "0123456789abcdef0123456789abcdef01234567";

fs::path Fixture(const std::string& path) { return fs::path(VISALIGN_TEST_SHARED_DIR) / "fixtures" / path; }
std::string Bytes(const std::string& path) { return ReadFile(Fixture(path)).value(); }

// siglip-tiny as the Hub's OpenCLIP export: open_clip_config.json, weights, tokenizer/ files.
testing::FakeRepo SiglipRepo(const std::string& weights_name, const std::string& weights_fixture) {
  testing::FakeRepo r;
  r.commit = kCommit;
  r.files = {{"open_clip_config.json", Bytes("siglip-tiny/config.json")},
             {weights_name, Bytes(weights_fixture)},
             {"tokenizer/spiece.model", Bytes("siglip-tiny/tokenizer/spiece.model")},
             {"tokenizer/tokenizer_config.json", Bytes("siglip-tiny/tokenizer/tokenizer_config.json")},
             {"tokenizer/special_tokens_map.json", Bytes("siglip-tiny/tokenizer/special_tokens_map.json")}};
  return r;
}

class HubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0);
    hub_.AddRepo("test/siglip-tiny", SiglipRepo("open_clip_model.safetensors", "siglip-tiny/model.safetensors"));
    ASSERT_TRUE(hub_.Start().ok());
    options_.cache = tmp_.path() / "cache";
    options_.endpoint = hub_.url();
  }
  Result<ResolvedModel> Fetch(const std::string& name) {
    VISALIGN_ASSIGN_OR_RETURN(ModelName parsed, ParseModelName(name));
    return FetchModel(parsed, options_);
  }
  // Fetches hf-hub:<repo>, a repository holding only `file` with `content`.
  Result<ResolvedModel> FetchOnlyFile(const std::string& repo, const std::string& file, const std::string& content) {
    testing::FakeRepo r;
    r.commit = kCommit;
    r.files = {{file, content}};
    hub_.AddRepo(repo, r);
    return Fetch("hf-hub:" + repo);
  }

  visalign::testing::TempDir tmp_;
  testing::FakeHub hub_;
  HubOptions options_;
};

TEST_F(HubTest, HubNameFillsTheCacheInHuggingFaceLayoutAndLoadsAsTheFolderDoes) {
  Result<ResolvedModel> m = Fetch("hf-hub:test/siglip-tiny");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->commit, kCommit);
  const fs::path repo = options_.cache / "models--test--siglip-tiny";
  EXPECT_EQ(ReadFile(repo / "refs" / "main").value(), kCommit);
  const std::string sha = Sha256Hex(Bytes("siglip-tiny/model.safetensors"));
  EXPECT_TRUE(fs::is_regular_file(repo / "blobs" / sha));
  const fs::path snapshot = repo / "snapshots" / kCommit / "open_clip_model.safetensors";
  ASSERT_TRUE(fs::is_symlink(snapshot));
  EXPECT_EQ(fs::read_symlink(snapshot), fs::path("../../blobs") / sha);
  EXPECT_TRUE(fs::is_regular_file(repo / "snapshots" / kCommit / "tokenizer" / "spiece.model"));
  EXPECT_TRUE(m->native) << m->native_reason;
  ASSERT_TRUE(m->files.size() >= 2u);
  EXPECT_TRUE(m->files[1].downloaded);

  const clip::ClipModel from_hub = clip::LoadClipModel(m->model_dir).value();
  const clip::ClipModel from_folder = clip::LoadClipModel(Fixture("siglip-tiny")).value();
  EXPECT_EQ(from_hub.EncodeTexts({"a red square"}).value().data,
            from_folder.EncodeTexts({"a red square"}).value().data);
  const Json config = Json::parse(ReadFile(m->model_dir / "open_clip_config.json").value());
  EXPECT_EQ(config["visalign_hub_source"],
            fmt::format("hf-hub:test/siglip-tiny@{} open_clip_model.safetensors", kCommit));
  EXPECT_NE(from_hub.Fingerprint().value(), from_folder.Fingerprint().value());  // the commit is part of it

  // A second fetch downloads nothing.
  Result<ResolvedModel> again = Fetch("hf-hub:test/siglip-tiny");
  ASSERT_TRUE(again.ok());
  for (const FetchedFile& f : again->files) EXPECT_FALSE(f.downloaded) << f.name;
  EXPECT_EQ(hub_.content().gets(), 2);  // the LFS files (weights, spiece.model), each once
}

// CLIPA and MetaCLIP 2 name their tokenizer's own repository (hf_tokenizer_name ORG/NAME): its files
// come from there into the cache and the model folder (as <ORG>/<NAME>/), not from the weights repository.
TEST_F(HubTest, TokenizerFilesComeFromTheRepositoryTheConfigNames) {
  constexpr char kTokenizerCommit[] = "fedcba9876543210fedcba9876543210fedcba98";
  nlohmann::json config = nlohmann::json::parse(Bytes("clipa-tiny/config.json"));
  config["model_cfg"]["text_cfg"]["hf_tokenizer_name"] = "test/bert-tokenizer";
  testing::FakeRepo weights;
  weights.commit = kCommit;
  weights.files = {{"open_clip_config.json", config.dump()},
                   {"open_clip_model.safetensors", Bytes("clipa-tiny/model.safetensors")}};
  testing::FakeRepo tokenizer;
  tokenizer.commit = kTokenizerCommit;
  for (const char* file : {"vocab.txt", "tokenizer_config.json", "special_tokens_map.json"}) {
    tokenizer.files[file] = Bytes(std::string("clipa-tiny/tokenizer/") + file);
  }
  hub_.AddRepo("test/clipa-tiny", weights);
  hub_.AddRepo("test/bert-tokenizer", tokenizer);
  Result<ResolvedModel> m = Fetch("hf-hub:test/clipa-tiny");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->warnings.empty()) << m->warnings.front();
  EXPECT_EQ(m->commit, kCommit);  // the weights' commit names the model
  EXPECT_TRUE(fs::is_regular_file(options_.cache / "models--test--bert-tokenizer" / "snapshots" / kTokenizerCommit /
                                  "vocab.txt"));
  EXPECT_TRUE(fs::is_regular_file(m->model_dir / "test" / "bert-tokenizer" / "vocab.txt"));
  const clip::ClipModel from_hub = clip::LoadClipModel(m->model_dir).value();
  ASSERT_EQ(from_hub.config().tokenizer.kind, clip::TokenizerKind::kWordPiece) << from_hub.config().tokenizer.missing;
  const clip::ClipModel from_folder = clip::LoadClipModel(Fixture("clipa-tiny")).value();
  for (const char* text : {"a red square", "Turquoise WATER!"}) {
    EXPECT_EQ(from_hub.Tokenize(text).value(), from_folder.Tokenize(text).value()) << text;
  }

  // Without the tokenizer repository the model still loads (token ids only), with a warning.
  testing::FakeRepo orphan = weights;
  config["model_cfg"]["text_cfg"]["hf_tokenizer_name"] = "test/missing-tokenizer";
  orphan.files["open_clip_config.json"] = config.dump();
  hub_.AddRepo("test/clipa-orphan", orphan);
  Result<ResolvedModel> without = Fetch("hf-hub:test/clipa-orphan");
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  ASSERT_EQ(without->warnings.size(), 1u);
  EXPECT_THAT(without->warnings[0], HasSubstr("test/missing-tokenizer"));
  const clip::ClipModel ids_only = clip::LoadClipModel(without->model_dir).value();
  EXPECT_EQ(ids_only.Tokenize("a red square").status().code(), StatusCode::kNotFound);
}

TEST_F(HubTest, SafetensorsArePreferredAndBinIsTheFallback) {
  testing::FakeRepo both = SiglipRepo("open_clip_model.safetensors", "siglip-tiny/model.safetensors");
  both.files["open_clip_pytorch_model.bin"] = Bytes("siglip-tiny-bin/open_clip_pytorch_model.bin");
  hub_.AddRepo("test/both", both);
  hub_.AddRepo("test/bin-only",
               SiglipRepo("open_clip_pytorch_model.bin", "siglip-tiny-bin/open_clip_pytorch_model.bin"));
  ASSERT_TRUE(Fetch("hf-hub:test/both").ok());
  EXPECT_EQ(hub_.requests_for("open_clip_pytorch_model.bin"), 0);
  Result<ResolvedModel> bin = Fetch("hf-hub:test/bin-only");
  ASSERT_TRUE(bin.ok()) << bin.status().ToString();
  EXPECT_TRUE(fs::exists(bin->model_dir / "open_clip_pytorch_model.bin"));
  EXPECT_TRUE(
      fs::exists(options_.cache / "models--test--bin-only" / ".no_exist" / kCommit / "open_clip_model.safetensors"));
  const clip::ClipModel from_bin = clip::LoadClipModel(bin->model_dir).value();
  const clip::ClipModel from_folder = clip::LoadClipModel(Fixture("siglip-tiny")).value();
  EXPECT_EQ(from_bin.EncodeTexts({"a red square"}).value().data,
            from_folder.EncodeTexts({"a red square"}).value().data);
}

TEST_F(HubTest, OpenClipTagGetsItsRepositoryAndTheTagsPreprocessing) {
  // ViT-L-14-CLIPA/datacomp1b: UCSC-VLAA/ViT-L-14-CLIPA-datacomp1B, ImageNet mean/std, bilinear, squash
  // (clip-tiny's config says OpenAI's mean/std, bicubic, shortest: the tag's values must win).
  testing::FakeRepo r;
  r.commit = kCommit;
  r.files = {{"open_clip_config.json", Bytes("clip-tiny/config.json")},
             {"open_clip_model.safetensors", Bytes("clip-tiny/model.safetensors")}};
  hub_.AddRepo("UCSC-VLAA/ViT-L-14-CLIPA-datacomp1B", r);
  Result<ResolvedModel> m = Fetch("ViT-L-14-CLIPA/datacomp1b");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->name.repo, "UCSC-VLAA/ViT-L-14-CLIPA-datacomp1B");
  const clip::ClipConfig config = clip::ReadClipModelConfig(m->model_dir).value();
  EXPECT_EQ(config.preprocess.interpolation, clip::Interpolation::kBilinear);
  EXPECT_EQ(config.preprocess.resize_mode, clip::ResizeMode::kSquash);
  EXPECT_FLOAT_EQ(config.preprocess.mean[0], 0.485f);
  EXPECT_FLOAT_EQ(config.preprocess.std[2], 0.225f);
  EXPECT_EQ(config.preprocess.image_size,
            clip::ReadClipModelConfig(Fixture("clip-tiny")).value().preprocess.image_size);
  EXPECT_EQ(ResultsName(m->name), "ViT-L-14-CLIPA-datacomp1b");
}

TEST_F(HubTest, TagWithoutAConfigInItsRepositoryUsesTheShippedModelConfig) {
  testing::FakeRepo r;
  r.commit = kCommit;
  r.files = {{"open_clip_pytorch_model.bin", Bytes("siglip-tiny-bin/open_clip_pytorch_model.bin")}};
  hub_.AddRepo("timm/resnet50_clip.openai", r);
  Result<ResolvedModel> m = Fetch("RN50/openai");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_THAT(m->config_source, HasSubstr("open_clip_model_configs.json RN50"));
  EXPECT_TRUE(m->native);
  EXPECT_EQ(m->native_reason, "ModifiedResNet");
  // RN50/openai was trained with QuickGELU; open_clip's RN50 config has GELU (RN50-quickgelu has it).
  ASSERT_EQ(m->warnings.size(), 1u);
  EXPECT_THAT(m->warnings[0], HasSubstr("RN50-quickgelu/openai"));
}

TEST_F(HubTest, UnknownTagNamesTheNearestKnownNames) {
  Result<ModelName> n = ParseModelName("ViT-B-32/laion2b_s34b_b79");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(n.status().expected(), HasSubstr("nearest: ViT-B-32/laion2b_s34b_b79k"));
  EXPECT_EQ(ParseModelName("ViT-B-32/LAION2B-S34B-B79K").value().repo, "laion/CLIP-ViT-B-32-laion2B-s34B-b79K");
  EXPECT_EQ(ParseModelName("hf-hub:timm/ViT-B-16-SigLIP@v1").value().revision, "v1");
  EXPECT_FALSE(ParseModelName("hf-hub:timm").ok());
  EXPECT_FALSE(ParseModelName("hf-hub:a/b/c").ok());
  EXPECT_FALSE(ParseModelName("hf-hub:../b").ok());
  EXPECT_EQ(ParseModelName("models/").value().kind, NameKind::kFolder);
  EXPECT_EQ(ParseModelName("./a/b").value().kind, NameKind::kFolder);
}

TEST_F(HubTest, GatedRepositoryNeedsTheTokenWhichIsNeverPrintedNorForwarded) {
  testing::FakeRepo gated = SiglipRepo("open_clip_model.safetensors", "siglip-tiny/model.safetensors");
  gated.token = "hf_secret_token_123";
  hub_.AddRepo("test/gated", gated);
  Result<ResolvedModel> denied = Fetch("hf-hub:test/gated");
  ASSERT_FALSE(denied.ok());
  EXPECT_THAT(denied.status().ToString(), HasSubstr("HTTP 401"));
  EXPECT_THAT(denied.status().ToString(), HasSubstr("HF_TOKEN"));
  options_.token = "hf_wrong";
  denied = Fetch("hf-hub:test/gated");
  ASSERT_FALSE(denied.ok());
  EXPECT_THAT(denied.status().ToString(), Not(HasSubstr("hf_wrong")));
  options_.token = gated.token;
  ASSERT_TRUE(Fetch("hf-hub:test/gated").ok());
  EXPECT_FALSE(hub_.content().saw_authorization());  // not sent on to the content server (another port)
  for (const auto& entry : fs::recursive_directory_iterator(options_.cache)) {
    if (!entry.is_regular_file()) continue;
    EXPECT_THAT(ReadFile(entry.path()).value(), Not(HasSubstr(gated.token))) << entry.path();
  }
}

TEST_F(HubTest, MissingRepositoryAndFileAre404Errors) {
  Result<ResolvedModel> repo = Fetch("hf-hub:test/nothing");
  ASSERT_FALSE(repo.ok());
  EXPECT_EQ(repo.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(repo.status().what(), HasSubstr("repository test/nothing not found (HTTP 404)"));
  testing::FakeRepo no_weights;
  no_weights.commit = kCommit;
  no_weights.files = {{"open_clip_config.json", Bytes("clip-tiny/config.json")}};
  hub_.AddRepo("test/no-weights", no_weights);
  Result<ResolvedModel> file = Fetch("hf-hub:test/no-weights");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().what(), HasSubstr("file \"open_clip_pytorch_model.bin\" not found in test/no-weights"));
  Result<ResolvedModel> revision = Fetch("hf-hub:test/siglip-tiny@v9");
  ASSERT_FALSE(revision.ok());
  EXPECT_THAT(revision.status().what(), HasSubstr("revision not found in test/siglip-tiny"));
}

TEST_F(HubTest, ABrokenConfigNamesTheFileAndWhatIsWrong) {
  Result<ResolvedModel> broken = FetchOnlyFile("test/broken-config", "open_clip_config.json", "{\"model_cfg\": [1,}");
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(broken.status().what(), "invalid JSON (syntax error at byte 18)");
  EXPECT_THAT(broken.status().where(), HasSubstr("open_clip_config.json"));
  Result<ResolvedModel> not_object = FetchOnlyFile("test/array-config", "config.json", "[1, 2]");
  ASSERT_FALSE(not_object.ok());
  EXPECT_EQ(not_object.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(not_object.status().what(), "not a JSON object but [1,2]");
  EXPECT_THAT(not_object.status().where(), HasSubstr("config.json"));
  EXPECT_EQ(not_object.status().expected(), "a model config (a JSON object)");
}

TEST_F(HubTest, ACutTransferIsResumedWithARangeRequest) {
  const std::string weights = Bytes("siglip-tiny/model.safetensors");
  hub_.content().CutNextAfter(weights.size() / 3);
  Result<ResolvedModel> m = Fetch("hf-hub:test/siglip-tiny");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(hub_.content().ranges(), std::vector<std::string>{fmt::format("bytes={}-", weights.size() / 3)});
  EXPECT_EQ(Sha256File(m->model_dir / "open_clip_model.safetensors").value(), Sha256Hex(weights));
}

TEST_F(HubTest, APartialDownloadLeftByAnEarlierRunIsResumed) {
  const std::string weights = Bytes("siglip-tiny/model.safetensors");
  const fs::path blobs = options_.cache / "models--test--siglip-tiny" / "blobs";
  fs::create_directories(blobs);
  const std::string sha = Sha256Hex(weights);
  std::ofstream(blobs / (sha + ".incomplete"), std::ios::binary) << weights.substr(0, 1000);
  ASSERT_TRUE(Fetch("hf-hub:test/siglip-tiny").ok());
  EXPECT_EQ(hub_.content().ranges(), std::vector<std::string>{"bytes=1000-"});
  EXPECT_EQ(Sha256File(blobs / sha).value(), sha);
  EXPECT_FALSE(fs::exists(blobs / (sha + ".incomplete")));
}

TEST_F(HubTest, ACorruptedDownloadIsDeletedWithAChecksumError) {
  hub_.content().CorruptEverything(true);
  Result<ResolvedModel> m = Fetch("hf-hub:test/siglip-tiny");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kCorrupt);
  EXPECT_THAT(m.status().what(), HasSubstr("checksum mismatch for \"open_clip_model.safetensors\""));
  EXPECT_THAT(m.status().what(), HasSubstr("the file was deleted"));
  const fs::path blobs = options_.cache / "models--test--siglip-tiny" / "blobs";
  for (const auto& entry : fs::directory_iterator(blobs)) {
    EXPECT_FALSE(entry.path().filename().string().ends_with(".incomplete")) << entry.path();
    EXPECT_NE(entry.path().filename().string(), Sha256Hex(Bytes("siglip-tiny/model.safetensors")));
  }
}

TEST_F(HubTest, OfflineUsesOnlyTheCache) {
  options_.offline = true;
  Result<ResolvedModel> cold = Fetch("hf-hub:test/siglip-tiny");
  ASSERT_FALSE(cold.ok());
  EXPECT_THAT(cold.status().ToString(), HasSubstr("not in the cache"));
  EXPECT_THAT(cold.status().ToString(), HasSubstr("offline"));
  options_.offline = false;
  ASSERT_TRUE(Fetch("hf-hub:test/siglip-tiny").ok());
  const int requests = hub_.requests_for("open_clip_config.json");
  options_.offline = true;
  Result<ResolvedModel> warm = Fetch("hf-hub:test/siglip-tiny");
  ASSERT_TRUE(warm.ok()) << warm.status().ToString();
  EXPECT_EQ(warm->commit, kCommit);
  EXPECT_EQ(hub_.requests_for("open_clip_config.json"), requests);
  EXPECT_TRUE(clip::LoadClipModel(warm->model_dir).ok());
}

TEST_F(HubTest, AFullDiskIsAOneLineError) {
  // /dev/full fails every write with ENOSPC, as a full cache disk does.
  const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  DownloadSink sink;
  sink.fd = fd;
  uint64_t written = 0;
  const std::string sha = Sha256Hex(Bytes("siglip-tiny/model.safetensors"));
  Result<HubResponse> r = Get(hub_.content().url() + "/blobs/" + sha, "", sink, &written);
  ::close(fd);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_THAT(r.status().ToString(), HasSubstr("disk full"));
  EXPECT_EQ(written, 0u);
}

TEST(HubOptionsTest, CacheFolderComesFromVisalignCacheThenHfHomeThenHome) {
  unsetenv("VISALIGN_CACHE");
  unsetenv("HF_HOME");
  unsetenv("HF_ENDPOINT");
  unsetenv("HF_HUB_OFFLINE");
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(HubOptionsFromEnvironment().value().cache, fs::path("/home/someone/.cache/visalign"));
  EXPECT_EQ(HubOptionsFromEnvironment().value().endpoint, "https://huggingface.co");
  setenv("HF_HOME", "/data/hf", 1);
  EXPECT_EQ(HubOptionsFromEnvironment().value().cache, fs::path("/data/hf/hub"));
  setenv("VISALIGN_CACHE", "/models", 1);
  setenv("HF_ENDPOINT", "http://127.0.0.1:9/", 1);
  setenv("HF_HUB_OFFLINE", "1", 1);
  const HubOptions o = HubOptionsFromEnvironment().value();
  EXPECT_EQ(o.cache, fs::path("/models"));
  EXPECT_EQ(o.endpoint, "http://127.0.0.1:9");
  EXPECT_TRUE(o.offline);
  setenv("HF_ENDPOINT", "ftp://x", 1);
  EXPECT_FALSE(HubOptionsFromEnvironment().ok());
  for (const char* v : {"VISALIGN_CACHE", "HF_HOME", "HF_ENDPOINT", "HF_HUB_OFFLINE"}) unsetenv(v);
}

}  // namespace
}  // namespace visalign::hub
