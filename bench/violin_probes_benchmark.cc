// Scoring a probe image against scoring a VIOLIN item of the same size (docs/performance.md, "VIOLIN
// probes"): one decoded image scored the way `violin evaluate` scores it (ScoreItemImage) for
//   Violin/single, Violin/h2   - VIOLIN items (precision + purity of one or two blocks);
//   Probe/negation             - a negation probe (the VIOLIN single-colour score: no extra cost);
//   Probe/inertia, Probe/geometry - MeasureProbe (CIELAB classification, split fit / components).
// Each on the item's own ground truth ("gt"), on it with +-8 levels of noise per channel ("grain", what a
// generator's near-solid output looks like) and on uniform noise ("noise", the worst case for the purity
// measures, the CIELAB classification and the geometry components); argument = image side. The
// context line "two_color_kernels" names the SIMD build the classification uses on this CPU.
// Components/scan, Components/mask: the geometry probe's labelling alone, of a mask with 36 % of its
// pixels set at random (what uniform noise classifies as shape colour), by ComponentScan over every
// row and by MaskComponents (through CrossingSeeds), components of 0.2 % of the image kept.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>

#include "benchmarks/violin/component_scan.h"
#include "benchmarks/violin/probes_evaluate.h"
#include "benchmarks/violin/two_color_kernels.h"
#include "visalign/benchmarks/violin/dataset.h"
#include "visalign/benchmarks/violin/probes.h"

namespace visalign::violin {
namespace {

enum class Kind { kSingle, kH2, kNegation, kInertia, kGeometry };

ManifestItem MakeItem(Kind kind, int side) {
  ManifestItem item;
  item.id = "bench";
  item.targets = {{200, 40, 60}};
  switch (kind) {
    case Kind::kSingle:
      break;
    case Kind::kH2:
      item.layout = Layout::kH2;
      item.targets.push_back({30, 60, 190});
      break;
    case Kind::kNegation:
      item.probe =
          ProbeSpec{.family = ProbeFamily::kNegation, .condition = "entity", .group = "g", .entity = "ripples"};
      break;
    case Kind::kInertia:
      item.layout = Layout::kH2;
      item.targets.push_back({30, 60, 190});
      item.probe = ProbeSpec{.family = ProbeFamily::kInertia, .condition = "percent", .group = "g"};
      item.probe->split = 31.5;
      break;
    case Kind::kGeometry:
      item.probe = ProbeSpec{.family = ProbeFamily::kGeometry, .condition = "pixels", .group = "g"};
      item.probe->canvas_w = item.probe->canvas_h = side;
      item.probe->shape_color = {30, 60, 190};
      item.probe->shapes = {{ShapeKind::kSquare, side * 0.4, side * 0.4, side * 0.25}};
      break;
  }
  return item;
}

enum class Noise { kNone, kGrain, kUniform };

void Score(benchmark::State& state, Kind kind, Noise noise) {
  const int side = static_cast<int>(state.range(0));
  const ManifestItem item = MakeItem(kind, side);
  imaging::Image image = RenderGroundTruth(item, side, side);
  std::mt19937 rng(7);
  if (noise == Noise::kUniform) {
    for (uint8_t& v : image.rgb) v = static_cast<uint8_t>(rng());
  } else if (noise == Noise::kGrain) {
    std::uniform_int_distribution<int> grain(-8, 8);
    for (uint8_t& v : image.rgb) v = static_cast<uint8_t>(std::clamp(v + grain(rng), 0, 255));
  }
  for (auto _ : state) {
    auto m = ScoreItemImage(image, item, {});
    if (!m.ok()) state.SkipWithError(m.status().ToString().c_str());
    benchmark::DoNotOptimize(m);
  }
  state.SetItemsProcessed(state.iterations());
}

#define VIOLIN_PROBE_BENCH(name, kind)                                                                             \
  BENCHMARK_CAPTURE(Score, name##_gt, kind, Noise::kNone)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);     \
  BENCHMARK_CAPTURE(Score, name##_grain, kind, Noise::kGrain)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(Score, name##_noise, kind, Noise::kUniform)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)

VIOLIN_PROBE_BENCH(Violin_single, Kind::kSingle);
VIOLIN_PROBE_BENCH(Violin_h2, Kind::kH2);
VIOLIN_PROBE_BENCH(Probe_negation, Kind::kNegation);
VIOLIN_PROBE_BENCH(Probe_inertia, Kind::kInertia);
VIOLIN_PROBE_BENCH(Probe_geometry, Kind::kGeometry);

void Components(benchmark::State& state, bool mask) {
  const int side = static_cast<int>(state.range(0));
  const size_t words = BitRowWords(side);
  std::mt19937 rng(7);
  std::bernoulli_distribution set(0.36);
  std::vector<uint8_t> classes(side);
  std::vector<uint64_t> bits(words * side);
  for (int y = 0; y < side; ++y) {
    for (uint8_t& c : classes) c = set(rng);
    PackClassBits(classes.data(), side, &bits[y * words]);
  }
  const double min_area = 0.002 * side * side;
  for (auto _ : state) {
    std::vector<Component> found;
    if (mask) {
      MaskComponents components(side, side, min_area);
      for (int y = 0; y < side; ++y) components.Add(1, &bits[y * words]);
      found = components.Finish();
    } else {
      ComponentScan scan(side, min_area);
      for (int y = 0; y < side; ++y) scan.Add(y, 1, &bits[y * words]);
      found = scan.Finish();
    }
    benchmark::DoNotOptimize(found);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(Components, scan, false)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Components, mask, true)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace visalign::violin

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("two_color_kernels", visalign::violin::BestTwoColorKernels().name);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
