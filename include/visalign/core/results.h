// The results contract every benchmark's output folder follows (docs/architecture.md, "Results
// contract"): summary.json opens with ResultsHeader(benchmark) and carries "inputs" (the
// fingerprints of what the numbers depend on); items.jsonl, summary.csv and summary.md sit beside it.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign {

// Version of the summary.json layout shared by the benchmarks; raised when a key changes meaning
// or disappears (adding keys does not raise it).
inline constexpr int kResultsSchemaVersion = 1;

// The version of this build of visalign ("0.1.0"), as `visalign --version` prints it.
std::string_view VisalignVersion();

// {"benchmark": <name>, "schema_version": kResultsSchemaVersion, "visalign_version": VisalignVersion()}.
Json ResultsHeader(std::string_view benchmark);

// {"path": <absolute path>, "sha256": <lower-case hex SHA-256 of its bytes>}.
Result<Json> FileFingerprint(const std::filesystem::path& path);

// An entry of summary.json's "inputs": FileFingerprint of `source` when it is a file,
// {"path": <source>, "sha256": null} when that file cannot be read, and {"source": <source>} for
// what is not a file (a derived map, a built-in list).
Json InputFingerprint(const std::string& source);

// A condition that makes a summary's numbers meaningless or partial (random CLIP weights, coverage
// below 100 %, refused answers), one sentence, as summary.md opens with it: "**Warning:** <text>"
// and a blank line. `visalign report` shows the same sentence at the top of the benchmark's section.
std::string MarkdownWarning(std::string_view text);

}  // namespace visalign
