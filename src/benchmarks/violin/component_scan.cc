#include "benchmarks/violin/component_scan.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

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

}  // namespace

int ComponentGridStep(double min_area) {
  int side = 0;  // the largest with side² < min_area
  while (static_cast<double>(side + 1) * (side + 1) < min_area) ++side;
  return side + 1;
}

bool KeepGridComponents(const uint64_t* bits, int width, int height, double min_area, int offset, int max_passes,
                        uint64_t* kept) {
  const size_t n = BitRowWords(width);
  const int k = ComponentGridStep(min_area);
  std::vector<uint64_t> columns(n), seed(n);
  for (int x = offset % k; x < width; x += k) columns[x / kWordBits] |= uint64_t{1} << (x % kWordBits);
  // Adds to row y's kept runs those holding a bit of seed[i] = w[i] & near(i) (the words from the
  // first to the last that gain a bit, widened to whole runs, filled again). Whether a run was added.
  const auto add_runs = [&](int y, auto near) {
    const uint64_t* w = bits + y * n;
    uint64_t* out = kept + y * n;
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
    FillRuns(w + lo, seed.data() + lo, hi - lo + 1, out + lo);
    return true;
  };
  // Pass 1, top-down: a grid row whole, else the runs holding a grid column's bit or below a kept bit.
  // changed[y] (per pass: this one, the one before): whether row y gained runs.
  std::vector<uint8_t> changed(height, 1), changed_before(height, 1);
  for (int y = 0; y < height; ++y) {
    uint64_t* out = kept + y * n;
    if (y % k == offset % k) {
      std::copy_n(bits + y * n, n, out);
      continue;
    }
    std::fill_n(out, n, 0);
    const uint64_t* above = y > 0 ? out - n : columns.data();  // row 0: the columns only
    add_runs(y, [&](size_t i) { return columns[i] | above[i]; });
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
      const bool gained = (changed_before[y_before] || changed[y_before]) &&
                          add_runs(y, [before = kept + y_before * n](size_t i) { return before[i]; });
      changed[y] = gained;
      any |= gained;
    }
    if (!any) return true;
  }
  return false;
}

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
      max_runs_(static_cast<size_t>(width) / 2 + 1),  // at most one run per two pixels, rounded up
      above_bits_(words_),
      x0_(max_runs_),
      x1_(max_runs_),
      starts_(words_),
      above_starts_(words_),
      starts_before_(words_),
      above_starts_before_(words_),
      above_component_(max_runs_),
      component_(max_runs_),
      above_sums_(max_runs_),
      sums_(max_runs_),
      continued_(max_runs_),
      edge_above_(max_runs_),
      edge_run_(max_runs_),
      parent_(2 * max_runs_),
      id_(2 * max_runs_) {}

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
    starts_[i] = RunStarts(w, carry);
    for (uint64_t m = starts_[i]; m != 0; m &= m - 1) x0[starts++] = base + std::countr_zero(m);
    for (uint64_t m = ~w & before; m != 0; m &= m - 1) x1[ends++] = base + std::countr_zero(m);
    carry = w >> (kWordBits - 1);
  }
  if (ends < starts) x1[ends++] = width_;  // a run reaching the last column
  const size_t runs = starts, k = above_count_;
  // Edges (above run, run) of the runs sharing a column: one per run of the overlap of the two
  // rows (no more than the runs of either), at its first column x; each run there is the last to
  // start at or before x.
  uint32_t* edge_above = edge_above_.data();
  uint32_t* edge_run = edge_run_.data();
  size_t edges = 0;
  carry = 0;
  for (size_t i = 0; i < words_; ++i) {
    const uint64_t overlap = bits[i] & above_bits_[i];
    for (uint64_t first = RunStarts(overlap, carry); first != 0; first &= first - 1) {
      const uint64_t upto = first ^ (first - 1);  // bits at or before x
      edge_run[edges] = starts_before_[i] + static_cast<uint32_t>(PopCount(starts_[i] & upto)) - 1;
      edge_above[edges] = above_starts_before_[i] + static_cast<uint32_t>(PopCount(above_starts_[i] & upto)) - 1;
      ++edges;
    }
    carry = overlap >> (kWordBits - 1);
  }
  // Union-find, the lower node the root: the above components joined through this block's runs.
  uint32_t* parent = parent_.data();
  const size_t nodes = k + runs;
  for (size_t v = 0; v < nodes; ++v) parent[v] = static_cast<uint32_t>(v);
  const auto find = [parent](uint32_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  for (size_t e = 0; e < edges; ++e) {
    const uint32_t a = find(above_component_[edge_above[e]]), b = find(static_cast<uint32_t>(k + edge_run[e]));
    parent[std::max(a, b)] = std::min(a, b);
  }
  for (size_t v = 0; v < nodes; ++v) parent[v] = parent[parent[v]];  // parents resolved first
  // This block's components in the order of their first run, and their sums.
  constexpr uint32_t kNone = UINT32_MAX;
  uint32_t* id = id_.data();
  Sums* sums = sums_.data();
  std::fill_n(id, nodes, kNone);
  std::fill_n(sums, runs, Sums{});
  const int64_t rows = count, sy2 = int64_t{count} * (2 * int64_t{y0} + count);  // Σ 2y + 1 over the rows
  uint32_t next = 0;
  for (size_t i = 0; i < runs; ++i) {
    const uint32_t root = parent[k + i];
    const bool fresh = id[root] == kNone;
    const uint32_t c = fresh ? next : id[root];
    id[root] = c, next += fresh;
    component_[i] = c;
    Sums& s = sums[c];
    const int64_t length = x1[i] - x0[i];
    s.area += length * rows;
    s.sx2 += (int64_t{x1[i]} * x1[i] - int64_t{x0[i]} * x0[i]) * rows;  // Σ 2x + 1 over [x0, x1) = x1² - x0²
    s.sy2 += length * sy2;
    s.last = runs_ + i;
  }
  // The above components: complete ones are kept if large enough, continued ones listed (without
  // branches) and their sums joined to this block's components.
  size_t going_on = 0;
  for (size_t c = 0; c < k; ++c) {
    const bool ends = id[parent[c]] == kNone;
    if (ends & (static_cast<double>(above_sums_[c].area) >= min_area_)) Keep(above_sums_[c]);  // rarely
    continued_[going_on] = static_cast<uint32_t>(c);
    going_on += !ends;
  }
  for (size_t i = 0; i < going_on; ++i) {
    const Sums& t = above_sums_[continued_[i]];
    Sums& s = sums[id[parent[continued_[i]]]];
    s.area += t.area, s.sx2 += t.sx2, s.sy2 += t.sy2;
  }
  runs_ += runs;
  above_count_ = next;
  std::swap(above_sums_, sums_);
  std::swap(above_component_, component_);
  std::swap(above_starts_, starts_), std::swap(above_starts_before_, starts_before_);
  std::copy_n(bits, words_, above_bits_.begin());
}

std::vector<Component> ComponentScan::Finish() {
  for (size_t c = 0; c < above_count_; ++c)
    if (static_cast<double>(above_sums_[c].area) >= min_area_) Keep(above_sums_[c]);
  above_count_ = 0;
  std::fill(above_bits_.begin(), above_bits_.end(), 0);
  std::sort(found_.begin(), found_.end(), [](const auto& a, const auto& b) {
    return a.second.area != b.second.area ? a.second.area > b.second.area : a.first < b.first;
  });
  std::vector<Component> out;
  out.reserve(found_.size());
  for (const auto& f : found_) out.push_back(f.second);
  return out;
}

namespace {
// Passes KeepGridComponents may take before MaskComponents scans the whole mask instead (noise
// settles in a few; each costs little after the first).
constexpr int kMaxGridPasses = 16;
// Grids MaskComponents keeps the components of in turn (offsets 0, k / kGrids, ...): a large
// component meets every one, few of noise's small ones meet two.
constexpr int kGrids = 2;
}  // namespace

MaskComponents::MaskComponents(int width, int height, double min_area)
    : width_(width), height_(height), words_(BitRowWords(width)), min_area_(min_area) {}

void MaskComponents::Add(int count, const uint64_t* bits) {
  rows_.insert(rows_.end(), bits, bits + words_);
  counts_.push_back(count);
  runs_ += CountRuns(bits, words_) * count;
}

std::vector<Component> MaskComponents::Finish() {
  ComponentScan scan(width_, min_area_);
  const auto scan_mask = [&] {
    int y = 0;
    for (size_t b = 0; b < counts_.size(); y += counts_[b++]) scan.Add(y, counts_[b], &rows_[b * words_]);
    return scan.Finish();
  };
  if (runs_ <= static_cast<int64_t>(words_) * height_) return scan_mask();
  if (counts_.size() < static_cast<size_t>(height_)) {  // the mask row by row
    std::vector<uint64_t> image(words_ * height_);
    size_t row = 0;
    for (size_t b = 0; b < counts_.size(); ++b)
      for (int r = 0; r < counts_[b]; ++r, ++row) std::copy_n(&rows_[b * words_], words_, &image[row * words_]);
    rows_ = std::move(image);
    counts_.assign(height_, 1);
  }
  std::vector<uint64_t> kept[2] = {std::vector<uint64_t>(rows_.size()), std::vector<uint64_t>(rows_.size())};
  const int k = ComponentGridStep(min_area_);
  for (int g = 0; g < kGrids; ++g) {
    const uint64_t* in = g == 0 ? rows_.data() : kept[(g - 1) % 2].data();
    if (!KeepGridComponents(in, width_, height_, min_area_, g * k / kGrids, kMaxGridPasses, kept[g % 2].data()))
      return scan_mask();
  }
  const std::vector<uint64_t>& last = kept[(kGrids - 1) % 2];
  for (int y = 0; y < height_; ++y) scan.Add(y, 1, &last[y * words_]);
  return scan.Finish();
}

}  // namespace visalign::violin
