// VIOLIN's diagnostic probes as a dataset, their ground truth and their image measures. The paper's
// case studies (§2.4, Figure 4: negation, semantic gravity, aesthetic inertia) and its Level-5 failure
// mode (§2.2: an entity at (120, 120) instead of (100, 100)) become four item families written in the
// VIOLIN manifest format (probe_spec.h), so any backend generates them unchanged and `violin evaluate`
// scores them (docs/violin.md "Probes", docs/metrics.md "Probe metrics"). Deterministic per seed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "visalign/benchmarks/violin/manifest.h"
#include "visalign/benchmarks/violin/probe_languages.h"
#include "visalign/color.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/imaging/image.h"

namespace visalign::violin {

// The inertia splits, percent (paper Fig. 4c asks for 31.5 %).
inline constexpr double kInertiaSplits[] = {10, 20, 25, 31.5, 40, 50, 60, 68.5, 75, 80, 90};

struct ProbeOptions {
  std::filesystem::path out_dir;  // GenerateProbeDataset only
  uint64_t seed = 1;
  double scale = 1.0;                        // colours per family = max(2, round(base * scale))
  int image_size = 256;                      // canvas of pixel-stated items and GT size
  std::vector<std::string> languages{"en"};  // each item is written once per language (ids: -zh, -fr)
  bool force = false;                        // allow a non-empty out_dir
  std::filesystem::path data_dir;            // empty: DataDir()
};
// Ranges: 0 < scale <= 100, 64 <= image_size <= 8192, languages a non-empty set of ProbeLanguageCodes().
Status ValidateProbeOptions(const ProbeOptions& options);

// The probe items in manifest order (negation, gravity, inertia, geometry; within a group its conditions,
// each in every language), ids "p-<group>-<condition>" in English, "p-<group>-<condition>-<language>" else.
Result<std::vector<ManifestItem>> BuildProbeItems(const ProbeOptions& options);

struct ProbeDatasetReport {
  size_t items = 0;
  Json summary;  // the contents of summary.json
};
// Writes DIR/manifest.jsonl, DIR/images/<id>.png (GT) and DIR/summary.json (counts per family and
// condition). Refuses a non-empty out_dir unless `force`.
Result<ProbeDatasetReport> GenerateProbeDataset(const ProbeOptions& options);

// How a rendered probe image departs from the request (the reference server's probe profiles):
// split_bias F moves an inertia split to r + F (50 - r); pull F moves a gravity item's colour by F of
// the way to its context colour in CIELAB; ripple_amplitude A adds concentric ripples of +-A levels
// to negation entity items; shape_offset D moves every geometry shape by (D, D) pixels.
struct ProbeDistortion {
  double split_bias = 0, pull = 0, ripple_amplitude = 0, shape_offset = 0;
};
// The image of a probe item at width x height (geometry in canvas pixels is scaled to the size).
// With no distortion this is the ground truth. Empty image if the item has no probe.
imaging::Image RenderProbe(const ManifestItem& item, int width, int height, const ProbeDistortion& distortion = {});

// Measures an inertia or geometry item's image (ProbeMeasures). kInvalidArgument when a pixel-stated
// item's image is not canvas-sized ("image 300x300 for a pixel-stated probe (canvas 256x256)").
Result<ProbeMeasures> MeasureProbe(const imaging::Image& image, const ManifestItem& item);
// The split percentage: pixels classified to the nearer of `first`/`second` in CIELAB, the boundary
// row (orientation 'h') or column ('v') minimising misclassified pixels, as a percent of the side.
double MeasureSplit(const imaging::Image& image, char orientation, color::Srgb8 first, color::Srgb8 second);
// The component of the error (mean - target) along target -> context, divided by |context - target|^2:
// 0 = unmoved, 1 = at the context colour (CIELAB). NaN when context == target.
double GravityPull(color::Lab mean, color::Lab target, color::Lab context);

}  // namespace visalign::violin
