// The report's section registry (page.h SectionTypes, core/benchmarks.h): the recipe "add a
// benchmark" of docs/architecture.md, walked. Every benchmark has a section, the report accepts
// exactly those results types and names them all when it refuses one, and each one's fixture
// (tests/data/report/) becomes a section headed by the benchmark's display name.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "report/page.h"
#include "testing/dirs.h"
#include "visalign/core/benchmarks.h"
#include "visalign/core/io.h"
#include "visalign/report/report.h"

namespace visalign::report {
namespace {
namespace fs = std::filesystem;

fs::path Fixtures() { return testing::DataDir().parent_path() / "tests" / "data" / "report"; }

TEST(SectionRegistry, EveryBenchmarkHasExactlyOneSectionAndNothingElseDoes) {
  std::set<std::string_view> sections;
  for (const internal::SectionType& type : internal::SectionTypes()) {
    EXPECT_TRUE(sections.insert(type.benchmark).second) << type.benchmark << " has two sections";
    EXPECT_NE(benchmarks::FindBenchmark(type.benchmark), nullptr) << type.benchmark << " is not in core/benchmarks.h";
    EXPECT_NE(type.build, nullptr);
  }
  std::vector<std::string_view> all;
  for (const benchmarks::BenchmarkInfo& b : benchmarks::Benchmarks()) all.push_back(b.id);
  EXPECT_EQ(ReportedBenchmarks(), all);
  EXPECT_EQ(sections.size(), all.size());
}

TEST(SectionRegistry, AnUnknownResultsTypeIsRefusedNamingEveryAcceptedOne) {
  testing::TempDir t;
  fs::copy(Fixtures() / "acva", t / "acva", fs::copy_options::recursive);
  nlohmann::json summary = nlohmann::json::parse(*ReadFile(t / "acva" / "summary.json"));
  summary["benchmark"] = "mmlu";
  ASSERT_TRUE(WriteFileAtomic(t / "acva" / "summary.json", summary.dump()).ok());
  Result<ResultsFolder> folder = ReadResultsFolder(t / "acva");
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.status().what(), "summary.json names benchmark \"mmlu\"");
  EXPECT_EQ(folder.status().expected(), "\"violin\", \"hues\", \"hues-nonsense\" or \"acva\"");
  for (std::string_view id : ReportedBenchmarks())
    EXPECT_NE(folder.status().expected().find("\"" + std::string(id) + "\""), std::string::npos) << id;
  // A folder without summary.json is expected to come from one of the commands that write one.
  Result<ResultsFolder> empty = ReadResultsFolder(t.Write("empty/x", "").parent_path());
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().expected(),
            "an output folder of `violin evaluate`, `hues evaluate`, `hues nonsense` or `acva analyze` "
            "(summary.json, summary.csv, items.jsonl)");
}

TEST(SectionRegistry, EachBenchmarksFixtureBecomesItsSectionUnderItsDisplayName) {
  std::map<std::string, fs::path> fixture;  // benchmark id -> a results folder of it
  for (const fs::directory_entry& e : fs::directory_iterator(Fixtures())) {
    if (!e.is_directory()) continue;
    Result<ResultsFolder> folder = ReadResultsFolder(e.path());
    ASSERT_TRUE(folder.ok()) << folder.status().ToString();
    fixture.emplace(folder->benchmark, e.path());
  }
  for (std::string_view id : ReportedBenchmarks()) {
    SCOPED_TRACE(std::string(id));
    ASSERT_TRUE(fixture.count(std::string(id))) << "no fixture in tests/data/report for this benchmark";
    Result<ResultsFolder> folder = ReadResultsFolder(fixture[std::string(id)]);
    ASSERT_TRUE(folder.ok());
    Result<Report> report = BuildReport({*folder}, {}, ReportOptions{});
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    ASSERT_EQ(report->sections.size(), 1u);
    EXPECT_EQ(report->sections[0].benchmark, id);
    EXPECT_EQ(report->sections[0].id, std::string(id) + "-1");
    EXPECT_TRUE(
        report->sections[0].heading.starts_with(std::string(benchmarks::FindBenchmark(id)->display_name) + " — "))
        << report->sections[0].heading;
    EXPECT_FALSE(report->figures.empty()) << "the section drew no figure";
  }
}

}  // namespace
}  // namespace visalign::report
