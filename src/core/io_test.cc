#include "visalign/core/io.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "testing/dirs.h"

namespace visalign {
namespace {
namespace fs = std::filesystem;

TEST(Csv, ParsesQuotedFieldsAndCrlf) {
  auto t = ParseCsv("a,b,c\r\n1,\"x, \"\"y\"\"\",3\r\n\r\n4,5,6\r\n", "t.csv");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[0][1], "x, \"y\"");
  EXPECT_EQ(t->line_numbers[1], 4);
  EXPECT_EQ(t->Where(1), "t.csv:4");
  EXPECT_EQ(*t->Column("c"), 2u);
}

TEST(Csv, RejectsRaggedRowsWithLine) {
  auto t = ParseCsv("a,b\n1,2\n3\n", "r.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().where(), "r.csv:3");
}

TEST(Csv, RejectsEmptyFileAndMissingColumn) {
  EXPECT_FALSE(ParseCsv("", "e.csv").ok());
  auto t = ParseCsv("a,b\n1,2\n", "m.csv");
  ASSERT_TRUE(t.ok());
  auto c = t->Column("z");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().expected().find("found: a,b"), std::string::npos);
}

TEST(Csv, FieldsAreQuotedOnlyWhenNeededAndReadBackUnchanged) {
  EXPECT_EQ(CsvField("plain text"), "plain text");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
  const std::string tricky = "x, \"y\"\r\nz";
  auto t = ParseCsv("h\n" + CsvField(tricky) + "\n", "t.csv");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->rows.size(), 1u);
  EXPECT_EQ(t->rows[0][0], tricky);
}

TEST(Text, SplitLinesDropsCrAndKeepsBlankLines) {
  using Lines = std::vector<std::string_view>;
  EXPECT_EQ(SplitLines(""), Lines{});
  EXPECT_EQ(SplitLines("a"), Lines{"a"});
  EXPECT_EQ(SplitLines("a\n"), Lines{"a"});
  EXPECT_EQ(SplitLines("a\r\n\r\nb"), (Lines{"a", "", "b"}));
  EXPECT_EQ(SplitLines("a\n\n"), (Lines{"a", ""}));
  EXPECT_EQ(SplitLines("\r"), Lines{""});
}

TEST(Numbers, StrictParsing) {
  EXPECT_DOUBLE_EQ(*ParseDouble("0.25", "x"), 0.25);
  EXPECT_DOUBLE_EQ(*ParseDouble(" -1e3 ", "x"), -1000.0);
  EXPECT_FALSE(ParseDouble("", "x").ok());
  EXPECT_FALSE(ParseDouble("1.5abc", "x").ok());
  EXPECT_FALSE(ParseDouble("nan", "x").ok());
  EXPECT_EQ(*ParseInt("42", "x"), 42);
  EXPECT_FALSE(ParseInt("4.2", "x").ok());
}

TEST(Files, AtomicWriteReplacesWholeFile) {
  const testing::TempDir tmp;
  fs::path dir = tmp / "io_test";
  ASSERT_TRUE(EnsureDirectory(dir).ok());
  fs::path f = dir / "a.txt";
  ASSERT_TRUE(WriteFileAtomic(f, "first").ok());
  ASSERT_TRUE(WriteFileAtomic(f, "second").ok());
  EXPECT_EQ(*ReadFile(f), "second");
  size_t entries = std::distance(fs::directory_iterator(dir), fs::directory_iterator());
  EXPECT_EQ(entries, 1u);  // no temporary left behind
  fs::remove_all(dir);
  EXPECT_EQ(ReadFile(f).status().code(), StatusCode::kNotFound);
}

TEST(Files, ReadFileReturnsEveryByteOfLargeFilesAndPipes) {
  const testing::TempDir tmp;
  fs::path dir = tmp / "io_read";
  ASSERT_TRUE(EnsureDirectory(dir).ok());
  std::string big(200'003, '\0');  // over three 64 KiB chunks, not a multiple of any
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 % 251);
  ASSERT_TRUE(WriteFileAtomic(dir / "big.bin", big).ok());
  EXPECT_EQ(*ReadFile(dir / "big.bin"), big);
  ASSERT_TRUE(WriteFileAtomic(dir / "empty", "").ok());
  EXPECT_EQ(*ReadFile(dir / "empty"), "");
  // A FIFO has no size up front: read through the chunk buffer to the writer's end.
  const fs::path fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << big; });
  const auto from_fifo = ReadFile(fifo);
  writer.join();
  ASSERT_TRUE(from_fifo.ok());
  EXPECT_EQ(*from_fifo, big);
  fs::remove_all(dir);
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(DataDir, FindsShippedData) {
  auto d = DataDir();  // tests run with VISALIGN_DATA set by CTest
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(DataFile("color/iscc_nbs_centroids.csv").ok());
  EXPECT_EQ(DataFile("color/nope.csv").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace visalign
