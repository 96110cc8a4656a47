// Replays inputs through a libFuzzer harness without libFuzzer: `make test` runs every committed
// corpus and crash file through the same LLVMFuzzerTestOneInput the fuzzer runs, built with the
// normal compiler. Arguments are files or folders (read recursively, in name order); an input that
// breaks a check aborts the program, which fails its ctest test. No input at all is a failure too,
// so a moved corpus cannot pass silently.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.h"

namespace {

std::vector<std::filesystem::path> Inputs(const std::filesystem::path& arg) {
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(arg)) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(arg))
      if (entry.is_regular_file()) files.push_back(entry.path());
  } else if (std::filesystem::is_regular_file(arg)) {
    files.push_back(arg);
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::vector<std::filesystem::path> files = Inputs(argv[i]);
    if (files.empty()) {
      std::fprintf(stderr, "error: no inputs (%s): a corpus folder or file\n", argv[i]);
      return 2;
    }
    for (const auto& file : files) {
      std::ifstream in(file, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::fprintf(stderr, "replaying %s (%zu bytes)\n", file.c_str(), bytes.size());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
    }
  }
  std::printf("replayed %zu inputs\n", replayed);
  return replayed > 0 ? 0 : 2;
}
