#include "imaging/canny.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace visalign::imaging {
namespace {

// Eight 16-bit lanes (one SSE2/NEON register); GCC/Clang vector extensions keep one code path.
constexpr int kLanes = 8;
using I16 = int16_t __attribute__((vector_size(2 * kLanes)));
using I32 = int32_t __attribute__((vector_size(4 * kLanes)));
using U8 = uint8_t __attribute__((vector_size(kLanes)));

// OpenCV's direction test: with y = |dy| << 15 and tg22x = |dx| * round(tan(22.5°) * 2^15), the
// gradient is horizontal when y < tg22x and vertical when y > tg22x + (|dx| << 16).
constexpr int kTanShift = 15;
constexpr int kTan22 = 13573;

// Map codes: a pixel that may join an edge, one that cannot, one on an edge (as in OpenCV), and
// one that joined an edge during hysteresis (kept apart so edges are counted exactly once). Both
// edge codes have bit kEdge set.
constexpr uint8_t kMaybe = 0;
constexpr uint8_t kNever = 1;
constexpr uint8_t kEdge = 2;
constexpr uint8_t kJoined = 3;
constexpr uint8_t kEdgeOut = 255;

template <typename V>
V Load(const void* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
template <typename V>
void Store(void* p, V v) {
  std::memcpy(p, &v, sizeof(V));
}

I16 Abs(I16 v) { return v < 0 ? -v : v; }

// Bytewise tests on 8 map codes at once (SWAR): 0x80 in every byte that equals c, exactly.
constexpr uint64_t kEveryByte = 0x0101010101010101, kLow7Bits = 0x7F7F7F7F7F7F7F7F;
uint64_t BytesEqual(uint64_t v, uint8_t c) {
  const uint64_t x = v ^ (kEveryByte * c);
  return ~(((x & kLow7Bits) + kLow7Bits) | x | kLow7Bits);
}
int CountMarkedBytes(uint64_t marks) { return static_cast<int>(((marks >> 7) * kEveryByte) >> 56); }
uint64_t LoadWord(const uint8_t* p) { return Load<uint64_t>(p); }

// Whether one of the 3 codes at p is an edge (kEdge or kJoined).
constexpr uint32_t kEdgeBitOf3 = 0x010101u * kEdge;
bool HasEdgeIn3(const uint8_t* p) { return (Load<uint32_t>(p) & kEdgeBitOf3) != 0; }

// Row buffers with one element of margin on each side and room for a whole last vector.
struct RowBuffer {
  std::vector<int16_t> data;
  int16_t* row = nullptr;
  void Resize(int w) {
    data.assign(static_cast<size_t>(w) + 2 * kLanes, 0);
    row = data.data() + kLanes;
  }
};

// Working memory, kept per thread so scoring many images allocates nothing after warm-up.
struct CannyScratch {
  RowBuffer smooth, diff;              // vertical Sobel passes of the current row
  std::array<RowBuffer, 3> dx, dy, mag;  // ring of three rows
  RowBuffer zero;                      // magnitude outside the image
  std::vector<uint8_t> codes;          // one row of map codes, padded to whole vectors
  std::vector<uint8_t> map;            // (h + 2) x (w + 2) codes with a kNever frame
  std::vector<size_t> stack;           // map offsets of edge pixels still to expand
};

// Applies f to whole vectors of 8 elements and then to the scalar tail, so the formula is written
// once for both. f(j, lanes) must handle elements [j, j + lanes).
template <typename F>
void ForEachColumn(int w, F f) {
  int j = 0;
  for (; j + kLanes <= w; j += kLanes) f(j, std::integral_constant<int, kLanes>{});
  for (; j < w; ++j) f(j, std::integral_constant<int, 1>{});
}

// Loads n consecutive values at p as int16 lanes (n = kLanes) or as a scalar int (n = 1).
template <int N>
auto LoadBytes(const uint8_t* p) {
  if constexpr (N == kLanes)
    return __builtin_convertvector(Load<U8>(p), I16);
  else
    return static_cast<int>(*p);
}
template <int N>
auto LoadShorts(const int16_t* p) {
  if constexpr (N == kLanes)
    return Load<I16>(p);
  else
    return static_cast<int>(*p);
}
template <int N, typename V>
void StoreShorts(int16_t* p, V v) {
  if constexpr (N == kLanes)
    Store(p, v);
  else
    *p = static_cast<int16_t>(v);
}

// dx, dy and m = |dx| + |dy| of image row y (3x3 Sobel, rows and columns replicated at the
// border). m gets 0 at columns -1 and w, as in OpenCV's magnitude buffer.
void SobelRow(const GrayImage& gray, int y, CannyScratch& s, RowBuffer& dx, RowBuffer& dy, RowBuffer& mag) {
  const int w = gray.width, h = gray.height;
  const uint8_t* up = &gray.pixels[static_cast<size_t>(std::max(y - 1, 0)) * w];
  const uint8_t* mid = &gray.pixels[static_cast<size_t>(y) * w];
  const uint8_t* down = &gray.pixels[static_cast<size_t>(std::min(y + 1, h - 1)) * w];
  int16_t* smooth = s.smooth.row;
  int16_t* diff = s.diff.row;
  ForEachColumn(w, [&](int j, auto lanes) {
    constexpr int n = decltype(lanes)::value;
    const auto u = LoadBytes<n>(up + j), c = LoadBytes<n>(mid + j), d = LoadBytes<n>(down + j);
    StoreShorts<n>(smooth + j, u + 2 * c + d);
    StoreShorts<n>(diff + j, d - u);
  });
  smooth[-1] = smooth[0], smooth[w] = smooth[w - 1];
  diff[-1] = diff[0], diff[w] = diff[w - 1];
  ForEachColumn(w, [&](int j, auto lanes) {
    constexpr int n = decltype(lanes)::value;
    const auto gx = LoadShorts<n>(smooth + j + 1) - LoadShorts<n>(smooth + j - 1);
    const auto gy = LoadShorts<n>(diff + j - 1) + 2 * LoadShorts<n>(diff + j) + LoadShorts<n>(diff + j + 1);
    StoreShorts<n>(dx.row + j, gx);
    StoreShorts<n>(dy.row + j, gy);
    if constexpr (n == kLanes)
      StoreShorts<n>(mag.row + j, Abs(gx) + Abs(gy));
    else
      StoreShorts<n>(mag.row + j, std::abs(gx) + std::abs(gy));
  });
  mag.row[-1] = mag.row[w] = 0;
}

// Non-maximum suppression of one row, on whole vectors (columns past w give codes that are
// never copied). With q = floor(|dx| * kTan22 / 2^15), OpenCV's integer tests are exactly:
// horizontal iff |dx| > 0 and |dy| <= q, vertical iff |dy| > 2|dx| + q (kTan22 is odd and
// |dx| < 2^15, so |dx| * kTan22 is never a multiple of 2^15 unless |dx| = 0). Horizontal and
// vertical keep m > first neighbour && m >= second; diagonal keeps m > both, i.e. m >= second + 1.
void SuppressRow(int w, const int16_t* above, const int16_t* mag, const int16_t* below, const int16_t* dx_row,
                 const int16_t* dy_row, CannyThresholds t, uint8_t* codes) {
  const I16 low = I16{} + static_cast<int16_t>(t.low), high = I16{} + static_cast<int16_t>(t.high);
  for (int j = 0; j < w; j += kLanes) {
    const I16 gx = Load<I16>(dx_row + j), gy = Load<I16>(dy_row + j);
    const I16 ax = Abs(gx), ay = Abs(gy);
    const I16 q = __builtin_convertvector((__builtin_convertvector(ax, I32) * kTan22) >> kTanShift, I16);
    const I16 horizontal = (ax > 0) & (ay <= q);
    const I16 vertical = ay > 2 * ax + q;
    const I16 same_sign = (gx ^ gy) >= 0;
    const I16 m = Load<I16>(mag + j);
    const I16 diagonal_first = same_sign ? Load<I16>(above + j - 1) : Load<I16>(above + j + 1);
    const I16 diagonal_second = (same_sign ? Load<I16>(below + j + 1) : Load<I16>(below + j - 1)) + 1;
    const I16 first = horizontal ? Load<I16>(mag + j - 1) : vertical ? Load<I16>(above + j) : diagonal_first;
    const I16 second = horizontal ? Load<I16>(mag + j + 1) : vertical ? Load<I16>(below + j) : diagonal_second;
    const I16 kept = (m > low) & (m > first) & (m >= second);
    const I16 code = kept ? (m > high ? I16{} + kEdge : I16{} + kMaybe) : I16{} + kNever;
    Store(codes + j, __builtin_convertvector(code, U8));
  }
}

}  // namespace

int64_t CannyEdges(const GrayImage& gray, CannyThresholds thresholds, std::vector<uint8_t>* edges) {
  const int w = gray.width, h = gray.height;
  const ptrdiff_t step = w + 2;
  thread_local CannyScratch s;
  s.smooth.Resize(w);
  s.diff.Resize(w);
  s.zero.Resize(w);
  for (int k = 0; k < 3; ++k) s.dx[k].Resize(w), s.dy[k].Resize(w), s.mag[k].Resize(w);
  s.codes.assign(static_cast<size_t>(w) + kLanes, kNever);
  // Only the frame is initialised: every interior row is written whole below. The slack lets
  // the word-wise scan read 8 bytes from any interior pixel.
  s.map.resize(static_cast<size_t>(step) * (h + 2) + kLanes);
  std::memset(s.map.data(), kNever, step);
  std::memset(s.map.data() + static_cast<size_t>(h + 1) * step, kNever, step + kLanes);

  // Row y's magnitude is computed one row ahead of its suppression, which needs rows y - 1..y + 1.
  SobelRow(gray, 0, s, s.dx[0], s.dy[0], s.mag[0]);
  for (int y = 0; y < h; ++y) {
    const int cur = y % 3;
    if (y + 1 < h) {
      const int next = (y + 1) % 3;
      SobelRow(gray, y + 1, s, s.dx[next], s.dy[next], s.mag[next]);
    }
    const int16_t* above = y > 0 ? s.mag[(y + 2) % 3].row : s.zero.row;
    const int16_t* below = y + 1 < h ? s.mag[(y + 1) % 3].row : s.zero.row;
    SuppressRow(w, above, s.mag[cur].row, below, s.dx[cur].row, s.dy[cur].row, thresholds, s.codes.data());
    const size_t row_start = static_cast<size_t>(y + 1) * step + 1;
    std::memcpy(&s.map[row_start], s.codes.data(), static_cast<size_t>(w));
    s.map[row_start - 1] = s.map[row_start + w] = kNever;
  }

  // Hysteresis. Every kEdge code is an edge (counted word-wise; floods write kJoined, which
  // that count never sees). A kMaybe pixel is one exactly
  // when an 8-connected path of kMaybe pixels links it to a kEdge pixel; scanning for kMaybe
  // pixels next to a kEdge one and flooding from each gives that set (the first pixel of any
  // such path lies next to its kEdge end), while edge pixels without undecided neighbours - most
  // of them - cost nothing beyond the scan.
  uint8_t* map = s.map.data();
  const std::array<ptrdiff_t, 8> neighbours = {-step - 1, -step, -step + 1, -1, 1, step - 1, step, step + 1};
  int64_t count = 0;
  size_t top = 0;
  auto flood_from = [&](size_t start) {
    map[start] = kJoined;
    ++count;
    s.stack.resize(std::max<size_t>(s.stack.size(), neighbours.size()));
    s.stack[top++] = start;
    while (top > 0) {
      const size_t p = s.stack[--top];
      if (s.stack.size() < top + neighbours.size()) s.stack.resize(2 * s.stack.size() + neighbours.size());
      for (ptrdiff_t d : neighbours) {
        uint8_t& code = map[p + d];
        if (code == kMaybe) {
          code = kJoined;
          ++count;
          s.stack[top++] = p + d;
        }
      }
    }
  };
  for (int y = 0; y < h; ++y) {
    const size_t row_start = static_cast<size_t>(y + 1) * step + 1;
    for (int x = 0; x < w; x += kLanes) {
      const int valid = std::min(kLanes, w - x);
      const uint64_t in_row = valid == kLanes ? ~uint64_t{0} : (uint64_t{1} << (8 * valid)) - 1;
      const uint64_t word = LoadWord(map + row_start + x);
      count += CountMarkedBytes(BytesEqual(word, kEdge) & in_row);
      for (uint64_t maybe = BytesEqual(word, kMaybe) & in_row; maybe != 0; maybe &= maybe - 1) {
        const size_t p = row_start + x + std::countr_zero(maybe) / 8;
        // An earlier flood may have reached it (kJoined now, counted there) or a neighbour.
        if (map[p] == kMaybe &&
            (HasEdgeIn3(map + p - step - 1) || HasEdgeIn3(map + p - 1) || HasEdgeIn3(map + p + step - 1)))
          flood_from(p);
      }
    }
  }

  if (edges) {
    edges->resize(static_cast<size_t>(w) * h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        (*edges)[static_cast<size_t>(y) * w + x] = (map[static_cast<size_t>(y + 1) * step + 1 + x] & kEdge) ? kEdgeOut : 0;
  }
  return count;
}

}  // namespace visalign::imaging
