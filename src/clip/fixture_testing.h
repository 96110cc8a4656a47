// Paths and readers for the parity fixtures (../shared/fixtures/clip-tiny, siglip-tiny, clip-rn-tiny,
// clip-convnext-tiny), used by the clip module's tests only.
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "clip/safetensors.h"
#include "visalign/clip.h"
#include "visalign/core/json.h"

namespace visalign::clip::testing {

inline std::filesystem::path FixtureDir(const std::string& fixture = "clip-tiny") {
  return std::filesystem::path(VISALIGN_TEST_SHARED_DIR) / "fixtures" / fixture;
}

inline Json ReadFixtureJson(const std::string& name, const std::string& fixture = "clip-tiny") {
  std::ifstream in(FixtureDir(fixture) / name);
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str());
}

// The debug file's `inputs.pixel_values` [n, 3, S, S] as one CHW row per image.
inline Matrix DebugPixels(const SafetensorsFile& debug) {
  const TensorInfo* t = debug.Find("inputs.pixel_values");
  const std::vector<float> v = SafetensorsFile::ToFloat(*t, "debug").value();
  Matrix m(static_cast<int>(t->shape[0]), static_cast<int>(v.size() / t->shape[0]));
  m.data = v;
  return m;
}

// The debug file's `inputs.token_ids` [n, L] (I64) as padded id rows.
inline std::vector<std::vector<int32_t>> DebugTokenIds(const SafetensorsFile& debug) {
  const TensorInfo* t = debug.Find("inputs.token_ids");
  const std::vector<int64_t> v = SafetensorsFile::ToInt64(*t, "debug").value();
  std::vector<std::vector<int32_t>> ids(static_cast<size_t>(t->shape[0]));
  for (size_t i = 0; i < ids.size(); ++i) {
    for (int64_t k = 0; k < t->shape[1]; ++k) ids[i].push_back(static_cast<int32_t>(v[i * t->shape[1] + k]));
  }
  return ids;
}

inline float MaxAbsDiff(const float* a, const std::vector<float>& b) {
  float m = 0.0f;
  for (size_t i = 0; i < b.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

}  // namespace visalign::clip::testing
