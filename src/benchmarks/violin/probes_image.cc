// Probe images: the ground truth (optionally distorted, for the reference server) and the inertia and
// geometry measures (docs/metrics.md, "Probe metrics").
#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
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

// Pixel (x, y) of a width x height image lies in `shape` (canvas coordinates scaled by `s`): squares
// cover [round((c - size/2) s), round((c + size/2) s)) per axis; circles the pixel centres within the radius.
bool InShape(const ProbeShape& shape, const Scale& s, int x, int y) {
  if (shape.kind == ShapeKind::kSquare) {
    auto inside = [&](int v, double c, double f) {
      return v >= std::lround((c - shape.size / 2) * f) && v < std::lround((c + shape.size / 2) * f);
    };
    return inside(x, shape.cx, s.x) && inside(y, shape.cy, s.y);
  }
  const double dx = (x + 0.5) / s.x - shape.cx, dy = (y + 0.5) / s.y - shape.cy, r = shape.size / 2;
  return dx * dx + dy * dy <= r * r;
}

void Fill(imaging::Image& image, color::Srgb8 c, int x0, int y0, int x1, int y1) {
  for (int y = std::max(0, y0); y < std::min(image.height, y1); ++y)
    for (int x = std::max(0, x0); x < std::min(image.width, x1); ++x) {
      uint8_t* p = image.pixel(x, y);
      p[0] = c.r, p[1] = c.g, p[2] = c.b;
    }
}

uint8_t Clamp8(double v) { return static_cast<uint8_t>(std::clamp<long>(std::lround(v), 0, 255)); }

// The index of the nearest of `colors` (CIELAB, squared CIE76) per pixel, row-major.
std::vector<uint8_t> Classify(const imaging::Image& image, const std::vector<color::Lab>& colors) {
  std::vector<uint8_t> out(static_cast<size_t>(image.width) * image.height);
  std::vector<double> lab(static_cast<size_t>(image.width) * 3);
  for (int y = 0; y < image.height; ++y) {
    color::Srgb8ToLabBatch(image.pixel(0, y), static_cast<size_t>(image.width), lab.data());
    for (int x = 0; x < image.width; ++x) {
      const double* p = &lab[static_cast<size_t>(x) * 3];
      double best = INFINITY;
      for (size_t k = 0; k < colors.size(); ++k) {
        const double dl = p[0] - colors[k].L, da = p[1] - colors[k].a, db = p[2] - colors[k].b;
        const double d = dl * dl + da * da + db * db;
        if (d < best) best = d, out[static_cast<size_t>(y) * image.width + x] = static_cast<uint8_t>(k);
      }
    }
  }
  return out;
}

struct Component {
  double area = 0, sx = 0, sy = 0;  // pixel count and coordinate sums (pixel centres)
  double cx() const { return sx / area; }
  double cy() const { return sy / area; }
};

// 4-connected components of `mask` (non-zero) with at least `min_area` pixels, largest first.
std::vector<Component> Components(const std::vector<uint8_t>& mask, int width, int height, double min_area) {
  std::vector<uint8_t> seen(mask.size(), 0);
  std::vector<size_t> stack;
  std::vector<Component> out;
  for (size_t start = 0; start < mask.size(); ++start) {
    if (!mask[start] || seen[start]) continue;
    Component c;
    seen[start] = 1;
    stack.push_back(start);
    while (!stack.empty()) {
      const size_t i = stack.back();
      stack.pop_back();
      const int x = static_cast<int>(i % width), y = static_cast<int>(i / width);
      c.area += 1, c.sx += x + 0.5, c.sy += y + 0.5;
      auto visit = [&](int nx, int ny) {
        if (nx < 0 || ny < 0 || nx >= width || ny >= height) return;
        const size_t j = static_cast<size_t>(ny) * width + nx;
        if (mask[j] && !seen[j]) seen[j] = 1, stack.push_back(j);
      };
      visit(x - 1, y), visit(x + 1, y), visit(x, y - 1), visit(x, y + 1);
    }
    if (c.area >= min_area) out.push_back(c);
  }
  std::stable_sort(out.begin(), out.end(), [](const Component& a, const Component& b) { return a.area > b.area; });
  return out;
}

double EquivalentSize(const Component& c, ShapeKind kind) {
  return kind == ShapeKind::kSquare ? std::sqrt(c.area) : 2.0 * std::sqrt(c.area / std::numbers::pi);
}

ProbeMeasures MeasureGeometry(const imaging::Image& image, const ProbeSpec& spec, const ManifestItem& item) {
  ProbeMeasures m;
  const Scale s = ScaleOf(spec, image.width, image.height);
  const std::vector<uint8_t> mask =
      Classify(image, {color::Srgb8ToLab(item.targets[0]), color::Srgb8ToLab(spec.shape_color)});
  double inter = 0, uni = 0;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) {
      bool requested = false;
      for (const ProbeShape& shape : spec.shapes) requested = requested || InShape(shape, s, x, y);
      const bool detected = mask[static_cast<size_t>(y) * image.width + x] != 0;
      inter += requested && detected;
      uni += requested || detected;
    }
  m.iou = uni > 0 ? inter / uni : 0.0;
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
      for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
          for (const ProbeShape& shape : shapes)
            if (InShape(shape, s, x, y)) {
              uint8_t* p = image.pixel(x, y);
              p[0] = spec.shape_color.r, p[1] = spec.shape_color.g, p[2] = spec.shape_color.b;
            }
      break;
    }
  }
  return image;
}

double MeasureSplit(const imaging::Image& image, char orientation, color::Srgb8 first, color::Srgb8 second) {
  const std::vector<uint8_t> cls = Classify(image, {color::Srgb8ToLab(first), color::Srgb8ToLab(second)});
  const bool h = orientation == 'h';
  const int side = h ? image.height : image.width;
  std::vector<double> first_count(side, 0);  // pixels of line i (row or column) classified `first`
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x)
      if (cls[static_cast<size_t>(y) * image.width + x] == 0) first_count[h ? y : x] += 1;
  const double line = h ? image.width : image.height;
  // errors(b) = sum_{i<b} (line - first_i) + sum_{i>=b} first_i; start from b = 0.
  double errors = 0;
  for (double c : first_count) errors += c;
  double best = errors;
  int lo = 0, hi = 0;  // the range of boundaries reaching the minimum
  for (int b = 1; b <= side; ++b) {
    errors += line - 2 * first_count[b - 1];
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
