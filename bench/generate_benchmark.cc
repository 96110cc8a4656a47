// Generation throughput: the client (curl transport, images backend, runner, SQLite store) against
// the in-process VIOLIN reference server (exact profile, 256x256 PNGs, no latency) at concurrency
// 1, 8 and 32. Counters: images/s, and overhead_ms = per-image wall time x concurrency minus the
// server's own handler time per image (rendering + PNG + base64), i.e. what the client and store
// add per image.
#include <benchmark/benchmark.h>

#include <atomic>
#include <filesystem>
#include <random>

#include "visalign/backends/backends.h"
#include "visalign/backends/runner.h"
#include "visalign/benchmarks/violin/dataset.h"
#include "visalign/benchmarks/violin/reference_server.h"
#include "visalign/core/io.h"

namespace visalign {
namespace {
namespace fs = std::filesystem;

constexpr int kItems = 256;

struct Fixture {
  fs::path dir;
  std::vector<backends::WorkItem> work;
  std::unique_ptr<violin::ReferenceServer> server;
  Fixture() {
    dir = fs::temp_directory_path() / ("visalign_generate_bench_" + std::to_string(std::random_device{}()));
    violin::DatasetOptions o;
    o.variations = {1, 2, 3};
    o.scale = 0.05;
    o.write_images = false;
    o.show_progress = false;
    auto items = violin::BuildItems(o).value();
    std::string text;
    for (const auto& it : items) text += violin::ManifestLine(it) + "\n";
    fs::create_directories(dir / "ds");
    (void)WriteFileAtomic(dir / "ds/manifest.jsonl", text);
    for (int i = 0; i < kItems; ++i)
      work.push_back({items[i % items.size()].id, items[i % items.size()].prompt, i, {}});
    violin::ReferenceServerOptions so;
    so.dataset = dir / "ds";
    server = violin::ReferenceServer::Start(so).value();
  }
  ~Fixture() {
    server->Stop();
    fs::remove_all(dir);
  }
};

Fixture& Shared() {
  static Fixture f;
  return f;
}

void BM_GenerateAgainstReferenceServer(benchmark::State& state) {
  Fixture& f = Shared();
  const int concurrency = static_cast<int>(state.range(0));
  backends::OpenAiImagesOptions o;
  o.endpoint.base_url = f.server->url();
  o.model = "reference";
  o.size = "256x256";
  auto backend = backends::MakeOpenAiImagesBackend(o, backends::MakeCurlTransport()).value();
  backends::RunnerOptions ro;
  ro.concurrency = concurrency;
  ro.progress = false;
  std::atomic<bool> stop{false};
  size_t images = 0;
  double server_ms_before = f.server->Stats()["handler_ms"].get<double>();
  double wall_s = 0;
  int round = 0;
  for (auto _ : state) {
    fs::path store_dir = f.dir / ("store" + std::to_string(concurrency) + "_" + std::to_string(round++));
    auto store = store::OpenStore(store_dir).value();
    auto t0 = std::chrono::steady_clock::now();
    auto summary = backends::RunGeneration(*store, {"bench", "violin", "fp", {}, ""}, f.work, *backend, ro, stop);
    wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!summary.ok() || summary->done != f.work.size()) state.SkipWithError("generation did not complete");
    images += f.work.size();
    store.reset();
    fs::remove_all(store_dir);
  }
  double server_ms = f.server->Stats()["handler_ms"].get<double>() - server_ms_before;
  state.counters["images_per_s"] = static_cast<double>(images) / wall_s;
  state.counters["server_ms_per_image"] = server_ms / static_cast<double>(images);
  state.counters["overhead_ms_per_image"] = (wall_s * 1000.0 * concurrency - server_ms) / static_cast<double>(images);
}
BENCHMARK(BM_GenerateAgainstReferenceServer)->Arg(1)->Arg(8)->Arg(32)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace visalign

BENCHMARK_MAIN();
