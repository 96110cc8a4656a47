// The 4-connected components of a binary image given row by row as bits (the geometry probe's
// shape-coloured pixels, docs/metrics.md "Probe metrics"): pixel count and centre of each. A row's
// runs of set bits are found by counting trailing zeros and joined to the runs of the row above
// they share a column with; labels are merged with union-find, each root keeping its component's
// pixel count and coordinate sums, so the cost follows the number of runs, not of pixels.
#pragma once

#include <cstddef>
#include <cstdint>
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
    int x0, x1;      // columns [x0, x1)
    uint32_t label;  // of its component, not necessarily the root
  };
  struct Sums {
    int64_t area = 0, sx2 = 0, sy2 = 0;  // pixels, and sums of 2x + 1 and 2y + 1 over them
    uint64_t last = 0;                   // the index of the component's last run so far
  };
  uint32_t Find(uint32_t label);
  uint32_t NewLabel();
  void Release(uint32_t label);
  // After a block: its runs' labels become their roots; the labels of the block above that are
  // neither are released, components among them kept if large enough.
  void CloseBlock();
  void Keep(uint32_t root);

  int width_;
  size_t words_;
  double min_area_;
  std::vector<Run> above_, row_;  // the runs of the block above and of this one
  std::vector<uint32_t> parent_;  // per label; a root's Sums are its component's
  std::vector<Sums> sums_;
  std::vector<uint32_t> mark_;  // per label: the block whose runs it is root of, or kFree / kFresh
  std::vector<uint32_t> free_;  // labels to reuse
  uint32_t block_ = 0;
  uint64_t runs_ = 0;
  std::vector<std::pair<uint64_t, Component>> found_;  // (last run, component) of those kept
};

}  // namespace visalign::violin
