#include "imaging/canny.h"

#include <array>
#include <cstddef>
#include <cstring>

namespace visalign::imaging {
namespace {

// A row of 16-bit values with kPixelKernelPad elements of margin on each side.
struct RowBuffer {
  std::vector<int16_t> data;
  int16_t* row = nullptr;
  void Resize(int w) {
    data.assign(static_cast<size_t>(w) + 2 * kPixelKernelPad, 0);
    row = data.data() + kPixelKernelPad;
  }
};

// Working memory, kept per thread so scoring many images allocates nothing after warm-up.
struct CannyScratch {
  RowBuffer smooth, diff;                // Sobel scratch of the current row
  std::array<RowBuffer, 2> dx, dy;       // the row being suppressed and the next one
  std::array<RowBuffer, 3> mag;          // ring of three rows
  RowBuffer zero;                        // magnitude outside the image
  std::vector<uint8_t> map;              // (h + 2) x (w + 2) codes with a kCannyNever frame
  std::vector<uint32_t> row_seeds;       // columns of one row's seeds
  std::vector<size_t> seeds;             // map offsets of undecided pixels next to a strong one
  std::vector<size_t> stack;             // map offsets of joined pixels still to expand
};

}  // namespace

int64_t CannyEdges(const GrayImage& gray, CannyThresholds thresholds, std::vector<uint8_t>* edges) {
  return CannyEdges(gray, thresholds, edges, BestPixelKernels());
}

int64_t CannyEdges(const GrayImage& gray, CannyThresholds thresholds, std::vector<uint8_t>* edges,
                   const PixelKernels& kernels) {
  const int w = gray.width, h = gray.height;
  const ptrdiff_t step = w + 2;
  thread_local CannyScratch s;
  s.smooth.Resize(w);
  s.diff.Resize(w);
  s.zero.Resize(w);
  for (int k = 0; k < 2; ++k) s.dx[k].Resize(w), s.dy[k].Resize(w);
  for (int k = 0; k < 3; ++k) s.mag[k].Resize(w);
  s.row_seeds.resize(static_cast<size_t>(w));
  s.seeds.clear();
  // Only the frame is initialised: every interior row is written whole below, its codes spilling
  // into the frame bytes after it (reset right away) and the next row's start (written later).
  // The slack lets the kernels read and write whole vectors past the last row's frame.
  s.map.resize(static_cast<size_t>(step) * (h + 2) + 2 * kPixelKernelPad);
  uint8_t* map = s.map.data();
  std::memset(map, kCannyNever, static_cast<size_t>(step) + 1);

  auto row_start = [step](int y) { return static_cast<size_t>(y + 1) * step + 1; };
  auto collect_seeds = [&](int y) {
    const int n = kernels.find_seeds(map + row_start(y), step, w, s.row_seeds.data());
    for (int i = 0; i < n; ++i) s.seeds.push_back(row_start(y) + s.row_seeds[i]);
  };
  auto gray_row = [&](int y) { return &gray.pixels[static_cast<size_t>(y) * w]; };
  auto sobel = [&](int y) {
    kernels.sobel_row(gray_row(y > 0 ? y - 1 : 0), gray_row(y), gray_row(y + 1 < h ? y + 1 : h - 1), w,
                      s.smooth.row, s.diff.row, s.dx[y % 2].row, s.dy[y % 2].row, s.mag[y % 3].row);
  };

  // Row y is suppressed once the magnitudes of y + 1 are known; its seeds once the codes of y + 1
  // are. Edges = strong pixels (counted here) + pixels joined by the floods below.
  int64_t count = 0;
  sobel(0);
  for (int y = 0; y < h; ++y) {
    if (y + 1 < h) sobel(y + 1);
    const int16_t* above = y > 0 ? s.mag[(y + 2) % 3].row : s.zero.row;
    const int16_t* below = y + 1 < h ? s.mag[(y + 1) % 3].row : s.zero.row;
    const size_t start = row_start(y);
    count += kernels.suppress_row(w, above, s.mag[y % 3].row, below, s.dx[y % 2].row, s.dy[y % 2].row,
                                  thresholds.low, thresholds.high, map + start);
    map[start + w] = map[start + w + 1] = kCannyNever;  // this row's right frame, the next one's left
    if (y + 1 == h) std::memset(map + start + w, kCannyNever, s.map.size() - (start + w));  // bottom frame
    if (y > 0) collect_seeds(y - 1);
  }
  collect_seeds(h - 1);

  // Hysteresis. A kCannyMaybe pixel is an edge exactly when an 8-connected path of kCannyMaybe
  // pixels links it to a kCannyEdge pixel; the first pixel of any such path is a seed, so
  // flooding from every seed (skipping those an earlier flood reached) gives that set.
  const std::array<ptrdiff_t, 8> neighbours = {-step - 1, -step, -step + 1, -1, 1, step - 1, step, step + 1};
  size_t top = 0;
  for (size_t seed : s.seeds) {
    if (map[seed] != kCannyMaybe) continue;
    map[seed] = kCannyJoined;
    ++count;
    if (s.stack.size() < neighbours.size()) s.stack.resize(neighbours.size());
    s.stack[top++] = seed;
    while (top > 0) {
      const size_t p = s.stack[--top];
      if (s.stack.size() < top + neighbours.size()) s.stack.resize(2 * s.stack.size() + neighbours.size());
      for (ptrdiff_t d : neighbours) {
        uint8_t& code = map[p + d];
        if (code == kCannyMaybe) {
          code = kCannyJoined;
          ++count;
          s.stack[top++] = p + d;
        }
      }
    }
  }

  if (edges) {
    constexpr uint8_t kEdgeOut = 255;  // what cv::Canny writes on edges
    edges->resize(static_cast<size_t>(w) * h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        (*edges)[static_cast<size_t>(y) * w + x] = (map[row_start(y) + x] & kCannyEdgeBit) ? kEdgeOut : 0;
  }
  return count;
}

}  // namespace visalign::imaging
