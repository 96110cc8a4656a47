// The six VIOLIN variations and their prompt templates (data/violin/templates.json): loading,
// validation and filling.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/benchmarks/violin/manifest.h"
#include "visalign/core/status.h"

namespace visalign::violin {

// A group of items sharing language and notation; sizes are per group at --scale 1.
struct GroupSpec {
  std::string_view language, notation;
};
struct VariationSpec {
  int variation = 0;
  size_t base_items_per_group = 0;  // the published benchmark's size
  std::vector<Layout> layouts;      // layouts its templates may use (all with the same block count)
  bool fuzzy = false;               // a range {low}..{high} instead of exact colors
  std::vector<GroupSpec> groups;
};
// Variations 1..6 in order (docs/violin.md).
const std::vector<VariationSpec>& VariationSpecs();
const VariationSpec* FindVariation(int variation);  // nullptr if not 1..6

struct PromptTemplate {
  std::string id;
  int variation = 1;
  std::string language;  // en | zh | fr
  std::string notation;  // hex | rgb | hsl
  Layout layout = Layout::kSingle;
  std::string prompt_split;  // train | test
  std::string text;
  int number = 0;  // 1-based position among its variation's templates (item ids' tNN)
};

// Placeholder names in layout order: single {color}; h2 {top} {bottom}; v2 {left} {right};
// q4 {top_left} {top_right} {bottom_left} {bottom_right}; fuzzy {low} {high}.
std::vector<std::string_view> PlaceholderNames(Layout layout, bool fuzzy);

// Parses and validates a templates document: unique ids, a known variation/language/notation/
// layout combination (docs/violin.md), every placeholder of the layout exactly once and no other
// `{...}`. Errors name `source`, the template id and the field.
Result<std::vector<PromptTemplate>> ParseTemplates(std::string_view json_text, const std::string& source);
Result<std::vector<PromptTemplate>> LoadTemplates(const std::filesystem::path& path);

// Checks `text`'s placeholders: only {name}s of `names`, each present (exactly once when `exactly_once`);
// errors name `where` and what was expected.
Status CheckPlaceholders(const std::string& text, const std::vector<std::string_view>& names, const std::string& where,
                         bool exactly_once);
// `text` with every {names[i]} replaced by values[i] (other braces kept as they are).
std::string FillPlaceholders(std::string_view text, const std::vector<std::string_view>& names,
                             const std::vector<std::string>& values);

// The template text with each placeholder replaced by values[i] (values in placeholder order).
std::string FillTemplate(const PromptTemplate& t, bool fuzzy, const std::vector<std::string>& values);

}  // namespace visalign::violin
