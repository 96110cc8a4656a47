// Loading and validating ACVA concept sets (concepts.jsonl, pairs.jsonl).
#include <cmath>
#include <set>

#include "benchmarks/acva/jsonl.h"
#include "visalign/benchmarks/acva/acva.h"
#include "visalign/core/format.h"
#include "visalign/core/io.h"

namespace visalign::acva {
namespace {

constexpr std::array<std::string_view, 6> kCategoryNames = {"emotion",   "communication", "physical",
                                                            "epistemic", "moral",         "social"};
constexpr std::array<std::string_view, 3> kFrameworkNames = {"componential", "frame", "image-schema"};
constexpr size_t kMinRubricQuestions = 1;

std::string JoinNames(const auto& names) {
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

bool IsValidId(std::string_view id) {
  if (id.empty()) return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  return true;
}

Result<RubricQuestion> ParseQuestion(const Json& j, const std::string& where) {
  if (!j.is_object())
    return Status::InvalidArgument("rubric entry is not an object", where, "{\"id\", \"text_zh\", ...}");
  VISALIGN_RETURN_IF_ERROR(jsonl::CheckKnownFields(j, {"id", "text_zh", "text_en", "weight", "framework"}, where));
  RubricQuestion q;
  VISALIGN_ASSIGN_OR_RETURN(q.id, jsonl::RequiredString(j, "id", where));
  VISALIGN_ASSIGN_OR_RETURN(q.text_zh, jsonl::RequiredString(j, "text_zh", where));
  VISALIGN_ASSIGN_OR_RETURN(q.text_en, jsonl::RequiredString(j, "text_en", where));
  if (!IsValidId(q.id))
    return Status::InvalidArgument("invalid question id \"" + q.id + "\"", where + " field id", "[a-z0-9_-]+");
  VISALIGN_ASSIGN_OR_RETURN(q.weight, jsonl::RequiredNumber(j, "weight", where));
  if (!(q.weight > 0) || !std::isfinite(q.weight))
    return Status::InvalidArgument("weight " + FormatNumber(q.weight) + " of question \"" + q.id + "\"",
                                   where + " field weight", "a finite weight > 0");
  VISALIGN_ASSIGN_OR_RETURN(std::string framework, jsonl::RequiredString(j, "framework", where));
  auto fw = FrameworkFromName(framework);
  if (!fw)
    return Status::InvalidArgument("unknown framework \"" + framework + "\"", where + " field framework",
                                   "one of: " + JoinNames(kFrameworkNames));
  q.framework = *fw;
  return q;
}

Result<Concept> ParseConcept(const Json& j, const std::string& where) {
  if (!j.is_object()) return Status::InvalidArgument("line is not a JSON object", where, "one concept object per line");
  VISALIGN_RETURN_IF_ERROR(
      jsonl::CheckKnownFields(j, {"id", "word", "gloss_en", "category", "definition", "ratings", "rubric"}, where));
  Concept c;
  VISALIGN_ASSIGN_OR_RETURN(c.id, jsonl::RequiredString(j, "id", where));
  if (!IsValidId(c.id))
    return Status::InvalidArgument("invalid concept id \"" + c.id + "\"", where + " field id", "[a-z0-9_-]+");
  VISALIGN_ASSIGN_OR_RETURN(c.word, jsonl::RequiredString(j, "word", where));
  VISALIGN_ASSIGN_OR_RETURN(c.gloss_en, jsonl::RequiredString(j, "gloss_en", where));
  VISALIGN_ASSIGN_OR_RETURN(std::string category, jsonl::RequiredString(j, "category", where));
  auto cat = CategoryFromName(category);
  if (!cat)
    return Status::InvalidArgument("unknown category \"" + category + "\"", where + " field category",
                                   "one of: " + JoinNames(kCategoryNames));
  c.category = *cat;
  if (j.contains("definition")) {
    VISALIGN_ASSIGN_OR_RETURN(c.definition, jsonl::RequiredString(j, "definition", where));
  }
  if (j.contains("ratings")) {
    const auto& r = j["ratings"];
    if (!r.is_object())
      return Status::InvalidArgument("ratings is not an object", where + " field ratings",
                                     "{\"imageability\": 4.1, ...}");
    for (const auto& [name, value] : r.items()) {
      if (!value.is_number() || !std::isfinite(value.get<double>()))
        return Status::InvalidArgument("rating \"" + name + "\" is not a number", where + " field ratings." + name,
                                       "a finite number");
      c.ratings[name] = value.get<double>();
    }
  }
  if (!j.contains("rubric") || !j["rubric"].is_array())
    return Status::InvalidArgument("concept \"" + c.id + "\" has no rubric array", where + " field rubric",
                                   "an array of rubric questions");
  const auto& rubric = j["rubric"];
  if (rubric.size() < kMinRubricQuestions)
    return Status::InvalidArgument("concept \"" + c.id + "\" has an empty rubric", where + " field rubric",
                                   "at least one rubric question (4-6 recommended)");
  std::set<std::string> question_ids;
  for (size_t i = 0; i < rubric.size(); ++i) {
    const std::string qwhere = where + " field rubric[" + std::to_string(i) + "]";
    VISALIGN_ASSIGN_OR_RETURN(RubricQuestion q, ParseQuestion(rubric[i], qwhere));
    if (!question_ids.insert(q.id).second)
      return Status::InvalidArgument("duplicate question id \"" + q.id + "\" in concept \"" + c.id + "\"", qwhere,
                                     "question ids unique within a concept");
    c.rubric.push_back(std::move(q));
  }
  return c;
}

}  // namespace

std::string_view CategoryName(Category category) { return kCategoryNames[static_cast<size_t>(category)]; }

std::optional<Category> CategoryFromName(std::string_view name) {
  for (Category c : kCategories)
    if (CategoryName(c) == name) return c;
  return std::nullopt;
}

std::string_view FrameworkName(Framework framework) { return kFrameworkNames[static_cast<size_t>(framework)]; }

std::optional<Framework> FrameworkFromName(std::string_view name) {
  for (size_t i = 0; i < kFrameworkNames.size(); ++i)
    if (kFrameworkNames[i] == name) return static_cast<Framework>(i);
  return std::nullopt;
}

std::optional<size_t> ConceptSet::IndexOf(std::string_view id) const {
  for (size_t i = 0; i < concepts.size(); ++i)
    if (concepts[i].id == id) return i;
  return std::nullopt;
}

Result<std::vector<Concept>> ParseConcepts(std::string_view text, const std::string& source) {
  std::vector<Concept> concepts;
  std::map<std::string, std::string> first_seen;  // id -> where
  VISALIGN_RETURN_IF_ERROR(jsonl::ForEachLine(text, source, [&](const Json& j, const std::string& where) -> Status {
    VISALIGN_ASSIGN_OR_RETURN(Concept c, ParseConcept(j, where));
    auto [it, inserted] = first_seen.emplace(c.id, where);
    if (!inserted)
      return Status::InvalidArgument("duplicate concept id \"" + c.id + "\" (first at " + it->second + ")",
                                     where + " field id", "unique concept ids");
    concepts.push_back(std::move(c));
    return Status::Ok();
  }));
  if (concepts.empty()) return Status::InvalidArgument("no concepts", source, "one JSON concept object per line");
  return concepts;
}

Result<std::vector<ConceptPair>> ParsePairs(std::string_view text, const std::string& source,
                                            const std::vector<Concept>& concepts) {
  std::set<std::string> ids;
  for (const Concept& c : concepts) ids.insert(c.id);
  std::vector<ConceptPair> pairs;
  std::set<std::pair<std::string, std::string>> seen;
  VISALIGN_RETURN_IF_ERROR(jsonl::ForEachLine(text, source, [&](const Json& j, const std::string& where) -> Status {
    if (!j.is_object()) return Status::InvalidArgument("line is not a JSON object", where, "{\"a\": ID, \"b\": ID}");
    VISALIGN_RETURN_IF_ERROR(jsonl::CheckKnownFields(j, {"a", "b", "note"}, where));
    ConceptPair p;
    VISALIGN_ASSIGN_OR_RETURN(p.a, jsonl::RequiredString(j, "a", where));
    VISALIGN_ASSIGN_OR_RETURN(p.b, jsonl::RequiredString(j, "b", where));
    if (j.contains("note")) {
      VISALIGN_ASSIGN_OR_RETURN(p.note, jsonl::RequiredString(j, "note", where));
    }
    for (const auto& [field, id] : {std::pair{"a", p.a}, std::pair{"b", p.b}})
      if (!ids.count(id))
        return Status::InvalidArgument("pair names unknown concept \"" + id + "\"", where + " field " + field,
                                       "a concept id from the concepts file");
    if (p.a == p.b)
      return Status::InvalidArgument("pair of a concept with itself (\"" + p.a + "\")", where,
                                     "two different concepts");
    if (!seen.insert(std::minmax(p.a, p.b)).second)
      return Status::InvalidArgument("duplicate pair " + p.a + "/" + p.b, where, "each pair once");
    pairs.push_back(std::move(p));
    return Status::Ok();
  }));
  return pairs;
}

Result<ConceptSet> LoadConceptSet(const std::filesystem::path& concepts_file, const std::filesystem::path& pairs_file) {
  VISALIGN_ASSIGN_OR_RETURN(std::string concepts_text, ReadFile(concepts_file));
  VISALIGN_ASSIGN_OR_RETURN(std::string pairs_text, ReadFile(pairs_file));
  ConceptSet set;
  VISALIGN_ASSIGN_OR_RETURN(set.concepts, ParseConcepts(concepts_text, concepts_file.string()));
  VISALIGN_ASSIGN_OR_RETURN(set.pairs, ParsePairs(pairs_text, pairs_file.string(), set.concepts));
  set.fingerprint = Sha256Hex(Sha256Hex(concepts_text) + Sha256Hex(pairs_text));
  return set;
}

Result<std::filesystem::path> StarterConceptsFile() { return DataFile("acva/concepts.jsonl"); }
Result<std::filesystem::path> StarterPairsFile() { return DataFile("acva/pairs.jsonl"); }

}  // namespace visalign::acva
