// The 4-connected components of a binary image given block by block as bits (the geometry probe's
// shape-coloured pixels, docs/metrics.md "Probe metrics"): pixel count and centre of each. A block's
// runs of set bits are found by counting trailing zeros and kept (12 bytes each); each run is joined,
// by union-find over all runs (the lower index the root), to the runs of the block above whose
// columns it shares, found by walking both blocks' runs in step. Finish numbers the components in
// one pass over the runs in order and sums them. The cost and the memory follow the number of runs
// (on noise, MaskComponents takes nearly all of them away first).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace visalign::violin {

struct Component {
  double area = 0, sx = 0, sy = 0;  // pixel count and coordinate sums (pixel centres x + 0.5, y + 0.5)
  double cx() const { return sx / area; }
  double cy() const { return sy / area; }
};

// Words of 64 pixels (pixel x is bit x % 64 of word x / 64) a row of `width` pixels takes.
inline size_t BitRowWords(int width) { return (static_cast<size_t>(width) + 63) / 64; }

// Classes (0 or 1) of `width` pixels as bits into BitRowWords(width) words; bits past width clear.
void PackClassBits(const uint8_t* classes, int width, uint64_t* bits);

// Set bits of `bits` (a packed row) in columns [x0, x1).
int64_t CountBits(const uint64_t* bits, int x0, int x1);

// Finds the components of at least `min_area` pixels.
class ComponentScan {
 public:
  ComponentScan(int width, double min_area);

  // Rows y0 .. y0 + count - 1, all equal to `bits` (a packed row); blocks come top to bottom.
  void Add(int y0, int count, const uint64_t* bits);

  // Ends the scan: the components found, largest first, equal areas in the order of their last run
  // (a run: a row's maximal interval of set bits; runs are ordered top to bottom, then left to right).
  std::vector<Component> Finish();

 private:
  struct Run {
    int x0, x1;       // columns [x0, x1)
    uint32_t parent;  // union-find, parent <= the run's own index; then its component
  };
  int width_;
  size_t words_;
  double min_area_;
  // The runs in order (top to bottom, then left to right), room for capacity_; per block: its first
  // run, first row and rows.
  std::unique_ptr<Run[]> runs_;
  size_t count_ = 0, capacity_ = 0;
  std::vector<uint32_t> block_begin_;
  std::vector<int> block_y0_, block_rows_;
};

// The fewest rows or columns a component of min_area pixels spans: the largest k with (k - 1)² <
// min_area (at least 1), since one within (k - 1) x (k - 1) pixels holds fewer.
int ComponentExtent(double min_area);

// Seeds every component of at least min_area pixels holds one of, few on noise. With k =
// ComponentExtent(min_area) >= 2 and s = k / 2, such a component spans k >= 2s rows or columns, so it
// holds rows (or columns) s·i and s·(i + 1) for some i and, from its last pixel in the one to its
// next in the other, a path inside the band between them. Into `seeds` (cleared first, packed as
// `bits`: height rows of BitRowWords(width) words): the pixels of each band's last row reached by a
// flood inside the band from its first (sweeps down and up until one adds nothing), for the bands of
// rows and of columns (of the transposed image); a band whose flood has not settled in `max_passes`
// sweeps adds its first row whole. k = 1: every pixel. Returns whether any seed was set.
bool CrossingSeeds(const uint64_t* bits, int width, int height, double min_area, int max_passes, uint64_t* seeds);

// The components of at least min_area pixels of the packed image `bits` (as above) among those
// holding a bit of `seeds` (seeds ⊆ bits), as ComponentScan::Finish gives them: each flooded from a
// seed a word at a time (a word's runs holding the bits reached, then the bits of those runs' columns
// the rows above and below hold and the runs' continuations into the neighbouring words, without
// branches), its sums taken only once its area is known to count. The cost follows the seeded
// components' size only.
std::vector<Component> SeededComponents(const uint64_t* bits, const uint64_t* seeds, int width, int height,
                                        double min_area);

// The components of at least `min_area` pixels of a mask given block by block, as
// ComponentScan::Finish gives them: ComponentScan over the mask or, when the mask has more than one
// run per word of its rows (noise; counted on every fourth block), SeededComponents of its
// CrossingSeeds (none: no component is large enough).
inline constexpr int kMaskPasses = 16;  // CrossingSeeds' sweeps per band: noise settles in a few
class MaskComponents {
 public:
  MaskComponents(int width, int height, double min_area);

  // The next `count` rows, all equal to `bits`; blocks come top to bottom and cover every row.
  void Add(int count, const uint64_t* bits);

  std::vector<Component> Finish();  // ends the scan

 private:
  int width_, height_;
  size_t words_;
  double min_area_;
  std::vector<uint64_t> rows_;  // one row per block
  std::vector<int> counts_;     // each block's rows
  int64_t runs_ = 0;            // the mask's runs, estimated from every fourth block
};

}  // namespace visalign::violin
