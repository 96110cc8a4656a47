#include "fuzz/fuzz_support.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "testing/dirs.h"

namespace visalign::fuzz {

void Fail(const char* check, const char* file, int line, const std::string& detail) {
  std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", file, line, check);
  if (!detail.empty())
    std::fprintf(stderr, "  %.*s\n", static_cast<int>(std::min<size_t>(detail.size(), 4096)), detail.c_str());
  std::abort();
}

void CheckErrorLine(std::string_view message) {
  VISALIGN_FUZZ_CHECK(message.size() <= kMaxErrorLineBytes, "error of " + std::to_string(message.size()) + " bytes");
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    VISALIGN_FUZZ_CHECK(byte >= 0x20 && byte != 0x7f,
                        "control byte " + std::to_string(byte) + " in: " + std::string(message));
  }
}

void CheckErrorLine(const Status& status) {
  if (!status.ok()) CheckErrorLine(status.ToString());
}

std::filesystem::path WriteScratchFile(const std::string& name, std::string_view bytes) {
  static const visalign::testing::TempDir scratch;
  const std::filesystem::path path = scratch / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  VISALIGN_FUZZ_CHECK(out.good(), "cannot write " + path.string());
  return path;
}

}  // namespace visalign::fuzz
