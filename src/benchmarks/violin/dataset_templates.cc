#include "dataset_templates.h"

#include <algorithm>
#include <map>
#include <set>

#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/core/untrusted.h"

namespace visalign::violin {
namespace {

constexpr size_t kSingleGroupBase = 3020;

std::string TemplateWhere(const std::string& source, const std::string& id, std::string_view field) {
  return source + " template " + (id.empty() ? std::string("?") : id) + " field " + std::string(field);
}

Result<std::string> StringMember(const Json& t, std::string_view key, const std::string& where) {
  auto it = t.find(std::string(key));
  if (it == t.end() || !it->is_string())
    return Status::InvalidArgument("missing or non-string \"" + std::string(key) + "\"", where, "a JSON string");
  return it->get<std::string>();
}

}  // namespace

Status CheckPlaceholders(const std::string& text, const std::vector<std::string_view>& names, const std::string& where,
                         bool exactly_once) {
  std::string expected = exactly_once ? "exactly once each:" : "each at least once, no other:";
  for (std::string_view n : names) expected += " {" + std::string(n) + "}";
  std::map<std::string, int, std::less<>> seen;
  for (size_t open = text.find('{'); open != std::string::npos; open = text.find('{', open + 1)) {
    size_t close = text.find('}', open);
    if (close == std::string::npos) return Status::InvalidArgument("unclosed '{' in \"" + text + "\"", where, expected);
    std::string name = text.substr(open + 1, close - open - 1);
    if (std::find(names.begin(), names.end(), name) == names.end())
      return Status::InvalidArgument("unknown placeholder {" + name + "}", where, expected);
    ++seen[name];
  }
  for (std::string_view n : names) {
    auto it = seen.find(n);
    const int count = it == seen.end() ? 0 : it->second;
    if (count == 0 || (exactly_once && count != 1))
      return Status::InvalidArgument("placeholder {" + std::string(n) + "} appears " + std::to_string(count) + " times",
                                     where, expected);
  }
  return Status::Ok();
}

std::string FillPlaceholders(std::string_view text, const std::vector<std::string_view>& names,
                             const std::vector<std::string>& values) {
  std::string out;
  size_t pos = 0;
  for (size_t open = text.find('{'); open != std::string::npos; open = text.find('{', pos)) {
    const size_t close = text.find('}', open);
    if (close == std::string::npos) break;
    out.append(text, pos, open - pos);
    const std::string_view name = text.substr(open + 1, close - open - 1);
    const size_t index = static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
    out += index < values.size() ? std::string_view(values[index]) : text.substr(open, close - open + 1);
    pos = close + 1;
  }
  out.append(text, pos, std::string::npos);
  return out;
}

const std::vector<VariationSpec>& VariationSpecs() {
  static const std::vector<VariationSpec> specs{
      {1, kSingleGroupBase, {Layout::kSingle}, false, {{"en", "hex"}}},
      {2, 4 * kSingleGroupBase, {Layout::kH2, Layout::kV2}, false, {{"en", "hex"}}},
      {3, 6 * kSingleGroupBase, {Layout::kQ4}, false, {{"en", "hex"}}},
      {4, kSingleGroupBase, {Layout::kSingle}, true, {{"en", "hex"}}},
      {5, kSingleGroupBase, {Layout::kSingle}, false, {{"zh", "hex"}, {"fr", "hex"}}},
      {6, kSingleGroupBase, {Layout::kSingle}, false, {{"en", "rgb"}, {"en", "hsl"}}},
  };
  return specs;
}

const VariationSpec* FindVariation(int variation) {
  for (const VariationSpec& s : VariationSpecs())
    if (s.variation == variation) return &s;
  return nullptr;
}

std::vector<std::string_view> PlaceholderNames(Layout layout, bool fuzzy) {
  if (fuzzy) return {"low", "high"};
  switch (layout) {
    case Layout::kSingle:
      return {"color"};
    case Layout::kH2:
      return {"top", "bottom"};
    case Layout::kV2:
      return {"left", "right"};
    case Layout::kQ4:
      return {"top_left", "top_right", "bottom_left", "bottom_right"};
  }
  return {};
}

Result<std::vector<PromptTemplate>> ParseTemplates(std::string_view json_text, const std::string& source) {
  auto parsed = ParseJson(json_text);
  if (!parsed.ok())
    return Status::InvalidArgument(parsed.status().what(), source,
                                   "a JSON object with a \"templates\" array (see data/violin/templates.json)");
  const Json& doc = *parsed;
  if (!doc.is_object() || !doc.contains("templates") || !doc["templates"].is_array())
    return Status::InvalidArgument("not a templates document", source,
                                   "a JSON object with a \"templates\" array (see data/violin/templates.json)");
  std::vector<PromptTemplate> out;
  std::set<std::string> ids;
  std::map<int, int> per_variation;
  // (variation, language, notation) -> {train templates, test templates}
  std::map<std::tuple<int, std::string, std::string>, std::pair<int, int>> group_splits;
  for (const Json& t : doc["templates"]) {
    PromptTemplate p;
    const std::string obj_where = source + " template #" + std::to_string(out.size() + 1);
    if (!t.is_object()) return Status::InvalidArgument("not an object", obj_where, "a template object");
    VISALIGN_ASSIGN_OR_RETURN(p.id, StringMember(t, "id", obj_where + " field id"));
    if (p.id.empty() || !ids.insert(p.id).second)
      return Status::InvalidArgument("empty or duplicate id \"" + p.id + "\"", obj_where, "unique template ids");
    auto where = [&](std::string_view field) { return TemplateWhere(source, p.id, field); };

    auto v = t.find("variation");
    const VariationSpec* spec = (v != t.end() && v->is_number_integer()) ? FindVariation(v->get<int>()) : nullptr;
    if (!spec)
      return Status::InvalidArgument("bad variation " + (v == t.end() ? std::string("(missing)") : QuoteJson(*v)),
                                     where("variation"), "an integer 1..6");
    p.variation = spec->variation;
    VISALIGN_ASSIGN_OR_RETURN(p.language, StringMember(t, "language", where("language")));
    VISALIGN_ASSIGN_OR_RETURN(p.notation, StringMember(t, "notation", where("notation")));
    bool group_ok = std::any_of(spec->groups.begin(), spec->groups.end(), [&](const GroupSpec& g) {
      return g.language == p.language && g.notation == p.notation;
    });
    if (!group_ok) {
      std::string expected;
      for (const GroupSpec& g : spec->groups)
        expected += (expected.empty() ? "" : " or ") + std::string(g.language) + "/" + std::string(g.notation);
      return Status::InvalidArgument(
          "language/notation " + p.language + "/" + p.notation + " not in variation " + std::to_string(p.variation),
          where("language"), expected);
    }
    VISALIGN_ASSIGN_OR_RETURN(std::string layout, StringMember(t, "layout", where("layout")));
    auto parsed = ParseLayout(layout);
    if (!parsed.ok() || std::find(spec->layouts.begin(), spec->layouts.end(), *parsed) == spec->layouts.end()) {
      std::string expected;
      for (Layout l : spec->layouts) expected += (expected.empty() ? "" : " or ") + std::string(LayoutName(l));
      return Status::InvalidArgument(
          "layout \"" + layout + "\" not allowed in variation " + std::to_string(p.variation), where("layout"),
          expected);
    }
    p.layout = *parsed;
    VISALIGN_ASSIGN_OR_RETURN(p.prompt_split, StringMember(t, "prompt_split", where("prompt_split")));
    if (p.prompt_split != "train" && p.prompt_split != "test")
      return Status::InvalidArgument("bad prompt_split \"" + p.prompt_split + "\"", where("prompt_split"),
                                     "\"train\" or \"test\"");
    VISALIGN_ASSIGN_OR_RETURN(p.text, StringMember(t, "text", where("text")));
    VISALIGN_RETURN_IF_ERROR(
        CheckPlaceholders(p.text, PlaceholderNames(p.layout, spec->fuzzy), where("text"), /*exactly_once=*/true));
    p.number = ++per_variation[p.variation];
    auto& counts = group_splits[{p.variation, p.language, p.notation}];
    (p.prompt_split == "train" ? counts.first : counts.second)++;
    out.push_back(std::move(p));
  }
  for (const VariationSpec& spec : VariationSpecs()) {
    for (const GroupSpec& g : spec.groups) {
      auto it = group_splits.find({spec.variation, std::string(g.language), std::string(g.notation)});
      if (it == group_splits.end() || it->second.first == 0 || it->second.second == 0)
        return Status::InvalidArgument("variation " + std::to_string(spec.variation) + " " + std::string(g.language) +
                                           "/" + std::string(g.notation) + " lacks a train or a test template",
                                       source, "at least one template with each prompt_split per group");
    }
  }
  return out;
}

Result<std::vector<PromptTemplate>> LoadTemplates(const std::filesystem::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseTemplates(text, path.string());
}

std::string FillTemplate(const PromptTemplate& t, bool fuzzy, const std::vector<std::string>& values) {
  return FillPlaceholders(t.text, PlaceholderNames(t.layout, fuzzy), values);
}

}  // namespace visalign::violin
