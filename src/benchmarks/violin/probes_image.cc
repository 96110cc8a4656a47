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

#include "benchmarks/violin/component_scan.h"
#include "benchmarks/violin/two_color_classifier.h"

namespace visalign::violin {
namespace {

constexpr double kHalf = 50.0;  // percent: the balanced split inertia drifts to
constexpr double kPercent = 100.0;
constexpr double kRippleWavelength = 8;       // pixels between ripple crests
constexpr double kMinComponentShare = 0.002;  // components below this share of the image are noise

struct Scale {
  double x = 1, y = 1;
};

Scale ScaleOf(const ProbeSpec& spec, int width, int height) {
  if (spec.canvas_w <= 0 || spec.canvas_h <= 0) return {};
  return {static_cast<double>(width) / spec.canvas_w, static_cast<double>(height) / spec.canvas_h};
}

// A row's pixels [x0, x1).
struct Span {
  int x0 = 0, x1 = 0;
};

// The pixels of row y of a width x height image inside `shape` (canvas coordinates scaled by `s`), an
// empty span if none: squares cover [round((c - size/2) s), round((c + size/2) s)) per axis; circles
// the pixel centres within the radius (a disc meets a row in one interval: its ends are found from
// the row's half-chord and then settled by the exact per-pixel test).
Span ShapeSpan(const ProbeShape& shape, const Scale& s, int width, int height, int y) {
  if (shape.kind == ShapeKind::kSquare) {
    const auto edge = [&](double c, double f, double sign, int limit) {
      return static_cast<int>(std::clamp<long>(std::lround((c + sign * shape.size / 2) * f), 0, limit));
    };
    if (y < edge(shape.cy, s.y, -1, height) || y >= edge(shape.cy, s.y, 1, height)) return {};
    return {edge(shape.cx, s.x, -1, width), edge(shape.cx, s.x, 1, width)};
  }
  const double r = shape.size / 2, dy = (y + 0.5) / s.y - shape.cy;
  if (dy * dy > r * r) return {};
  const auto inside = [&](int x) {
    const double dx = (x + 0.5) / s.x - shape.cx;
    return dx * dx + dy * dy <= r * r;
  };
  const double half = std::sqrt(r * r - dy * dy) * s.x, centre = shape.cx * s.x - 0.5;
  int lo = static_cast<int>(std::clamp(std::floor(centre - half) - 1, 0.0, static_cast<double>(width)));
  int hi =
      static_cast<int>(std::clamp(std::ceil(centre + half) + 2, static_cast<double>(lo), static_cast<double>(width)));
  while (lo < hi && !inside(lo)) ++lo;
  while (hi > lo && !inside(hi - 1)) --hi;
  return {lo, hi};
}

// The spans of row y inside any of `shapes`, sorted by x0 and merged where they overlap or touch.
void ShapeSpans(const std::vector<ProbeShape>& shapes, const Scale& s, int width, int height, int y,
                std::vector<Span>& out) {
  out.clear();
  for (const ProbeShape& shape : shapes) {
    const Span span = ShapeSpan(shape, s, width, height, y);
    if (span.x1 > span.x0) out.push_back(span);
  }
  std::sort(out.begin(), out.end(), [](const Span& a, const Span& b) { return a.x0 < b.x0; });
  size_t kept = 0;
  for (const Span& span : out) {
    if (kept > 0 && span.x0 <= out[kept - 1].x1) {
      out[kept - 1].x1 = std::max(out[kept - 1].x1, span.x1);
    } else {
      out[kept++] = span;
    }
  }
  out.resize(kept);
}

void Fill(imaging::Image& image, color::Srgb8 c, int x0, int y0, int x1, int y1) {
  for (int y = std::max(0, y0); y < std::min(image.height, y1); ++y)
    for (int x = std::max(0, x0); x < std::min(image.width, x1); ++x) {
      uint8_t* p = image.pixel(x, y);
      p[0] = c.r, p[1] = c.g, p[2] = c.b;
    }
}

uint8_t Clamp8(double v) { return static_cast<uint8_t>(std::clamp<long>(std::lround(v), 0, 255)); }

// Classifies `image` to the nearer of `first` (0) and `second` (1) (TwoColorClassifier) and calls
// visit(y0, count, classes, ones) once per maximal block of equal consecutive rows y0 .. y0 + count - 1
// (`classes` per pixel of the block's rows, `ones` of them 1): rows equal to the one above are compared, not
// classified, so a flat image is a few blocks.
template <typename Visit>
void ForEachClassBlock(const imaging::Image& image, color::Srgb8 first, color::Srgb8 second, Visit&& visit) {
  TwoColorClassifier classify(color::Srgb8ToLab(first), color::Srgb8ToLab(second));
  const size_t width = static_cast<size_t>(image.width);
  std::vector<uint8_t> classes(width);
  size_t ones = 0;
  int y0 = 0;
  for (int y = 0; y <= image.height; ++y) {
    if (y > 0 && y < image.height && std::memcmp(image.pixel(0, y), image.pixel(0, y - 1), width * 3) == 0) continue;
    if (y > 0) visit(y0, y - y0, classes.data(), ones);
    if (y == image.height) break;
    ones = classify.Row(image.pixel(0, y), width, classes.data());
    y0 = y;
  }
}

// What a geometry image shows: the 4-connected components of its shape-coloured pixels
// (MaskComponents over the class rows packed as bits) and their overlap with the requested shapes,
// counted per row from the bits inside the requested spans. Fed block by block (ForEachClassBlock).
class ShapeScan {
 public:
  ShapeScan(const ProbeSpec& spec, const Scale& s, int width, int height, double min_area)
      : spec_(spec),
        s_(s),
        width_(width),
        height_(height),
        components_(width, height, min_area),
        bits_(BitRowWords(width)) {
    // The rows any requested shape may meet (widened by a row each way; ShapeSpans decides).
    rows_lo_ = height, rows_hi_ = 0;
    for (const ProbeShape& shape : spec.shapes) {
      const double half = shape.size / 2;
      rows_lo_ =
          std::min(rows_lo_, static_cast<int>(std::clamp(std::floor((shape.cy - half) * s.y) - 1, 0.0, 1.0 * height)));
      rows_hi_ =
          std::max(rows_hi_, static_cast<int>(std::clamp(std::ceil((shape.cy + half) * s.y) + 1, 0.0, 1.0 * height)));
    }
  }

  void Add(int y0, int count, const uint8_t* classes, size_t ones) {
    PackClassBits(classes, width_, bits_.data());
    components_.Add(count, bits_.data());
    mask_area_ += static_cast<int64_t>(ones) * count;
    // The requested shapes' pixels of each row, and the overlap.
    for (int y = std::max(y0, rows_lo_); y < std::min(y0 + count, rows_hi_); ++y) {
      ShapeSpans(spec_.shapes, s_, width_, height_, y, spans_);
      for (const Span& span : spans_) {
        requested_area_ += span.x1 - span.x0;
        inter_ += CountBits(bits_.data(), span.x0, span.x1);
      }
    }
  }

  double Iou() const {
    const int64_t uni = mask_area_ + requested_area_ - inter_;
    return uni > 0 ? static_cast<double>(inter_) / static_cast<double>(uni) : 0.0;
  }

  // The components with at least `min_area` pixels, largest first (ends the scan).
  std::vector<Component> Components() { return components_.Finish(); }

 private:
  const ProbeSpec& spec_;
  Scale s_;
  int width_, height_;
  MaskComponents components_;
  std::vector<uint64_t> bits_;
  std::vector<Span> spans_;
  int rows_lo_, rows_hi_;  // rows outside [rows_lo_, rows_hi_) meet no requested shape
  int64_t mask_area_ = 0, requested_area_ = 0, inter_ = 0;
};

double EquivalentSize(const Component& c, ShapeKind kind) {
  return kind == ShapeKind::kSquare ? std::sqrt(c.area) : 2.0 * std::sqrt(c.area / std::numbers::pi);
}

ProbeMeasures MeasureGeometry(const imaging::Image& image, const ProbeSpec& spec, const ManifestItem& item) {
  ProbeMeasures m;
  const Scale s = ScaleOf(spec, image.width, image.height);
  const double min_area = std::max(1.0, kMinComponentShare * image.width * image.height);
  ShapeScan scan(spec, s, image.width, image.height, min_area);
  ForEachClassBlock(
      image, item.targets[0], spec.shape_color,
      [&](int y0, int count, const uint8_t* classes, size_t ones) { scan.Add(y0, count, classes, ones); });
  m.iou = scan.Iou();
  std::vector<Component> found = scan.Components();
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
      total +=
          std::hypot(found[order[i]].cx() - spec.shapes[i].cx * s.x, found[order[i]].cy() - spec.shapes[i].cy * s.y);
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
    const double detected =
        std::hypot(found[best[1]].cx() - found[best[0]].cx(), found[best[1]].cy() - found[best[0]].cy());
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
        c = color::ToSrgb8(color::ClipToGamut(
            color::LabToSrgb({t.L + f * (k.L - t.L), t.a + f * (k.a - t.a), t.b + f * (k.b - t.b)})));
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
      std::vector<Span> spans;
      for (int y = 0; y < height; ++y) {
        ShapeSpans(shapes, s, width, height, y, spans);
        for (const Span& span : spans) Fill(image, spec.shape_color, span.x0, y, span.x1, y + 1);
      }
      break;
    }
  }
  return image;
}

double MeasureSplit(const imaging::Image& image, char orientation, color::Srgb8 first, color::Srgb8 second) {
  const bool h = orientation == 'h';
  const int side = h ? image.height : image.width;
  const size_t width = static_cast<size_t>(image.width);
  std::vector<int64_t> second_count(side, 0);  // pixels of line i (row or column) classified `second`
  ForEachClassBlock(image, first, second, [&](int y0, int count, const uint8_t* classes, size_t ones) {
    if (h) {
      std::fill_n(second_count.begin() + y0, count, static_cast<int64_t>(ones));
    } else {
      for (size_t x = 0; x < width; ++x) second_count[x] += int64_t{count} * classes[x];
    }
  });
  const int64_t line = h ? image.width : image.height;
  // errors(b) = sum_{i<b} second_i + sum_{i>=b} (line - second_i); start from b = 0.
  int64_t errors = 0;
  for (int64_t c : second_count) errors += line - c;
  int64_t best = errors;
  int lo = 0, hi = 0;  // the range of boundaries reaching the minimum
  for (int b = 1; b <= side; ++b) {
    errors += 2 * second_count[b - 1] - line;
    if (errors < best)
      best = errors, lo = hi = b;
    else if (errors == best)
      hi = b;
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
