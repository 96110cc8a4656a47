// What a VIOLIN generation run asks a model for: the dataset items a filter selects and, for each,
// K samples with stable seeds. `visalign violin generate` turns these into requests; a web server
// or a report that needs the same (item, sample, seed) list calls the same function.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/benchmarks/violin/manifest.h"

namespace visalign::violin {

// The fields an item filter may name, in the order the help text lists them: variation, split,
// language, ids, notation, layout, prompt_split, hue_split1, hue_split2.
const std::vector<std::string>& GenerationFilterKeys();

// key -> accepted values. An item matches when, for every key, its value of that field (the
// variation as a decimal number, the layout by LayoutName, "ids" by the item id) is one of the
// key's values; an empty filter matches every item. Keys must be GenerationFilterKeys().
using ItemFilters = std::map<std::string, std::set<std::string>>;
bool MatchesFilters(const ManifestItem& item, const ItemFilters& filters);

// Seed of sample k of the item `id`: h(id) + k + base, modulo 2^31, where h is FNV-1a 64-bit
// (prime 1099511628211, xor then multiply, per byte) started from the offset basis
// 1469598103934665603 — not FNV's 14695981039346656037 (a digit short, since the first release).
// It is kept: every stored run's seeds come from it, and a changed seed refuses to resume.
// Stable across runs and platforms; docs/backends.md shows a check value.
int64_t ItemSeed(std::string_view id, int k, int64_t base);

struct GenerationItem {
  std::string id, prompt;
  int k = 0;
  int64_t seed = 0;
};

// The first `limit` items (0 = all) that match `filters`, in manifest order, each as `samples`
// consecutive GenerationItems (k = 0..samples-1) seeded by ItemSeed(id, k, seed) — for probe items
// ItemSeed(probe group, k, seed), the same for every condition of a group. Empty when no item matches.
std::vector<GenerationItem> GenerationItems(const std::vector<ManifestItem>& items, const ItemFilters& filters,
                                            int samples, int64_t seed, int64_t limit);

}  // namespace visalign::violin
