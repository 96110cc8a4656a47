// Test-only helpers for the Hues and Cues unit tests: the source tree's data files and scratch files.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "testing/dirs.h"
#include "visalign/benchmarks/hues/hues.h"

namespace visalign::hues::testing {

inline std::filesystem::path Data(const std::string& relative) { return visalign::testing::DataDir() / relative; }

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

// Equal words, cells and similarities (exactly), in order.
inline bool SamePredictions(const std::vector<WordPredictions>& a, const std::vector<WordPredictions>& b) {
  if (a.size() != b.size()) return false;
  for (size_t w = 0; w < a.size(); ++w) {
    if (a[w].word != b[w].word || a[w].top.size() != b[w].top.size()) return false;
    for (size_t k = 0; k < a[w].top.size(); ++k) {
      if (a[w].top[k].cell != b[w].top[k].cell || a[w].top[k].similarity != b[w].top[k].similarity) return false;
    }
  }
  return true;
}

// A scratch folder removed at the end of the test; Write(name, contents) puts a file in it.
using Scratch = visalign::testing::TempDir;

}  // namespace visalign::hues::testing
