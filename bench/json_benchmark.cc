// ParseJson against nlohmann's own parsers on an object of many keys (a tokenizer's vocabulary):
// visalign::Json keeps insertion order, and nlohmann's DOM builder inserts each key of an ordered
// object with a linear search, so its parse is quadratic in the keys; ParseJson's builder indexes
// the open object's keys (src/core/untrusted.cc). docs/performance.md, "JSON".
#include <benchmark/benchmark.h>

#include <string>

#include "visalign/core/untrusted.h"

namespace visalign {
namespace {

std::string ObjectOfKeys(int64_t keys) {
  std::string text = "{";
  for (int64_t i = 0; i < keys; ++i)
    text += (i ? ",\"piece" : "\"piece") + std::to_string(i) + "\":" + std::to_string(i);
  return text + "}";
}

void BM_ParseJson(benchmark::State& state) {
  const std::string text = ObjectOfKeys(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(ParseJson(text));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_NlohmannOrderedParse(benchmark::State& state) {
  const std::string text = ObjectOfKeys(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(nlohmann::ordered_json::parse(text));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_NlohmannSortedParse(benchmark::State& state) {
  const std::string text = ObjectOfKeys(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(nlohmann::json::parse(text));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

BENCHMARK(BM_ParseJson)->Arg(1000)->Arg(50000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NlohmannOrderedParse)->Arg(1000)->Arg(50000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NlohmannSortedParse)->Arg(1000)->Arg(50000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace visalign

BENCHMARK_MAIN();
