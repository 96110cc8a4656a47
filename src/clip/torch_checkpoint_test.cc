// PyTorch checkpoints (torch_checkpoint.h): the siglip-tiny-bin fixture (a state dict and a training
// checkpoint made by torch 1.13 from siglip-tiny's safetensors, and a hostile file) and byte-built
// variants (float16, strided views, parameters, damaged archives).
#include "clip/torch_checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "clip/fixture_testing.h"
#include "clip/torch_checkpoint_testing.h"
#include "testing/dirs.h"
#include "visalign/clip.h"

namespace visalign::clip {
namespace {

namespace fs = std::filesystem;
using testing::FloatBytes;
using ::testing::HasSubstr;
using testing::PickleStateDict;
using testing::PickleTensor;
using testing::StoredZip;

fs::path BinFixture(const std::string& name) { return clip::testing::FixtureDir("siglip-tiny-bin") / name; }

// Every tensor of siglip-tiny's safetensors, by name, dtype, shape and bytes.
void ExpectSameTensors(const SafetensorsFile& bin) {
  const SafetensorsFile reference =
      SafetensorsFile::Open(clip::testing::FixtureDir("siglip-tiny") / "model.safetensors").value();
  ASSERT_EQ(bin.tensors().size(), reference.tensors().size());
  for (const TensorInfo& r : reference.tensors()) {
    const TensorInfo* t = bin.Find(r.name);
    ASSERT_NE(t, nullptr) << r.name;
    EXPECT_EQ(t->dtype, r.dtype) << r.name;
    EXPECT_EQ(t->shape, r.shape) << r.name;
    ASSERT_EQ(t->nbytes, r.nbytes) << r.name;
    EXPECT_EQ(std::memcmp(t->data, r.data, r.nbytes), 0) << r.name;
  }
}

TEST(TorchCheckpointTest, StateDictHasExactlySiglipTinysTensors) {
  Result<SafetensorsFile> bin = OpenTorchCheckpoint(BinFixture("open_clip_pytorch_model.bin"));
  ASSERT_TRUE(bin.ok()) << bin.status().ToString();
  ExpectSameTensors(*bin);
}

TEST(TorchCheckpointTest, TrainingCheckpointYieldsItsStateDictWithoutModulePrefixes) {
  Result<SafetensorsFile> bin = OpenWeightsFile(BinFixture("epoch_32.pt"));
  ASSERT_TRUE(bin.ok()) << bin.status().ToString();
  ExpectSameTensors(*bin);
}

// A model folder: siglip-tiny's config and tokenizer beside `weights` named `as`.
fs::path BinModelDir(const visalign::testing::TempDir& tmp, const std::string& weights, const std::string& as) {
  const fs::path siglip = clip::testing::FixtureDir("siglip-tiny");
  const fs::path dir = tmp / weights;
  fs::create_directories(dir);
  fs::copy_file(siglip / "config.json", dir / "config.json");
  fs::create_directory_symlink(siglip / "tokenizer", dir / "tokenizer");
  fs::create_symlink(BinFixture(weights), dir / as);
  return dir;
}

TEST(TorchCheckpointTest, ModelsFromBothCheckpointsGiveSiglipTinysEmbeddingsBitForBit) {
  setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0);
  const visalign::testing::TempDir tmp;
  const ClipModel reference = LoadClipModel(clip::testing::FixtureDir("siglip-tiny")).value();
  const SafetensorsFile debug =
      SafetensorsFile::Open(clip::testing::FixtureDir("siglip-tiny") / "debug_activations.safetensors").value();
  const Matrix pixels = clip::testing::DebugPixels(debug);
  const auto ids = clip::testing::DebugTokenIds(debug);
  const Matrix ref_images = reference.EncodePixels(pixels).value();
  const Matrix ref_texts = reference.EncodeTokens(ids).value();
  const Json expected = clip::testing::ReadFixtureJson("expected.json", "siglip-tiny");
  for (const auto& [weights, as] : {std::pair{"open_clip_pytorch_model.bin", "open_clip_pytorch_model.bin"},
                                    std::pair{"epoch_32.pt", "pytorch_model.bin"}}) {
    Result<ClipModel> model = LoadClipModel(BinModelDir(tmp, weights, as));
    ASSERT_TRUE(model.ok()) << weights << ": " << model.status().ToString();
    EXPECT_EQ(model->EncodePixels(pixels).value().data, ref_images.data) << weights;
    EXPECT_EQ(model->EncodeTokens(ids).value().data, ref_texts.data) << weights;
    EXPECT_EQ(model->LogitBias(), reference.LogitBias()) << weights;
    // and against open_clip's own numbers (independent of the safetensors path)
    const Matrix images = model->EncodePixels(pixels).value();
    const auto& rows = expected["images"];
    ASSERT_EQ(static_cast<int>(rows.size()), images.rows);
    for (int r = 0; r < images.rows; ++r) {
      EXPECT_LT(clip::testing::MaxAbsDiff(images.row(r), rows[r]["embedding"].get<std::vector<float>>()), 1e-4f)
          << weights << " image " << r;
    }
  }
}

TEST(TorchCheckpointTest, HostileCheckpointIsRefusedNamingTheGlobalAndRunsNothing) {
  const fs::path marker = "/tmp/visalign-pickle-pwned";
  fs::remove(marker);
  Result<SafetensorsFile> bin = OpenWeightsFile(BinFixture("hostile_os_system.bin"));
  ASSERT_FALSE(bin.ok());
  EXPECT_EQ(bin.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bin.status().what(), HasSubstr("pickle global \"posix system\" is not allowed"));
  EXPECT_THAT(bin.status().where(), HasSubstr("hostile_os_system.bin archive/data.pkl"));
  EXPECT_EQ(bin.status().ToString().find('\n'), std::string::npos);
  EXPECT_FALSE(fs::exists(marker));
}

Result<SafetensorsFile> ReadBytes(const std::string& bytes) {
  return ReadTorchCheckpoint(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "test.bin");
}

std::string Checkpoint(const std::string& pickle, const std::vector<std::pair<std::string, std::string>>& storages) {
  std::vector<std::pair<std::string, std::string>> entries = {{"ckpt/data.pkl", pickle}};
  for (const auto& [key, bytes] : storages) entries.emplace_back("ckpt/data/" + key, bytes);
  entries.emplace_back("ckpt/version", "3\n");
  return StoredZip(entries);
}

TEST(TorchCheckpointTest, ReadsFloat16AndBfloat16StoragesAsTheirDtypes) {
  const std::string half = testing::LittleEndian(0x3C00, 2) + testing::LittleEndian(0xC000, 2);  // 1, -2
  const std::string bf16 = testing::LittleEndian(0x3F80, 2);                                     // 1
  Result<SafetensorsFile> file =
      ReadBytes(Checkpoint(PickleStateDict({{"h", PickleTensor("HalfStorage", "0", 2, 0, {2}, {1})},
                                            {"b", PickleTensor("BFloat16Storage", "1", 1, 0, {}, {})}}),
                           {{"0", half}, {"1", bf16}}));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->Find("h")->dtype, DType::kF16);
  EXPECT_EQ(SafetensorsFile::ToFloat(*file->Find("h"), "h").value(), (std::vector<float>{1.0f, -2.0f}));
  EXPECT_EQ(file->Find("b")->dtype, DType::kBF16);
  EXPECT_EQ(SafetensorsFile::ToFloat(*file->Find("b"), "b").value(), (std::vector<float>{1.0f}));
}

TEST(TorchCheckpointTest, StridedViewsAreCopiedInRowMajorOrderAndSharedStoragesOffset) {
  // storage 0..5 as a 2x3 matrix; "t" is its transpose (3x2, stride (1, 3)); "tail" shares the
  // storage from element 4; "p" is an nn.Parameter around a tensor.
  const std::string storage = FloatBytes({0, 1, 2, 3, 4, 5});
  const std::string parameter = "ctorch._utils\n_rebuild_parameter\n(" +
                                PickleTensor("FloatStorage", "0", 6, 0, {6}, {1}) + "\x88" +
                                testing::kPickleOrderedDict + "tR";
  Result<SafetensorsFile> file =
      ReadBytes(Checkpoint(PickleStateDict({{"t", PickleTensor("FloatStorage", "0", 6, 0, {3, 2}, {1, 3})},
                                            {"tail", PickleTensor("FloatStorage", "0", 6, 4, {2}, {1})},
                                            {"p", parameter}}),
                           {{"0", storage}}));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(SafetensorsFile::ToFloat(*file->Find("t"), "t").value(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(file->Find("t")->shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(SafetensorsFile::ToFloat(*file->Find("tail"), "tail").value(), (std::vector<float>{4, 5}));
  EXPECT_EQ(SafetensorsFile::ToFloat(*file->Find("p"), "p").value(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(TorchCheckpointTest, StateDictMetadataStateIsIgnored) {
  // model.state_dict() pickles its _metadata attribute as BUILD state of the OrderedDict.
  std::string pickle = PickleStateDict({{"x", PickleTensor("FloatStorage", "0", 1, 0, {}, {})}});
  pickle.pop_back();  // STOP
  pickle += "}" + testing::PickleString("_metadata") + testing::kPickleOrderedDict + "sb.";
  Result<SafetensorsFile> file = ReadBytes(Checkpoint(pickle, {{"0", FloatBytes({7})}}));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->tensors().size(), 1u);
}

struct BadCase {
  std::string name;
  std::string bytes;
  StatusCode code;
  std::string message;
};

std::vector<BadCase> BadCases() {
  const std::string one = FloatBytes({1});
  const std::string good =
      Checkpoint(PickleStateDict({{"x", PickleTensor("FloatStorage", "0", 1, 0, {1}, {1})}}), {{"0", one}});
  std::string compressed = good;
  compressed[8] = 8;  // the local header's method: deflate
  const size_t central = compressed.find(std::string("PK\x01\x02", 4));
  compressed[central + 10] = 8;
  return {
      {"truncated", good.substr(0, good.size() - 30), StatusCode::kCorrupt, "end-of-central-directory"},
      {"storage_too_small",
       Checkpoint(PickleStateDict({{"x", PickleTensor("FloatStorage", "0", 4, 0, {4}, {1})}}), {{"0", one}}),
       StatusCode::kCorrupt, "has 4 bytes for 4 elements"},
      {"view_past_storage",
       Checkpoint(PickleStateDict({{"x", PickleTensor("FloatStorage", "0", 1, 0, {2}, {1})}}), {{"0", one}}),
       StatusCode::kCorrupt, "reaching past its 1-element storage"},
      {"huge_stride",
       Checkpoint(PickleStateDict({{"x", PickleTensor("FloatStorage", "0", 1, 0, {2}, {2147483647})}}), {{"0", one}}),
       StatusCode::kCorrupt, "reaching past"},
      {"missing_storage",
       Checkpoint(PickleStateDict({{"x", PickleTensor("FloatStorage", "9", 1, 0, {1}, {1})}}), {{"0", one}}),
       StatusCode::kCorrupt, "no data/\"9\" entry"},
      {"forbidden_opcode", Checkpoint("\x80\x02}(" + testing::PickleString("x") + "i__builtin__\nexec\n.", {}),
       StatusCode::kInvalidArgument, "pickle opcode 0x69 at byte 10 is not allowed"},
      {"storage_called",
       Checkpoint("\x80\x02"
                  "ctorch\nFloatStorage\n)R.",
                  {}),
       StatusCode::kInvalidArgument, "pickle calls \"torch FloatStorage\""},
      {"stack_global_forbidden",
       Checkpoint("\x80\x04" + testing::PickleString("builtins") + testing::PickleString("eval") + "\x93.", {}),
       StatusCode::kInvalidArgument, "\"builtins eval\" is not allowed"},
      {"no_stop", Checkpoint("\x80\x02}", {}), StatusCode::kCorrupt, "without a STOP"},
      {"not_a_tensor", Checkpoint("\x80\x02}" + testing::PickleString("x") + testing::PickleInt(3) + "s.", {}),
       StatusCode::kUnsupported, "state dict entry \"x\" is not a tensor"},
      {"compressed", compressed, StatusCode::kUnsupported, "is compressed or encrypted (method 8)"},
      {"no_data_pkl", StoredZip({{"x/other", "1"}}), StatusCode::kCorrupt, "0 <stem>/data.pkl entries"},
  };
}

TEST(TorchCheckpointTest, DamagedAndHostileBytesAreOneLineErrors) {
  for (const BadCase& c : BadCases()) {
    Result<SafetensorsFile> file = ReadBytes(c.bytes);
    ASSERT_FALSE(file.ok()) << c.name;
    EXPECT_EQ(file.status().code(), c.code) << c.name << ": " << file.status().ToString();
    EXPECT_THAT(file.status().ToString(), HasSubstr(c.message)) << c.name;
    EXPECT_EQ(file.status().ToString().find('\n'), std::string::npos) << c.name;
  }
}

TEST(TorchCheckpointTest, LegacyFormatIsRefusedNamingIt) {
  const visalign::testing::TempDir tmp;
  const fs::path path = tmp.Write("legacy.bin", std::string("\x80\x02\x8a\x0a"
                                                            "l\xfc\x9c"
                                                            "F\xf9 j\xa8"
                                                            "P\x19.",
                                                            15));
  Result<SafetensorsFile> file = OpenWeightsFile(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(file.status().what(), HasSubstr("legacy PyTorch serialization (torch < 1.6"));
}

// A safetensors header whose length's low byte is 0x80 (pickle's PROTO opcode) is still safetensors:
// coca-tiny's model.safetensors starts with 80 2c 00 .. 00 '{'.
TEST(TorchCheckpointTest, SafetensorsWhoseHeaderLengthStartsWith0x80IsNotTakenForAPickle) {
  const visalign::testing::TempDir tmp;
  std::string header = R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  header.resize(0x80, ' ');
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(0x80);
  bytes += header + std::string(4, '\0');
  Result<SafetensorsFile> file = OpenWeightsFile(tmp.Write("model.safetensors", bytes));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_NE(file->Find("x"), nullptr);
}

TEST(TorchCheckpointTest, SafetensorsArePreferredInAModelFolder) {
  setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0);
  const visalign::testing::TempDir tmp;
  const fs::path dir = BinModelDir(tmp, "open_clip_pytorch_model.bin", "open_clip_pytorch_model.bin");
  fs::create_symlink(clip::testing::FixtureDir("siglip-tiny") / "model.safetensors", dir / "model.safetensors");
  Result<ClipConfig> config = ReadClipModelConfig(dir);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->weights_file, dir / "model.safetensors");
  fs::remove(dir / "model.safetensors");
  EXPECT_EQ(ReadClipModelConfig(dir).value().weights_file, dir / "open_clip_pytorch_model.bin");
}

}  // namespace
}  // namespace visalign::clip
