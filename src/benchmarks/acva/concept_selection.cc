// The subset of a concept set one generation asks for (`acva generate/run --filter/--limit`).
#include "visalign/benchmarks/acva/acva.h"

namespace visalign::acva {

ConceptSet SelectConcepts(const ConceptSet& set, const std::map<std::string, std::set<std::string>>& filters,
                          int limit) {
  const auto ids = filters.find("ids");
  const auto categories = filters.find("category");
  ConceptSet out = set;
  out.concepts.clear();
  for (const Concept& c : set.concepts) {
    if (ids != filters.end() && !ids->second.count(c.id)) continue;
    if (categories != filters.end() && !categories->second.count(std::string(CategoryName(c.category)))) continue;
    if (limit > 0 && static_cast<int>(out.concepts.size()) >= limit) break;
    out.concepts.push_back(c);
  }
  return out;
}

}  // namespace visalign::acva
