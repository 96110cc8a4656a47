// The VIOLIN dataset contract: one ManifestItem per prompt, as written to DIR/manifest.jsonl by
// `visalign violin dataset` and read by the evaluator, the generation runner and the reference
// generator server. Field meanings are normative (docs/violin.md):
//   targets  - hex colors in layout order: single [c]; h2 [top, bottom]; v2 [left, right];
//              q4 [TL, TR, BL, BR]. Every GT pixel of a block equals its target exactly.
//   fuzzy    - for variation 4, the stated range [low, high]; the GT is the HSL midpoint.
//   geometry - h2 splits rows at floor(H/2), v2 columns at floor(W/2), q4 both.
//   probe    - absent on VIOLIN items; on probe items (`visalign violin probes`) the family, condition
//              and parameters (probe_spec.h), which then define the geometry and the ground truth.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "visalign/benchmarks/violin/probe_spec.h"
#include "visalign/color.h"
#include "visalign/core/status.h"

namespace visalign::violin {

enum class Layout { kSingle, kH2, kV2, kQ4 };
std::string_view LayoutName(Layout layout);  // "single", "h2", "v2", "q4"
Result<Layout> ParseLayout(std::string_view name);
int BlockCount(Layout layout);  // 1, 2, 2, 4

struct ManifestItem {
  std::string id;                // stable, e.g. "v3-t12-00451"
  int variation = 1;             // 1..6
  std::string language = "en";   // en | zh | fr
  std::string notation = "hex";  // hex | rgb | hsl
  std::string template_id;
  std::string prompt;
  Layout layout = Layout::kSingle;
  std::vector<color::Srgb8> targets;
  std::optional<std::pair<color::Srgb8, color::Srgb8>> fuzzy;
  std::vector<int> levels;                // ISCC-NBS level (1..3) of each target
  std::vector<std::string> target_names;  // ISCC-NBS names of each target
  std::optional<std::string> image;       // path relative to the dataset dir
  std::string split;                      // train | test
  std::string prompt_split;               // train | test (held-out templates)
  std::string hue_split1;                 // train | test
  std::string hue_split2;                 // train | test
  std::optional<ProbeSpec> probe;         // probe items only (written last, omitted when absent)
};

// Reads DIR/manifest.jsonl; every line is validated (errors name file:line and field).
Result<std::vector<ManifestItem>> LoadManifest(const std::filesystem::path& dataset_dir);
// One JSON line (no trailing newline), keys in a fixed order so output is byte-stable.
std::string ManifestLine(const ManifestItem& item);
// Parses and validates one manifest line; `where` (e.g. "manifest.jsonl:12") prefixes errors.
Result<ManifestItem> ParseManifestLine(std::string_view line, const std::string& where);
// SHA-256 of manifest.jsonl: identifies a dataset version in run stores.
Result<std::string> ManifestFingerprint(const std::filesystem::path& dataset_dir);

// Rectangle of block `index` (layout order) in a width×height image.
struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
};
Rect BlockRect(Layout layout, int index, int width, int height);

}  // namespace visalign::violin
