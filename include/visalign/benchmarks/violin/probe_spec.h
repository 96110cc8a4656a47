// VIOLIN's diagnostic probes (paper §2.2 Level 5, §2.4, Figure 4) as manifest items: a probe item is an
// ordinary ManifestItem (so generation runs it unchanged) plus a `probe` object naming its family, its
// condition, the pairing group it is compared within and the parameters a metric needs (docs/violin.md,
// "Probes"). Families:
//   negation  conditions base | negated | entity ("entity": the thing named in "no <entity>")
//   gravity   conditions none | consistent | conflicting | neutral ("context": the words added,
//             "context_lab": the object's reference CIELAB for consistent and conflicting)
//   inertia   conditions percent | pixels; "orientation" h (targets [top, bottom]) or v ([left, right]),
//             "split": the first block's share in percent (0, 100); pixels items also "canvas"
//   geometry  conditions pixels | fractions | pair; "canvas" [W, H], "shapes" [{kind square|circle,
//             "cx", "cy" (centre), "size" (side or diameter), in canvas pixels}], pair items "distance";
//             targets [background], "color" the shapes' colour
// Items of one group share their colour(s) and generation seed across conditions.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/color.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/stats/resampling.h"

namespace visalign::violin {

enum class ProbeFamily { kNegation, kGravity, kInertia, kGeometry };
std::string_view ProbeFamilyName(ProbeFamily family);  // "negation", "gravity", "inertia", "geometry"
Result<ProbeFamily> ParseProbeFamily(std::string_view name);
// The conditions of a family, the reference condition (negation base, gravity none) first.
const std::vector<std::string>& ProbeConditions(ProbeFamily family);

enum class ShapeKind { kSquare, kCircle };
struct ProbeShape {
  ShapeKind kind = ShapeKind::kSquare;
  double cx = 0, cy = 0;  // centre, canvas pixels
  double size = 0;        // side (square) or diameter (circle), canvas pixels
};

// Every member has an initialiser, so callers name only what they set ({.family = ..., .group = "g"}).
struct ProbeSpec {
  ProbeFamily family = ProbeFamily::kNegation;
  std::string condition{};
  std::string group{};                      // pairing unit: items compared across conditions
  std::string entity{};                     // negation/entity
  std::string context{};                    // gravity: object name or neutral words
  std::optional<color::Lab> context_lab{};  // gravity consistent/conflicting
  char orientation = 'h';                   // inertia: 'h' or 'v'
  double split = 50;                        // inertia: percent
  int canvas_w = 0, canvas_h = 0;           // inertia pixels, geometry
  std::vector<ProbeShape> shapes{};         // geometry
  color::Srgb8 shape_color{};               // geometry
  std::optional<double> distance{};         // geometry pair: centre distance, pixels

  // True when an image must have exactly the canvas size (pixel-stated inertia and geometry items).
  bool PixelBased() const;
};

// The "probe" member of a manifest line; keys in a fixed order (byte-stable manifests).
Json ProbeSpecJson(const ProbeSpec& spec);
// Validates every field: errors are kCorrupt naming `where` plus the field ("... field probe.split").
Result<ProbeSpec> ParseProbeSpec(const Json& j, const std::string& where);

// What the probe metrics measure on one image (docs/metrics.md, "Probe metrics"); NaN = not measured.
struct ProbeMeasures {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double measured_split = kNaN;       // inertia: percent of the first block
  int shape_count = -1;               // geometry: detected shapes (-1: not geometry)
  double position_error_px = kNaN;    // geometry: mean centre distance, pixels
  double position_error_frac = kNaN;  // ... as sqrt((dx/W)^2 + (dy/H)^2)
  double size_error = kNaN;           // geometry: mean (detected - requested) / requested size
  double iou = kNaN;                  // geometry: shape mask vs requested mask
  double distance_error_px = kNaN;    // geometry pair: |detected - requested| centre distance
};
Json ProbeMeasuresJson(const ProbeMeasures& m);

// One number of the probe summary (docs/metrics.md, "Probe metrics"): a measure of one model on one
// prompt language, family and condition ("all" for pooled inertia fits), with its percentile bootstrap interval over
// the family's units (negation/gravity: colour groups; inertia, geometry: items). `reference` is set
// for paired differences (the measure minus its value in the reference condition, same units) and
// then `p_value` is the paired bootstrap's two-sided p.
struct ProbeEstimate {
  std::string model, family, condition, measure, reference;
  double value = ProbeMeasures::kNaN;
  stats::Interval ci{ProbeMeasures::kNaN, ProbeMeasures::kNaN};
  double p_value = ProbeMeasures::kNaN;
  size_t n = 0;                 // units the value is over
  std::string language = "en";  // the prompts' language: each language is summarised apart
};

}  // namespace visalign::violin
