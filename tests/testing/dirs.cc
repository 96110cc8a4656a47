#include "testing/dirs.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <random>

namespace visalign::testing {
namespace fs = std::filesystem;

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  path_ = fs::temp_directory_path() / ("visalign-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) +
                                       "-" + std::to_string(rd()));
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

fs::path TempDir::Write(const std::string& rel, const std::string& contents) const {
  const fs::path p = path_ / rel;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << contents;
  return p;
}

fs::path DataDir() { return VISALIGN_TEST_DATA_DIR; }
fs::path SharedDir() { return VISALIGN_TEST_SHARED_DIR; }

}  // namespace visalign::testing
