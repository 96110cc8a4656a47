// The benchmark registry: one entry per id, each findable, and the wording errors list them in.
#include "visalign/core/benchmarks.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace visalign::benchmarks {
namespace {

TEST(Benchmarks, ListsEachIdOnceWithANameAndTheCommandThatWritesIt) {
  std::set<std::string_view> ids;
  for (const BenchmarkInfo& b : Benchmarks()) {
    EXPECT_TRUE(ids.insert(b.id).second) << b.id;
    EXPECT_FALSE(b.display_name.empty()) << b.id;
    EXPECT_FALSE(b.results_command.empty()) << b.id;
    EXPECT_EQ(FindBenchmark(b.id), &b);
  }
  EXPECT_EQ(ids, (std::set<std::string_view>{kViolin, kHues, kHuesNonsense, kAcva}));
  EXPECT_EQ(FindBenchmark("hues-nonsense")->results_command, "hues nonsense");
}

TEST(Benchmarks, UnknownIdIsNotFound) {
  EXPECT_EQ(FindBenchmark("run"), nullptr);
  EXPECT_EQ(FindBenchmark(""), nullptr);
  EXPECT_EQ(FindBenchmark("VIOLIN"), nullptr);  // ids are exact
}

TEST(JoinAlternatives, QuotesAndJoinsWithOrBeforeTheLast) {
  const std::vector<std::string_view> three = {"a", "b", "c"};
  EXPECT_EQ(JoinAlternatives(three), "\"a\", \"b\" or \"c\"");
  EXPECT_EQ(JoinAlternatives(std::span(three).first(2), '`'), "`a` or `b`");
  EXPECT_EQ(JoinAlternatives(std::span(three).first(1)), "\"a\"");
  EXPECT_EQ(JoinAlternatives({}), "");
}

}  // namespace
}  // namespace visalign::benchmarks
