// VIOLIN inputs from outside: a dataset's manifest.jsonl (selector byte even) and a
// `violin score --batch` line with its target and weights arguments (odd). Every manifest item
// LoadManifest accepts writes back to a line that parses to the same line again.
#include <string>

#include "fuzz/fuzz_support.h"
#include "visalign/benchmarks/violin/evaluate.h"
#include "visalign/benchmarks/violin/manifest.h"

namespace violin = visalign::violin;
using visalign::fuzz::CheckErrorLine;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [selector, text] = visalign::fuzz::Select(data, size);
  if (selector % 2 == 0) {
    const auto manifest = visalign::fuzz::WriteScratchFile("manifest.jsonl", text);
    const auto items = violin::LoadManifest(manifest.parent_path());
    CheckErrorLine(items.status());
    if (!items.ok()) return 0;
    for (const auto& item : *items) {
      const std::string line = violin::ManifestLine(item);
      const auto reparsed = violin::ParseManifestLine(line, "rewritten");
      VISALIGN_FUZZ_CHECK(reparsed.ok(), reparsed.status().ToString() + " for " + line);
      VISALIGN_FUZZ_CHECK(violin::ManifestLine(*reparsed) == line, line);
    }
    return 0;
  }
  const auto args = violin::ParseScoreLine(text);
  CheckErrorLine(args.status());
  if (!args.ok()) return 0;
  CheckErrorLine(violin::ParseTargetSpec(args->target).status());
  CheckErrorLine(violin::ParseWeights(args->weights).status());
  return 0;
}
