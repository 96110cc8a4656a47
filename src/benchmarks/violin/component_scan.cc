#include "benchmarks/violin/component_scan.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <vector>

#include <emmintrin.h>  // SSE2, in every x86-64 build

namespace visalign::violin {
namespace {

constexpr int kWordBits = 64;
constexpr int kByteBits = 8;
constexpr int64_t kRunSample = 4;  // MaskComponents counts the runs of one block in this many

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

// The run start bits of a word of a packed row: set bits after a clear one (`last`: the last bit of
// the word before).
uint64_t RunStarts(uint64_t w, uint64_t last) { return w & ~(w << 1 | last); }

// Runs of a packed row.
int64_t CountRuns(const uint64_t* bits, size_t words) {
  int64_t runs = 0;
  uint64_t carry = 0;
  for (size_t i = 0; i < words; ++i) {
    runs += PopCount(RunStarts(bits[i], carry));
    carry = bits[i] >> (kWordBits - 1);
  }
  return runs;
}

// Into `out`, the runs of the packed row `w` (n words) that hold a bit of `seed` (seed ⊆ w).
void FillRuns(const uint64_t* w, const uint64_t* seed, size_t n, uint64_t* out) {
  // Towards higher x: adding the seeds to w carries from a run's first seed to its end and no further
  // (the bit after a run is clear), one carry chain across the words: the bits that change, and the
  // seeds, are those from the first seed on.
  uint64_t carry = 0;  // a seeded run reached the last bit of the word before
  for (size_t i = 0; i < n; ++i) {
    const uint64_t s = seed[i] | (carry & w[i]), sum = w[i] + s;
    carry = sum < w[i];
    out[i] = ((sum ^ w[i]) | s) & w[i];
  }
  // Towards lower x: a bit of w takes the bit above it, then the one two above, four above, ...
  // while w holds every bit between (p: the bits whose next 2^step bits w holds), words from the
  // last, each taking the first bit of the word after.
  uint64_t next = 0;  // the word after's first bit is filled
  for (size_t i = n; i-- > 0;) {
    uint64_t f = out[i] | (next << (kWordBits - 1) & w[i]), p = w[i];
    f |= f >> 1 & p, p &= p >> 1;  // steps written out: GCC's -O2 keeps a loop of six
    f |= f >> 2 & p, p &= p >> 2;
    f |= f >> 4 & p, p &= p >> 4;
    f |= f >> 8 & p, p &= p >> 8;
    f |= f >> 16 & p, p &= p >> 16;
    f |= f >> 32 & p;
    out[i] = f;
    next = f & 1;
  }
}

// Adds to `out` (a packed row of n words, out ⊆ w) the runs of w holding a bit of w[i] & near(i): the
// words from the first to the last that gain a bit, widened to whole runs, filled again (`seed`: n
// words of scratch). Whether a run was added.
template <typename Near>
bool GrowRow(const uint64_t* w, size_t n, Near near, uint64_t* out, uint64_t* seed) {
  size_t lo = n, hi = 0;
  for (size_t i = 0; i < n; ++i) {
    seed[i] = w[i] & near(i);
    const bool gains = (seed[i] & ~out[i]) != 0;
    lo = gains && lo == n ? i : lo;
    hi = gains ? i : hi;
  }
  if (lo == n) return false;
  while (lo > 0 && (w[lo] & 1) && w[lo - 1] >> (kWordBits - 1)) seed[--lo] = 0;
  while (hi + 1 < n && w[hi] >> (kWordBits - 1) && (w[hi + 1] & 1)) seed[++hi] = 0;
  for (size_t i = lo; i <= hi; ++i) seed[i] |= out[i];
  FillRuns(w + lo, seed + lo, hi - lo + 1, out + lo);
  return true;
}

// A 64 x 64 bit block transposed in place (bit j of a[i] to bit i of a[j]): the off-diagonal halves
// swapped, then the quarters of each half, down to single bits (each level a loop with a constant
// shift and mask: half the instructions of one loop over the levels, by callgrind).
void Transpose64(uint64_t a[kWordBits]) {
  const auto level = [a](int j, uint64_t m) __attribute__((always_inline)) {
    for (int base = 0; base < kWordBits; base += 2 * j)
      for (int k = base; k < base + j; ++k) {
        const uint64_t t = ((a[k] >> j) ^ a[k + j]) & m;
        a[k] ^= t << j;
        a[k + j] ^= t;
      }
  };
  level(32, 0x00000000FFFFFFFF), level(16, 0x0000FFFF0000FFFF), level(8, 0x00FF00FF00FF00FF);
  level(4, 0x0F0F0F0F0F0F0F0F), level(2, 0x3333333333333333), level(1, 0x5555555555555555);
}

// The packed image (height rows of BitRowWords(width) words) transposed: width rows of
// BitRowWords(height) words, row x holding column x.
std::unique_ptr<uint64_t[]> TransposeBits(const uint64_t* bits, int width, int height) {
  const size_t n = BitRowWords(width), m = BitRowWords(height);
  auto out = std::make_unique_for_overwrite<uint64_t[]>(static_cast<size_t>(width) * m);  // every word written
  uint64_t block[kWordBits];
  for (size_t bi = 0; bi < m; ++bi)
    for (size_t bj = 0; bj < n; ++bj) {
      for (size_t i = 0; i < kWordBits; ++i) {
        const size_t y = bi * kWordBits + i;
        block[i] = y < static_cast<size_t>(height) ? bits[y * n + bj] : 0;
      }
      Transpose64(block);
      for (size_t j = 0; j < kWordBits && bj * kWordBits + j < static_cast<size_t>(width); ++j)
        out[(bj * kWordBits + j) * m + bi] = block[j];
    }
  return out;
}

// CrossingSeeds for the bands of rows of a packed image of `height` rows of n words: ORs each band's
// seeds into `seeds` (same layout). Whether any was set.
bool AddBandCrossings(const uint64_t* bits, size_t n, int height, int s, int max_passes, uint64_t* seeds) {
  const size_t rows = static_cast<size_t>(s) + 1;
  std::vector<uint64_t> reached(rows * n), scratch(n);
  // gained[r], gained_before[r]: whether row r gained in this sweep, in the one before.
  std::vector<uint8_t> gained(rows), gained_before(rows);
  bool any = false;
  for (int y0 = 0; y0 + s < height; y0 += s) {
    const uint64_t* band = bits + static_cast<size_t>(y0) * n;
    std::copy_n(band, n, reached.begin());
    std::fill(reached.begin() + static_cast<std::ptrdiff_t>(n), reached.end(), 0);
    std::fill(gained.begin(), gained.end(), 0);
    gained[0] = 1;  // the first row, whole from the start
    // Sweeps down and up the band in turn, each row growing from the one before it in the sweep when
    // that one gained since, until one sweep adds nothing.
    bool changed = true;
    for (int pass = 0; changed && pass < max_passes; ++pass) {
      changed = false;
      std::swap(gained, gained_before);
      std::fill(gained.begin(), gained.end(), 0);
      const bool down = pass % 2 == 0;
      for (int j = 1; j <= s; ++j) {
        const int r = down ? j : s - j, before = down ? r - 1 : r + 1;
        if (r == 0) break;  // the first row is whole
        if (!gained[before] && !gained_before[before]) continue;
        const uint64_t* from = &reached[static_cast<size_t>(before) * n];
        gained[r] = GrowRow(
            band + static_cast<size_t>(r) * n, n, [from](size_t i) { return from[i]; },
            &reached[static_cast<size_t>(r) * n], scratch.data());
        changed |= gained[r] != 0;
      }
    }
    // Settled: the last row's reached bits; else every crossing path starts in the first row.
    const uint64_t* add = changed ? band : &reached[static_cast<size_t>(s) * n];
    uint64_t* into = seeds + static_cast<size_t>(changed ? y0 : y0 + s) * n;
    for (size_t i = 0; i < n; ++i) into[i] |= add[i], any |= add[i] != 0;
  }
  return any;
}

}  // namespace

int ComponentExtent(double min_area) {
  int side = 0;  // the largest with side² < min_area
  while (static_cast<double>(side + 1) * (side + 1) < min_area) ++side;
  return side + 1;
}

bool CrossingSeeds(const uint64_t* bits, int width, int height, double min_area, int max_passes, uint64_t* seeds) {
  const size_t n = BitRowWords(width);
  std::fill_n(seeds, n * static_cast<size_t>(height), 0);
  const int s = ComponentExtent(min_area) / 2;
  if (s == 0) {  // every component counts: every pixel is a seed
    std::copy_n(bits, n * static_cast<size_t>(height), seeds);
    return true;
  }
  bool any = AddBandCrossings(bits, n, height, s, max_passes, seeds);
  // Columns: the bands of rows of the transposed image, their seeds set back at (x, y).
  const std::unique_ptr<uint64_t[]> columns = TransposeBits(bits, width, height);
  const size_t m = BitRowWords(height);
  std::vector<uint64_t> column_seeds(static_cast<size_t>(width) * m, 0);
  if (!AddBandCrossings(columns.get(), m, width, s, max_passes, column_seeds.data())) return any;
  for (size_t x = 0; x < static_cast<size_t>(width); ++x)
    for (size_t i = 0; i < m; ++i)
      for (uint64_t b = column_seeds[x * m + i]; b != 0; b &= b - 1) {
        const size_t y = i * kWordBits + static_cast<size_t>(std::countr_zero(b));
        seeds[y * n + x / kWordBits] |= uint64_t{1} << (x % kWordBits);
      }
  return true;
}

bool KeepSeededComponents(const uint64_t* bits, const uint64_t* seeds, int width, int height, int max_passes,
                          uint64_t* kept) {
  const size_t n = BitRowWords(width);
  std::vector<uint64_t> scratch(n);
  // Pass 1, top-down: the runs holding a seed or below a kept bit. changed[y] (per pass: this one, the
  // one before): whether row y gained runs.
  std::vector<uint8_t> changed(height, 1), changed_before(height, 1);
  for (int y = 0; y < height; ++y) {
    uint64_t* out = kept + static_cast<size_t>(y) * n;
    std::fill_n(out, n, 0);
    const uint64_t* seed = seeds + static_cast<size_t>(y) * n;
    const uint64_t* above = y > 0 ? out - n : nullptr;
    GrowRow(
        bits + static_cast<size_t>(y) * n, n, [seed, above](size_t i) { return seed[i] | (above ? above[i] : 0); }, out,
        scratch.data());
  }
  // Then bottom-up and top-down in turn: the runs next to a kept bit of the row before in the pass,
  // for the rows whose row before gained runs in the pass before or in this one.
  for (int pass = 2; pass <= max_passes; ++pass) {
    const bool up = pass % 2 == 0;
    std::swap(changed, changed_before);
    changed[up ? height - 1 : 0] = 0;  // the first row in the pass gains nothing
    bool any = false;
    for (int j = 1; j < height; ++j) {
      const int y = up ? height - 1 - j : j, y_before = up ? y + 1 : y - 1;
      const uint64_t* before = kept + static_cast<size_t>(y_before) * n;
      const bool gained = (changed_before[y_before] || changed[y_before]) &&
                          GrowRow(
                              bits + static_cast<size_t>(y) * n, n, [before](size_t i) { return before[i]; },
                              kept + static_cast<size_t>(y) * n, scratch.data());
      changed[y] = gained;
      any |= gained;
    }
    if (!any) return true;
  }
  return false;
}

void PackClassBits(const uint8_t* classes, int width, uint64_t* bits) {
  // 16 classes at a time: bit 0 of each byte moved to its top bit, whose 16 SSE2 gathers in one step.
  constexpr int kStep = 16;
  const size_t words = BitRowWords(width), full = static_cast<size_t>(width) / kWordBits;
  alignas(kStep) uint8_t tail[kWordBits] = {};
  for (size_t i = 0; i < words; ++i) {
    const uint8_t* p = classes + i * kWordBits;
    if (i == full) {  // the last, partial word
      std::memcpy(tail, p, static_cast<size_t>(width) - full * kWordBits);
      p = tail;
    }
    uint64_t word = 0;
    for (int b = 0; b < kWordBits / kStep; ++b) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + b * kStep));
      word |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(_mm_slli_epi16(v, kByteBits - 1))))
              << (b * kStep);
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
    : width_(width), words_(BitRowWords(width)), min_area_(min_area) {}

void ComponentScan::Add(int y0, int count, const uint64_t* bits) {
  const size_t begin = count_, most = static_cast<size_t>(width_) / 2 + 1;  // one run per two pixels
  if (capacity_ < begin + most) {
    capacity_ = std::max(2 * capacity_, begin + most);
    auto grown = std::make_unique_for_overwrite<Run[]>(capacity_);
    std::copy_n(runs_.get(), begin, grown.get());
    runs_ = std::move(grown);
  }
  // This block's runs: starts are set bits after a clear one, ends clear bits after a set one.
  Run* run = runs_.get();
  size_t starts = begin, ends = begin;
  uint64_t carry = 0;  // the last bit of the previous word
  for (size_t i = 0; i < words_; ++i) {
    const uint64_t w = bits[i];
    const int base = static_cast<int>(i * kWordBits);
    for (uint64_t m = RunStarts(w, carry); m != 0; m &= m - 1, ++starts)
      run[starts].x0 = base + std::countr_zero(m), run[starts].parent = static_cast<uint32_t>(starts);
    for (uint64_t m = ~w & (w << 1 | carry); m != 0; m &= m - 1) run[ends++].x1 = base + std::countr_zero(m);
    carry = w >> (kWordBits - 1);
  }
  if (ends < starts) run[ends++].x1 = width_;  // a run reaching the last column
  const size_t end = starts;
  count_ = end;
  // Each run is joined to the runs of the block above sharing a column with it, walking both blocks'
  // runs in step (the one ending first goes on).
  const size_t above_begin = block_begin_.empty() ? begin : block_begin_.back();
  block_begin_.push_back(static_cast<uint32_t>(begin)), block_y0_.push_back(y0), block_rows_.push_back(count);
  if (above_begin == begin || begin == end) return;
  const auto find = [run](uint32_t v) {
    while (run[v].parent != v) v = run[v].parent = run[run[v].parent].parent;
    return v;
  };
  size_t i = above_begin, j = begin;
  int a0 = run[i].x0, a1 = run[i].x1, b0 = run[j].x0, b1 = run[j].x1;
  for (;;) {
    if (b0 < a1 && a0 < b1) {
      const uint32_t u = find(static_cast<uint32_t>(i)), v = find(static_cast<uint32_t>(j));
      run[std::max(u, v)].parent = std::min(u, v);
    }
    if (a1 <= b1) {
      if (++i == begin) break;
      a0 = run[i].x0, a1 = run[i].x1;
    } else {
      if (++j == end) break;
      b0 = run[j].x0, b1 = run[j].x1;
    }
  }
}

std::vector<Component> ComponentScan::Finish() {
  // Runs in order: a root (its component's first run) opens a component, any other run takes the
  // component of its parent, an earlier run.
  struct Sums {
    int64_t area = 0, sx2 = 0, sy2 = 0;  // pixels, and sums of 2x + 1 and 2y + 1 over them
    size_t last = 0;                     // the component's last run
  };
  std::vector<Sums> sums;
  sums.reserve(count_);
  Run* run = runs_.get();
  block_begin_.push_back(static_cast<uint32_t>(count_));
  for (size_t b = 0; b + 1 < block_begin_.size(); ++b) {
    const int64_t rows = block_rows_[b], sy2 = rows * (2 * int64_t{block_y0_[b]} + rows);  // Σ 2y + 1
    for (size_t r = block_begin_[b]; r < block_begin_[b + 1]; ++r) {
      const uint32_t p = run[r].parent;
      if (p == r) sums.emplace_back();
      const uint32_t c = p == r ? static_cast<uint32_t>(sums.size() - 1) : run[p].parent;
      run[r].parent = c;
      Sums& s = sums[c];
      const int64_t x0 = run[r].x0, x1 = run[r].x1, length = x1 - x0;
      s.area += length * rows;
      s.sx2 += (x1 * x1 - x0 * x0) * rows;  // Σ 2x + 1 over [x0, x1) = x1² - x0²
      s.sy2 += length * sy2;
      s.last = r;
    }
  }
  std::vector<std::pair<size_t, Component>> found;  // (last run, component) of those kept
  for (const Sums& s : sums)
    if (static_cast<double>(s.area) >= min_area_)
      found.push_back({s.last, {static_cast<double>(s.area), s.sx2 / 2.0, s.sy2 / 2.0}});
  count_ = 0, block_begin_.clear(), block_y0_.clear(), block_rows_.clear();
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.second.area != b.second.area ? a.second.area > b.second.area : a.first < b.first;
  });
  std::vector<Component> out;
  out.reserve(found.size());
  for (const auto& f : found) out.push_back(f.second);
  return out;
}

MaskComponents::MaskComponents(int width, int height, double min_area)
    : width_(width), height_(height), words_(BitRowWords(width)), min_area_(min_area) {
  rows_.reserve(words_ * static_cast<size_t>(height));  // room for every row, touched only as filled
}

void MaskComponents::Add(int count, const uint64_t* bits) {
  rows_.insert(rows_.end(), bits, bits + words_);
  counts_.push_back(count);
  // The runs of every kRunSample-th block, weighted (the choice of path only, not its answer).
  if (static_cast<int64_t>(counts_.size()) % kRunSample == 1) runs_ += CountRuns(bits, words_) * count * kRunSample;
}

std::vector<Component> MaskComponents::Finish() {
  ComponentScan scan(width_, min_area_);
  const auto scan_mask = [&](const std::vector<uint64_t>& mask) {
    int y = 0;
    for (size_t b = 0; b < counts_.size(); y += counts_[b++]) scan.Add(y, counts_[b], &mask[b * words_]);
    return scan.Finish();
  };
  if (runs_ <= static_cast<int64_t>(words_) * height_) return scan_mask(rows_);
  if (counts_.size() < static_cast<size_t>(height_)) {  // the mask row by row
    std::vector<uint64_t> image(words_ * height_);
    size_t row = 0;
    for (size_t b = 0; b < counts_.size(); ++b)
      for (int r = 0; r < counts_[b]; ++r, ++row) std::copy_n(&rows_[b * words_], words_, &image[row * words_]);
    rows_ = std::move(image);
    counts_.assign(height_, 1);
  }
  const auto seeds = std::make_unique_for_overwrite<uint64_t[]>(rows_.size());  // CrossingSeeds clears it
  std::vector<uint64_t> kept(rows_.size());
  if (!CrossingSeeds(rows_.data(), width_, height_, min_area_, kMaskPasses, seeds.get())) return {};
  if (!KeepSeededComponents(rows_.data(), seeds.get(), width_, height_, kMaskPasses, kept.data()))
    return scan_mask(rows_);
  return scan_mask(kept);
}

}  // namespace visalign::violin
