// The benchmarks visalign runs, named once: the id each writes into summary.json's "benchmark"
// (ResultsHeader) and into its generation runs' store::RunInfo::benchmark, with the name people
// read and the command that writes its results folder. Every other file spells an id through
// these constants, so a new benchmark is one more constant and one more row of Benchmarks()
// (docs/architecture.md, "Add a benchmark").
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace visalign::benchmarks {

inline constexpr std::string_view kViolin = "violin";
inline constexpr std::string_view kHues = "hues";
// The Hues and Cues nonsense baseline (`hues nonsense`): a results folder of its own.
inline constexpr std::string_view kHuesNonsense = "hues-nonsense";
inline constexpr std::string_view kAcva = "acva";

struct BenchmarkInfo {
  std::string_view id;               // summary.json's "benchmark"
  std::string_view display_name;     // "Hues and Cues nonsense baseline"
  std::string_view results_command;  // the command whose --out is such a results folder: "hues nonsense"
};

// Every benchmark that writes a results folder, in the order documentation lists them.
std::span<const BenchmarkInfo> Benchmarks();
// The entry of `id`, or null for an id no benchmark has.
const BenchmarkInfo* FindBenchmark(std::string_view id);

// `items` quoted and joined for an error's expected part: "\"a\"", "\"a\" or \"b\"",
// "\"a\", \"b\" or \"c\"" (each item as written inside backticks when `quote` is '`').
std::string JoinAlternatives(std::span<const std::string_view> items, char quote = '"');

}  // namespace visalign::benchmarks
