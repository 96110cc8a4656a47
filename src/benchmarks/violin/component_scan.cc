#include "benchmarks/violin/component_scan.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace visalign::violin {
namespace {

constexpr int kWordBits = 64;
constexpr int kByteBits = 8;
// Eight bytes of 0 or 1 times this: byte i's bit lands on bit 56 + i, no carries (each byte i meets
// the factor's byte 7 - i there, 2^(8 (7 - i) + i)).
constexpr uint64_t kGatherByteBits = 0x0102040810204080;

// Set bits of a word by adding neighbouring bit fields in place (2, 4, 8 bits wide), then the bytes
// by one multiplication: no call, whatever the baseline instruction set (no POPCNT on x86-64).
int PopCount(uint64_t v) {
  constexpr uint64_t kPairs = 0x5555555555555555, kNibbles = 0x3333333333333333, kBytes = 0x0F0F0F0F0F0F0F0F,
                     kByteSum = 0x0101010101010101;
  v -= (v >> 1) & kPairs;
  v = (v & kNibbles) + ((v >> 2) & kNibbles);
  v = (v + (v >> 4)) & kBytes;
  return static_cast<int>((v * kByteSum) >> (kWordBits - kByteBits));
}

}  // namespace

void PackClassBits(const uint8_t* classes, int width, uint64_t* bits) {
  const size_t words = BitRowWords(width), full = static_cast<size_t>(width) / kWordBits;
  uint8_t tail[kWordBits] = {};
  for (size_t i = 0; i < words; ++i) {
    const uint8_t* p = classes + i * kWordBits;
    if (i == full) {  // the last, partial word
      std::memcpy(tail, p, static_cast<size_t>(width) - full * kWordBits);
      p = tail;
    }
    uint64_t word = 0;
    for (int b = 0; b < kWordBits / kByteBits; ++b) {
      uint64_t v;
      std::memcpy(&v, p + b * kByteBits, sizeof v);
      word |= (v * kGatherByteBits) >> (kWordBits - kByteBits) << (b * kByteBits);
    }
    bits[i] = word;
  }
}

int64_t CountBits(const uint64_t* bits, int x0, int x1) {
  if (x0 >= x1) return 0;
  const int first = x0 / kWordBits, last = (x1 - 1) / kWordBits;
  const uint64_t head = ~uint64_t{0} << (x0 % kWordBits), tail = ~uint64_t{0} >> (kWordBits - 1 - (x1 - 1) % kWordBits);
  if (first == last) return PopCount(bits[first] & head & tail);
  int64_t n = PopCount(bits[first] & head) + PopCount(bits[last] & tail);
  for (int i = first + 1; i < last; ++i) n += PopCount(bits[i]);
  return n;
}

ComponentScan::ComponentScan(int width, double min_area)
    : width_(width),
      words_(BitRowWords(width)),
      min_area_(min_area),
      above_bits_(words_),
      x0_(static_cast<size_t>(width) / 2 + 1),  // at most one run per two pixels, rounded up
      x1_(static_cast<size_t>(width) / 2 + 1),
      starts_(words_),
      above_starts_(words_),
      starts_before_(words_),
      above_starts_before_(words_) {}

void ComponentScan::Keep(const Sums& s) {
  found_.push_back({s.last, {static_cast<double>(s.area), s.sx2 / 2.0, s.sy2 / 2.0}});
}

void ComponentScan::Add(int y0, int count, const uint64_t* bits) {
  // This block's runs: starts are set bits after a clear one, ends clear bits after a set one;
  // starts_before_[i] = runs starting left of word i.
  int* x0 = x0_.data();
  int* x1 = x1_.data();
  uint32_t starts = 0, ends = 0;
  uint64_t carry = 0;  // the last bit of the previous word
  for (size_t i = 0; i < words_; ++i) {
    const uint64_t w = bits[i], before = w << 1 | carry;
    const int base = static_cast<int>(i * kWordBits);
    starts_before_[i] = starts;
    starts_[i] = w & ~before;
    for (uint64_t m = starts_[i]; m != 0; m &= m - 1) x0[starts++] = base + std::countr_zero(m);
    for (uint64_t m = ~w & before; m != 0; m &= m - 1) x1[ends++] = base + std::countr_zero(m);
    carry = w >> (kWordBits - 1);
  }
  if (ends < starts) x1[ends++] = width_;  // a run reaching the last column
  const size_t runs = starts, k = above_sums_.size();
  // Edges (above run, run) of the runs sharing a column: one per run of the overlap of the two
  // rows (fewer than the runs of both), at its first column x; each run there is the last to start
  // at or before x.
  edge_above_.resize(runs + above_component_.size()), edge_run_.resize(runs + above_component_.size());
  size_t edges = 0;
  carry = 0;
  for (size_t i = 0; i < words_; ++i) {
    const uint64_t overlap = bits[i] & above_bits_[i];
    for (uint64_t first = overlap & ~(overlap << 1 | carry); first != 0; first &= first - 1) {
      const uint64_t upto = first ^ (first - 1);  // bits at or before x
      edge_run_[edges] = starts_before_[i] + static_cast<uint32_t>(PopCount(starts_[i] & upto)) - 1;
      edge_above_[edges] = above_starts_before_[i] + static_cast<uint32_t>(PopCount(above_starts_[i] & upto)) - 1;
      ++edges;
    }
    carry = overlap >> (kWordBits - 1);
  }
  // Union-find, the lower node the root: the above components joined through this block's runs.
  parent_.resize(k + runs);
  for (size_t v = 0; v < parent_.size(); ++v) parent_[v] = static_cast<uint32_t>(v);
  const auto find = [&](uint32_t v) {
    while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
    return v;
  };
  for (size_t e = 0; e < edges; ++e) {
    const uint32_t a = find(above_component_[edge_above_[e]]), b = find(static_cast<uint32_t>(k + edge_run_[e]));
    parent_[std::max(a, b)] = std::min(a, b);
  }
  for (size_t v = 0; v < parent_.size(); ++v) parent_[v] = parent_[parent_[v]];  // parents resolved first
  // This block's components in the order of their first run, and their sums.
  constexpr uint32_t kNone = UINT32_MAX;
  id_.assign(k + runs, kNone);
  sums_.assign(runs, Sums{});
  component_.resize(runs);
  const int64_t rows = count, sy2 = int64_t{count} * (2 * int64_t{y0} + count);  // Σ 2y + 1 over the rows
  uint32_t next = 0;
  for (size_t i = 0; i < runs; ++i) {
    const uint32_t root = parent_[k + i];
    const bool fresh = id_[root] == kNone;
    const uint32_t id = fresh ? next : id_[root];
    id_[root] = id, next += fresh;
    component_[i] = id;
    Sums& s = sums_[id];
    const int64_t length = x1_[i] - x0_[i];
    s.area += length * rows;
    s.sx2 += (int64_t{x1_[i]} * x1_[i] - int64_t{x0_[i]} * x0_[i]) * rows;  // Σ 2x + 1 over [x0, x1) = x1² - x0²
    s.sy2 += length * sy2;
    s.last = runs_ + i;
  }
  // The above components: complete ones are kept if large enough, continued ones listed (without
  // branches) and their sums joined to this block's components.
  continued_.resize(k);
  size_t going_on = 0;
  for (size_t c = 0; c < k; ++c) {
    const bool ends = id_[parent_[c]] == kNone;
    if (ends & (static_cast<double>(above_sums_[c].area) >= min_area_)) Keep(above_sums_[c]);  // rarely
    continued_[going_on] = static_cast<uint32_t>(c);
    going_on += !ends;
  }
  for (size_t i = 0; i < going_on; ++i) {
    const Sums& t = above_sums_[continued_[i]];
    Sums& s = sums_[id_[parent_[continued_[i]]]];
    s.area += t.area, s.sx2 += t.sx2, s.sy2 += t.sy2;
  }
  runs_ += runs;
  sums_.resize(next);
  std::swap(above_sums_, sums_);
  std::swap(above_component_, component_);
  std::swap(above_starts_, starts_), std::swap(above_starts_before_, starts_before_);
  std::copy_n(bits, words_, above_bits_.begin());
}

std::vector<Component> ComponentScan::Finish() {
  for (const Sums& s : above_sums_)
    if (static_cast<double>(s.area) >= min_area_) Keep(s);
  above_sums_.clear(), above_component_.clear();
  std::fill(above_bits_.begin(), above_bits_.end(), 0);
  std::sort(found_.begin(), found_.end(), [](const auto& a, const auto& b) {
    return a.second.area != b.second.area ? a.second.area > b.second.area : a.first < b.first;
  });
  std::vector<Component> out;
  out.reserve(found_.size());
  for (const auto& f : found_) out.push_back(f.second);
  return out;
}

}  // namespace visalign::violin
