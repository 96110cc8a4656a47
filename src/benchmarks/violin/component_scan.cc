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
// Bit k of a bit's offset in its word is set exactly where plane k is.
constexpr uint64_t kBitPlanes[6] = {0xAAAAAAAAAAAAAAAA, 0xCCCCCCCCCCCCCCCC, 0xF0F0F0F0F0F0F0F0,
                                    0xFF00FF00FF00FF00, 0xFFFF0000FFFF0000, 0xFFFFFFFF00000000};

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

// The bits of word i of a packed row in columns [x0, x1) (the word meets them).
uint64_t ColumnMask(int i, int x0, int x1) {
  const int lo = std::max(x0 - i * kWordBits, 0), hi = std::min(x1 - i * kWordBits, kWordBits);
  return (~uint64_t{0} << lo) & (~uint64_t{0} >> (kWordBits - hi));
}

// A component's sums over its runs (or words of bits): pixels, Σ 2x + 1 and Σ 2y + 1 over them, and
// the largest key of its runs (their order: top to bottom, then left to right).
struct RunSums {
  int64_t area = 0, sx2 = 0, sy2 = 0, last = -1;
  // The run [x0, x1) in rows y0 .. y0 + rows - 1.
  void Add(int64_t x0, int64_t x1, int64_t y0, int64_t rows, int64_t key) {
    const int64_t length = x1 - x0;
    area += length * rows;
    sx2 += (x1 * x1 - x0 * x0) * rows;       // Σ 2x + 1 over [x0, x1) = x1² - x0²
    sy2 += length * rows * (2 * y0 + rows);  // Σ 2y + 1 over the rows
    last = std::max(last, key);
  }
  // The set bits of word i of row y (of rows `width` pixels wide): Σ of their offsets in the word
  // bit plane by bit plane; the key, their last pixel's (the last run in raster order holds it).
  void AddWord(int64_t y, int64_t i, uint64_t bits, int64_t width) {
    if (bits == 0) return;
    const int64_t x = i * kWordBits, count = PopCount(bits);
    int64_t offsets = 0;
    for (int plane = 0; plane < 6; ++plane) offsets += int64_t{PopCount(bits & kBitPlanes[plane])} << plane;
    area += count;
    sx2 += 2 * (x * count + offsets) + count;
    sy2 += count * (2 * y + 1);
    last = std::max(last, y * width + x + kWordBits - 1 - std::countl_zero(bits));
  }
  Component Get() const { return {static_cast<double>(area), sx2 / 2.0, sy2 / 2.0}; }
};

// The components of sums of at least min_area pixels, largest first, equal areas by their last run.
std::vector<Component> LargestFirst(const std::vector<RunSums>& sums, double min_area) {
  std::vector<const RunSums*> kept;
  for (const RunSums& s : sums)
    if (static_cast<double>(s.area) >= min_area) kept.push_back(&s);
  std::sort(kept.begin(), kept.end(), [](const RunSums* a, const RunSums* b) {
    return a->area != b->area ? a->area > b->area : a->last < b->last;
  });
  std::vector<Component> out;
  out.reserve(kept.size());
  for (const RunSums* s : kept) out.push_back(s->Get());
  return out;
}

// The bits of f (f ⊆ w) with the bits of w below them in their runs of the word w (towards lower x):
// a bit of w takes the bit above it, then the one two above, four above, ... while w holds every
// bit between (p: the bits whose next 2^step bits w holds). Without a run of 9 bits or more (p
// empty after three steps, on noise nearly always) the longer steps add nothing.
__attribute__((always_inline)) inline uint64_t FillDown(uint64_t f, uint64_t w) {
  uint64_t p = w;
  f |= f >> 1 & p, p &= p >> 1;  // steps written out: GCC's -O2 keeps a loop of six
  f |= f >> 2 & p, p &= p >> 2;
  f |= f >> 4 & p, p &= p >> 4;
  if (p == 0) return f;
  f |= f >> 8 & p, p &= p >> 8;
  f |= f >> 16 & p, p &= p >> 16;
  return f | (f >> 32 & p);
}

// The runs of the word w holding a bit of m (m ⊆ w), within the word: adding m to w carries from
// a run's first bit of m to its end (the bits that change, and m), then FillDown.
__attribute__((always_inline)) inline uint64_t WordRuns(uint64_t w, uint64_t m) {
  return FillDown((((w + m) ^ w) | m) & w, w);
}

// Into `out`, the runs of the packed row `w` (n words) that hold a bit of `seed` (seed ⊆ w).
void FillRuns(const uint64_t* w, const uint64_t* seed, size_t n, uint64_t* out) {
  // Towards higher x: adding the seeds to w carries from a run's first seed to its end and no further
  // (the bit after a run is clear), one carry chain across the words: the bits that change, and the
  // seeds, are those from the first seed on.
  uint64_t carry = 0;  // a seeded run reached the last bit of the word before
#pragma GCC unroll 4
  for (size_t i = 0; i < n; ++i) {
    const uint64_t s = seed[i] | (carry & w[i]), sum = w[i] + s;
    carry = sum < w[i];
    out[i] = ((sum ^ w[i]) | s) & w[i];
  }
  // Towards lower x, words from the last, each taking the first bit of the word after.
  uint64_t next = 0;  // the word after's first bit is filled
#pragma GCC unroll 4
  for (size_t i = n; i-- > 0;) {
    out[i] = FillDown(out[i] | (next << (kWordBits - 1) & w[i]), w[i]);
    next = out[i] & 1;
  }
}

// Adds to `out` (a packed row of n words, out ⊆ w) the runs of w holding a bit of w[i] & near(i)
// (`seed`: n words of scratch). Whether a bit was added (then the whole row is filled again: on
// rows of a few words cheaper than finding the words that gain, whose branches the CPU mispredicts).
template <typename Near>
bool GrowRow(const uint64_t* w, size_t n, Near near, uint64_t* out, uint64_t* seed) {
  uint64_t gains = 0;
#pragma GCC unroll 4
  for (size_t i = 0; i < n; ++i) {
    const uint64_t reached = w[i] & near(i);
    gains |= reached & ~out[i];
    seed[i] = reached | out[i];
  }
  if (gains == 0) return false;
  FillRuns(w, seed, n, out);
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
  // The sweep (numbered across the bands) in which each row of the band last gained.
  std::vector<int64_t> gained_in(rows, -1);
  int64_t sweep = 0;
  bool any = false;
  for (int y0 = 0; y0 + s < height; y0 += s) {
    const uint64_t* band = bits + static_cast<size_t>(y0) * n;
    std::copy_n(band, n, reached.begin());
    std::fill(reached.begin() + static_cast<std::ptrdiff_t>(n), reached.end(), 0);
    sweep += 2;                // the band before's rows count as gained in no sweep of this one
    gained_in[0] = sweep - 1;  // the first row, whole from the start
    // Sweeps down and up the band in turn, each row growing from the one before it in the sweep when
    // that one gained in this sweep or the one before, until one sweep adds nothing.
    bool changed = true;
    for (int pass = 0; changed && pass < max_passes; ++pass, ++sweep) {
      changed = false;
      const bool down = pass % 2 == 0;
      for (int j = 1; j <= s; ++j) {
        const int r = down ? j : s - j, before = down ? r - 1 : r + 1;
        if (r == 0) break;  // the first row is whole
        if (gained_in[before] < sweep - 1) continue;
        const uint64_t* from = &reached[static_cast<size_t>(before) * n];
        if (GrowRow(
                band + static_cast<size_t>(r) * n, n, [from](size_t i) { return from[i]; },
                &reached[static_cast<size_t>(r) * n], scratch.data()))
          gained_in[r] = sweep, changed = true;
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
  int64_t n = 0;
  for (int i = x0 / kWordBits; x0 < x1 && i <= (x1 - 1) / kWordBits; ++i)
    n += PopCount(bits[i] & ColumnMask(i, x0, x1));
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
  std::vector<RunSums> sums;
  sums.reserve(count_);
  Run* run = runs_.get();
  block_begin_.push_back(static_cast<uint32_t>(count_));
  for (size_t b = 0; b + 1 < block_begin_.size(); ++b)
    for (size_t r = block_begin_[b]; r < block_begin_[b + 1]; ++r) {
      const uint32_t p = run[r].parent;
      if (p == r) sums.emplace_back();
      const uint32_t c = p == r ? static_cast<uint32_t>(sums.size() - 1) : run[p].parent;
      run[r].parent = c;
      sums[c].Add(run[r].x0, run[r].x1, block_y0_[b], block_rows_[b], static_cast<int64_t>(r));
    }
  count_ = 0, block_begin_.clear(), block_y0_.clear(), block_rows_.clear();
  return LargestFirst(sums, min_area_);
}

std::vector<Component> SeededComponents(const uint64_t* bits, const uint64_t* seeds, int width, int height,
                                        double min_area) {
  // The pixels not taken yet, each row between clear words and the rows between clear rows (so a
  // word's neighbours are always at the same offsets).
  const size_t n = BitRowWords(width), stride = n + 2;
  std::vector<uint64_t> left(stride * (static_cast<size_t>(height) + 2), 0);
  for (size_t y = 0; y < static_cast<size_t>(height); ++y)
    for (size_t i = 0; i < n; ++i) left[(y + 1) * stride + 1 + i] = bits[y * n + i];
  // A word of `left` (its index) and bits of it: on the stack, bits to take with their runs; in the
  // log, the bits a component took (its sums are needed only once its area is known to count).
  struct Part {
    size_t word;
    uint64_t bits;
  };
  std::vector<Part> stack(64), log(64);
  std::vector<RunSums> sums;
  for (size_t y = 0; y < static_cast<size_t>(height); ++y)
    for (size_t i = 0; i < n; ++i) {
      const size_t first = (y + 1) * stride + i + 1;
      for (uint64_t b = seeds[y * n + i] & left[first]; b != 0; b &= left[first]) {
        // The component of b's lowest bit: each part taken is the runs within its word holding its
        // bits; then the bits of those runs the rows above and below have left, and the runs'
        // continuations into the words before and after (pushed only when they add pixels, without
        // branches).
        int64_t area = 0;
        size_t top = 1, logged = 0;
        stack[0] = {first, b & (~b + 1)};
        while (top > 0) {
          if (stack.size() < top + 4) stack.resize(2 * stack.size());
          if (log.size() == logged) log.resize(2 * log.size());
          const Part part = stack[--top];
          const uint64_t w = left[part.word], runs = WordRuns(w, part.bits & w);
          left[part.word] = w & ~runs;
          area += PopCount(runs);
          log[logged++] = {part.word, runs};
          const uint64_t above = left[part.word - stride], below = left[part.word + stride];
          stack[top] = {part.word - stride, runs}, top += (runs & above) != 0;
          stack[top] = {part.word + stride, runs}, top += (runs & below) != 0;
          stack[top] = {part.word + 1, 1}, top += runs >> (kWordBits - 1) & left[part.word + 1];
          stack[top] = {part.word - 1, uint64_t{1} << (kWordBits - 1)},
          top += runs & left[part.word - 1] >> (kWordBits - 1);
        }
        if (static_cast<double>(area) < min_area) continue;
        RunSums& c = sums.emplace_back();
        for (size_t k = 0; k < logged; ++k)
          c.AddWord(static_cast<int64_t>(log[k].word / stride) - 1, static_cast<int64_t>(log[k].word % stride) - 1,
                    log[k].bits, width);
      }
    }
  return LargestFirst(sums, min_area);
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
  if (runs_ <= static_cast<int64_t>(words_) * height_) {
    ComponentScan scan(width_, min_area_);
    int y = 0;
    for (size_t b = 0; b < counts_.size(); y += counts_[b++]) scan.Add(y, counts_[b], &rows_[b * words_]);
    return scan.Finish();
  }
  const uint64_t* mask = rows_.data();
  std::vector<uint64_t> image;
  if (counts_.size() < static_cast<size_t>(height_)) {  // the mask row by row
    image.resize(words_ * height_);
    size_t row = 0;
    for (size_t b = 0; b < counts_.size(); ++b)
      for (int r = 0; r < counts_[b]; ++r, ++row) std::copy_n(&rows_[b * words_], words_, &image[row * words_]);
    mask = image.data();
  }
  const auto seeds = std::make_unique_for_overwrite<uint64_t[]>(words_ * height_);  // CrossingSeeds clears it
  if (!CrossingSeeds(mask, width_, height_, min_area_, kMaskPasses, seeds.get())) return {};
  return SeededComponents(mask, seeds.get(), width_, height_, min_area_);
}

}  // namespace visalign::violin
