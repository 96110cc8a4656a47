#include "visalign/core/benchmarks.h"

#include <algorithm>

namespace visalign::benchmarks {
namespace {

constexpr BenchmarkInfo kBenchmarks[] = {
    {kViolin, "VIOLIN", "violin evaluate"},
    {kHues, "Hues and Cues", "hues evaluate"},
    {kHuesNonsense, "Hues and Cues nonsense baseline", "hues nonsense"},
    {kAcva, "ACVA-Bench", "acva analyze"},
};

}  // namespace

std::span<const BenchmarkInfo> Benchmarks() { return kBenchmarks; }

const BenchmarkInfo* FindBenchmark(std::string_view id) {
  const auto it =
      std::find_if(std::begin(kBenchmarks), std::end(kBenchmarks), [id](const BenchmarkInfo& b) { return b.id == id; });
  return it == std::end(kBenchmarks) ? nullptr : &*it;
}

std::string JoinAlternatives(std::span<const std::string_view> items, char quote) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
    out += quote;
    out += items[i];
    out += quote;
  }
  return out;
}

}  // namespace visalign::benchmarks
