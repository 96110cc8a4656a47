// Test-only helpers for the Hues and Cues unit tests: the source tree's data files and scratch files.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "visalign/benchmarks/hues/hues.h"

namespace visalign::hues::testing {

inline std::filesystem::path Data(const std::string& relative) {
  return std::filesystem::path(VISALIGN_TEST_DATA_DIR) / relative;
}

inline Board TestBoard(Chromaticity c = Chromaticity::kDisplay) {
  auto b = Board::Load(Data("hues/board.csv"), c);
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  return std::move(b).value();
}
inline Vocabulary TestVocabulary() {
  auto v = Vocabulary::Load(Data("hues/words.csv"));
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return std::move(v).value();
}
inline MacroMap TestMacro() {
  auto m = MacroMap::Load(Data("hues/macro_regions.csv"));
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).value();
}
inline std::vector<NonsenseWord> TestNonsense() {
  auto n = LoadNonsenseVocabulary(Data("hues/nonsense16.csv"));
  EXPECT_TRUE(n.ok()) << n.status().ToString();
  return std::move(n).value();
}

// A scratch folder removed at the end of the test.
class Scratch {
 public:
  Scratch() {
    path_ = std::filesystem::temp_directory_path() /
            ("visalign_hues_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~Scratch() { std::filesystem::remove_all(path_); }
  std::filesystem::path Write(const std::string& name, const std::string& contents) const {
    const auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << contents;
    return p;
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

}  // namespace visalign::hues::testing
