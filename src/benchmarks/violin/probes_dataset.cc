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

constexpr double kBaseColors = 24;       // negation and gravity colours at scale 1
constexpr double kBaseGeometry = 12;     // geometry items per condition at scale 1
constexpr double kBaseInertiaPairs = 2;  // colour pairs per (orientation, split) at scale 1
constexpr size_t kMinUnits = 2;          // a paired interval needs at least two units
constexpr double kConsistentMaxDe = 15;  // a consistent context: memory colour within this CIEDE2000
constexpr double kConflictMinDe = 40;    // a conflicting context: at least this far
constexpr double kDistinctMinDe = 30;    // two colours of one inertia or geometry item
constexpr size_t kNeutralWords = 3;
constexpr double kMinShare = 0.15, kMaxShare = 0.35;  // geometry: shape size / canvas side
constexpr double kPairMinShare = 0.10, kPairMaxShare = 0.20;
constexpr double kMarginShare = 0.10;  // shapes keep this share of the side from every edge
constexpr double kPercent = 100.0;
constexpr int kMinImageSize = 64;
constexpr double kMaxScale = 100.0;
constexpr char kFormat[] = "visalign-violin-probes";
constexpr int kFormatVersion = 1;

struct Context {
  const ProbeOptions& options;
  std::vector<PoolColor> pool;  // ISCC-NBS level-3 centroids
  std::vector<color::Lab> lab;
  std::vector<MemoryColor> memory;
  std::vector<ProbeLanguage> languages;
};

// "p-<group>-<condition>" (English) or "...-<language>".
std::string ItemId(const std::string& stem, const ProbeLanguage& language) {
  return language.code == "en" ? "p-" + stem : "p-" + stem + "-" + language.code;
}

ManifestItem NewItem(std::string id, std::string template_id, std::string prompt, ProbeSpec spec,
                     const ProbeLanguage& language) {
  ManifestItem item;
  item.id = std::move(id);
  item.template_id = std::move(template_id);
  item.prompt = std::move(prompt);
  item.language = language.code;
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

size_t Units(double base, double scale) { return std::max(kMinUnits, static_cast<size_t>(std::llround(base * scale))); }

std::string Hex(color::Srgb8 c) { return color::ToHex(c); }

// A share with one decimal at most ("31.5", "50"), with the language's decimal separator.
std::string Percent(double v, const ProbeLanguage& language) {
  std::string s = fmt::format("{:.1f}", v);
  if (s.size() > 2 && s.substr(s.size() - 2) == ".0") s.resize(s.size() - 2);
  const size_t dot = s.find('.');
  if (dot != std::string::npos) s.replace(dot, 1, language.Word("decimal_separator"));
  return s;
}

std::string Number(double v) { return fmt::format("{}", v); }

void Negation(const Context& ctx, std::vector<ManifestItem>& out) {
  const std::vector<size_t> order = ShuffledIndices(ctx.pool.size(), StreamSeed(ctx.options.seed, "probe-negation"));
  const size_t n = std::min(order.size(), Units(kBaseColors, ctx.options.scale));
  for (size_t g = 0; g < n; ++g) {
    const PoolColor& c = ctx.pool[order[g]];
    const std::string group = fmt::format("negation-{:03d}", g);
    for (const std::string& condition : ProbeConditions(ProbeFamily::kNegation)) {
      for (const ProbeLanguage& language : ctx.languages) {
        ProbeSpec spec{.family = ProbeFamily::kNegation, .condition = condition, .group = group};
        const std::string base = language.Fill("base", {{"color", Hex(c.rgb)}});
        std::string prompt = base;
        if (condition == "negated") prompt = language.Fill("negated", {{"base", base}});
        if (condition == "entity") {
          spec.entity = language.entities[g % language.entities.size()];
          prompt = language.Fill("entity", {{"base", base}, {"entity", spec.entity}});
        }
        ManifestItem item =
            NewItem(ItemId(group + "-" + condition, language), "probe-negation-" + condition, prompt, spec, language);
        SetTargets(item, {&c});
        out.push_back(std::move(item));
      }
    }
  }
}

void Gravity(const Context& ctx, std::vector<ManifestItem>& out) {
  Rng rng(StreamSeed(ctx.options.seed, "probe-gravity"));
  const std::vector<size_t> order =
      ShuffledIndices(ctx.pool.size(), StreamSeed(ctx.options.seed, "probe-gravity-order"));
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
    std::vector<size_t> neutral(ctx.languages.front().neutral.size());  // the same words in every language
    for (size_t i = 0; i < neutral.size(); ++i) neutral[i] = i;
    rng.Shuffle(neutral);
    neutral.resize(std::min(kNeutralWords, neutral.size()));

    const PoolColor& c = ctx.pool[index];
    const std::string group = fmt::format("gravity-{:03d}", g++);
    for (const std::string& condition : ProbeConditions(ProbeFamily::kGravity)) {
      for (const ProbeLanguage& language : ctx.languages) {
        ProbeSpec spec{.family = ProbeFamily::kGravity, .condition = condition, .group = group};
        std::string prompt = language.Fill("base", {{"color", Hex(c.rgb)}});
        if (condition == "consistent" || condition == "conflicting") {
          const MemoryColor& object = condition == "consistent" ? consistent : conflicting;
          spec.context = language.Object(object.object);
          spec.context_lab = object.lab;
          prompt = language.Fill("context", {{"color", Hex(c.rgb)}, {"object", spec.context}});
        } else if (condition == "neutral") {
          for (size_t w : neutral)
            spec.context += (spec.context.empty() ? "" : language.Word("list_separator")) + language.neutral[w];
          prompt = language.Fill("neutral", {{"base", prompt}, {"words", spec.context}});
        }
        ManifestItem item =
            NewItem(ItemId(group + "-" + condition, language), "probe-gravity-" + condition, prompt, spec, language);
        SetTargets(item, {&c});
        out.push_back(std::move(item));
      }
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
      for (double split : kInertiaSplits) {
        const std::string group = fmt::format("inertia-{:02d}-{}{:04d}", p, orientation, std::lround(split * 10));
        for (const std::string& condition : ProbeConditions(ProbeFamily::kInertia)) {
          for (const ProbeLanguage& language : ctx.languages) {
            ProbeSpec spec{.family = ProbeFamily::kInertia, .condition = condition, .group = group};
            spec.orientation = orientation;
            spec.split = split;
            const std::vector<std::pair<std::string_view, std::string>> common = {
                {"direction", language.Word(h ? "horizontally" : "vertically")},
                {"first", language.Word(h ? "top" : "left")},
                {"second", language.Word(h ? "bottom" : "right")},
                {"dimension", language.Word(h ? "height" : "width")},
                {"first_color", Hex(ctx.pool[a].rgb)},
                {"second_color", Hex(ctx.pool[b].rgb)}};
            std::vector<std::pair<std::string_view, std::string>> values = common;
            std::string prompt;
            if (condition == "percent") {
              values.insert(values.end(), {{"first_share", Percent(split, language)},
                                           {"second_share", Percent(kPercent - split, language)}});
              prompt = language.Fill("inertia_percent", values);
            } else {
              spec.canvas_w = spec.canvas_h = side;
              const long px = std::lround(split / kPercent * side);
              values.insert(values.end(), {{"side", std::to_string(side)},
                                           {"first_pixels", std::to_string(px)},
                                           {"second_pixels", std::to_string(side - px)}});
              prompt = language.Fill("inertia_pixels", values);
              spec.split = kPercent * static_cast<double>(px) / side;  // what the stated pixels denote
            }
            ManifestItem item = NewItem(ItemId(group + "-" + condition, language), "probe-inertia-" + condition, prompt,
                                        spec, language);
            item.variation = 2;
            item.layout = h ? Layout::kH2 : Layout::kV2;
            SetTargets(item, {&ctx.pool[a], &ctx.pool[b]});
            out.push_back(std::move(item));
          }
        }
      }
    }
  }
}

void Geometry(const Context& ctx, std::vector<ManifestItem>& out) {
  Rng rng(StreamSeed(ctx.options.seed, "probe-geometry"));
  const int side = ctx.options.image_size;
  const size_t n = Units(kBaseGeometry, ctx.options.scale);
  const double margin = std::round(kMarginShare * side);
  auto draw = [&](double lo, double hi) {  // an integer in [lo, hi]
    const int64_t a = std::llround(std::ceil(lo)), b = std::llround(std::floor(hi));
    return static_cast<double>(
        a + static_cast<int64_t>(rng.UniformIndex(static_cast<uint64_t>(std::max<int64_t>(1, b - a + 1)))));
  };
  for (const std::string& condition : ProbeConditions(ProbeFamily::kGeometry)) {
    for (size_t g = 0; g < n; ++g) {
      const auto [bg, fg] = DistinctPair(ctx, rng);
      const std::string group = fmt::format("geometry-{}-{:03d}", condition, g);
      ProbeSpec spec{.family = ProbeFamily::kGeometry, .condition = condition, .group = group};
      spec.canvas_w = spec.canvas_h = side;
      spec.shape_color = ctx.pool[fg].rgb;
      if (condition == "pair") {
        const double s = 2 * draw(kPairMinShare * side / 2, kPairMaxShare * side / 2);  // even: whole-pixel centres
        const double d = draw(1.5 * s, side - 2 * margin - s);
        const double left = draw(margin, side - margin - s - d);
        const double cy = draw(margin, side - margin - s) + s / 2;
        spec.shapes = {{ShapeKind::kSquare, left + s / 2, cy, s}, {ShapeKind::kSquare, left + s / 2 + d, cy, s}};
        spec.distance = d;
      } else {
        ProbeShape shape;
        shape.kind = g % 2 == 0 ? ShapeKind::kSquare : ShapeKind::kCircle;
        shape.size = 2 * draw(kMinShare * side / 2, kMaxShare * side / 2);  // even: whole-pixel centres
        shape.cx = draw(margin, side - margin - shape.size) + shape.size / 2;
        shape.cy = draw(margin, side - margin - shape.size) + shape.size / 2;
        spec.shapes = {shape};
      }
      const ProbeShape& first = spec.shapes[0];
      const bool square = first.kind == ShapeKind::kSquare;
      for (const ProbeLanguage& language : ctx.languages) {
        std::vector<std::pair<std::string_view, std::string>> values = {
            {"side", std::to_string(side)},
            {"background", Hex(ctx.pool[bg].rgb)},
            {"color", Hex(ctx.pool[fg].rgb)},
            {"shape", language.Word(square ? "square" : "circle")},
            {"measure", language.Word(square ? "side" : "diameter")}};
        std::string prompt;
        if (condition == "fractions") {
          values.insert(values.end(), {{"size", Percent(kPercent * first.size / side, language)},
                                       {"cx", Percent(kPercent * first.cx / side, language)},
                                       {"cy", Percent(kPercent * first.cy / side, language)}});
          prompt = language.Fill("geometry_fractions", values);
        } else {
          values.insert(values.end(),
                        {{"size", Number(first.size)}, {"cx", Number(first.cx)}, {"cy", Number(first.cy)}});
          if (spec.distance) values.push_back({"distance", Number(*spec.distance)});
          prompt = language.Fill(condition == "pair" ? "geometry_pair" : "geometry_pixels", values);
        }
        ManifestItem item = NewItem(ItemId(group, language), "probe-geometry-" + condition, prompt, spec, language);
        SetTargets(item, {&ctx.pool[bg]});
        out.push_back(std::move(item));
      }
    }
  }
}

Json CountProbes(const std::vector<ManifestItem>& items) {
  std::map<std::string, std::map<std::string, int>> counts;
  for (const ManifestItem& item : items)
    ++counts[std::string(ProbeFamilyName(item.probe->family))][item.probe->condition];
  Json j = {{"items", items.size()}};
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
        if (e.path().filename().string().rfind("p-", 0) == 0 && e.path().extension() == ".png")
          fs::remove(e.path(), ec);
  }
  return EnsureDirectory(dir / "images");
}

}  // namespace

Status ValidateProbeOptions(const ProbeOptions& options) {
  if (!(options.scale > 0) || options.scale > kMaxScale)
    return Status::InvalidArgument("scale " + std::to_string(options.scale) + " out of range", "scale",
                                   "a number 0 < F <= 100");
  if (options.image_size < kMinImageSize || options.image_size > 8192)
    return Status::InvalidArgument("image size " + std::to_string(options.image_size) + " out of range",
                                   "ground-truth image size", "an integer 64..8192 (pixels)");
  const std::vector<std::string>& known = ProbeLanguageCodes();
  if (options.languages.empty())
    return Status::InvalidArgument("no language", "prompt languages", "some of en, zh, fr");
  for (size_t i = 0; i < options.languages.size(); ++i) {
    const std::string& language = options.languages[i];
    if (std::find(known.begin(), known.end(), language) == known.end())
      return Status::InvalidArgument("unsupported probe language " + QuoteText(language), "prompt languages",
                                     "some of en, zh, fr (docs/violin.md, \"Probes\")");
    if (std::find(options.languages.begin(), options.languages.begin() + i, language) != options.languages.begin() + i)
      return Status::InvalidArgument("language " + QuoteText(language) + " given twice", "prompt languages",
                                     "each language once");
  }
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
  std::vector<std::string> codes;  // manifest order: en, zh, fr
  for (const std::string& code : ProbeLanguageCodes())
    if (std::find(options.languages.begin(), options.languages.end(), code) != options.languages.end())
      codes.push_back(code);
  VISALIGN_ASSIGN_OR_RETURN(std::vector<ProbeLanguage> languages,
                            LoadProbeLanguages(data / "violin" / "probe_prompts.json", codes, memory));
  Context ctx{options, LevelPool(iscc, kLevelCount), {}, std::move(memory), std::move(languages)};
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
  report.summary = {
      {"format", kFormat},
      {"version", kFormatVersion},
      {"options",
       {{"seed", options.seed}, {"scale", options.scale}, {"image_size", side}, {"languages", options.languages}}},
      {"manifest_sha256", Sha256Hex(manifest)},
      {"counts", CountProbes(items)}};
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(options.out_dir / "summary.json", report.summary.dump(2) + "\n"));
  return report;
}

}  // namespace visalign::violin
