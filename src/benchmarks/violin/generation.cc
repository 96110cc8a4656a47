#include "visalign/benchmarks/violin/generation.h"

namespace visalign::violin {
namespace {

// Not FNV's 14695981039346656037: see ItemSeed in generation.h.
constexpr uint64_t kFnvOffsetBasis = 1469598103934665603ULL;
constexpr uint64_t kFnvPrime = 1099511628211ULL;
constexpr int64_t kSeedMask = 0x7FFFFFFF;

// The item's value of filter key `key` (one of GenerationFilterKeys()).
std::string FieldValue(const ManifestItem& it, const std::string& key) {
  if (key == "variation") return std::to_string(it.variation);
  if (key == "split") return it.split;
  if (key == "language") return it.language;
  if (key == "ids") return it.id;
  if (key == "notation") return it.notation;
  if (key == "layout") return std::string(LayoutName(it.layout));
  if (key == "prompt_split") return it.prompt_split;
  if (key == "hue_split1") return it.hue_split1;
  return it.hue_split2;
}

}  // namespace

const std::vector<std::string>& GenerationFilterKeys() {
  static const std::vector<std::string> kKeys = {"variation", "split",        "language",   "ids",       "notation",
                                                 "layout",    "prompt_split", "hue_split1", "hue_split2"};
  return kKeys;
}

bool MatchesFilters(const ManifestItem& item, const ItemFilters& filters) {
  for (const auto& [key, values] : filters)
    if (!values.count(FieldValue(item, key))) return false;
  return true;
}

int64_t ItemSeed(std::string_view id, int k, int64_t base) {
  uint64_t h = kFnvOffsetBasis;
  for (unsigned char c : id) h = (h ^ c) * kFnvPrime;
  return static_cast<int64_t>((h + static_cast<uint64_t>(k) + static_cast<uint64_t>(base)) & kSeedMask);
}

std::vector<GenerationItem> GenerationItems(const std::vector<ManifestItem>& items, const ItemFilters& filters,
                                            int samples, int64_t seed, int64_t limit) {
  std::vector<GenerationItem> out;
  int64_t selected = 0;
  for (const ManifestItem& it : items) {
    if (!MatchesFilters(it, filters)) continue;
    if (limit > 0 && selected >= limit) break;
    ++selected;
    // Probe items of one group share their seeds, so conditions differ only in the prompt.
    const std::string_view seed_key = it.probe ? std::string_view(it.probe->group) : std::string_view(it.id);
    for (int k = 0; k < samples; ++k) out.push_back({it.id, it.prompt, k, ItemSeed(seed_key, k, seed)});
  }
  return out;
}

}  // namespace visalign::violin
