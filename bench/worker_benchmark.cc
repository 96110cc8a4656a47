// The worker backend's overhead and an asynchronous provider's pacing (issue 27, point 7).
//   BM_PipelineInProcess  the imitation pipeline (a 64x64 PNG of the prompt's hash colour, encoded
//                         and checked) called in this process: the baseline.
//   BM_PipelineOnWorker   the same pipeline in a worker process (this program re-run with
//                         --as-worker) through the worker backend: request line, file hand-off,
//                         answer line, read and check. overhead_ms = its time per image minus the
//                         baseline's (target < 2 ms).
//   BM_AsyncAtTheRateLimit  64 items in flight against the reference server's bfl imitation limited
//                         to kRateLimit requests/s, with --rate at that limit: the server's measured
//                         request rate (target within 10 % of the limit) and its 429s (target 0).
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>

#include "visalign/backends/backends.h"
#include "visalign/backends/providers.h"
#include "visalign/backends/runner.h"
#include "visalign/backends/worker.h"
#include "visalign/benchmarks/violin/dataset.h"
#include "visalign/benchmarks/violin/reference_server.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/imaging/image.h"
#include "visalign/store.h"

namespace visalign {
namespace {
namespace fs = std::filesystem;

constexpr int kSide = 64;
constexpr double kRateLimit = 40;  // requests/s of the imitation and --rate
constexpr int kInFlight = 64;
constexpr int kAsyncItems = 512;

// The imitation pipeline: a PNG of one colour derived from the prompt.
std::string Pipeline(const std::string& prompt) {
  imaging::Image img(kSide, kSide);
  const size_t h = std::hash<std::string>{}(prompt);
  for (int y = 0; y < kSide; ++y)
    for (int x = 0; x < kSide; ++x) {
      uint8_t* p = img.pixel(x, y);
      p[0] = static_cast<uint8_t>(h), p[1] = static_cast<uint8_t>(h >> 8), p[2] = static_cast<uint8_t>(h >> 16);
    }
  return imaging::EncodePng(img).value();
}

// --as-worker: the worker protocol over Pipeline.
int ServeAsWorker() {
  std::cout << R"({"ready": true, "model": "imitation"})" << std::endl;
  for (std::string line; std::getline(std::cin, line);) {
    const auto request = Json::parse(line);
    std::ofstream(request["out"].get<std::string>(), std::ios::binary) << Pipeline(request["prompt"]);
    std::cout << Json{{"id", request["id"]}, {"ok", true}}.dump() << std::endl;
  }
  return 0;
}

std::string g_self;  // this program's path

void BM_PipelineInProcess(benchmark::State& state) {
  int n = 0;
  for (auto _ : state) {
    const std::string png = Pipeline("prompt " + std::to_string(n++));
    benchmark::DoNotOptimize(backends::ValidateImageBytes(png, "image"));
  }
}
BENCHMARK(BM_PipelineInProcess)->Unit(benchmark::kMicrosecond);

void BM_PipelineOnWorker(benchmark::State& state) {
  const fs::path dir = fs::temp_directory_path() / ("visalign_worker_bench_" + std::to_string(::getpid()));
  backends::WorkerOptions o;
  o.command_template = g_self + " --as-worker";
  o.scratch_dir = dir;
  auto backend = backends::MakeWorkerBackend(o).value();
  std::atomic<bool> cancel{false};
  int n = 0;
  (void)backend->Generate({"warm", "warm-up", 0, 1}, cancel);  // the start is not per image
  for (auto _ : state) {
    auto image = backend->Generate({"item", "prompt " + std::to_string(n), n, n}, cancel);
    ++n;
    if (!image.ok()) state.SkipWithError(image.error.message.c_str());
  }
  backend.reset();
  fs::remove_all(dir);
}
BENCHMARK(BM_PipelineOnWorker)->Unit(benchmark::kMicrosecond);

void BM_AsyncAtTheRateLimit(benchmark::State& state) {
  const fs::path dir = fs::temp_directory_path() / ("visalign_async_bench_" + std::to_string(::getpid()));
  violin::DatasetOptions d;
  d.variations = {1, 2, 3};
  d.scale = 0.05;
  d.write_images = false;
  d.show_progress = false;
  const auto items = violin::BuildItems(d).value();
  std::string text;
  for (const auto& it : items) text += violin::ManifestLine(it) + "\n";
  fs::create_directories(dir / "ds");
  (void)WriteFileAtomic(dir / "ds/manifest.jsonl", text);
  std::vector<backends::WorkItem> work;
  for (int i = 0; i < kAsyncItems; ++i)
    work.push_back({items[i % items.size()].id, items[i % items.size()].prompt, i / static_cast<int>(items.size()), i});
  double rate = 0, too_many = 0, seconds = 0;
  int round = 0;
  for (auto _ : state) {
    violin::ReferenceServerOptions so;
    so.dataset = dir / "ds";
    so.api = "bfl";
    so.rate_limit = kRateLimit;
    so.job_ms = 300;
    so.default_size = kSide;
    auto server = violin::ReferenceServer::Start(so).value();
    backends::ProviderOptions po;
    po.kind = "bfl";
    po.endpoint = server->url();
    po.model = "flux-dev";
    po.poll.initial = backends::Millis(200);
    po.poll.max = backends::Millis(1000);
    auto backend = backends::MakeProviderBackend(po, backends::MakeCurlTransport()).value();
    backends::RunnerOptions ro;
    ro.concurrency = kInFlight;
    ro.rate = kRateLimit;
    ro.progress = false;
    auto store = store::OpenStore(dir / ("store" + std::to_string(round++))).value();
    std::atomic<bool> stop{false};
    const auto t0 = std::chrono::steady_clock::now();
    auto summary = backends::RunGeneration(*store, {"bench", "violin", "fp", {}, ""}, work, *backend, ro, stop);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!summary.ok() || summary->done != work.size()) state.SkipWithError("generation did not complete");
    const Json stats = server->Stats();
    seconds += s;
    rate += stats["requests"].get<double>() / s;
    too_many += stats["by_status"].value("429", 0);
    state.counters["polls"] = stats["jobs"]["polls"].get<double>();
    state.counters["requests"] = stats["requests"].get<double>();
  }
  state.counters["limit_per_s"] = kRateLimit;
  state.counters["server_requests_per_s"] = rate / static_cast<double>(state.iterations());
  state.counters["share_of_limit"] = rate / static_cast<double>(state.iterations()) / kRateLimit;
  state.counters["http_429"] = too_many / static_cast<double>(state.iterations());
  state.counters["seconds"] = seconds / static_cast<double>(state.iterations());
  fs::remove_all(dir);
}
BENCHMARK(BM_AsyncAtTheRateLimit)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace
}  // namespace visalign

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--as-worker") return visalign::ServeAsWorker();
  visalign::g_self = std::filesystem::canonical("/proc/self/exe").string();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
