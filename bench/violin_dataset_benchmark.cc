// VIOLIN dataset generation: building the items (sampling, prompts, splits), encoding one GT image
// (the flat-block encoder against the general OpenCV one) and the full dataset with images.
//   VISALIGN_DATA=data build/bench/violin_dataset_benchmark --benchmark_filter=Full  (48,320 PNGs)
// VISALIGN_BENCH_DIR chooses where the full dataset goes (default: the system temp dir); it is
// removed afterwards. Threads: VISALIGN_THREADS (default: all cores).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>

#include "benchmarks/violin/flat_png.h"
#include "visalign/benchmarks/violin/dataset.h"
#include "visalign/core/parallel.h"

namespace visalign::violin {
namespace {

namespace fs = std::filesystem;

double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return secs(u.ru_utime) + secs(u.ru_stime);
}

void BM_BuildItemsScaleOne(benchmark::State& state) {
  DatasetOptions o;
  o.write_images = false;
  size_t n = 0;
  for (auto _ : state) {
    auto items = BuildItems(o);
    if (!items.ok()) state.SkipWithError(items.status().ToString().c_str());
    n = items.ok() ? items->size() : 0;
  }
  state.counters["items"] = static_cast<double>(n);
  state.SetItemsProcessed(static_cast<int64_t>(n) * state.iterations());
}
BENCHMARK(BM_BuildItemsScaleOne)->Unit(benchmark::kMillisecond);

ManifestItem Q4Item() {
  ManifestItem item;
  item.layout = Layout::kQ4;
  item.targets = {{0xD9, 0xB4, 0x51}, {0x72, 0x67, 0x2C}, {0xB9, 0x28, 0x42}, {0x00, 0x67, 0xA5}};
  return item;
}

void BM_EncodeQ4Flat(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(EncodeFlatPng(RenderGroundTruth(Q4Item(), size, size)));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeQ4Flat)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);

void BM_EncodeQ4OpenCv(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(imaging::EncodePng(RenderGroundTruth(Q4Item(), size, size), 1));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeQ4OpenCv)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);

void BM_FullDatasetWithImages(benchmark::State& state) {
  const char* base = std::getenv("VISALIGN_BENCH_DIR");
  const char* threads = std::getenv("VISALIGN_THREADS");
  if (threads) SetThreadCount(std::atoi(threads));
  const fs::path dir = fs::path(base ? base : fs::temp_directory_path().string()) / "violin_dataset_benchmark";
  DatasetReport report;
  double cpu = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(dir);
    DatasetOptions o;
    o.out_dir = dir;
    o.show_progress = false;
    const double cpu_start = ProcessCpuSeconds();
    state.ResumeTiming();
    auto r = GenerateDataset(o);
    cpu = ProcessCpuSeconds() - cpu_start;
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
    if (r.ok()) report = *r;
  }
  fs::remove_all(dir);
  state.counters["images"] = static_cast<double>(report.images);
  state.counters["MB"] = static_cast<double>(report.image_bytes + report.manifest_bytes) / 1e6;
  state.counters["process_cpu_s"] = cpu;
  state.counters["threads"] = ThreadCount();
  state.SetItemsProcessed(static_cast<int64_t>(report.images) * state.iterations());
}
BENCHMARK(BM_FullDatasetWithImages)->Iterations(1)->UseRealTime()->Unit(benchmark::kSecond);

}  // namespace
}  // namespace visalign::violin

BENCHMARK_MAIN();
