// Reading a benchmark's results folder as the results contract defines it.
#include <fmt/format.h>

#include <algorithm>

#include "visalign/core/benchmarks.h"
#include "visalign/core/io.h"
#include "visalign/core/results.h"
#include "visalign/core/untrusted.h"
#include "visalign/report/report.h"

namespace visalign::report {
namespace {
namespace fs = std::filesystem;

// "an output folder of `violin evaluate`, `hues evaluate`, `hues nonsense` or `acva analyze`".
std::string ExpectedFolder() {
  std::vector<std::string_view> commands;
  for (std::string_view id : ReportedBenchmarks()) commands.push_back(benchmarks::FindBenchmark(id)->results_command);
  return "an output folder of " + benchmarks::JoinAlternatives(commands, '`');
}

}  // namespace

Result<ResultsFolder> ReadResultsFolder(const fs::path& dir) {
  const std::string where = "results folder " + dir.string();
  const std::string expected = ExpectedFolder();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound("no such folder", where, expected);
  ResultsFolder folder;
  folder.dir = dir;
  for (const char* name : {"summary.json", "summary.csv", "items.jsonl"})
    if (!fs::is_regular_file(dir / name, ec))
      return Status::NotFound(fmt::format("no {}", name), where,
                              expected + " (summary.json, summary.csv, items.jsonl)");

  VISALIGN_ASSIGN_OR_RETURN(std::string summary_text, ReadFile(dir / "summary.json"));
  Result<Json> summary = ParseJson(summary_text);
  if (!summary.ok()) return Status::InvalidArgument("summary.json is " + summary.status().what(), where, expected);
  folder.summary = std::move(*summary);
  if (!folder.summary.is_object()) return Status::InvalidArgument("summary.json is not a JSON object", where, expected);
  const Json& benchmark = folder.summary.value("benchmark", Json());
  const std::vector<std::string_view> known = ReportedBenchmarks();
  if (!benchmark.is_string() || std::find(known.begin(), known.end(), benchmark.get<std::string>()) == known.end())
    return Status::InvalidArgument(fmt::format("summary.json names benchmark {}", QuoteJson(benchmark)), where,
                                   benchmarks::JoinAlternatives(known));
  folder.benchmark = benchmark.get<std::string>();
  const Json& version = folder.summary.value("schema_version", Json());
  if (version != Json(kResultsSchemaVersion))
    return Status::InvalidArgument(fmt::format("summary.json has schema_version {}", QuoteJson(version)), where,
                                   fmt::format("schema_version {}, written by visalign {} (re-run the benchmark)",
                                               kResultsSchemaVersion, VisalignVersion()));

  VISALIGN_ASSIGN_OR_RETURN(folder.summary_csv, ReadCsv(dir / "summary.csv"));
  VISALIGN_ASSIGN_OR_RETURN(std::string items_text, ReadFile(dir / "items.jsonl"));
  size_t line_number = 0;
  for (std::string_view line : SplitLines(items_text)) {
    ++line_number;
    if (line.empty()) continue;
    Result<Json> item = ParseJson(line);
    if (!item.ok() || !item->is_object())
      return Status::InvalidArgument(
          item.ok() ? "a line of items.jsonl is not a JSON object" : "a line of items.jsonl is " + item.status().what(),
          fmt::format("{}/items.jsonl:{}", dir.string(), line_number), "one object per line");
    folder.items.push_back(std::move(*item));
  }
  return folder;
}

}  // namespace visalign::report
