// Folders for tests: a fresh temp folder removed at the end, and the source tree's shipped data and
// the read-only reference fixtures beside the project. Shared by unit tests (src/<module>/*_test.cc)
// and integration tests (tests/*_test.cc) instead of each hand-rolling its own.
#pragma once

#include <filesystem>
#include <string>

namespace visalign::testing {

// A fresh empty directory under the system temp dir (unique per process and object), removed with
// everything in it when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& rel) const { return path_ / rel; }
  // Writes `contents` to path() / rel (creating its folders) and returns that path.
  std::filesystem::path Write(const std::string& rel, const std::string& contents) const;

 private:
  std::filesystem::path path_;
};

// The source tree's data/ folder (what VISALIGN_DATA points at in tests) and ../shared/.
std::filesystem::path DataDir();
std::filesystem::path SharedDir();

}  // namespace visalign::testing
