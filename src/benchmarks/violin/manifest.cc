#include "visalign/benchmarks/violin/manifest.h"

#include <array>
#include <set>
#include <unordered_map>

#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/core/untrusted.h"

namespace visalign::violin {
namespace {

constexpr std::string_view kManifestFile = "manifest.jsonl";
constexpr int kMinVariation = 1;
constexpr int kMaxVariation = 6;
constexpr int kMinLevel = 1;
constexpr int kMaxLevel = 3;
constexpr size_t kHexDigits = 6;

struct LayoutEntry {
  Layout layout;
  std::string_view name;
  int blocks;
};
constexpr std::array<LayoutEntry, 4> kLayouts{{
    {Layout::kSingle, "single", 1},
    {Layout::kH2, "h2", 2},
    {Layout::kV2, "v2", 2},
    {Layout::kQ4, "q4", 4},
}};

const LayoutEntry& Entry(Layout layout) {
  for (const LayoutEntry& e : kLayouts)
    if (e.layout == layout) return e;
  return kLayouts[0];
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Strict "#RRGGBB" (either case): manifests always store this form.
Result<color::Srgb8> ParseHex(std::string_view text, const std::string& where) {
  const Status bad = Status::Corrupt("invalid color " + QuoteText(text), where, "#RRGGBB");
  if (text.size() != kHexDigits + 1 || text[0] != '#') return bad;
  std::array<uint8_t, 3> channels{};
  for (size_t i = 0; i < channels.size(); ++i) {
    int hi = HexValue(text[1 + 2 * i]), lo = HexValue(text[2 + 2 * i]);
    if (hi < 0 || lo < 0) return bad;
    channels[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return color::Srgb8{channels[0], channels[1], channels[2]};
}

std::string FieldWhere(const std::string& where, std::string_view field) {
  return where + " field " + std::string(field);
}

Result<const Json*> Field(const Json& obj, std::string_view key, const std::string& where) {
  auto it = obj.find(std::string(key));
  if (it == obj.end())
    return Status::Corrupt("missing field \"" + std::string(key) + "\"", where,
                           "every manifest field (docs/violin.md)");
  return &*it;
}

Result<std::string> StringField(const Json& obj, std::string_view key, const std::string& where) {
  VISALIGN_ASSIGN_OR_RETURN(const Json* v, Field(obj, key, where));
  if (!v->is_string())
    return Status::Corrupt("not a string: " + QuoteJson(*v), FieldWhere(where, key), "a JSON string");
  return v->get<std::string>();
}

Result<std::string> ChoiceField(const Json& obj, std::string_view key, const std::string& where,
                                const std::set<std::string>& allowed, const std::string& expected) {
  VISALIGN_ASSIGN_OR_RETURN(std::string s, StringField(obj, key, where));
  if (!allowed.count(s)) return Status::Corrupt("unexpected value " + QuoteText(s), FieldWhere(where, key), expected);
  return s;
}

Result<int> IntField(const Json& obj, std::string_view key, const std::string& where, int lo, int hi) {
  VISALIGN_ASSIGN_OR_RETURN(const Json* v, Field(obj, key, where));
  const std::string expected = "an integer " + std::to_string(lo) + ".." + std::to_string(hi);
  if (!v->is_number_integer())
    return Status::Corrupt("not an integer: " + QuoteJson(*v), FieldWhere(where, key), expected);
  int64_t x = v->get<int64_t>();
  if (x < lo || x > hi) return Status::Corrupt("out of range: " + std::to_string(x), FieldWhere(where, key), expected);
  return static_cast<int>(x);
}

Result<std::vector<color::Srgb8>> HexList(const Json& v, size_t count, const std::string& where) {
  const std::string expected = "a list of " + std::to_string(count) + " \"#RRGGBB\" colors";
  if (!v.is_array() || v.size() != count) return Status::Corrupt("unexpected value " + QuoteJson(v), where, expected);
  std::vector<color::Srgb8> out;
  for (const Json& e : v) {
    if (!e.is_string()) return Status::Corrupt("not a string: " + QuoteJson(e), where, expected);
    VISALIGN_ASSIGN_OR_RETURN(color::Srgb8 c, ParseHex(e.get<std::string>(), where));
    out.push_back(c);
  }
  return out;
}

const std::set<std::string> kTrainTest{"train", "test"};
const std::string kTrainTestExpected = "\"train\" or \"test\"";

}  // namespace

std::string_view LayoutName(Layout layout) { return Entry(layout).name; }

Result<Layout> ParseLayout(std::string_view name) {
  for (const LayoutEntry& e : kLayouts)
    if (e.name == name) return e.layout;
  return Status::InvalidArgument("unknown layout \"" + std::string(name) + "\"", "layout", "single, h2, v2 or q4");
}

int BlockCount(Layout layout) { return Entry(layout).blocks; }

Rect BlockRect(Layout layout, int index, int width, int height) {
  const int half_w = width / 2, half_h = height / 2;
  switch (layout) {
    case Layout::kSingle:
      return {0, 0, width, height};
    case Layout::kH2:
      return index == 0 ? Rect{0, 0, width, half_h} : Rect{0, half_h, width, height - half_h};
    case Layout::kV2:
      return index == 0 ? Rect{0, 0, half_w, height} : Rect{half_w, 0, width - half_w, height};
    case Layout::kQ4: {
      const bool right = index % 2 == 1, bottom = index >= 2;
      return {right ? half_w : 0, bottom ? half_h : 0, right ? width - half_w : half_w,
              bottom ? height - half_h : half_h};
    }
  }
  return {};
}

std::string ManifestLine(const ManifestItem& item) {
  Json j;
  j["id"] = item.id;
  j["variation"] = item.variation;
  j["language"] = item.language;
  j["notation"] = item.notation;
  j["template_id"] = item.template_id;
  j["prompt"] = item.prompt;
  j["layout"] = std::string(LayoutName(item.layout));
  Json targets = Json::array();
  for (const color::Srgb8& c : item.targets) targets.push_back(color::ToHex(c));
  j["targets"] = targets;
  j["fuzzy"] =
      item.fuzzy ? Json::array({color::ToHex(item.fuzzy->first), color::ToHex(item.fuzzy->second)}) : Json(nullptr);
  j["levels"] = item.levels;
  j["target_names"] = item.target_names;
  j["image"] = item.image ? Json(*item.image) : Json(nullptr);
  j["split"] = item.split;
  j["prompt_split"] = item.prompt_split;
  j["hue_split1"] = item.hue_split1;
  j["hue_split2"] = item.hue_split2;
  if (item.probe) j["probe"] = ProbeSpecJson(*item.probe);
  return j.dump();
}

Result<ManifestItem> ParseManifestLine(std::string_view line, const std::string& where) {
  auto parsed = ParseJson(line);
  if (!parsed.ok() || !parsed->is_object())
    return Status::Corrupt(parsed.ok() ? "not a JSON object" : parsed.status().what(), where,
                           "one JSON object per line (docs/violin.md)");
  const Json& j = *parsed;
  ManifestItem item;
  VISALIGN_ASSIGN_OR_RETURN(item.id, StringField(j, "id", where));
  if (item.id.empty() || item.id.find_first_of("/\\") != std::string::npos)
    return Status::Corrupt("invalid id " + QuoteText(item.id), FieldWhere(where, "id"),
                           "a non-empty id without path separators");
  VISALIGN_ASSIGN_OR_RETURN(item.variation, IntField(j, "variation", where, kMinVariation, kMaxVariation));
  VISALIGN_ASSIGN_OR_RETURN(item.language, ChoiceField(j, "language", where, {"en", "zh", "fr"}, "en, zh or fr"));
  VISALIGN_ASSIGN_OR_RETURN(item.notation, ChoiceField(j, "notation", where, {"hex", "rgb", "hsl"}, "hex, rgb or hsl"));
  VISALIGN_ASSIGN_OR_RETURN(item.template_id, StringField(j, "template_id", where));
  VISALIGN_ASSIGN_OR_RETURN(item.prompt, StringField(j, "prompt", where));
  VISALIGN_ASSIGN_OR_RETURN(std::string layout, StringField(j, "layout", where));
  auto parsed_layout = ParseLayout(layout);
  if (!parsed_layout.ok())
    return Status::Corrupt("unknown layout " + QuoteText(layout), FieldWhere(where, "layout"), "single, h2, v2 or q4");
  item.layout = *parsed_layout;
  const size_t blocks = static_cast<size_t>(BlockCount(item.layout));

  VISALIGN_ASSIGN_OR_RETURN(const Json* targets, Field(j, "targets", where));
  VISALIGN_ASSIGN_OR_RETURN(item.targets, HexList(*targets, blocks, FieldWhere(where, "targets")));

  VISALIGN_ASSIGN_OR_RETURN(const Json* fuzzy, Field(j, "fuzzy", where));
  if (!fuzzy->is_null()) {
    if (item.layout != Layout::kSingle)
      return Status::Corrupt("a fuzzy range on a " + layout + " item", FieldWhere(where, "fuzzy"),
                             "null unless layout is single");
    VISALIGN_ASSIGN_OR_RETURN(auto ends, HexList(*fuzzy, 2, FieldWhere(where, "fuzzy")));
    item.fuzzy = std::make_pair(ends[0], ends[1]);
  }

  VISALIGN_ASSIGN_OR_RETURN(const Json* levels, Field(j, "levels", where));
  const std::string levels_expected = "a list of " + std::to_string(blocks) + " levels 1..3";
  if (!levels->is_array() || levels->size() != blocks)
    return Status::Corrupt("unexpected value " + QuoteJson(*levels), FieldWhere(where, "levels"), levels_expected);
  for (const Json& l : *levels) {
    if (!l.is_number_integer() || l.get<int64_t>() < kMinLevel || l.get<int64_t>() > kMaxLevel)
      return Status::Corrupt("unexpected level " + QuoteJson(l), FieldWhere(where, "levels"), levels_expected);
    item.levels.push_back(l.get<int>());
  }

  VISALIGN_ASSIGN_OR_RETURN(const Json* names, Field(j, "target_names", where));
  const std::string names_expected = "a list of " + std::to_string(blocks) + " strings";
  if (!names->is_array() || names->size() != blocks)
    return Status::Corrupt("unexpected value " + QuoteJson(*names), FieldWhere(where, "target_names"), names_expected);
  for (const Json& n : *names) {
    if (!n.is_string())
      return Status::Corrupt("not a string: " + QuoteJson(n), FieldWhere(where, "target_names"), names_expected);
    item.target_names.push_back(n.get<std::string>());
  }

  VISALIGN_ASSIGN_OR_RETURN(const Json* image, Field(j, "image", where));
  if (!image->is_null()) {
    const std::string expected = "null or a relative path inside the dataset directory";
    if (!image->is_string())
      return Status::Corrupt("unexpected value " + QuoteJson(*image), FieldWhere(where, "image"), expected);
    std::filesystem::path p(image->get<std::string>());
    bool escapes = p.empty() || p.is_absolute();
    for (const auto& part : p) escapes = escapes || part == "..";
    if (escapes) return Status::Corrupt("unsafe image path " + QuoteJson(*image), FieldWhere(where, "image"), expected);
    item.image = image->get<std::string>();
  }

  VISALIGN_ASSIGN_OR_RETURN(item.split, ChoiceField(j, "split", where, kTrainTest, kTrainTestExpected));
  VISALIGN_ASSIGN_OR_RETURN(item.prompt_split, ChoiceField(j, "prompt_split", where, kTrainTest, kTrainTestExpected));
  VISALIGN_ASSIGN_OR_RETURN(item.hue_split1, ChoiceField(j, "hue_split1", where, kTrainTest, kTrainTestExpected));
  VISALIGN_ASSIGN_OR_RETURN(item.hue_split2, ChoiceField(j, "hue_split2", where, kTrainTest, kTrainTestExpected));
  if (auto probe = j.find("probe"); probe != j.end() && !probe->is_null()) {
    VISALIGN_ASSIGN_OR_RETURN(item.probe, ParseProbeSpec(*probe, where));
    const ProbeSpec& spec = *item.probe;
    const Layout expected = spec.family != ProbeFamily::kInertia ? Layout::kSingle
                            : spec.orientation == 'h'            ? Layout::kH2
                                                                 : Layout::kV2;
    if (item.layout != expected || item.fuzzy)
      return Status::Corrupt(
          "a " + std::string(ProbeFamilyName(spec.family)) + " probe on a " + layout + " item",
          FieldWhere(where, "layout"),
          "layout " + std::string(LayoutName(expected)) + " without a fuzzy range (docs/violin.md, \"Probes\")");
  }
  return item;
}

Result<std::vector<ManifestItem>> LoadManifest(const std::filesystem::path& dataset_dir) {
  const std::filesystem::path path = dataset_dir / kManifestFile;
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::vector<ManifestItem> items;
  std::unordered_map<std::string, int> first_line_of_id;
  const std::vector<std::string_view> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const int line_number = static_cast<int>(i) + 1;
    const std::string where = path.string() + ":" + std::to_string(line_number);
    if (line.empty()) return Status::Corrupt("empty line", where, "one JSON object per line");
    VISALIGN_ASSIGN_OR_RETURN(ManifestItem item, ParseManifestLine(line, where));
    auto [it, inserted] = first_line_of_id.emplace(item.id, line_number);
    if (!inserted)
      return Status::Corrupt("duplicate id \"" + item.id + "\" (first on line " + std::to_string(it->second) + ")",
                             FieldWhere(where, "id"), "unique ids");
    items.push_back(std::move(item));
  }
  if (items.empty()) return Status::Corrupt("no items", path.string(), "at least one manifest line");
  return items;
}

Result<std::string> ManifestFingerprint(const std::filesystem::path& dataset_dir) {
  return Sha256File(dataset_dir / kManifestFile);
}

}  // namespace visalign::violin
