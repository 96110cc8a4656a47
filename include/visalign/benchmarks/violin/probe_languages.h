// The inputs VIOLIN's probes are written from (probes.h): the memory colours of everyday objects and
// each language's probe prompts, words and lists, read from data/violin/ and checked so that every
// template can be filled and every language's items mean the same (docs/violin.md "Probes").
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "visalign/color.h"
#include "visalign/core/status.h"

namespace visalign::violin {

// An object with a reference ("memory") colour: data/violin/memory_colors.csv, derived from the Hues
// and Cues human answers (data/violin/NOTICE.md).
struct MemoryColor {
  std::string object;
  color::Lab lab;
};
Result<std::vector<MemoryColor>> LoadMemoryColors(const std::filesystem::path& csv);
// One language's probe prompts (data/violin/probe_prompts.json, docs/violin.md "Probes"): templates by
// name (base, negated, entity, context, neutral, inertia_percent, inertia_pixels, geometry_pixels,
// geometry_fractions, geometry_pair), each with exactly its placeholders; the words they are filled
// with; the negation entities and the neutral words, parallel lists (entry i means the same in every
// language, so the conditions of a group differ across languages only in their language); and the
// memory-colour objects as the context template names them (English: the object itself).
struct ProbeLanguage {
  std::string code;
  std::map<std::string, std::string> prompts, words, objects;
  std::vector<std::string> entities, neutral;
  // prompts[name] with each {key} of `values` replaced.
  std::string Fill(const std::string& name, const std::vector<std::pair<std::string_view, std::string>>& values) const;
  const std::string& Word(const std::string& key) const { return words.at(key); }
  const std::string& Object(const std::string& object) const;
};
// Reads the languages `codes` from `json`, checked: every template with exactly its placeholders, every
// word, the entity and neutral lists as long as English's, every object of `memory` named. Errors name
// the file, the language and the field.
Result<std::vector<ProbeLanguage>> LoadProbeLanguages(const std::filesystem::path& json,
                                                      const std::vector<std::string>& codes,
                                                      const std::vector<MemoryColor>& memory);
// The languages probe prompts exist in, in manifest order.
inline const std::vector<std::string>& ProbeLanguageCodes() {
  static const std::vector<std::string> codes = {"en", "zh", "fr"};
  return codes;
}

}  // namespace visalign::violin
