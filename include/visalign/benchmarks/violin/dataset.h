// The VIOLIN dataset generator: prompts with exactly one right answer (a pure color or a layout of
// pure colors), their ground-truth (GT) images and the split columns, written as
// DIR/manifest.jsonl + DIR/images/<id>.png + DIR/summary.json (format: violin_manifest.h).
// Sampling is stratified by ISCC-NBS level and fully determined by the seed (docs/violin.md):
// the same options give byte-identical files on every platform.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "visalign/benchmarks/violin/manifest.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/imaging/image.h"

namespace visalign::violin {

inline constexpr int kVariationCount = 6;
inline constexpr int kDefaultImageSize = 256;
inline constexpr int kMaxImageSize = 8192;
inline constexpr double kMaxScale = 100.0;

struct DatasetOptions {
  std::filesystem::path out_dir;  // GenerateDataset only
  std::vector<int> variations = {1, 2, 3, 4, 5, 6};
  uint64_t seed = 1;
  double scale = 1.0;                  // items per group = max(1, round(base * scale))
  int image_size = kDefaultImageSize;  // GT images are image_size × image_size
  bool write_images = true;            // false: manifest `image` fields are null
  bool force = false;                  // allow a non-empty out_dir (replaces our files)
  std::filesystem::path templates;     // empty: the shipped data/violin/templates.json
  bool show_progress = true;
};

// Checks ranges (variations 1..6 without repeats, 0 < scale <= kMaxScale, 2 <= image_size <=
// kMaxImageSize); errors name the option and the accepted values.
Status ValidateOptions(const DatasetOptions& options);

// The items the options describe, in manifest order (variation, group, level, draw order), with
// splits filled in and `image` set to "images/<id>.png" when write_images. No file is written.
Result<std::vector<ManifestItem>> BuildItems(const DatasetOptions& options);

// Counts per variation, language, notation, layout, level and each split column, overall and
// per variation (the body of summary.json's "counts").
Json CountItems(const std::vector<ManifestItem>& items);

struct DatasetReport {
  size_t items = 0;
  size_t images = 0;
  uint64_t image_bytes = 0;
  uint64_t manifest_bytes = 0;
  double seconds = 0;  // wall-clock time of GenerateDataset
  Json summary;        // the contents of summary.json
};

// Builds the items and writes manifest.jsonl, summary.json and (unless !write_images) the GT
// PNGs, in parallel over ThreadCount() threads. Refuses a non-empty out_dir unless `force`;
// with `force`, removes the previous manifest, summary and images/<id>.png files first.
Result<DatasetReport> GenerateDataset(const DatasetOptions& options);

// The GT image of an item: each block (BlockRect) filled with its target, so every pixel equals
// the requested 8-bit color exactly. Fuzzy items render their single target (the HSL midpoint of
// the range). Requires width, height >= 1 and item.targets.size() == BlockCount(item.layout)
// (LoadManifest guarantees it); otherwise returns an empty image (width = height = 0).
// With a split dimension of 1 pixel the first block of that split is empty (floor(1/2) = 0).
// Probe items render as their probe states (RenderProbe, probes.h).
imaging::Image RenderGroundTruth(const ManifestItem& item, int width, int height);

}  // namespace visalign::violin
