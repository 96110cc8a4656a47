// Shared by the libFuzzer harnesses (tests/fuzz/*_fuzzer.cc, docs/fuzzing.md). Each harness defines
// LLVMFuzzerTestOneInput over one parser of untrusted bytes; it is linked either with libFuzzer
// (`make fuzz`, clang + ASan/UBSan) or with replay_main.cc, which feeds it the committed corpus and
// crash files under `make test`. A harness checks what must hold for EVERY input: no crash, hang or
// sanitizer report, and errors that are one printable line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "visalign/core/status.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace visalign::fuzz {

// The longest error line a harness accepts: untrusted values are quoted truncated, so a message is
// its fixed text, a path and a few short quotes.
inline constexpr size_t kMaxErrorLineBytes = 2048;

// Aborts naming the failed check: libFuzzer reports it as a crash, the replay test fails.
[[noreturn]] void Fail(const char* check, const char* file, int line, const std::string& detail = "");
#define VISALIGN_FUZZ_CHECK(cond, ...) \
  ((cond) ? (void)0 : ::visalign::fuzz::Fail(#cond, __FILE__, __LINE__ __VA_OPT__(, ) __VA_ARGS__))

// Checks the error contract on a failed Status: one line (no control bytes), at most
// kMaxErrorLineBytes. An ok Status passes.
void CheckErrorLine(const Status& status);
void CheckErrorLine(std::string_view message);

// Writes `bytes` to <scratch folder>/<name> (a per-process temp folder removed at exit) and returns
// the path: for loaders that take a file.
std::filesystem::path WriteScratchFile(const std::string& name, std::string_view bytes);

// The input as text, and the input split at its first byte (a selector between a harness's
// parsers, so one corpus covers related formats).
inline std::string_view AsText(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }
struct Selected {
  uint8_t selector = 0;
  std::string_view rest;
};
inline Selected Select(const uint8_t* data, size_t size) {
  if (size == 0) return {};
  return {data[0], AsText(data + 1, size - 1)};
}

}  // namespace visalign::fuzz
