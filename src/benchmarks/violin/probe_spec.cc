#include "visalign/benchmarks/violin/probe_spec.h"

#include <algorithm>
#include <array>

#include "visalign/core/untrusted.h"

namespace visalign::violin {
namespace {

constexpr int kMaxCanvas = 8192;
constexpr double kMaxPercent = 100.0;
constexpr double kMaxLabL = 100.0;
constexpr double kMaxLabAb = 200.0;

struct FamilyEntry {
  ProbeFamily family;
  std::string_view name;
};
constexpr std::array<FamilyEntry, 4> kFamilies{{{ProbeFamily::kNegation, "negation"},
                                                {ProbeFamily::kGravity, "gravity"},
                                                {ProbeFamily::kInertia, "inertia"},
                                                {ProbeFamily::kGeometry, "geometry"}}};

// Reads the members of one `probe` object; every error names the member as "probe.<key>".
class Reader {
 public:
  Reader(const Json& j, const std::string& where) : j_(j), where_(where) {}

  std::string Where(std::string_view key) const { return where_ + " field probe." + std::string(key); }

  Result<const Json*> Get(std::string_view key, const std::string& expected) const {
    auto it = j_.find(std::string(key));
    if (it == j_.end())
      return Status::Corrupt("missing member \"" + std::string(key) + "\"", where_ + " field probe", expected);
    return &*it;
  }
  bool Has(std::string_view key) const { return j_.contains(std::string(key)); }

  Result<std::string> String(std::string_view key, bool allow_empty = false) const {
    const std::string expected = allow_empty ? "a JSON string" : "a non-empty JSON string";
    VISALIGN_ASSIGN_OR_RETURN(const Json* v, Get(key, expected));
    if (!v->is_string() || (!allow_empty && v->get<std::string>().empty()))
      return Status::Corrupt("unexpected value " + QuoteJson(*v), Where(key), expected);
    return v->get<std::string>();
  }

  // A finite number with lo < x < hi (open) or lo <= x <= hi (closed).
  Result<double> Number(const Json& v, std::string_view key, double lo, double hi, bool open) const {
    const std::string expected =
        "a number " + std::string(open ? "strictly " : "") + "between " + Fmt(lo) + " and " + Fmt(hi);
    if (!v.is_number()) return Status::Corrupt("not a number: " + QuoteJson(v), Where(key), expected);
    const double x = v.get<double>();
    const bool inside = open ? (x > lo && x < hi) : (x >= lo && x <= hi);
    if (!std::isfinite(x) || !inside) return Status::Corrupt("out of range: " + QuoteJson(v), Where(key), expected);
    return x;
  }
  Result<double> Number(std::string_view key, double lo, double hi, bool open) const {
    VISALIGN_ASSIGN_OR_RETURN(const Json* v, Get(key, "a number"));
    return Number(*v, key, lo, hi, open);
  }

  Result<color::Srgb8> Hex(std::string_view key) const {
    VISALIGN_ASSIGN_OR_RETURN(std::string text, String(key));
    auto parsed = color::ParseColor(text);
    if (!parsed.ok() || text.size() != 7 || text[0] != '#')
      return Status::Corrupt("invalid color " + QuoteText(text), Where(key), "#RRGGBB");
    return parsed->rgb8;
  }

 private:
  static std::string Fmt(double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  const Json& j_;
  const std::string& where_;
};

Status ReadCanvas(const Reader& r, ProbeSpec& spec) {
  const std::string expected = "[W, H] with integers 2.." + std::to_string(kMaxCanvas);
  VISALIGN_ASSIGN_OR_RETURN(const Json* v, r.Get("canvas", expected));
  if (!v->is_array() || v->size() != 2 || !(*v)[0].is_number_integer() || !(*v)[1].is_number_integer())
    return Status::Corrupt("unexpected value " + QuoteJson(*v), r.Where("canvas"), expected);
  const int64_t w = (*v)[0].get<int64_t>(), h = (*v)[1].get<int64_t>();
  if (w < 2 || h < 2 || w > kMaxCanvas || h > kMaxCanvas)
    return Status::Corrupt("out of range: " + QuoteJson(*v), r.Where("canvas"), expected);
  spec.canvas_w = static_cast<int>(w);
  spec.canvas_h = static_cast<int>(h);
  return Status::Ok();
}

Status ReadShapes(const Reader& r, ProbeSpec& spec) {
  const std::string expected = spec.condition == "pair" ? "a list of 2 shapes" : "a list of 1 shape";
  VISALIGN_ASSIGN_OR_RETURN(const Json* v, r.Get("shapes", expected));
  const size_t count = spec.condition == "pair" ? 2 : 1;
  if (!v->is_array() || v->size() != count)
    return Status::Corrupt("unexpected value " + QuoteJson(*v), r.Where("shapes"), expected);
  for (const Json& s : *v) {
    const std::string shape_expected =
        "{\"kind\": \"square\" | \"circle\", \"cx\", \"cy\", \"size\"} inside the canvas";
    if (!s.is_object() || !s.contains("kind") || !s["kind"].is_string() || !s.contains("cx") || !s.contains("cy") ||
        !s.contains("size"))
      return Status::Corrupt("unexpected shape " + QuoteJson(s), r.Where("shapes"), shape_expected);
    ProbeShape shape;
    const std::string kind = s["kind"].get<std::string>();
    if (kind != "square" && kind != "circle")
      return Status::Corrupt("unknown shape kind " + QuoteText(kind), r.Where("shapes"), "square or circle");
    shape.kind = kind == "square" ? ShapeKind::kSquare : ShapeKind::kCircle;
    const double w = spec.canvas_w, h = spec.canvas_h;
    VISALIGN_ASSIGN_OR_RETURN(shape.size, r.Number(s["size"], "shapes.size", 0, std::min(w, h), true));
    VISALIGN_ASSIGN_OR_RETURN(shape.cx, r.Number(s["cx"], "shapes.cx", shape.size / 2, w - shape.size / 2, false));
    VISALIGN_ASSIGN_OR_RETURN(shape.cy, r.Number(s["cy"], "shapes.cy", shape.size / 2, h - shape.size / 2, false));
    spec.shapes.push_back(shape);
  }
  return Status::Ok();
}

}  // namespace

std::string_view ProbeFamilyName(ProbeFamily family) {
  for (const FamilyEntry& e : kFamilies)
    if (e.family == family) return e.name;
  return "negation";
}

Result<ProbeFamily> ParseProbeFamily(std::string_view name) {
  for (const FamilyEntry& e : kFamilies)
    if (e.name == name) return e.family;
  return Status::InvalidArgument("unknown probe family \"" + std::string(name) + "\"", "probe family",
                                 "negation, gravity, inertia or geometry");
}

const std::vector<std::string>& ProbeConditions(ProbeFamily family) {
  static const std::vector<std::string> kNegation{"base", "negated", "entity"};
  static const std::vector<std::string> kGravity{"none", "consistent", "conflicting", "neutral"};
  static const std::vector<std::string> kInertia{"percent", "pixels"};
  static const std::vector<std::string> kGeometry{"pixels", "fractions", "pair"};
  switch (family) {
    case ProbeFamily::kNegation:
      return kNegation;
    case ProbeFamily::kGravity:
      return kGravity;
    case ProbeFamily::kInertia:
      return kInertia;
    case ProbeFamily::kGeometry:
      return kGeometry;
  }
  return kNegation;
}

bool ProbeSpec::PixelBased() const {
  return (family == ProbeFamily::kInertia && condition == "pixels") ||
         (family == ProbeFamily::kGeometry && condition != "fractions");
}

Json ProbeSpecJson(const ProbeSpec& spec) {
  Json j;
  j["family"] = std::string(ProbeFamilyName(spec.family));
  j["condition"] = spec.condition;
  j["group"] = spec.group;
  switch (spec.family) {
    case ProbeFamily::kNegation:
      if (spec.condition == "entity") j["entity"] = spec.entity;
      break;
    case ProbeFamily::kGravity:
      if (spec.condition != "none") j["context"] = spec.context;
      if (spec.context_lab) j["context_lab"] = {spec.context_lab->L, spec.context_lab->a, spec.context_lab->b};
      break;
    case ProbeFamily::kInertia:
      j["orientation"] = std::string(1, spec.orientation);
      j["split"] = spec.split;
      if (spec.PixelBased()) j["canvas"] = {spec.canvas_w, spec.canvas_h};
      break;
    case ProbeFamily::kGeometry: {
      j["canvas"] = {spec.canvas_w, spec.canvas_h};
      j["color"] = color::ToHex(spec.shape_color);
      Json shapes = Json::array();
      for (const ProbeShape& s : spec.shapes)
        shapes.push_back({{"kind", s.kind == ShapeKind::kSquare ? "square" : "circle"},
                          {"cx", s.cx},
                          {"cy", s.cy},
                          {"size", s.size}});
      j["shapes"] = shapes;
      if (spec.distance) j["distance"] = *spec.distance;
      break;
    }
  }
  return j;
}

Result<ProbeSpec> ParseProbeSpec(const Json& j, const std::string& where) {
  if (!j.is_object())
    return Status::Corrupt("not a JSON object: " + QuoteJson(j), where + " field probe",
                           "null or a probe object (docs/violin.md, \"Probes\")");
  Reader r(j, where);
  ProbeSpec spec;
  VISALIGN_ASSIGN_OR_RETURN(std::string family, r.String("family"));
  auto parsed_family = ParseProbeFamily(family);
  if (!parsed_family.ok())
    return Status::Corrupt("unknown family " + QuoteText(family), r.Where("family"),
                           "negation, gravity, inertia or geometry");
  spec.family = *parsed_family;
  const std::vector<std::string>& conditions = ProbeConditions(spec.family);
  VISALIGN_ASSIGN_OR_RETURN(spec.condition, r.String("condition"));
  if (std::find(conditions.begin(), conditions.end(), spec.condition) == conditions.end()) {
    std::string list;
    for (const std::string& c : conditions) list += (list.empty() ? "" : ", ") + c;
    return Status::Corrupt("unknown condition " + QuoteText(spec.condition), r.Where("condition"),
                           "for " + family + ": " + list);
  }
  VISALIGN_ASSIGN_OR_RETURN(spec.group, r.String("group"));
  switch (spec.family) {
    case ProbeFamily::kNegation:
      if (spec.condition == "entity") {
        VISALIGN_ASSIGN_OR_RETURN(spec.entity, r.String("entity"));
      }
      break;
    case ProbeFamily::kGravity:
      if (spec.condition != "none") {
        VISALIGN_ASSIGN_OR_RETURN(spec.context, r.String("context"));
      }
      if (spec.condition == "consistent" || spec.condition == "conflicting") {
        const std::string expected = "[L, a, b] with L in [0, 100] and |a|, |b| <= 200";
        VISALIGN_ASSIGN_OR_RETURN(const Json* v, r.Get("context_lab", expected));
        if (!v->is_array() || v->size() != 3)
          return Status::Corrupt("unexpected value " + QuoteJson(*v), r.Where("context_lab"), expected);
        color::Lab lab;
        VISALIGN_ASSIGN_OR_RETURN(lab.L, r.Number((*v)[0], "context_lab", 0, kMaxLabL, false));
        VISALIGN_ASSIGN_OR_RETURN(lab.a, r.Number((*v)[1], "context_lab", -kMaxLabAb, kMaxLabAb, false));
        VISALIGN_ASSIGN_OR_RETURN(lab.b, r.Number((*v)[2], "context_lab", -kMaxLabAb, kMaxLabAb, false));
        spec.context_lab = lab;
      }
      break;
    case ProbeFamily::kInertia: {
      VISALIGN_ASSIGN_OR_RETURN(std::string orientation, r.String("orientation"));
      if (orientation != "h" && orientation != "v")
        return Status::Corrupt("unexpected value " + QuoteText(orientation), r.Where("orientation"), "h or v");
      spec.orientation = orientation[0];
      VISALIGN_ASSIGN_OR_RETURN(spec.split, r.Number("split", 0, kMaxPercent, true));
      if (spec.PixelBased()) VISALIGN_RETURN_IF_ERROR(ReadCanvas(r, spec));
      break;
    }
    case ProbeFamily::kGeometry:
      VISALIGN_RETURN_IF_ERROR(ReadCanvas(r, spec));
      VISALIGN_ASSIGN_OR_RETURN(spec.shape_color, r.Hex("color"));
      VISALIGN_RETURN_IF_ERROR(ReadShapes(r, spec));
      if (spec.condition == "pair") {
        const double diagonal = std::hypot(spec.canvas_w, spec.canvas_h);
        VISALIGN_ASSIGN_OR_RETURN(double d, r.Number("distance", 0, diagonal, true));
        spec.distance = d;
      }
      break;
  }
  return spec;
}

Json ProbeMeasuresJson(const ProbeMeasures& m) {
  auto number = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
  Json j = Json::object();
  if (std::isfinite(m.measured_split)) j["measured_split"] = m.measured_split;
  if (m.shape_count >= 0) {
    j["shape_count"] = m.shape_count;
    j["position_error_px"] = number(m.position_error_px);
    j["position_error_frac"] = number(m.position_error_frac);
    j["size_error"] = number(m.size_error);
    j["iou"] = number(m.iou);
    j["distance_error_px"] = number(m.distance_error_px);
  }
  return j;
}

}  // namespace visalign::violin
