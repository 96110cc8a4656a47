// The probe measures (docs/metrics.md, "VIOLIN probes"): the split of inertia images, pull, and the
// geometry of shapes, each against its definition computed pixel by pixel.
#include "visalign/benchmarks/violin/probes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include "testing/dirs.h"
#include "visalign/benchmarks/violin/dataset.h"
#include "visalign/benchmarks/violin/generation.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"

#include <fmt/format.h>

namespace visalign::violin {
namespace {

ManifestItem InertiaItem(char orientation, double split, bool pixels = false) {
  ManifestItem item;
  item.id = "t";
  item.layout = orientation == 'h' ? Layout::kH2 : Layout::kV2;
  item.targets = {{200, 30, 30}, {20, 40, 200}};
  item.probe = ProbeSpec{.family = ProbeFamily::kInertia, .condition = pixels ? "pixels" : "percent", .group = "g"};
  item.probe->orientation = orientation;
  item.probe->split = split;
  if (pixels) item.probe->canvas_w = item.probe->canvas_h = 200;
  return item;
}

TEST(ProbeMeasures, SplitOfExactAndBiasedImages) {
  for (char o : {'h', 'v'}) {
    for (double split : {10.0, 31.5, 50.0, 90.0}) {
      const ManifestItem item = InertiaItem(o, split);
      const double exact = MeasureSplit(RenderProbe(item, 200, 200), o, item.targets[0], item.targets[1]);
      EXPECT_NEAR(exact, split, 0.25 + 1e-9) << o << split;  // one row of 200 is 0.5 %
      const double biased =
          MeasureSplit(RenderProbe(item, 200, 200, {.split_bias = 1.0}), o, item.targets[0], item.targets[1]);
      EXPECT_NEAR(biased, 50.0, 1e-9);
    }
  }
  // A 31.5 % request drawn 50/50 with noise-free colours close to, not equal to, the targets.
  imaging::Image image(100, 100);
  for (int y = 0; y < 100; ++y)
    for (int x = 0; x < 100; ++x) {
      uint8_t* p = image.pixel(x, y);
      if (y < 50)
        p[0] = 190, p[1] = 40, p[2] = 35;
      else
        p[0] = 30, p[1] = 50, p[2] = 190;
    }
  EXPECT_DOUBLE_EQ(MeasureSplit(image, 'h', {200, 30, 30}, {20, 40, 200}), 50.0);
}

// The split of a noise image against a direct implementation of the definition: every pixel converted
// to CIELAB and classified, the boundary minimising the misclassified pixels (middle of ties).
double ReferenceSplit(const imaging::Image& image, color::Srgb8 first, color::Srgb8 second) {
  const color::Lab a = color::Srgb8ToLab(first), b = color::Srgb8ToLab(second);
  std::vector<int> first_count(image.height, 0);
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) {
      const uint8_t* p = image.pixel(x, y);
      const color::Lab lab = color::Srgb8ToLab({p[0], p[1], p[2]});
      first_count[y] +=
          color::DeltaE76(lab, a) * color::DeltaE76(lab, a) <= color::DeltaE76(lab, b) * color::DeltaE76(lab, b);
    }
  int best = INT32_MAX, lo = 0, hi = 0;
  for (int cut = 0; cut <= image.height; ++cut) {
    int errors = 0;
    for (int y = 0; y < image.height; ++y) errors += y < cut ? image.width - first_count[y] : first_count[y];
    if (errors < best)
      best = errors, lo = hi = cut;
    else if (errors == best)
      hi = cut;
  }
  return 100.0 * (lo + hi) / 2.0 / image.height;
}

TEST(ProbeMeasures, SplitOfNoiseEqualsConvertingEveryPixel) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 6; ++trial) {
    imaging::Image image(96, 80);
    for (uint8_t& v : image.rgb) v = static_cast<uint8_t>(rng());
    // Half the rows pulled toward the first colour, so the boundary is not arbitrary.
    const color::Srgb8 first{static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng())};
    const color::Srgb8 second{static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng())};
    for (int y = 0; y < 30; ++y)
      for (int x = 0; x < 96; ++x) {
        uint8_t* p = image.pixel(x, y);
        p[0] = static_cast<uint8_t>((p[0] + first.r) / 2), p[1] = static_cast<uint8_t>((p[1] + first.g) / 2),
        p[2] = static_cast<uint8_t>((p[2] + first.b) / 2);
      }
    EXPECT_DOUBLE_EQ(MeasureSplit(image, 'h', first, second), ReferenceSplit(image, first, second)) << trial;
  }
}

TEST(ProbeMeasures, PullIsTheNormalisedProjection) {
  const color::Lab t{50, 0, 0}, c{50, 40, 0};
  EXPECT_DOUBLE_EQ(GravityPull(t, t, c), 0.0);
  EXPECT_DOUBLE_EQ(GravityPull(c, t, c), 1.0);
  EXPECT_DOUBLE_EQ(GravityPull({50, 12, 30}, t, c), 0.3);  // the perpendicular part does not count
  EXPECT_DOUBLE_EQ(GravityPull({50, -8, 0}, t, c), -0.2);  // away from the context
  EXPECT_TRUE(std::isnan(GravityPull(t, t, t)));
}

ManifestItem GeometryItem(const std::string& condition, std::vector<ProbeShape> shapes) {
  ManifestItem item;
  item.id = "g";
  item.targets = {{240, 240, 240}};
  item.probe = ProbeSpec{.family = ProbeFamily::kGeometry, .condition = condition, .group = "g"};
  item.probe->canvas_w = item.probe->canvas_h = 200;
  item.probe->shape_color = {10, 120, 30};
  item.probe->shapes = std::move(shapes);
  return item;
}

TEST(ProbeMeasures, GeometryOfExactShiftedAndMissingShapes) {
  const ManifestItem square = GeometryItem("pixels", {{ShapeKind::kSquare, 100, 100, 40}});
  auto exact = MeasureProbe(RenderProbe(square, 200, 200), square);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->shape_count, 1);
  EXPECT_NEAR(exact->position_error_px, 0, 1e-12);
  EXPECT_NEAR(exact->size_error, 0, 1e-12);
  EXPECT_DOUBLE_EQ(exact->iou, 1.0);
  // The paper's example: drawn at (120, 120) instead of (100, 100).
  auto shifted = MeasureProbe(RenderProbe(square, 200, 200, {.shape_offset = 20}), square);
  ASSERT_TRUE(shifted.ok());
  EXPECT_NEAR(shifted->position_error_px, 20 * std::sqrt(2.0), 1e-9);
  EXPECT_NEAR(shifted->position_error_frac, std::hypot(0.1, 0.1), 1e-12);
  EXPECT_NEAR(shifted->iou, 400.0 / 2800.0, 1e-12);  // 20x20 overlap of two 40x40 squares
  auto empty = MeasureProbe(RenderGroundTruth(ManifestItem{.targets = square.targets}, 200, 200), square);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->shape_count, 0);
  EXPECT_TRUE(std::isnan(empty->position_error_px));
  EXPECT_DOUBLE_EQ(empty->iou, 0.0);

  const ManifestItem circle = GeometryItem("fractions", {{ShapeKind::kCircle, 60, 140, 50}});
  auto scaled = MeasureProbe(RenderProbe(circle, 400, 400), circle);  // fractions: any size
  ASSERT_TRUE(scaled.ok());
  EXPECT_EQ(scaled->shape_count, 1);
  EXPECT_LT(scaled->position_error_px, 0.01);
  EXPECT_LT(std::abs(scaled->size_error), 0.01);
  EXPECT_DOUBLE_EQ(scaled->iou, 1.0);
}

TEST(ProbeMeasures, PairDistanceAndExtraShapes) {
  ManifestItem pair = GeometryItem("pair", {{ShapeKind::kSquare, 50, 100, 20}, {ShapeKind::kSquare, 130, 100, 20}});
  pair.probe->distance = 80;
  auto exact = MeasureProbe(RenderProbe(pair, 200, 200), pair);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->shape_count, 2);
  EXPECT_NEAR(exact->distance_error_px, 0, 1e-12);
  ManifestItem closer = pair;
  closer.probe->shapes[1].cx = 110;
  auto measured = MeasureProbe(RenderProbe(closer, 200, 200), pair);
  ASSERT_TRUE(measured.ok());
  EXPECT_NEAR(measured->distance_error_px, 20, 1e-12);
  EXPECT_NEAR(measured->position_error_px, 10, 1e-12);  // mean over the two shapes
  const ManifestItem one = GeometryItem("pixels", {{ShapeKind::kSquare, 50, 100, 20}});
  auto extra = MeasureProbe(RenderProbe(pair, 200, 200), one);
  ASSERT_TRUE(extra.ok());
  EXPECT_EQ(extra->shape_count, 2);  // more than requested: a failure in the summary
}

TEST(ProbeMeasures, ShapesJoinedBelowCountOnceAndDiagonalNeighboursDoNot) {
  const ManifestItem item = GeometryItem("pixels", {{ShapeKind::kSquare, 100, 100, 40}});
  imaging::Image image = RenderGroundTruth(ManifestItem{.targets = item.targets}, 200, 200);
  auto paint = [&](int x0, int y0, int x1, int y1) {
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) image.pixel(x, y)[0] = 10, image.pixel(x, y)[1] = 120, image.pixel(x, y)[2] = 30;
  };
  paint(20, 20, 40, 120);  // a U: two arms first seen as separate runs, joined by the bottom bar
  paint(80, 20, 100, 120);
  paint(20, 120, 100, 140);
  paint(140, 20, 160, 40);  // a square touching the next one only at a corner
  paint(160, 40, 180, 60);
  auto m = MeasureProbe(image, item);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->shape_count, 3);
}

// Geometry measures of noisy images against a direct implementation of the definitions: every pixel
// converted to CIELAB and classified, the requested mask pixel by pixel (square edges rounded, circle
// pixel centres within the radius), IoU of the two masks, 4-connected components by flood fill.
struct ReferenceGeometry {
  int count = 0;
  double iou = 0;
};
ReferenceGeometry ReferenceMeasure(const imaging::Image& image, const ManifestItem& item) {
  const ProbeSpec& spec = *item.probe;
  const int w = image.width, h = image.height;
  const double sx = static_cast<double>(w) / spec.canvas_w, sy = static_cast<double>(h) / spec.canvas_h;
  const color::Lab bg = color::Srgb8ToLab(item.targets[0]), fg = color::Srgb8ToLab(spec.shape_color);
  std::vector<uint8_t> mask(w * h), requested(w * h, 0);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const uint8_t* p = image.pixel(x, y);
      const color::Lab lab = color::Srgb8ToLab({p[0], p[1], p[2]});
      const double dbg = color::DeltaE76(lab, bg), dfg = color::DeltaE76(lab, fg);
      mask[y * w + x] = dbg * dbg <= dfg * dfg ? 0 : 1;
      for (const ProbeShape& s : spec.shapes) {
        bool in;
        if (s.kind == ShapeKind::kSquare) {
          in = x >= std::lround((s.cx - s.size / 2) * sx) && x < std::lround((s.cx + s.size / 2) * sx) &&
               y >= std::lround((s.cy - s.size / 2) * sy) && y < std::lround((s.cy + s.size / 2) * sy);
        } else {
          const double dx = (x + 0.5) / sx - s.cx, dy = (y + 0.5) / sy - s.cy;
          in = dx * dx + dy * dy <= s.size * s.size / 4;
        }
        if (in) requested[y * w + x] = 1;
      }
    }
  ReferenceGeometry out;
  int64_t inter = 0, uni = 0;
  for (size_t i = 0; i < mask.size(); ++i) inter += mask[i] & requested[i], uni += mask[i] | requested[i];
  out.iou = uni > 0 ? static_cast<double>(inter) / uni : 0.0;
  std::vector<int> label(w * h, -1);
  for (int start = 0; start < w * h; ++start) {
    if (!mask[start] || label[start] >= 0) continue;
    std::vector<int> stack = {start};
    label[start] = start;
    double area = 0;
    while (!stack.empty()) {
      const int i = stack.back();
      stack.pop_back();
      area += 1;
      for (int j : {i - 1, i + 1, i - w, i + w}) {
        if (j < 0 || j >= w * h || (std::abs(j - i) == 1 && j / w != i / w) || !mask[j] || label[j] >= 0) continue;
        label[j] = start;
        stack.push_back(j);
      }
    }
    if (area >= std::max(1.0, 0.002 * w * h)) ++out.count;
  }
  return out;
}

TEST(ProbeMeasures, GeometryOfNoisyShapesEqualsTheDefinitionPixelByPixel) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 8; ++trial) {
    ManifestItem item =
        GeometryItem(trial % 2 ? "fractions" : "pixels",
                     {{trial % 3 ? ShapeKind::kCircle : ShapeKind::kSquare, 70.0 + trial, 90.0 - trial, 37.0 + trial},
                      {ShapeKind::kCircle, 150, 120, 21.0 + trial}});
    const int side = trial % 2 ? 173 : 200;  // fractions: scaled to a size the canvas does not divide
    imaging::Image image = RenderProbe(item, side, side, {.shape_offset = 3.0 * trial});
    std::uniform_int_distribution<int> noise(-90, 90);
    for (uint8_t& v : image.rgb) v = static_cast<uint8_t>(std::clamp(v + noise(rng), 0, 255));
    for (int y = 0; y < side; y += 2)
      std::memcpy(image.pixel(0, y + 1 < side ? y + 1 : y), image.pixel(0, y), side * 3);
    const auto m = MeasureProbe(image, item);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const ReferenceGeometry want = ReferenceMeasure(image, item);
    EXPECT_EQ(m->shape_count, want.count) << trial;
    EXPECT_NEAR(m->iou, want.iou, 1e-12) << trial;
  }
}

TEST(ProbeMeasures, PixelStatedItemsNeedTheCanvasSize) {
  const ManifestItem square = GeometryItem("pixels", {{ShapeKind::kSquare, 100, 100, 40}});
  auto wrong = MeasureProbe(imaging::Image(300, 300), square);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().what(), "image 300x300 for a pixel-stated geometry probe (canvas 200x200)");
  EXPECT_FALSE(MeasureProbe(imaging::Image(300, 300), InertiaItem('h', 20, true)).ok());
  EXPECT_TRUE(MeasureProbe(imaging::Image(300, 300), InertiaItem('h', 20, false)).ok());
}

}  // namespace
}  // namespace visalign::violin
