// Deterministic sampling for the VIOLIN dataset: a portable PRNG, the ISCC-NBS color pools of
// each level, the fuzzy-range pair pools and the per-level allocation (docs/violin.md).
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/color.h"

namespace visalign::violin {

inline constexpr int kLevelCount = 3;

// std::mt19937_64 (its output sequence is fixed by the C++ standard) with distributions written
// out here, since std::uniform_int_distribution and std::shuffle differ between standard libraries.
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  // Uniform in [0, n) for n >= 1, by rejection (unbiased).
  uint64_t UniformIndex(uint64_t n);
  // Fisher–Yates, from the last element down.
  template <typename T>
  void Shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[UniformIndex(i)]);
  }

 private:
  std::mt19937_64 engine_;
};

// An independent stream per purpose: SplitMix64(seed XOR FNV-1a-64(label)). Streams keyed by
// label keep each variation's items independent of which other variations are generated.
uint64_t StreamSeed(uint64_t seed, std::string_view label);

// 0, 1, ..., n-1 in a seeded random order.
std::vector<size_t> ShuffledIndices(size_t n, uint64_t stream_seed);

// One color of a level's pool: a level-3 centroid or a level-2 / level-1 representative.
struct PoolColor {
  int level = 0;
  int id = 0;  // level-3 id, or the category's 1-based index within its level
  std::string name;
  color::Srgb8 rgb;
};
std::vector<PoolColor> LevelPool(const color::IsccNbs& iscc, int level);

// A fuzzy range: two related colors of one level, `low` the darker (CIELAB L*, ties: lower id).
struct ColorPair {
  PoolColor low, high;
};
// Largest linear HSL hue difference of a fuzzy pair: the range is a straight segment in HSL with
// linearly interpolated hue (as the evaluator projects onto it), so ends further apart in hue
// would pass through unrelated hues (e.g. red 350° to orange 20° through cyan).
inline constexpr double kMaxFuzzyHueGap = 60.0;
// Colors with CIELAB chroma C*ab below this are neutral (the achromatic rule of
// data/color/NOTICE.md): their HSL hue means little (0 for exact grays), so a neutral end pairs
// only with another neutral end; otherwise the midpoint of gray and olive would be a brown.
inline constexpr double kNeutralChroma = 5.0;
// Pairs of distinct 8-bit colors, both neutral or both chromatic, with |h_low − h_high| <=
// kMaxFuzzyHueGap (linear HSL hues, also for neutral ends, so no tint appears midway), that are
// related: level 3 - two centroids of the same level-2 category;
// level 2 - two representatives with the same level-1 parent; level 1 - any two level-1
// representatives (the 13 top categories are all siblings).
std::vector<ColorPair> FuzzyPairPool(const color::IsccNbs& iscc, int level);
// The GT of a fuzzy range: the HSL midpoint, hue averaged linearly, rounded to 8 bits.
color::Srgb8 HslMidpoint(color::Srgb8 a, color::Srgb8 b);

// Items per level (index 0 = level 1) for `n` items: proportional to the pool sizes 13 : 29 : 267
// by largest remainder (ties to the higher level), with at least one item per level when n >= 3.
std::array<size_t, kLevelCount> AllocateLevels(size_t n, const std::array<size_t, kLevelCount>& pool_sizes);

// Draws cards 0..size-1 in passes; each pass uses every card once, in a new seeded random order.
class Deck {
 public:
  Deck(size_t size, uint64_t stream_seed);
  size_t size() const { return order_.size(); }
  // The next card of the current pass that is not in `exclude` (moved forward within the pass).
  // If none of the pass's remaining cards qualifies, they are skipped and a new pass begins.
  // Requires exclude.size() < size().
  size_t Draw(const std::vector<size_t>& exclude = {});

 private:
  void NewPass();
  Rng rng_;
  std::vector<size_t> order_;
  size_t next_ = 0;
};

}  // namespace visalign::violin
