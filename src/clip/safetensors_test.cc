#include "clip/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "clip/fixture_testing.h"
#include "testing/dirs.h"
#include "visalign/clip.h"

namespace visalign::clip {
namespace {

using ::testing::HasSubstr;

// This program's scratch folder, removed at exit.
const visalign::testing::TempDir& Scratch() {
  static const visalign::testing::TempDir dir;
  return dir;
}

// Writes a safetensors file from a header JSON and raw data bytes.
std::filesystem::path WriteFile(const std::string& name, const std::string& header, const std::string& data) {
  const std::filesystem::path path = Scratch() / (name + ".safetensors");
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = header.size();
  out.write(reinterpret_cast<const char*>(&n), sizeof(n));
  out << header << data;
  return path;
}

std::string Floats(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), std::data(v), s.size());
  return s;
}

Status OpenStatus(const std::filesystem::path& p) { return SafetensorsFile::Open(p).status(); }

TEST(SafetensorsTest, ReadsTensorsAndMetadata) {
  const auto path = WriteFile("ok",
                              R"({"__metadata__":{"format":"pt"},"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                              R"("a":{"dtype":"F16","shape":[1],"data_offsets":[8,10]},)"
                              R"("c":{"dtype":"BF16","shape":[],"data_offsets":[10,12]}})",
                              Floats({1.5f, -2.0f}) + std::string("\x00\x3C", 2) + std::string("\xC0\x3F", 2));
  Result<SafetensorsFile> f = SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->metadata().at("format"), "pt");
  EXPECT_EQ(SafetensorsFile::ToFloat(*f->Find("b"), "t").value(), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(SafetensorsFile::ToFloat(*f->Find("a"), "t").value(), (std::vector<float>{1.0f}));  // half 0x3C00
  EXPECT_EQ(SafetensorsFile::ToFloat(*f->Find("c"), "t").value(), (std::vector<float>{1.5f}));  // bf16 0x3FC0
  EXPECT_EQ(f->Find("c")->ShapeString(), "[]");
  EXPECT_EQ(f->Find("missing"), nullptr);
}

TEST(SafetensorsTest, ReadsTheFixtureModel) {
  Result<SafetensorsFile> f = SafetensorsFile::Open(testing::FixtureDir() / "model.safetensors");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->tensors().size(), 62u);
  int64_t values = 0;
  for (const auto& t : f->tensors()) values += t.NumElements();
  EXPECT_EQ(values, 3425857);
}

// A zero dimension lets the other be any size without data: a matrix row count must still be an int
// (2^32 + 480 rows would otherwise read as 480).
TEST(MatrixFileTest, RefusesDimensionsBeyondInt) {
  const auto path = WriteFile("wide", R"({"board":{"dtype":"F32","shape":[4294967776,0],"data_offsets":[0,0]}})", "");
  const Result<MatrixFile> m = ReadMatrixFile(path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().what(), HasSubstr("\"board\" has shape [4294967776, 0]"));
  EXPECT_EQ(m.status().expected(), "at most 2147483647 rows and dims");
}

// Seen by the fuzzer under UBSan: an empty F32 tensor was copied with memcpy(nullptr, p, 0).
TEST(SafetensorsTest, ZeroElementTensorsConvertToEmptyVectors) {
  const auto path = WriteFile("empty",
                              R"({"e":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]},)"
                              R"("h":{"dtype":"F16","shape":[0],"data_offsets":[0,0]}})",
                              "");
  Result<SafetensorsFile> f = SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  for (const char* name : {"e", "h"}) {
    const Result<std::vector<float>> values = SafetensorsFile::ToFloat(*f->Find(name), "t");
    ASSERT_TRUE(values.ok()) << name;
    EXPECT_TRUE(values->empty()) << name;
  }
}

TEST(SafetensorsTest, TruncatedFileIsCorrupt) {
  std::ifstream in(testing::FixtureDir() / "model.safetensors", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto path = Scratch() / "truncated.safetensors";
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 1000);
  const Status st = OpenStatus(path);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_THAT(st.what(), HasSubstr("lie outside the data section"));
  std::ofstream(path, std::ios::binary) << bytes.substr(0, 100);
  EXPECT_THAT(OpenStatus(path).what(), HasSubstr("exceeds the file"));
  std::ofstream(path, std::ios::binary) << bytes.substr(0, 5);
  EXPECT_THAT(OpenStatus(path).what(), HasSubstr("too short"));
}

TEST(SafetensorsTest, HeaderDataMismatchesAreCorrupt) {
  const std::string data = Floats({1, 2});
  EXPECT_THAT(OpenStatus(WriteFile("size", R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data)).what(),
              HasSubstr("has 8 bytes of data but shape [3] F32 needs 12"));
  EXPECT_THAT(OpenStatus(WriteFile("gap", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", data)).what(),
              HasSubstr("starts at data offset 4"));
  EXPECT_THAT(OpenStatus(WriteFile("extra", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", data)).what(),
              HasSubstr("tensors cover 4 of 8 data bytes"));
  EXPECT_THAT(OpenStatus(WriteFile("overlap",
                                   R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                   R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                   data))
                  .what(),
              HasSubstr("starts at data offset"));
  EXPECT_THAT(OpenStatus(WriteFile("json", R"({"a":{"dtype":"F32",)", data)).what(), HasSubstr("not a JSON object"));
  const Status shape =
      OpenStatus(WriteFile("shape", R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data));
  EXPECT_THAT(shape.what(), HasSubstr("header entry \"a\" has shape [-2]"));
  EXPECT_THAT(shape.expected(), HasSubstr("non-negative integer sizes"));
  const Status dtype =
      OpenStatus(WriteFile("dtype", R"({"a":{"dtype":"F8_E4M3","shape":[8],"data_offsets":[0,8]}})", data));
  EXPECT_EQ(dtype.code(), StatusCode::kUnsupported);
  EXPECT_THAT(dtype.what(), HasSubstr("F8_E4M3"));
}

// Reproducers from fuzzing.
TEST(SafetensorsTest, AHeaderNestedTooDeepIsCorruptNotAStackOverflow) {
  // A dtype nested 100,000 deep: quoting it in the "has dtype" error recursed once per level.
  const std::string header = R"({"a":{"dtype":)" + std::string(100000, '[') + std::string(100000, ']') +
                             R"(,"shape":[1],"data_offsets":[0,4]}})";
  const Status st = OpenStatus(WriteFile("deep", header, Floats({1})));
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_THAT(st.what(), HasSubstr("JSON nested deeper than 64 levels"));
  // Within the limit the value is quoted, cut at 120 bytes.
  const std::string nested = R"({"a":{"dtype":)" + std::string(60, '[') + "1" + std::string(60, ']') +
                             R"(,"shape":[1],"data_offsets":[0,4]}})";
  EXPECT_EQ(OpenStatus(WriteFile("nested", nested, Floats({1}))).what(),
            "header entry \"a\" has dtype " + std::string(60, '[') + "1" + std::string(59, ']') + "...");
}

TEST(SafetensorsTest, MissingFileIsNotFound) {
  EXPECT_EQ(OpenStatus("/nonexistent/model.safetensors").code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace visalign::clip
