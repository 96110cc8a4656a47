#include "imaging/canny.h"

#include <array>
#include <bit>
#include <cstddef>

namespace visalign::imaging {
namespace {

constexpr int kWordShift = 6;
constexpr int kWordBits = 1 << kWordShift;

// A row of values with kPixelKernelPad elements of margin on each side.
template <typename T>
struct RowBuffer {
  std::vector<T> data;
  T* row = nullptr;
  void Resize(int w) {
    data.assign(static_cast<size_t>(w) + 2 * kPixelKernelPad, 0);
    row = data.data() + kPixelKernelPad;
  }
};

// One bit per pixel (bit x % 64 of word x / 64), rows of whole words with a zero word on each
// side and a zero row above and below the image, so any 3x3 neighbourhood reads without checks.
class BitPlane {
 public:
  void Reset(int w, int h) {
    words_ = (w + kPixelKernelPad + kWordBits - 1) / kWordBits;  // the kernels write whole vectors
    stride_ = static_cast<size_t>(words_) + 2;
    bits_.assign(stride_ * (h + 2), 0);
  }
  int words() const { return words_; }
  uint64_t* Row(int y) { return &bits_[static_cast<size_t>(y + 1) * stride_ + 1]; }
  const uint64_t* Row(int y) const { return &bits_[static_cast<size_t>(y + 1) * stride_ + 1]; }
  const std::vector<uint64_t>& all() const { return bits_; }
  bool Get(int x, int y) const { return (Row(y)[x / kWordBits] >> (x % kWordBits)) & 1; }
  void Set(int x, int y) { Row(y)[x / kWordBits] |= uint64_t{1} << (x % kWordBits); }
  void Clear(int x, int y) { Row(y)[x / kWordBits] &= ~(uint64_t{1} << (x % kWordBits)); }
  // Bits of columns x - 1, x, x + 1 of row y in bits 0, 1, 2 (-1 <= y <= h, 0 <= x < w), from
  // whole words (a word just written by Set or Clear reads back without a store-forwarding stall).
  uint32_t Three(int x, int y) const {
    const int first = x - 1;                                 // >= -1: the zero word before the row at worst
    const uint64_t* words = Row(y) + (first >> kWordShift);  // floor division
    const int shift = first & (kWordBits - 1);
    const uint64_t window = (words[0] >> shift) | ((words[1] << 1) << (kWordBits - 1 - shift));
    return static_cast<uint32_t>(window) & 7u;
  }

 private:
  int words_ = 0;
  size_t stride_ = 0;
  std::vector<uint64_t> bits_;
};

// A pixel on the flood stack, packed in one word so that popping what was just pushed reads
// exactly what one store wrote (two 32-bit stores read back as one 64-bit load stall).
struct Pixel {
  uint64_t packed;
  Pixel(int x, int y) : packed(static_cast<uint32_t>(x) | static_cast<uint64_t>(static_cast<uint32_t>(y)) << 32) {}
  int x() const { return static_cast<int32_t>(packed); }
  int y() const { return static_cast<int32_t>(packed >> 32); }
};

// Working memory, kept per thread so scoring many images allocates nothing after warm-up.
struct CannyScratch {
  std::array<RowBuffer<int16_t>, 3> pixels;  // ring of three widened image rows
  std::array<RowBuffer<int16_t>, 3> coded;   // ring of three rows of coded magnitudes
  RowBuffer<int16_t> zero;                   // magnitude outside the image
  BitPlane strong;                           // edges: strong pixels, then also joined ones
  BitPlane maybe;                            // undecided pixels not (yet) joined to an edge
  std::vector<Pixel> stack;                  // joined pixels whose neighbours are still to visit
  std::vector<uint64_t> seeds;               // the seeds of one bit row
};

}  // namespace

int64_t CannyEdges(const GrayImage& gray, CannyThresholds thresholds, std::vector<uint8_t>* edges) {
  return CannyEdges(gray, thresholds, edges, BestPixelKernels());
}

int64_t CannyEdges(const GrayImage& gray, CannyThresholds thresholds, std::vector<uint8_t>* edges,
                   const PixelKernels& kernels) {
  const int w = gray.width, h = gray.height;
  thread_local CannyScratch s;
  s.zero.Resize(w);
  for (int k = 0; k < 3; ++k) s.pixels[k].Resize(w), s.coded[k].Resize(w);
  s.strong.Reset(w, h);
  s.maybe.Reset(w, h);

  auto load_row = [&](int r) { kernels.widen_row(&gray.pixels[static_cast<size_t>(r) * w], w, s.pixels[r % 3].row); };
  // Widened row r (replicated rows outside the image), once loaded.
  auto pixel_row = [&](int r) { return s.pixels[(r < 0 ? 0 : r >= h ? h - 1 : r) % 3].row; };
  auto sobel = [&](int y) {
    if (y + 1 < h) load_row(y + 1);
    kernels.sobel_row(pixel_row(y - 1), pixel_row(y), pixel_row(y + 1), w, s.coded[y % 3].row);
  };

  // Row y is suppressed once the magnitudes of y + 1 are known.
  load_row(0);
  sobel(0);
  for (int y = 0; y < h; ++y) {
    if (y + 1 < h) sobel(y + 1);
    const int16_t* above = y > 0 ? s.coded[(y + 2) % 3].row : s.zero.row;
    const int16_t* below = y + 1 < h ? s.coded[(y + 1) % 3].row : s.zero.row;
    kernels.suppress_row(w, above, s.coded[y % 3].row, below, thresholds.low, thresholds.high,
                         reinterpret_cast<uint8_t*>(s.strong.Row(y)), reinterpret_cast<uint8_t*>(s.maybe.Row(y)));
  }

  // Hysteresis. An undecided pixel is an edge exactly when an 8-connected path of undecided
  // pixels links it to a strong one. The first pixel of such a path is a seed (undecided, next to
  // a strong pixel); joining every seed and flooding from it gives the set. A joined pixel moves
  // from `maybe` to `strong`, so the pixels next to it become seeds and nothing is joined twice.
  // Row by row, 64 pixels at a time: the seeds of a row are joined at once, then a flood starts
  // from the undecided pixels next to them (usually there are none).
  BitPlane& strong = s.strong;
  BitPlane& maybe = s.maybe;
  std::vector<Pixel>& stack = s.stack;
  auto join = [&](int x, int y) {
    maybe.Clear(x, y);
    strong.Set(x, y);
    stack.emplace_back(x, y);
  };
  auto flood = [&] {
    while (!stack.empty()) {
      const Pixel p = stack.back();
      stack.pop_back();
      for (int y = p.y() - 1; y <= p.y() + 1; ++y)
        for (uint32_t near = maybe.Three(p.x(), y); near != 0; near &= near - 1)
          join(p.x() - 1 + std::countr_zero(near), y);
    }
  };
  // Words -1 .. words of a bit row, the outer two zero; a set bit's 3-pixel neighbourhood in a row.
  const int words = strong.words();
  s.seeds.assign(static_cast<size_t>(words) + 2, 0);
  uint64_t* seeds = s.seeds.data() + 1;
  auto spread = [](const uint64_t* bits, int k) {
    return bits[k] | (bits[k] << 1) | (bits[k] >> 1) | (bits[k - 1] >> (kWordBits - 1)) |
           (bits[k + 1] << (kWordBits - 1));
  };
  for (int y = 0; y < h; ++y) {
    const uint64_t *strong_up = strong.Row(y - 1), *strong_down = strong.Row(y + 1);
    uint64_t* strong_mid = strong.Row(y);
    const uint64_t *maybe_up = maybe.Row(y - 1), *maybe_down = maybe.Row(y + 1);
    uint64_t* maybe_mid = maybe.Row(y);
    // Column-wise OR of the three strong rows at word k (k = -1 and words are zero words), rolled
    // along the row: word k - 1 already holds this row's seeds when word k is examined.
    auto column = [&](int k) { return strong_up[k] | strong_mid[k] | strong_down[k]; };
    uint64_t previous = 0, edge = column(0);
    for (int k = 0; k < words; ++k) {
      const uint64_t next = column(k + 1);
      const uint64_t near =
          edge | (edge << 1) | (edge >> 1) | (previous >> (kWordBits - 1)) | (next << (kWordBits - 1));
      seeds[k] = maybe_mid[k] & near;
      maybe_mid[k] &= ~seeds[k];
      strong_mid[k] |= seeds[k];
      previous = edge | seeds[k];
      edge = next;
    }
    for (int k = 0; k < words; ++k) {
      const uint64_t reach = spread(seeds, k);
      if (((maybe_up[k] | maybe_mid[k] | maybe_down[k]) & reach) == 0) continue;
      for (int r = y - 1; r <= y + 1; ++r)
        for (uint64_t next = maybe.Row(r)[k] & reach; next != 0; next &= next - 1)
          join(k * kWordBits + std::countr_zero(next), r);
      flood();
    }
  }

  if (edges) {
    constexpr uint8_t kEdgeOut = 255;  // what cv::Canny writes on edges
    edges->resize(static_cast<size_t>(w) * h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) (*edges)[static_cast<size_t>(y) * w + x] = strong.Get(x, y) ? kEdgeOut : 0;
  }
  return static_cast<int64_t>(kernels.count_bits(strong.all().data(), strong.all().size()));
}

}  // namespace visalign::imaging
