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
constexpr uint32_t kNoLabel = UINT32_MAX;
constexpr uint32_t kFree = 0, kFresh = 1, kFirstBlock = 2;  // label marks below the blocks' numbers

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
  if (first == last) return std::popcount(bits[first] & head & tail);
  int64_t n = std::popcount(bits[first] & head) + std::popcount(bits[last] & tail);
  for (int i = first + 1; i < last; ++i) n += std::popcount(bits[i]);
  return n;
}

ComponentScan::ComponentScan(int width, double min_area)
    : width_(width), words_(BitRowWords(width)), min_area_(min_area), block_(kFirstBlock - 1) {}

uint32_t ComponentScan::NewLabel() {
  uint32_t label;
  if (free_.empty()) {
    label = static_cast<uint32_t>(parent_.size());
    parent_.push_back(label), sums_.emplace_back(), mark_.push_back(kFresh);
  } else {
    label = free_.back();
    free_.pop_back();
    parent_[label] = label, sums_[label] = {}, mark_[label] = kFresh;
  }
  return label;
}

void ComponentScan::Release(uint32_t label) {
  if (mark_[label] == kFree) return;
  mark_[label] = kFree;
  free_.push_back(label);
}

void ComponentScan::Keep(uint32_t root) {
  const Sums& s = sums_[root];
  if (static_cast<double>(s.area) >= min_area_)
    found_.push_back({s.last, {static_cast<double>(s.area), s.sx2 / 2.0, s.sy2 / 2.0}});
}

void ComponentScan::CloseBlock() {
  ++block_;
  for (Run& run : row_) {
    const uint32_t root = Find(run.label);
    if (root != run.label) Release(run.label);  // merged into another component
    run.label = root;
    mark_[root] = block_;
  }
  for (const Run& run : above_) {
    const uint32_t label = run.label;
    if (mark_[label] == block_ || mark_[label] == kFree) continue;
    if (parent_[label] == label) Keep(label);  // a root no run of this block reaches: complete
    Release(label);
  }
}

uint32_t ComponentScan::Find(uint32_t label) {
  while (parent_[label] != label) label = parent_[label] = parent_[parent_[label]];
  return label;
}

void ComponentScan::Add(int y0, int count, const uint64_t* bits) {
  // The first set / clear bit at or after column x (width_ if none).
  const auto next = [&](int x, uint64_t flip) {
    size_t i = static_cast<size_t>(x) / kWordBits;
    uint64_t word = (bits[i] ^ flip) & (~uint64_t{0} << (x % kWordBits));
    while (word == 0) {
      if (++i == words_) return width_;
      word = bits[i] ^ flip;
    }
    return std::min(width_, static_cast<int>(i * kWordBits) + std::countr_zero(word));
  };
  const int64_t rows = count, sy2 = int64_t{count} * (2 * int64_t{y0} + count);  // Σ 2y + 1 over the rows
  row_.clear();
  size_t a = 0;  // the first run above not left of the current run
  for (int x = 0; x < width_;) {
    const int x0 = next(x, 0);
    if (x0 >= width_) break;
    const int x1 = next(x0, ~uint64_t{0});
    // Every run above sharing a column joins this run's component.
    while (a < above_.size() && above_[a].x1 <= x0) ++a;
    uint32_t root = kNoLabel;
    for (size_t k = a; k < above_.size() && above_[k].x0 < x1; ++k) {
      const uint32_t r = Find(above_[k].label);
      if (root == kNoLabel) {
        root = r;
      } else if (r != root) {
        parent_[r] = root;
        sums_[root].area += sums_[r].area, sums_[root].sx2 += sums_[r].sx2, sums_[root].sy2 += sums_[r].sy2;
      }
    }
    if (root == kNoLabel) root = NewLabel();
    Sums& s = sums_[root];
    const int64_t length = x1 - x0;
    s.area += length * rows;
    s.sx2 += (int64_t{x1} * x1 - int64_t{x0} * x0) * rows;  // Σ 2x + 1 over [x0, x1) = x1² - x0²
    s.sy2 += length * sy2;
    s.last = runs_++;
    row_.push_back({x0, x1, root});
    x = x1;
  }
  CloseBlock();
  std::swap(above_, row_);
}

std::vector<Component> ComponentScan::Finish() {
  row_.clear();
  CloseBlock();  // an empty block after the last: every component is complete
  std::sort(found_.begin(), found_.end(), [](const auto& a, const auto& b) {
    return a.second.area != b.second.area ? a.second.area > b.second.area : a.first < b.first;
  });
  std::vector<Component> out;
  out.reserve(found_.size());
  for (const auto& f : found_) out.push_back(f.second);
  return out;
}

}  // namespace visalign::violin
