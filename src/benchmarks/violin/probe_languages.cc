// Reading and checking the probes' memory colours and languages (probe_languages.h).
#include "visalign/benchmarks/violin/probe_languages.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "benchmarks/violin/dataset_templates.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/core/untrusted.h"

namespace visalign::violin {
namespace {

namespace fs = std::filesystem;

// The placeholders of each probe template (docs/violin.md "Probes").
const std::map<std::string, std::vector<std::string_view>>& TemplatePlaceholders() {
  static const std::map<std::string, std::vector<std::string_view>> names = {
      {"base", {"color"}},
      {"negated", {"base"}},
      {"entity", {"base", "entity"}},
      {"context", {"color", "object"}},
      {"neutral", {"base", "words"}},
      {"inertia_percent",
       {"direction", "first", "first_share", "dimension", "first_color", "second", "second_share", "second_color"}},
      {"inertia_pixels",
       {"side", "direction", "first", "first_pixels", "dimension", "first_color", "second_pixels", "second_color"}},
      {"geometry_pixels", {"side", "background", "color", "shape", "measure", "size", "cx", "cy"}},
      {"geometry_fractions", {"background", "color", "shape", "measure", "size", "cx", "cy"}},
      {"geometry_pair", {"side", "background", "color", "size", "cx", "cy", "distance"}},
  };
  return names;
}
// The words every language defines (docs/violin.md "Probes").
constexpr const char* kWordKeys[] = {
    "horizontally", "vertically", "top",    "bottom", "left",     "right",          "height",
    "width",        "square",     "circle", "side",   "diameter", "list_separator", "decimal_separator"};

}  // namespace

Result<std::vector<MemoryColor>> LoadMemoryColors(const fs::path& csv) {
  VISALIGN_ASSIGN_OR_RETURN(CsvTable table, ReadCsv(csv));
  VISALIGN_ASSIGN_OR_RETURN(size_t object, table.Column("object"));
  VISALIGN_ASSIGN_OR_RETURN(size_t l, table.Column("L"));
  VISALIGN_ASSIGN_OR_RETURN(size_t a, table.Column("a"));
  VISALIGN_ASSIGN_OR_RETURN(size_t b, table.Column("b"));
  std::vector<MemoryColor> out;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const auto& row = table.rows[i];
    MemoryColor m;
    m.object = row[object];
    VISALIGN_ASSIGN_OR_RETURN(m.lab.L, ParseDouble(row[l], table.Where(i) + " column L"));
    VISALIGN_ASSIGN_OR_RETURN(m.lab.a, ParseDouble(row[a], table.Where(i) + " column a"));
    VISALIGN_ASSIGN_OR_RETURN(m.lab.b, ParseDouble(row[b], table.Where(i) + " column b"));
    if (m.object.empty()) return Status::Corrupt("empty object name", table.Where(i), "an object word");
    out.push_back(std::move(m));
  }
  if (out.empty()) return Status::Corrupt("no rows", csv.string(), "at least one memory colour");
  return out;
}

std::string ProbeLanguage::Fill(const std::string& name,
                                const std::vector<std::pair<std::string_view, std::string>>& values) const {
  std::vector<std::string_view> keys;
  std::vector<std::string> texts;
  for (const auto& [key, text] : values) keys.push_back(key), texts.push_back(text);
  return FillPlaceholders(prompts.at(name), keys, texts);
}

const std::string& ProbeLanguage::Object(const std::string& object) const {
  const auto it = objects.find(object);
  return it == objects.end() ? object : it->second;
}

Result<std::vector<ProbeLanguage>> LoadProbeLanguages(const fs::path& json, const std::vector<std::string>& codes,
                                                      const std::vector<MemoryColor>& memory) {
  VISALIGN_ASSIGN_OR_RETURN(Json j, ReadJsonFile(json));  // a syntax error names the file
  const std::string file = json.string();
  const Json* all = j.is_object() && j.contains("languages") && j["languages"].is_object() ? &j["languages"] : nullptr;
  if (all == nullptr) return Status::Corrupt("no \"languages\" object", file, "{\"languages\": {\"en\": {...}, ...}}");
  auto strings = [&](const Json& lang, const std::string& where, const char* key) -> Result<std::vector<std::string>> {
    const std::string expected = "a non-empty list of non-empty strings";
    if (!lang.contains(key) || !lang[key].is_array() || lang[key].empty())
      return Status::Corrupt("missing or empty \"" + std::string(key) + "\"", where, expected);
    std::vector<std::string> out;
    for (const Json& w : lang[key]) {
      if (!w.is_string() || w.get<std::string>().empty())
        return Status::Corrupt("unexpected value " + QuoteJson(w), where + " field " + key, expected);
      out.push_back(w.get<std::string>());
    }
    return out;
  };
  auto table = [&](const Json& lang, const std::string& where, const char* key,
                   const std::vector<std::string>& required) -> Result<std::map<std::string, std::string>> {
    std::map<std::string, std::string> out;
    if (!lang.contains(key) || !lang[key].is_object())
      return Status::Corrupt("missing \"" + std::string(key) + "\"", where, "an object of strings");
    for (const auto& [k, v] : lang[key].items()) {
      if (!v.is_string() || v.get<std::string>().empty())
        return Status::Corrupt("unexpected value " + QuoteJson(v), where + " field " + key + "." + k,
                               "a non-empty string");
      out[k] = v.get<std::string>();
    }
    for (const std::string& k : required)
      if (!out.count(k))
        return Status::Corrupt("missing " + QuoteText(k), where + " field " + key, "every key docs/violin.md lists");
    return out;
  };
  std::vector<std::string> templates, word_keys(std::begin(kWordKeys), std::end(kWordKeys)), objects;
  for (const auto& [name, placeholders] : TemplatePlaceholders()) templates.push_back(name);
  for (const MemoryColor& m : memory) objects.push_back(m.object);
  std::vector<ProbeLanguage> out;
  size_t entities = 0, neutral = 0;         // English's list lengths
  std::vector<std::string> order = {"en"};  // English first: the list lengths the others must match
  for (const std::string& code : codes)
    if (code != "en") order.push_back(code);
  for (const std::string& code : order) {
    const std::string where = file + " language " + code;
    if (!all->contains(code) || !(*all)[code].is_object())
      return Status::Corrupt("no language " + QuoteText(code), file, "an object per language");
    const Json& lang = (*all)[code];
    ProbeLanguage l;
    l.code = code;
    VISALIGN_ASSIGN_OR_RETURN(l.prompts, table(lang, where, "prompts", templates));
    for (const auto& [name, placeholders] : TemplatePlaceholders()) {
      VISALIGN_RETURN_IF_ERROR(
          CheckPlaceholders(l.prompts[name], placeholders, where + " field prompts." + name, /*exactly_once=*/false));
    }
    VISALIGN_ASSIGN_OR_RETURN(l.words, table(lang, where, "words", word_keys));
    if (code != "en") {
      VISALIGN_ASSIGN_OR_RETURN(l.objects, table(lang, where, "objects", objects));
    }
    VISALIGN_ASSIGN_OR_RETURN(l.entities, strings(lang, where, "entities"));
    VISALIGN_ASSIGN_OR_RETURN(l.neutral, strings(lang, where, "neutral"));
    if (code == "en") {
      entities = l.entities.size(), neutral = l.neutral.size();
    } else if (l.entities.size() != entities || l.neutral.size() != neutral) {
      return Status::Corrupt(
          fmt::format("{} entities and {} neutral words", l.entities.size(), l.neutral.size()), where,
          fmt::format("as many as English's ({} and {}): the lists are parallel", entities, neutral));
    }
    if (std::find(codes.begin(), codes.end(), code) != codes.end()) out.push_back(std::move(l));
  }
  // In the order of `codes`.
  std::stable_sort(out.begin(), out.end(), [&](const ProbeLanguage& a, const ProbeLanguage& b) {
    return std::find(codes.begin(), codes.end(), a.code) < std::find(codes.begin(), codes.end(), b.code);
  });
  return out;
}

}  // namespace visalign::violin
