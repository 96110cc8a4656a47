// The 4-connected components of a binary image given block by block as bits (the geometry probe's
// shape-coloured pixels, docs/metrics.md "Probe metrics"): pixel count and centre of each. A block's
// runs of set bits are found by counting trailing zeros and kept (12 bytes each); each run is joined,
// by union-find over all runs (the lower index the root), to the runs of the block above whose
// columns it shares, found by walking both blocks' runs in step. Finish numbers the components in
// one pass over the runs in order and sums them. The cost and the memory follow the number of runs
// (on noise, MaskComponents first takes most of them away).
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

// The side k of KeepGridComponents' grid: the largest with (k - 1)² < min_area (at least 1).
int ComponentGridStep(double min_area);

// Into `kept`, the components of a packed image (`height` rows of BitRowWords(width) words, row y
// from word y * BitRowWords(width)) that meet the grid, the rows and columns whose index is
// `offset` modulo k = ComponentGridStep(min_area); the others are cleared. A component that meets no
// grid line lies within one cell of at most (k - 1) × (k - 1) pixels, so it has fewer than min_area
// pixels: the components of at least min_area are the same in `kept`, which on noise has a fraction
// of the runs (and grids of other offsets take more away). The grid's components are found by
// filling runs from it, a top-down pass and then bottom-up and top-down passes in turn until one
// changes nothing (a component needs one per change of vertical direction of its paths from the
// grid; a row is filled again only where it gains). Returns false when `max_passes` passes have not
// settled (`kept` is then a part of the answer only).
bool KeepGridComponents(const uint64_t* bits, int width, int height, double min_area, int offset, int max_passes,
                        uint64_t* kept);

// The components of at least `min_area` pixels of a mask given block by block, as
// ComponentScan::Finish gives them: ComponentScan over the mask, or, when the mask has more than one
// run per word of its rows (noise), over what KeepGridComponents leaves of it for two grids in turn
// (offsets 0 and k/2: a large component meets both, few of noise's small ones do; a grid that does
// not settle in kMaskGridPasses leaves the scan to what the grids before it left).
inline constexpr int kMaskGridPasses = 16;  // noise settles in a few; each costs little after the first
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
  int64_t runs_ = 0;            // the mask's runs
};

}  // namespace visalign::violin
