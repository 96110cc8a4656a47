// The report's section types, one row per benchmark (page.h, SectionTypes).
#include <algorithm>

#include "report/page.h"
#include "visalign/core/benchmarks.h"

namespace visalign::report {
namespace internal {
namespace {

constexpr SectionType kSectionTypes[] = {
    {benchmarks::kViolin, BuildViolinSection},
    {benchmarks::kHues, BuildHuesSection},
    {benchmarks::kHuesNonsense, BuildNonsenseSection},
    {benchmarks::kAcva, BuildAcvaSection},
};

}  // namespace

std::span<const SectionType> SectionTypes() { return kSectionTypes; }

const SectionType* FindSectionType(std::string_view benchmark) {
  const auto it = std::find_if(std::begin(kSectionTypes), std::end(kSectionTypes),
                               [benchmark](const SectionType& t) { return t.benchmark == benchmark; });
  return it == std::end(kSectionTypes) ? nullptr : &*it;
}

}  // namespace internal

std::vector<std::string_view> ReportedBenchmarks() {
  std::vector<std::string_view> ids;
  for (const benchmarks::BenchmarkInfo& b : benchmarks::Benchmarks())
    if (internal::FindSectionType(b.id) != nullptr) ids.push_back(b.id);
  return ids;
}

}  // namespace visalign::report
