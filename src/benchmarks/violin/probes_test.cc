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

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace visalign::violin {
namespace {

ProbeOptions Options(double scale = 0.25) {
  ProbeOptions o;
  o.scale = scale;
  o.data_dir = testing::DataDir();
  return o;
}

const std::vector<ManifestItem>& Items() {
  static const std::vector<ManifestItem> items = *BuildProbeItems(Options());
  return items;
}

std::vector<const ManifestItem*> Family(ProbeFamily family) {
  std::vector<const ManifestItem*> out;
  for (const ManifestItem& item : Items())
    if (item.probe->family == family) out.push_back(&item);
  return out;
}

TEST(ProbeDataset, EveryFamilyAndConditionWithCountsFromTheScale) {
  std::map<std::string, std::map<std::string, int>> counts;
  for (const ManifestItem& item : Items()) ++counts[std::string(ProbeFamilyName(item.probe->family))][item.probe->condition];
  // scale 0.25: 6 colours for negation and gravity, 3 geometry items per condition, 1 inertia pair.
  EXPECT_EQ(counts["negation"], (std::map<std::string, int>{{"base", 6}, {"negated", 6}, {"entity", 6}}));
  EXPECT_EQ(counts["gravity"], (std::map<std::string, int>{{"none", 6}, {"consistent", 6}, {"conflicting", 6}, {"neutral", 6}}));
  EXPECT_EQ(counts["inertia"], (std::map<std::string, int>{{"percent", 22}, {"pixels", 22}}));
  EXPECT_EQ(counts["geometry"], (std::map<std::string, int>{{"pixels", 3}, {"fractions", 3}, {"pair", 3}}));
}

TEST(ProbeDataset, ManifestLinesRoundTripAndAreDeterministic) {
  const std::vector<ManifestItem> again = *BuildProbeItems(Options());
  ASSERT_EQ(again.size(), Items().size());
  std::set<std::string> ids;
  for (size_t i = 0; i < Items().size(); ++i) {
    const std::string line = ManifestLine(Items()[i]);
    EXPECT_EQ(line, ManifestLine(again[i]));
    auto parsed = ParseManifestLine(line, "test");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << line;
    EXPECT_EQ(ManifestLine(*parsed), line);
    EXPECT_TRUE(ids.insert(Items()[i].id).second) << Items()[i].id;
  }
  ProbeOptions other = Options();
  other.seed = 2;
  EXPECT_NE(ManifestLine(BuildProbeItems(other)->front()), ManifestLine(Items().front()));
}

TEST(ProbeDataset, ConditionsOfAGroupShareColourAndSeed) {
  std::map<std::string, std::vector<const ManifestItem*>> groups;
  for (const ManifestItem& item : Items()) groups[item.probe->group].push_back(&item);
  const std::vector<GenerationItem> gen = GenerationItems(Items(), {}, 1, 0, 0);
  std::map<std::string, int64_t> seed_of;
  for (const GenerationItem& g : gen) seed_of[g.id] = g.seed;
  for (const auto& [group, members] : groups) {
    for (const ManifestItem* m : members) {
      EXPECT_EQ(m->targets, members[0]->targets) << m->id;
      EXPECT_EQ(seed_of[m->id], seed_of[members[0]->id]) << m->id;
    }
  }
  EXPECT_NE(seed_of[Items()[0].id], seed_of[Items().back().id]);
}

TEST(ProbeDataset, PromptsStateTheParameters) {
  for (const ManifestItem* item : Family(ProbeFamily::kNegation)) {
    const std::string hex = color::ToHex(item->targets[0]);
    EXPECT_NE(item->prompt.find(hex), std::string::npos);
    if (item->probe->condition == "negated") EXPECT_NE(item->prompt.find("no texture"), std::string::npos);
    if (item->probe->condition == "entity") EXPECT_NE(item->prompt.find("No " + item->probe->entity + "."), std::string::npos);
  }
  for (const ManifestItem* item : Family(ProbeFamily::kGravity)) {
    const ProbeSpec& p = *item->probe;
    if (p.condition == "none") EXPECT_FALSE(p.context_lab);
    if (p.condition == "consistent" || p.condition == "conflicting") {
      ASSERT_TRUE(p.context_lab);
      EXPECT_NE(item->prompt.find("the color of " + p.context), std::string::npos);
      const double de = color::DeltaE2000(color::Srgb8ToLab(item->targets[0]), *p.context_lab);
      if (p.condition == "consistent") EXPECT_LE(de, 15.0) << item->id;
      else EXPECT_GE(de, 40.0) << item->id;
    }
  }
  std::set<double> splits;
  for (const ManifestItem* item : Family(ProbeFamily::kInertia)) {
    splits.insert(item->probe->split);
    if (item->probe->condition == "percent") EXPECT_NE(item->prompt.find("%"), std::string::npos);
    else EXPECT_NE(item->prompt.find("pixels of the"), std::string::npos);
  }
  EXPECT_TRUE(splits.count(31.5));
  const ManifestItem* pair = nullptr;
  for (const ManifestItem* item : Family(ProbeFamily::kGeometry))
    if (item->probe->condition == "pair") pair = item;
  ASSERT_NE(pair, nullptr);
  EXPECT_EQ(pair->probe->shapes.size(), 2u);
  EXPECT_DOUBLE_EQ(pair->probe->shapes[1].cx - pair->probe->shapes[0].cx, *pair->probe->distance);
}

// --languages en,zh,fr: each English item has a Chinese and a French twin with the same group, condition,
// colours and parameters (so pairing and seeds hold within and across languages), its prompt stating
// the same numbers; the English items are exactly those of an English-only dataset.
TEST(ProbeDataset, EveryLanguageStatesTheSameParameters) {
  ProbeOptions o = Options();
  o.languages = {"fr", "en", "zh"};
  const std::vector<ManifestItem> all = *BuildProbeItems(o);
  ASSERT_EQ(all.size(), 3 * Items().size());
  std::map<std::string, const ManifestItem*> by_id;
  for (const ManifestItem& item : all) by_id[item.id] = &item;
  size_t k = 0;
  for (const ManifestItem& en : Items()) {
    ASSERT_EQ(ManifestLine(*by_id.at(en.id)), ManifestLine(en));
    EXPECT_EQ(all[k].id, en.id) << "manifest order: en, zh, fr for each item";
    k += 3;
    const std::string hex = color::ToHex(en.targets[0]);
    for (const std::string language : {"zh", "fr"}) {
      const ManifestItem& twin = *by_id.at(en.id + "-" + language);
      EXPECT_EQ(twin.language, language);
      EXPECT_EQ(twin.probe->group, en.probe->group);
      EXPECT_EQ(twin.probe->condition, en.probe->condition);
      EXPECT_EQ(twin.targets, en.targets);
      EXPECT_EQ(twin.probe->split, en.probe->split);
      EXPECT_EQ(twin.probe->shapes.size(), en.probe->shapes.size());
      EXPECT_EQ(twin.probe->context_lab.has_value(), en.probe->context_lab.has_value());
      EXPECT_NE(twin.prompt.find(hex), std::string::npos) << twin.prompt;
      EXPECT_NE(twin.prompt, en.prompt);
      if (en.probe->family == ProbeFamily::kGeometry && en.probe->condition != "fractions")
        EXPECT_NE(twin.prompt.find(fmt::format("({}, {})", en.probe->shapes[0].cx, en.probe->shapes[0].cy)), std::string::npos)
            << twin.prompt;
      if (en.probe->family == ProbeFamily::kNegation && en.probe->condition == "entity")
        EXPECT_NE(twin.prompt.find(twin.probe->entity), std::string::npos) << twin.prompt;
    }
  }
  const ManifestItem& fr = *by_id.at("p-inertia-00-h0315-percent-fr");
  EXPECT_NE(fr.prompt.find("31,5 %"), std::string::npos) << fr.prompt;  // French decimal comma
  EXPECT_NE(by_id.at("p-inertia-00-h0315-percent-zh")->prompt.find("上方色块"), std::string::npos);
}

// A hand-edited probe_prompts.json: each defect is one error naming the language and the field.
TEST(ProbeDataset, AMalformedPromptFileNamesTheLanguageAndField) {
  const std::vector<MemoryColor> memory = *LoadMemoryColors(testing::DataDir() / "violin" / "memory_colors.csv");
  const nlohmann::json good = nlohmann::json::parse(ReadFile(testing::DataDir() / "violin" / "probe_prompts.json").value());
  testing::TempDir dir;
  auto load = [&](const nlohmann::json& j) {
    EXPECT_TRUE(WriteFileAtomic(dir / "p.json", j.dump()).ok());
    return LoadProbeLanguages(dir / "p.json", {"en", "zh", "fr"}, memory).status();
  };
  ASSERT_TRUE(load(good).ok());
  nlohmann::json j = good;
  j["languages"]["zh"]["prompts"]["base"] = "一张图像。";  // the colour is not stated
  EXPECT_NE(load(j).ToString().find("language zh field prompts.base"), std::string::npos) << load(j).ToString();
  j = good;
  j["languages"]["fr"]["prompts"]["entity"] = "{base} Sans {objet}.";
  EXPECT_NE(load(j).ToString().find("unknown placeholder {objet}"), std::string::npos) << load(j).ToString();
  j = good;
  j["languages"]["fr"]["objects"].erase("tomato");
  EXPECT_NE(load(j).ToString().find("missing \"tomato\""), std::string::npos) << load(j).ToString();
  j = good;
  j["languages"]["zh"]["entities"].erase(0);
  EXPECT_NE(load(j).ToString().find("as many as English's"), std::string::npos) << load(j).ToString();
  j = good;
  j["languages"].erase("fr");
  EXPECT_NE(load(j).ToString().find("no language \"fr\""), std::string::npos) << load(j).ToString();
}

TEST(ProbeDataset, WritesAManifestTheVIOLINLoaderReads) {
  testing::TempDir dir;
  ProbeOptions options = Options(0.1);
  options.out_dir = dir.path();
  auto report = GenerateProbeDataset(options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  auto items = LoadManifest(dir.path());
  ASSERT_TRUE(items.ok()) << items.status().ToString();
  EXPECT_EQ(items->size(), report->items);
  for (const ManifestItem& item : *items) {
    auto image = imaging::ReadImage(dir.path() / *item.image);
    ASSERT_TRUE(image.ok()) << item.id;
    EXPECT_EQ(image->rgb, RenderGroundTruth(item, 256, 256).rgb) << item.id;
  }
  EXPECT_FALSE(GenerateProbeDataset(options).ok());  // not empty any more
  options.force = true;
  EXPECT_TRUE(GenerateProbeDataset(options).ok());
}

TEST(ProbeDataset, BadOptionsNameTheOption) {
  ProbeOptions o = Options();
  o.languages = {"de"};
  EXPECT_EQ(BuildProbeItems(o).status().where(), "prompt languages");
  o.languages = {"zh", "zh"};
  EXPECT_EQ(BuildProbeItems(o).status().where(), "prompt languages");
  o.languages = {};
  EXPECT_EQ(BuildProbeItems(o).status().where(), "prompt languages");
  o = Options();
  o.scale = 0;
  EXPECT_EQ(BuildProbeItems(o).status().where(), "scale");
  o = Options();
  o.image_size = 10;
  EXPECT_EQ(BuildProbeItems(o).status().where(), "ground-truth image size");
}

// --- measures on constructed images ---------------------------------------------------------

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
      const double biased = MeasureSplit(RenderProbe(item, 200, 200, {.split_bias = 1.0}), o, item.targets[0], item.targets[1]);
      EXPECT_NEAR(biased, 50.0, 1e-9);
    }
  }
  // A 31.5 % request drawn 50/50 with noise-free colours close to, not equal to, the targets.
  imaging::Image image(100, 100);
  for (int y = 0; y < 100; ++y)
    for (int x = 0; x < 100; ++x) {
      uint8_t* p = image.pixel(x, y);
      if (y < 50) p[0] = 190, p[1] = 40, p[2] = 35;
      else p[0] = 30, p[1] = 50, p[2] = 190;
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
      first_count[y] += color::DeltaE76(lab, a) * color::DeltaE76(lab, a) <= color::DeltaE76(lab, b) * color::DeltaE76(lab, b);
    }
  int best = INT32_MAX, lo = 0, hi = 0;
  for (int cut = 0; cut <= image.height; ++cut) {
    int errors = 0;
    for (int y = 0; y < image.height; ++y) errors += y < cut ? image.width - first_count[y] : first_count[y];
    if (errors < best) best = errors, lo = hi = cut;
    else if (errors == best) hi = cut;
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
  EXPECT_DOUBLE_EQ(GravityPull({50, 12, 30}, t, c), 0.3);   // the perpendicular part does not count
  EXPECT_DOUBLE_EQ(GravityPull({50, -8, 0}, t, c), -0.2);   // away from the context
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
  paint(20, 20, 40, 120);   // a U: two arms first seen as separate runs, joined by the bottom bar
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
    ManifestItem item = GeometryItem(trial % 2 ? "fractions" : "pixels",
                                     {{trial % 3 ? ShapeKind::kCircle : ShapeKind::kSquare, 70.0 + trial, 90.0 - trial, 37.0 + trial},
                                      {ShapeKind::kCircle, 150, 120, 21.0 + trial}});
    const int side = trial % 2 ? 173 : 200;  // fractions: scaled to a size the canvas does not divide
    imaging::Image image = RenderProbe(item, side, side, {.shape_offset = 3.0 * trial});
    std::uniform_int_distribution<int> noise(-90, 90);
    for (uint8_t& v : image.rgb) v = static_cast<uint8_t>(std::clamp(v + noise(rng), 0, 255));
    for (int y = 0; y < side; y += 2) std::memcpy(image.pixel(0, y + 1 < side ? y + 1 : y), image.pixel(0, y), side * 3);
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

TEST(ProbeSpecs, MalformedParametersNameTheField) {
  std::string line = ManifestLine(*Family(ProbeFamily::kInertia).front());
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = line;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  auto bad = ParseManifestLine(replace("\"split\":10.0", "\"split\":150"), "m.jsonl:3");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().where(), "m.jsonl:3 field probe.split");
  bad = ParseManifestLine(replace("\"orientation\":\"h\"", "\"orientation\":\"d\""), "m.jsonl:3");
  EXPECT_EQ(bad.status().where(), "m.jsonl:3 field probe.orientation");
  bad = ParseManifestLine(replace("\"family\":\"inertia\",\"condition\":\"percent\"", "\"family\":\"negation\",\"condition\":\"base\""),
                          "m.jsonl:3");
  EXPECT_EQ(bad.status().where(), "m.jsonl:3 field layout");  // a negation probe on an h2 item
  bad = ParseManifestLine(replace("\"family\":\"inertia\"", "\"family\":\"gravity\""), "m.jsonl:3");
  EXPECT_EQ(bad.status().where(), "m.jsonl:3 field probe.condition");  // "percent" is no gravity condition
  bad = ParseManifestLine(replace("\"condition\":\"percent\"", "\"condition\":\"percentage\""), "m.jsonl:3");
  EXPECT_EQ(bad.status().where(), "m.jsonl:3 field probe.condition");
  bad = ParseManifestLine(replace("\"group\":\"", "\"grou\":\""), "m.jsonl:3");
  EXPECT_EQ(bad.status().where(), "m.jsonl:3 field probe");

  const ManifestItem geo = *Family(ProbeFamily::kGeometry).front();
  line = ManifestLine(geo);
  const size_t at = line.find("\"size\":");
  ASSERT_NE(at, std::string::npos);
  std::string huge = line;
  huge.replace(at, 7, "\"size\":9999,\"x\":");
  bad = ParseManifestLine(huge, "m.jsonl:9");
  EXPECT_EQ(bad.status().where(), "m.jsonl:9 field probe.shapes.size");
  bad = ParseManifestLine(replace("\"canvas\":[256,256]", "\"canvas\":[256]"), "m.jsonl:9");
  EXPECT_EQ(bad.status().where(), "m.jsonl:9 field probe.canvas");
  bad = ParseManifestLine(replace("\"color\":\"#", "\"color\":\"#Z"), "m.jsonl:9");
  EXPECT_EQ(bad.status().where(), "m.jsonl:9 field probe.color");
}

TEST(MemoryColors, RecomputedFromHuesAnswers) {
  auto memory = LoadMemoryColors(testing::DataDir() / "violin" / "memory_colors.csv");
  ASSERT_TRUE(memory.ok()) << memory.status().ToString();
  auto board = ReadCsv(testing::DataDir() / "hues" / "board.csv");
  auto answers = ReadCsv(testing::DataDir() / "hues" / "human_responses.csv");
  auto blind = ReadFile(testing::DataDir() / "hues" / "colorblind_ids.txt");
  ASSERT_TRUE(board.ok() && answers.ok() && blind.ok());
  std::map<std::string, color::Lab> cell_lab;
  for (const auto& row : board->rows)
    cell_lab[row[0]] = color::Srgb8ToLab({static_cast<uint8_t>(std::stoi(row[3])), static_cast<uint8_t>(std::stoi(row[4])),
                                          static_cast<uint8_t>(std::stoi(row[5]))});
  std::set<std::string> blind_ids;
  for (std::string_view l : SplitLines(*blind))
    if (!l.empty()) blind_ids.insert(std::string(l));
  const size_t user = *answers->Column("userId"), cell = *answers->Column("coordinate"), word = *answers->Column("word_en");
  std::map<std::string, std::vector<color::Lab>> by_word;
  for (const auto& row : answers->rows)
    if (!blind_ids.count(row[user]) && cell_lab.count(row[cell])) by_word[row[word]].push_back(cell_lab[row[cell]]);
  ASSERT_EQ(memory->size(), 43u);
  for (const MemoryColor& m : *memory) {
    std::string upper = m.object;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const std::vector<color::Lab>& pts = by_word[upper];
    ASSERT_FALSE(pts.empty()) << m.object;
    color::Lab mean;
    for (const color::Lab& p : pts) mean.L += p.L / pts.size(), mean.a += p.a / pts.size(), mean.b += p.b / pts.size();
    EXPECT_NEAR(m.lab.L, mean.L, 5e-5) << m.object;  // the CSV keeps 4 decimals
    EXPECT_NEAR(m.lab.a, mean.a, 5e-5) << m.object;
    EXPECT_NEAR(m.lab.b, mean.b, 5e-5) << m.object;
  }
}

}  // namespace
}  // namespace visalign::violin
