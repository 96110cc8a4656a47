// `visalign violin probes`: the four probe families as manifest items (docs/violin.md, "Probes").
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "benchmarks/violin/dataset_sampling.h"
#include "benchmarks/violin/flat_png.h"
#include "visalign/benchmarks/violin/probes.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::violin {
namespace {

namespace fs = std::filesystem;

constexpr double kBaseColors = 24;        // negation and gravity colours at scale 1
constexpr double kBaseGeometry = 12;      // geometry items per condition at scale 1
constexpr double kBaseInertiaPairs = 2;   // colour pairs per (orientation, split) at scale 1
constexpr size_t kMinUnits = 2;           // a paired interval needs at least two units
constexpr double kConsistentMaxDe = 15;   // a consistent context: memory colour within this CIEDE2000
constexpr double kConflictMinDe = 40;     // a conflicting context: at least this far
constexpr double kDistinctMinDe = 30;     // two colours of one inertia or geometry item
constexpr size_t kNeutralWords = 3;
constexpr double kMinShare = 0.15, kMaxShare = 0.35;     // geometry: shape size / canvas side
constexpr double kPairMinShare = 0.10, kPairMaxShare = 0.20;
constexpr double kMarginShare = 0.10;  // shapes keep this share of the side from every edge
constexpr double kPercent = 100.0;
constexpr int kMinImageSize = 64;
constexpr double kMaxScale = 100.0;
constexpr char kFormat[] = "visalign-violin-probes";
constexpr int kFormatVersion = 1;

const char kBase[] = "A pure solid color image filled entirely with {color}.";
const char kNegatedSuffix[] = " No gradient, no texture, no noise, no shading.";

struct Context {
  const ProbeOptions& options;
  std::vector<PoolColor> pool;  // ISCC-NBS level-3 centroids
  std::vector<color::Lab> lab;
  std::vector<MemoryColor> memory;
  ProbeWords words;
};

ManifestItem NewItem(std::string id, std::string template_id, std::string prompt, ProbeSpec spec) {
  ManifestItem item;
  item.id = std::move(id);
  item.template_id = std::move(template_id);
  item.prompt = std::move(prompt);
  item.image = "images/" + item.id + ".png";
  item.split = item.prompt_split = item.hue_split1 = item.hue_split2 = "test";
  item.probe = std::move(spec);
  return item;
}

void SetTargets(ManifestItem& item, const std::vector<const PoolColor*>& colors) {
  for (const PoolColor* c : colors) {
    item.targets.push_back(c->rgb);
    item.levels.push_back(c->level);
    item.target_names.push_back(c->name);
  }
}

size_t Units(double base, double scale) {
  return std::max(kMinUnits, static_cast<size_t>(std::llround(base * scale)));
}

std::string Hex(color::Srgb8 c) { return color::ToHex(c); }

std::string Percent(double v) {
  std::string s = fmt::format("{:.1f}", v);
  if (s.size() > 2 && s.substr(s.size() - 2) == ".0") s.resize(s.size() - 2);
  return s;
}

void Negation(const Context& ctx, std::vector<ManifestItem>& out) {
  const std::vector<size_t> order = ShuffledIndices(ctx.pool.size(), StreamSeed(ctx.options.seed, "probe-negation"));
  const size_t n = std::min(order.size(), Units(kBaseColors, ctx.options.scale));
  for (size_t g = 0; g < n; ++g) {
    const PoolColor& c = ctx.pool[order[g]];
    const std::string group = fmt::format("negation-{:03d}", g);
    const std::string base = fmt::format(fmt::runtime(kBase), fmt::arg("color", Hex(c.rgb)));
    for (const std::string& condition : ProbeConditions(ProbeFamily::kNegation)) {
      ProbeSpec spec{.family = ProbeFamily::kNegation, .condition = condition, .group = group};
      std::string prompt = base;
      if (condition == "negated") prompt += kNegatedSuffix;
      if (condition == "entity") {
        spec.entity = ctx.words.entities[g % ctx.words.entities.size()];
        prompt += " No " + spec.entity + ".";
      }
      ManifestItem item = NewItem("p-" + group + "-" + condition, "probe-negation-" + condition, prompt, spec);
      SetTargets(item, {&c});
      out.push_back(std::move(item));
    }
  }
}

void Gravity(const Context& ctx, std::vector<ManifestItem>& out) {
  Rng rng(StreamSeed(ctx.options.seed, "probe-gravity"));
  const std::vector<size_t> order = ShuffledIndices(ctx.pool.size(), StreamSeed(ctx.options.seed, "probe-gravity-order"));
  const size_t n = Units(kBaseColors, ctx.options.scale);
  size_t g = 0;
  for (size_t index : order) {
    if (g == n) break;
    const color::Lab target = ctx.lab[index];
    size_t nearest = 0;
    std::vector<size_t> far;
    for (size_t m = 0; m < ctx.memory.size(); ++m) {
      const double de = color::DeltaE2000(target, ctx.memory[m].lab);
      if (de < color::DeltaE2000(target, ctx.memory[nearest].lab)) nearest = m;
      if (de >= kConflictMinDe) far.push_back(m);
    }
    if (color::DeltaE2000(target, ctx.memory[nearest].lab) > kConsistentMaxDe || far.empty()) continue;
    const MemoryColor& consistent = ctx.memory[nearest];
    const MemoryColor& conflicting = ctx.memory[far[rng.UniformIndex(far.size())]];
    std::vector<std::string> neutral = ctx.words.neutral;
    rng.Shuffle(neutral);
    neutral.resize(std::min(kNeutralWords, neutral.size()));
    std::string neutral_text;
    for (const std::string& w : neutral) neutral_text += (neutral_text.empty() ? "" : ", ") + w;

    const PoolColor& c = ctx.pool[index];
    const std::string group = fmt::format("gravity-{:03d}", g++);
    const std::string base = fmt::format(fmt::runtime(kBase), fmt::arg("color", Hex(c.rgb)));
    for (const std::string& condition : ProbeConditions(ProbeFamily::kGravity)) {
      ProbeSpec spec{.family = ProbeFamily::kGravity, .condition = condition, .group = group};
      std::string prompt = base;
      if (condition == "consistent" || condition == "conflicting") {
        const MemoryColor& object = condition == "consistent" ? consistent : conflicting;
        spec.context = object.object;
        spec.context_lab = object.lab;
        prompt = fmt::format("A pure solid color image filled entirely with {}, the color of {}.", Hex(c.rgb), object.object);
      } else if (condition == "neutral") {
        spec.context = neutral_text;
        prompt = fmt::format("A pure solid color image filled entirely with {}. {}.", Hex(c.rgb), neutral_text);
      }
      ManifestItem item = NewItem("p-" + group + "-" + condition, "probe-gravity-" + condition, prompt, spec);
      SetTargets(item, {&c});
      out.push_back(std::move(item));
    }
  }
}

// Two pool colours at least kDistinctMinDe apart, drawn from `rng`.
std::pair<size_t, size_t> DistinctPair(const Context& ctx, Rng& rng) {
  for (;;) {
    const size_t a = rng.UniformIndex(ctx.pool.size()), b = rng.UniformIndex(ctx.pool.size());
    if (color::DeltaE2000(ctx.lab[a], ctx.lab[b]) >= kDistinctMinDe) return {a, b};
  }
}

void Inertia(const Context& ctx, std::vector<ManifestItem>& out) {
  Rng rng(StreamSeed(ctx.options.seed, "probe-inertia"));
  const int side = ctx.options.image_size;
  const size_t pairs = std::max<size_t>(1, static_cast<size_t>(std::llround(kBaseInertiaPairs * ctx.options.scale)));
  for (size_t p = 0; p < pairs; ++p) {
    const auto [a, b] = DistinctPair(ctx, rng);
    for (char orientation : {'h', 'v'}) {
      const bool h = orientation == 'h';
      const char* first = h ? "top" : "left";
      const char* second = h ? "bottom" : "right";
      const char* dim = h ? "height" : "width";
      for (double split : kInertiaSplits) {
        const std::string group = fmt::format("inertia-{:02d}-{}{:04d}", p, orientation, std::lround(split * 10));
        for (const std::string& condition : ProbeConditions(ProbeFamily::kInertia)) {
          ProbeSpec spec{.family = ProbeFamily::kInertia, .condition = condition, .group = group};
          spec.orientation = orientation;
          spec.split = split;
          std::string prompt;
          const std::string ca = Hex(ctx.pool[a].rgb), cb = Hex(ctx.pool[b].rgb);
          if (condition == "percent") {
            prompt = fmt::format("An image split {} into two solid color blocks: the {} {}% of the {} is {}, the {} {}% is {}.",
                                 h ? "horizontally" : "vertically", first, Percent(split), dim, ca, second,
                                 Percent(kPercent - split), cb);
          } else {
            spec.canvas_w = spec.canvas_h = side;
            const long px = std::lround(split / kPercent * side);
            prompt = fmt::format("A {}x{} pixel image split {} into two solid color blocks: the {} {} pixels of the {} are {}, "
                                 "the remaining {} pixels are {}.",
                                 side, side, h ? "horizontally" : "vertically", first, px, dim, ca, side - px, cb);
            spec.split = kPercent * static_cast<double>(px) / side;  // what the stated pixels denote
          }
          ManifestItem item = NewItem("p-" + group + "-" + condition, "probe-inertia-" + condition, prompt, spec);
          item.variation = 2;
          item.layout = h ? Layout::kH2 : Layout::kV2;
          SetTargets(item, {&ctx.pool[a], &ctx.pool[b]});
          out.push_back(std::move(item));
        }
      }
    }
  }
}

std::string ShapeText(const ProbeShape& s) { return s.kind == ShapeKind::kSquare ? "square" : "circle"; }

void Geometry(const Context& ctx, std::vector<ManifestItem>& out) {
  Rng rng(StreamSeed(ctx.options.seed, "probe-geometry"));
  const int side = ctx.options.image_size;
  const size_t n = Units(kBaseGeometry, ctx.options.scale);
  const double margin = std::round(kMarginShare * side);
  auto draw = [&](double lo, double hi) {  // an integer in [lo, hi]
    const int64_t a = std::llround(std::ceil(lo)), b = std::llround(std::floor(hi));
    return static_cast<double>(a + static_cast<int64_t>(rng.UniformIndex(static_cast<uint64_t>(std::max<int64_t>(1, b - a + 1)))));
  };
  for (const std::string& condition : ProbeConditions(ProbeFamily::kGeometry)) {
    for (size_t g = 0; g < n; ++g) {
      const auto [bg, fg] = DistinctPair(ctx, rng);
      const std::string group = fmt::format("geometry-{}-{:03d}", condition, g);
      ProbeSpec spec{.family = ProbeFamily::kGeometry, .condition = condition, .group = group};
      spec.canvas_w = spec.canvas_h = side;
      spec.shape_color = ctx.pool[fg].rgb;
      const std::string cbg = Hex(ctx.pool[bg].rgb), cfg = Hex(ctx.pool[fg].rgb);
      std::string prompt;
      if (condition == "pair") {
        const double s = 2 * draw(kPairMinShare * side / 2, kPairMaxShare * side / 2);  // even: whole-pixel centres
        const double d = draw(1.5 * s, side - 2 * margin - s);
        const double left = draw(margin, side - margin - s - d);
        const double cy = draw(margin, side - margin - s) + s / 2;
        spec.shapes = {{ShapeKind::kSquare, left + s / 2, cy, s}, {ShapeKind::kSquare, left + s / 2 + d, cy, s}};
        spec.distance = d;
        prompt = fmt::format("A {}x{} pixel image with a solid {} background and two solid {} squares of {}x{} pixels, "
                             "the first centered at pixel ({}, {}), the second {} pixels to its right (x to the right, y down "
                             "from the top-left corner).",
                             side, side, cbg, cfg, s, s, spec.shapes[0].cx, cy, d);
      } else {
        ProbeShape shape;
        shape.kind = g % 2 == 0 ? ShapeKind::kSquare : ShapeKind::kCircle;
        shape.size = 2 * draw(kMinShare * side / 2, kMaxShare * side / 2);  // even: whole-pixel centres
        shape.cx = draw(margin, side - margin - shape.size) + shape.size / 2;
        shape.cy = draw(margin, side - margin - shape.size) + shape.size / 2;
        const std::string what = shape.kind == ShapeKind::kSquare ? "side" : "diameter";
        if (condition == "pixels") {
          prompt = fmt::format("A {}x{} pixel image with a solid {} background and one solid {} {} with a {} of {} pixels, "
                               "centered at pixel ({}, {}) (x to the right, y down from the top-left corner).",
                               side, side, cbg, cfg, ShapeText(shape), what, shape.size, shape.cx, shape.cy);
        } else {
          prompt = fmt::format("An image with a solid {} background and one solid {} {} with a {} of {}% of the image width, "
                               "its center {}% of the width from the left edge and {}% of the height from the top edge.",
                               cbg, cfg, ShapeText(shape), what, Percent(kPercent * shape.size / side),
                               Percent(kPercent * shape.cx / side), Percent(kPercent * shape.cy / side));
        }
        spec.shapes = {shape};
      }
      ManifestItem item = NewItem("p-" + group, "probe-geometry-" + condition, prompt, spec);
      SetTargets(item, {&ctx.pool[bg]});
      out.push_back(std::move(item));
    }
  }
}

nlohmann::json CountProbes(const std::vector<ManifestItem>& items) {
  std::map<std::string, std::map<std::string, int>> counts;
  for (const ManifestItem& item : items) ++counts[std::string(ProbeFamilyName(item.probe->family))][item.probe->condition];
  nlohmann::json j = {{"items", items.size()}};
  for (const auto& [family, by_condition] : counts) j["families"][family] = by_condition;
  return j;
}

Status PrepareOutput(const ProbeOptions& options) {
  const fs::path& dir = options.out_dir;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    if (!options.force)
      return Status::InvalidArgument("output directory is not empty", "output folder " + dir.string(),
                                     "an empty or new directory, or --force to replace a previous probe dataset");
    for (const char* name : {"manifest.jsonl", "summary.json"}) fs::remove(dir / name, ec);
    if (fs::is_directory(dir / "images", ec))
      for (const fs::directory_entry& e : fs::directory_iterator(dir / "images", ec))
        if (e.path().filename().string().rfind("p-", 0) == 0 && e.path().extension() == ".png") fs::remove(e.path(), ec);
  }
  return EnsureDirectory(dir / "images");
}

}  // namespace

Status ValidateProbeOptions(const ProbeOptions& options) {
  if (!(options.scale > 0) || options.scale > kMaxScale)
    return Status::InvalidArgument("scale " + std::to_string(options.scale) + " out of range", "scale",
                                   "a number 0 < F <= 100");
  if (options.image_size < kMinImageSize || options.image_size > 8192)
    return Status::InvalidArgument("image size " + std::to_string(options.image_size) + " out of range", "ground-truth image size",
                                   "an integer 64..8192 (pixels)");
  if (options.languages.empty())
    return Status::InvalidArgument("no language", "prompt languages", "en (the probe prompts exist in English)");
  for (const std::string& language : options.languages)
    if (language != "en")
      return Status::InvalidArgument("unsupported probe language " + QuoteText(language), "prompt languages",
                                     "en (the probe prompts exist in English; docs/violin.md, \"Probes\")");
  return Status::Ok();
}

Result<std::vector<ManifestItem>> BuildProbeItems(const ProbeOptions& options) {
  VISALIGN_RETURN_IF_ERROR(ValidateProbeOptions(options));
  fs::path data = options.data_dir;
  if (data.empty()) {
        VISALIGN_ASSIGN_OR_RETURN(data, DataDir());
      }
  VISALIGN_ASSIGN_OR_RETURN(color::IsccNbs iscc, color::IsccNbs::Load(data / "color"));
  VISALIGN_ASSIGN_OR_RETURN(std::vector<MemoryColor> memory, LoadMemoryColors(data / "violin" / "memory_colors.csv"));
  VISALIGN_ASSIGN_OR_RETURN(ProbeWords words, LoadProbeWords(data / "violin" / "probe_words.json"));
  Context ctx{options, LevelPool(iscc, kLevelCount), {}, std::move(memory), std::move(words)};
  for (const PoolColor& c : ctx.pool) ctx.lab.push_back(color::Srgb8ToLab(c.rgb));
  std::vector<ManifestItem> items;
  Negation(ctx, items);
  Gravity(ctx, items);
  Inertia(ctx, items);
  Geometry(ctx, items);
  return items;
}

Result<ProbeDatasetReport> GenerateProbeDataset(const ProbeOptions& options) {
  VISALIGN_ASSIGN_OR_RETURN(std::vector<ManifestItem> items, BuildProbeItems(options));
  VISALIGN_RETURN_IF_ERROR(PrepareOutput(options));
  const int side = options.image_size;
  for (const ManifestItem& item : items) {
    const std::string png = EncodeFlatPng(RenderProbe(item, side, side));
    if (png.empty()) return Status::Internal("PNG encoding failed for " + item.id);
    VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(options.out_dir / *item.image, png));
  }
  std::string manifest;
  for (const ManifestItem& item : items) manifest += ManifestLine(item) + "\n";
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(options.out_dir / "manifest.jsonl", manifest));
  ProbeDatasetReport report;
  report.items = items.size();
  report.summary = {{"format", kFormat},
                    {"version", kFormatVersion},
                    {"options", {{"seed", options.seed}, {"scale", options.scale}, {"image_size", side}, {"languages", options.languages}}},
                    {"manifest_sha256", Sha256Hex(manifest)},
                    {"counts", CountProbes(items)}};
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(options.out_dir / "summary.json", report.summary.dump(2) + "\n"));
  return report;
}

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

Result<ProbeWords> LoadProbeWords(const fs::path& json) {
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(json));
  VISALIGN_ASSIGN_OR_RETURN(nlohmann::json j, ParseJson(text));
  ProbeWords words;
  for (auto [key, list] : {std::pair{"entities", &words.entities}, std::pair{"neutral", &words.neutral}}) {
    const std::string expected = "a non-empty list of non-empty strings";
    if (!j.is_object() || !j.contains(key) || !j[key].is_array() || j[key].empty())
      return Status::Corrupt("missing or empty \"" + std::string(key) + "\"", json.string(), expected);
    for (const nlohmann::json& w : j[key]) {
      if (!w.is_string() || w.get<std::string>().empty())
        return Status::Corrupt("unexpected value " + QuoteJson(w), json.string() + " field " + key, expected);
      list->push_back(w.get<std::string>());
    }
  }
  return words;
}

}  // namespace visalign::violin
