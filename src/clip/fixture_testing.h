// Paths and readers for the clip-tiny parity fixture (../shared/fixtures/clip-tiny), used by the
// clip module's tests only.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace visalign::clip::testing {

inline std::filesystem::path FixtureDir() {
  return std::filesystem::path(VISALIGN_TEST_SHARED_DIR) / "fixtures" / "clip-tiny";
}

inline nlohmann::json ReadFixtureJson(const std::string& name) {
  std::ifstream in(FixtureDir() / name);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

}  // namespace visalign::clip::testing
