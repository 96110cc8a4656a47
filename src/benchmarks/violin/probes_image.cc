// Probe images: the ground truth (optionally distorted, for the reference server) and the inertia and
// geometry measures (docs/metrics.md, "Probe metrics").
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numbers>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "visalign/benchmarks/violin/probes.h"

namespace visalign::violin {
namespace {

constexpr double kHalf = 50.0;             // percent: the balanced split inertia drifts to
constexpr double kPercent = 100.0;
constexpr double kRippleWavelength = 8;    // pixels between ripple crests
constexpr double kMinComponentShare = 0.002;  // components below this share of the image are noise

struct Scale {
  double x = 1, y = 1;
};

Scale ScaleOf(const ProbeSpec& spec, int width, int height) {
  if (spec.canvas_w <= 0 || spec.canvas_h <= 0) return {};
  return {static_cast<double>(width) / spec.canvas_w, static_cast<double>(height) / spec.canvas_h};
}

// The pixels of a width x height image inside `shapes` (canvas coordinates scaled by `s`), row-major:
// squares cover [round((c - size/2) s), round((c + size/2) s)) per axis; circles the pixel centres
// within the radius.
std::vector<uint8_t> ShapeMask(const std::vector<ProbeShape>& shapes, const Scale& s, int width, int height) {
  std::vector<uint8_t> mask(static_cast<size_t>(width) * height, 0);
  for (const ProbeShape& shape : shapes) {
    const auto edge = [&](double c, double f, double sign) { return std::lround((c + sign * shape.size / 2) * f); };
    const int x0 = std::clamp<long>(edge(shape.cx, s.x, -1), 0, width), x1 = std::clamp<long>(edge(shape.cx, s.x, 1) + 1, 0, width);
    const int y0 = std::clamp<long>(edge(shape.cy, s.y, -1), 0, height), y1 = std::clamp<long>(edge(shape.cy, s.y, 1) + 1, 0, height);
    const double r = shape.size / 2;
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) {
        bool inside;
        if (shape.kind == ShapeKind::kSquare) {
          inside = x < edge(shape.cx, s.x, 1) && y < edge(shape.cy, s.y, 1);
        } else {
          const double dx = (x + 0.5) / s.x - shape.cx, dy = (y + 0.5) / s.y - shape.cy;
          inside = dx * dx + dy * dy <= r * r;
        }
        if (inside) mask[static_cast<size_t>(y) * width + x] = 1;
      }
  }
  return mask;
}

void Fill(imaging::Image& image, color::Srgb8 c, int x0, int y0, int x1, int y1) {
  for (int y = std::max(0, y0); y < std::min(image.height, y1); ++y)
    for (int x = std::max(0, x0); x < std::min(image.width, x1); ++x) {
      uint8_t* p = image.pixel(x, y);
      p[0] = c.r, p[1] = c.g, p[2] = c.b;
    }
}

uint8_t Clamp8(double v) { return static_cast<uint8_t>(std::clamp<long>(std::lround(v), 0, 255)); }

// Classifies pixels to the nearer of two CIELAB colours A, B (squared CIE76; ties to A), exactly as
// converting every pixel would, but converting few: with w = B - A, |p - A|^2 - |p - B|^2 =
// 2 (ax fx + ay fy + az fz - 16 wL) + |A|^2 - |B|^2, where fx, fy, fz (the CIELAB f of X, Y, Z) each
// increase with every sRGB channel (all sRGB -> XYZ coefficients are positive). So over a cube of
// 16 levels per channel the sign is bounded by the f values at its lowest and highest corner: a cube
// whose bounds agree (beyond kTieMargin) is decided for all its 4,096 colours, others fall back to
// the exact per-colour test. Cubes are decided on first use; equal neighbours reuse the last answer.
class TwoColorClassifier {
 public:
  TwoColorClassifier(color::Lab a, color::Lab b) : a_(a), b_(b), cells_(kCells * kCells * kCells, kUnknown) {
    const double wl = b.L - a.L, wa = b.a - a.a, wb = b.b - a.b;
    alpha_ = {kA * wa, kL * wl - kA * wa + kB * wb, -kB * wb};
    constant_ = -2.0 * kL0 * wl + (a.L * a.L + a.a * a.a + a.b * a.b) - (b.L * b.L + b.a * b.a + b.b * b.b);
  }

  uint8_t operator()(const uint8_t* p) {
    const uint32_t key = (uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2];
    if (key == last_key_) return last_class_;
    const size_t cell = (size_t{p[0]} >> kShift) * kCells * kCells + (size_t{p[1]} >> kShift) * kCells + (p[2] >> kShift);
    if (cells_[cell] == kUnknown) cells_[cell] = DecideCell(p[0] >> kShift, p[1] >> kShift, p[2] >> kShift);
    const uint8_t c = cells_[cell] != kUndecided ? cells_[cell] : Exact(p);
    last_key_ = key;
    last_class_ = c;
    return c;
  }

 private:
  static constexpr int kShift = 4;
  static constexpr int kCells = 256 >> kShift;
  static constexpr uint8_t kUnknown = 255, kUndecided = 254;
  static constexpr double kL = 116, kL0 = 16, kA = 500, kB = 200;
  static constexpr double kTieMargin = 1e-6;

  // CIELAB of one pixel through the batch converter (its linearisation table; equal to Srgb8ToLab to 1e-12).
  static color::Lab LabOf(const uint8_t* p) {
    double lab[3];
    color::Srgb8ToLabBatch(p, 1, lab);
    return {lab[0], lab[1], lab[2]};
  }

  static std::array<double, 3> F(int r, int g, int b) {
    const uint8_t rgb[3] = {static_cast<uint8_t>(r), static_cast<uint8_t>(g), static_cast<uint8_t>(b)};
    const color::Lab lab = LabOf(rgb);
    const double fy = (lab.L + kL0) / kL;
    return {fy + lab.a / kA, fy, fy - lab.b / kB};
  }

  uint8_t DecideCell(int r, int g, int b) const {
    const int top = (1 << kShift) - 1;
    const std::array<double, 3> lo = F(r << kShift, g << kShift, b << kShift);
    const std::array<double, 3> hi = F((r << kShift) + top, (g << kShift) + top, (b << kShift) + top);
    double g_min = constant_, g_max = constant_;
    for (int k = 0; k < 3; ++k) {
      g_min += 2.0 * alpha_[k] * (alpha_[k] >= 0 ? lo[k] : hi[k]);
      g_max += 2.0 * alpha_[k] * (alpha_[k] >= 0 ? hi[k] : lo[k]);
    }
    if (g_max < -kTieMargin) return 0;
    if (g_min > kTieMargin) return 1;
    return kUndecided;
  }

  uint8_t Exact(const uint8_t* p) const {
    const color::Lab lab = LabOf(p);
    auto d2 = [&](const color::Lab& t) {
      const double dl = lab.L - t.L, da = lab.a - t.a, db = lab.b - t.b;
      return dl * dl + da * da + db * db;
    };
    return d2(a_) <= d2(b_) ? 0 : 1;
  }

  color::Lab a_, b_;
  std::array<double, 3> alpha_{};
  double constant_ = 0;
  std::vector<uint8_t> cells_;
  uint32_t last_key_ = UINT32_MAX;
  uint8_t last_class_ = 0;
};

// 0 where a pixel is nearer `first`, 1 where nearer `second` (TwoColorClassifier), row-major.
std::vector<uint8_t> Classify(const imaging::Image& image, color::Srgb8 first, color::Srgb8 second) {
  TwoColorClassifier classify(color::Srgb8ToLab(first), color::Srgb8ToLab(second));
  const size_t width = static_cast<size_t>(image.width);
  std::vector<uint8_t> out(width * image.height);
  for (int y = 0; y < image.height; ++y) {
    uint8_t* row = &out[y * width];
    if (y > 0 && std::memcmp(image.pixel(0, y), image.pixel(0, y - 1), width * 3) == 0) {  // flat images: rows repeat
      std::memcpy(row, row - width, width);
      continue;
    }
    const uint8_t* p = image.pixel(0, y);
    for (size_t x = 0; x < width; ++x, p += 3) row[x] = classify(p);
  }
  return out;
}

struct Component {
  double area = 0, sx = 0, sy = 0;  // pixel count and coordinate sums (pixel centres)
  double cx() const { return sx / area; }
  double cy() const { return sy / area; }
};

// 4-connected components of `mask` (non-zero) with at least `min_area` pixels, largest first: runs of
// each row are joined to the runs of the row above that they touch (union-find over runs), so the
// cost follows the number of runs rather than of pixels.
std::vector<Component> Components(const std::vector<uint8_t>& mask, int width, int height, double min_area) {
  struct Run {
    int x0, x1, y;  // [x0, x1) of row y
  };
  std::vector<Run> runs;
  std::vector<size_t> parent;
  auto find = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  size_t above_begin = 0, above_end = 0;  // the previous row's runs
  for (int y = 0; y < height; ++y) {
    const uint8_t* row = &mask[static_cast<size_t>(y) * width];
    const size_t row_begin = runs.size();
    size_t a = above_begin;  // runs of the row above, in x order: those ending left of this run are skipped
    for (int x = 0; x < width;) {
      const uint8_t* start = std::find_if(row + x, row + width, [](uint8_t v) { return v != 0; });
      if (start == row + width) break;
      const int x0 = static_cast<int>(start - row);
      const int x1 = static_cast<int>(std::find(start, row + width, uint8_t{0}) - row);
      runs.push_back({x0, x1, y});
      parent.push_back(runs.size() - 1);
      while (a < above_end && runs[a].x1 <= x0) ++a;
      for (size_t k = a; k < above_end && runs[k].x0 < x1; ++k) parent[find(k)] = find(runs.size() - 1);
      x = x1;
    }
    above_begin = row_begin;
    above_end = runs.size();
  }
  std::vector<Component> by_root(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    Component& c = by_root[find(i)];
    const double n = runs[i].x1 - runs[i].x0;
    c.area += n;
    c.sx += n * (runs[i].x0 + runs[i].x1) / 2.0;  // sum of the pixel centres x + 0.5
    c.sy += n * (runs[i].y + 0.5);
  }
  std::vector<Component> out;
  for (const Component& c : by_root)
    if (c.area >= min_area) out.push_back(c);
  std::stable_sort(out.begin(), out.end(), [](const Component& a, const Component& b) { return a.area > b.area; });
  return out;
}

double EquivalentSize(const Component& c, ShapeKind kind) {
  return kind == ShapeKind::kSquare ? std::sqrt(c.area) : 2.0 * std::sqrt(c.area / std::numbers::pi);
}

ProbeMeasures MeasureGeometry(const imaging::Image& image, const ProbeSpec& spec, const ManifestItem& item) {
  ProbeMeasures m;
  const Scale s = ScaleOf(spec, image.width, image.height);
  const std::vector<uint8_t> mask = Classify(image, item.targets[0], spec.shape_color);
  const std::vector<uint8_t> requested = ShapeMask(spec.shapes, s, image.width, image.height);
  int64_t inter = 0, uni = 0;
  for (size_t i = 0; i < mask.size(); ++i) {
    inter += requested[i] & mask[i];
    uni += requested[i] | mask[i];
  }
  m.iou = uni > 0 ? static_cast<double>(inter) / static_cast<double>(uni) : 0.0;
  const double min_area = std::max(1.0, kMinComponentShare * image.width * image.height);
  std::vector<Component> found = Components(mask, image.width, image.height, min_area);
  m.shape_count = static_cast<int>(found.size());
  const size_t n = spec.shapes.size();
  if (found.size() < n) return m;
  found.resize(n);
  // Assign the n largest components to the requested shapes with the least total centre distance.
  std::vector<size_t> order(n), best;
  for (size_t i = 0; i < n; ++i) order[i] = i;
  double best_total = INFINITY;
  do {
    double total = 0;
    for (size_t i = 0; i < n; ++i)
      total += std::hypot(found[order[i]].cx() - spec.shapes[i].cx * s.x, found[order[i]].cy() - spec.shapes[i].cy * s.y);
    if (total < best_total) best_total = total, best = order;
  } while (std::next_permutation(order.begin(), order.end()));
  double px = 0, frac = 0, size = 0;
  for (size_t i = 0; i < n; ++i) {
    const ProbeShape& want = spec.shapes[i];
    const Component& got = found[best[i]];
    const double dx = got.cx() - want.cx * s.x, dy = got.cy() - want.cy * s.y;
    px += std::hypot(dx, dy);
    frac += std::hypot(dx / image.width, dy / image.height);
    const double requested = want.size * std::sqrt(s.x * s.y);
    size += (EquivalentSize(got, want.kind) - requested) / requested;
  }
  m.position_error_px = px / n;
  m.position_error_frac = frac / n;
  m.size_error = size / n;
  if (spec.distance && n == 2) {
    const double detected = std::hypot(found[best[1]].cx() - found[best[0]].cx(), found[best[1]].cy() - found[best[0]].cy());
    m.distance_error_px = std::abs(detected - *spec.distance * std::sqrt(s.x * s.y));
  }
  return m;
}

}  // namespace

imaging::Image RenderProbe(const ManifestItem& item, int width, int height, const ProbeDistortion& distortion) {
  if (!item.probe || width < 1 || height < 1 || item.targets.empty()) return {};
  const ProbeSpec& spec = *item.probe;
  imaging::Image image(width, height);
  switch (spec.family) {
    case ProbeFamily::kNegation:
    case ProbeFamily::kGravity: {
      color::Srgb8 c = item.targets[0];
      if (spec.context_lab && distortion.pull != 0) {
        const color::Lab t = color::Srgb8ToLab(c), k = *spec.context_lab;
        const double f = distortion.pull;
        c = color::ToSrgb8(color::ClipToGamut(color::LabToSrgb({t.L + f * (k.L - t.L), t.a + f * (k.a - t.a), t.b + f * (k.b - t.b)})));
      }
      Fill(image, c, 0, 0, width, height);
      if (spec.condition == "entity" && distortion.ripple_amplitude != 0) {
        const double amplitude = distortion.ripple_amplitude;
        for (int y = 0; y < height; ++y)
          for (int x = 0; x < width; ++x) {
            const double r = std::hypot(x + 0.5 - width / 2.0, y + 0.5 - height / 2.0);
            const double d = amplitude * std::sin(2 * std::numbers::pi * r / kRippleWavelength);
            uint8_t* p = image.pixel(x, y);
            for (int ch = 0; ch < 3; ++ch) p[ch] = Clamp8(p[ch] + d);
          }
      }
      break;
    }
    case ProbeFamily::kInertia: {
      if (item.targets.size() < 2) return {};
      const double split = spec.split + distortion.split_bias * (kHalf - spec.split);
      const bool h = spec.orientation == 'h';
      const int side = h ? height : width;
      const int cut = static_cast<int>(std::lround(split / kPercent * side));
      Fill(image, item.targets[0], 0, 0, h ? width : cut, h ? cut : height);
      Fill(image, item.targets[1], h ? 0 : cut, h ? cut : 0, width, height);
      break;
    }
    case ProbeFamily::kGeometry: {
      Fill(image, item.targets[0], 0, 0, width, height);
      const Scale s = ScaleOf(spec, width, height);
      std::vector<ProbeShape> shapes = spec.shapes;
      for (ProbeShape& shape : shapes) shape.cx += distortion.shape_offset, shape.cy += distortion.shape_offset;
      const std::vector<uint8_t> mask = ShapeMask(shapes, s, width, height);
      for (size_t i = 0; i < mask.size(); ++i)
        if (mask[i]) {
          uint8_t* p = &image.rgb[i * 3];
          p[0] = spec.shape_color.r, p[1] = spec.shape_color.g, p[2] = spec.shape_color.b;
        }
      break;
    }
  }
  return image;
}

double MeasureSplit(const imaging::Image& image, char orientation, color::Srgb8 first, color::Srgb8 second) {
  const std::vector<uint8_t> cls = Classify(image, first, second);
  const bool h = orientation == 'h';
  const int side = h ? image.height : image.width;
  const size_t width = static_cast<size_t>(image.width);
  std::vector<int64_t> second_count(side, 0);  // pixels of line i (row or column) classified `second`
  for (int y = 0; y < image.height; ++y) {
    const uint8_t* row = &cls[y * width];
    if (h) {
      second_count[y] = std::accumulate(row, row + width, int64_t{0});
    } else {
      for (size_t x = 0; x < width; ++x) second_count[x] += row[x];
    }
  }
  const int64_t line = h ? image.width : image.height;
  // errors(b) = sum_{i<b} second_i + sum_{i>=b} (line - second_i); start from b = 0.
  int64_t errors = 0;
  for (int64_t c : second_count) errors += line - c;
  int64_t best = errors;
  int lo = 0, hi = 0;  // the range of boundaries reaching the minimum
  for (int b = 1; b <= side; ++b) {
    errors += 2 * second_count[b - 1] - line;
    if (errors < best) best = errors, lo = hi = b;
    else if (errors == best) hi = b;
  }
  return kPercent * (lo + hi) / 2.0 / side;
}

double GravityPull(color::Lab mean, color::Lab target, color::Lab context) {
  const double dl = context.L - target.L, da = context.a - target.a, db = context.b - target.b;
  const double norm2 = dl * dl + da * da + db * db;
  if (norm2 == 0) return std::numeric_limits<double>::quiet_NaN();
  return ((mean.L - target.L) * dl + (mean.a - target.a) * da + (mean.b - target.b) * db) / norm2;
}

Result<ProbeMeasures> MeasureProbe(const imaging::Image& image, const ManifestItem& item) {
  if (!item.probe) return Status::InvalidArgument("not a probe item", "item " + item.id, "an item with a probe");
  const ProbeSpec& spec = *item.probe;
  if (spec.PixelBased() && (image.width != spec.canvas_w || image.height != spec.canvas_h))
    return Status::InvalidArgument(
        fmt::format("image {}x{} for a pixel-stated {} probe (canvas {}x{})", image.width, image.height,
                    ProbeFamilyName(spec.family), spec.canvas_w, spec.canvas_h),
        "item " + item.id, "an image of exactly the canvas size the prompt states");
  if (image.width < 2 || image.height < 2)
    return Status::InvalidArgument(fmt::format("image {}x{} too small", image.width, image.height), "item " + item.id,
                                   "at least 2x2 pixels");
  ProbeMeasures m;
  if (spec.family == ProbeFamily::kInertia && item.targets.size() == 2)
    m.measured_split = MeasureSplit(image, spec.orientation, item.targets[0], item.targets[1]);
  else if (spec.family == ProbeFamily::kGeometry)
    m = MeasureGeometry(image, spec, item);
  return m;
}

}  // namespace visalign::violin
