#include "dataset_sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace visalign::violin {
namespace {

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr uint64_t kFnvPrime = 0x100000001b3ULL;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

PoolColor FromCategory(const color::IsccCategory& c) { return {c.level, c.index, c.name, c.rgb}; }

// The key that makes two colors of a level "related" for a fuzzy range.
std::string RelationKey(const color::IsccNbs& iscc, const PoolColor& c) {
  if (c.level == 3) return iscc.CentroidById(c.id)->level2;
  if (c.level == 2) return iscc.level2()[static_cast<size_t>(c.id - 1)].parent_level1;
  return {};
}

}  // namespace

uint64_t Rng::UniformIndex(uint64_t n) {
  // 2^64 mod n values at the bottom of the range would make small results more likely.
  const uint64_t reject_below = (0 - n) % n;
  uint64_t x = engine_();
  while (x < reject_below) x = engine_();
  return x % n;
}

uint64_t StreamSeed(uint64_t seed, std::string_view label) {
  uint64_t h = kFnvOffset;
  for (char c : label) {
    h ^= static_cast<uint8_t>(c);
    h *= kFnvPrime;
  }
  return SplitMix64(seed ^ h);
}

std::vector<size_t> ShuffledIndices(size_t n, uint64_t stream_seed) {
  std::vector<size_t> v(n);
  std::iota(v.begin(), v.end(), size_t{0});
  Rng rng(stream_seed);
  rng.Shuffle(v);
  return v;
}

std::vector<PoolColor> LevelPool(const color::IsccNbs& iscc, int level) {
  std::vector<PoolColor> pool;
  if (level == 3) {
    for (const color::IsccCentroid& c : iscc.centroids()) pool.push_back({3, c.id, c.name, c.rgb});
  } else {
    for (const color::IsccCategory& c : level == 2 ? iscc.level2() : iscc.level1()) pool.push_back(FromCategory(c));
  }
  return pool;
}

std::vector<ColorPair> FuzzyPairPool(const color::IsccNbs& iscc, int level) {
  const std::vector<PoolColor> pool = LevelPool(iscc, level);
  std::vector<std::string> keys;
  std::vector<double> hues, lightness;
  std::vector<bool> neutral;
  for (const PoolColor& c : pool) {
    keys.push_back(RelationKey(iscc, c));
    hues.push_back(color::RgbToHsl(color::FromSrgb8(c.rgb)).h);
    const color::Lab lab = color::Srgb8ToLab(c.rgb);
    lightness.push_back(lab.L);
    neutral.push_back(std::hypot(lab.a, lab.b) < kNeutralChroma);
  }
  std::vector<ColorPair> pairs;
  for (size_t i = 0; i < pool.size(); ++i) {
    for (size_t j = i + 1; j < pool.size(); ++j) {
      if (keys[i] != keys[j] || pool[i].rgb == pool[j].rgb || neutral[i] != neutral[j]) continue;
      if (std::abs(hues[i] - hues[j]) > kMaxFuzzyHueGap) continue;
      const bool i_darker = lightness[i] <= lightness[j];  // pool order (ids) breaks ties
      pairs.push_back(i_darker ? ColorPair{pool[i], pool[j]} : ColorPair{pool[j], pool[i]});
    }
  }
  return pairs;
}

color::Srgb8 HslMidpoint(color::Srgb8 a, color::Srgb8 b) {
  const color::Hsl ha = color::RgbToHsl(color::FromSrgb8(a)), hb = color::RgbToHsl(color::FromSrgb8(b));
  const color::Hsl mid{(ha.h + hb.h) / 2, (ha.s + hb.s) / 2, (ha.l + hb.l) / 2};
  return color::ToSrgb8(color::HslToRgb(mid));
}

std::array<size_t, kLevelCount> AllocateLevels(size_t n, const std::array<size_t, kLevelCount>& pool_sizes) {
  const size_t total = std::accumulate(pool_sizes.begin(), pool_sizes.end(), size_t{0});
  std::array<size_t, kLevelCount> counts{};
  std::array<size_t, kLevelCount> remainders{};  // exact integer remainders of n * size / total
  size_t assigned = 0;
  for (int l = 0; l < kLevelCount; ++l) {
    counts[l] = n * pool_sizes[l] / total;
    remainders[l] = n * pool_sizes[l] % total;
    assigned += counts[l];
  }
  while (assigned < n) {
    int best = kLevelCount - 1;
    for (int l = kLevelCount - 1; l >= 0; --l)
      if (remainders[l] > remainders[best]) best = l;
    ++counts[best];
    remainders[best] = 0;
    ++assigned;
  }
  if (n >= static_cast<size_t>(kLevelCount)) {
    for (int l = 0; l < kLevelCount; ++l) {
      if (counts[l] > 0) continue;
      auto largest = std::max_element(counts.begin(), counts.end());
      --*largest;
      ++counts[l];
    }
  }
  return counts;
}

Deck::Deck(size_t size, uint64_t stream_seed) : rng_(stream_seed), order_(size) {
  std::iota(order_.begin(), order_.end(), size_t{0});
  NewPass();
}

void Deck::NewPass() {
  rng_.Shuffle(order_);
  next_ = 0;
}

size_t Deck::Draw(const std::vector<size_t>& exclude) {
  auto allowed = [&](size_t card) { return std::find(exclude.begin(), exclude.end(), card) == exclude.end(); };
  for (;;) {
    for (size_t i = next_; i < order_.size(); ++i) {
      if (!allowed(order_[i])) continue;
      std::swap(order_[next_], order_[i]);
      return order_[next_++];
    }
    NewPass();
  }
}

}  // namespace visalign::violin
