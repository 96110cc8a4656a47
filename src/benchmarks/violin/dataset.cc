#include "visalign/benchmarks/violin/dataset.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <set>
#include <tuple>

#include <spdlog/spdlog.h>

#include "dataset_sampling.h"
#include "dataset_templates.h"
#include "flat_png.h"
#include "visalign/benchmarks/violin/probes.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"
#include "visalign/core/progress.h"

namespace visalign::violin {
namespace {

namespace fs = std::filesystem;

constexpr int kTestPercent = 20;             // split: 8:2 per stratum
constexpr double kHueSplit1TestLow = 280.0;  // hue_split1 test: [280°, 320°]
constexpr double kHueSplit1TestHigh = 320.0;
constexpr double kHueSplit2BandWidth = 60.0;  // hue_split2 train: even 60° bands [0,60) [120,180) [240,300)
constexpr int kMinImageSize = 2;
constexpr const char* kManifestName = "manifest.jsonl";
constexpr const char* kSummaryName = "summary.json";
constexpr const char* kImagesDir = "images";
constexpr const char* kTemplatesFile = "violin/templates.json";
constexpr const char* kDatasetFormat = "visalign-violin-dataset";
constexpr int kDatasetFormatVersion = 1;
constexpr mode_t kFileMode = 0644;

std::string Format(const char* fmt, auto... args) {
  char buf[128];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

std::string TrainOrTest(bool test) { return test ? "test" : "train"; }

// The text of `c` in a prompt's notation. hsl() rounds h to whole degrees and s, l to whole percents.
std::string NotationText(color::Srgb8 c, const std::string& notation) {
  if (notation == "rgb") return Format("rgb(%d, %d, %d)", c.r, c.g, c.b);
  if (notation == "hsl") {
    const color::Hsl h = color::RgbToHsl(color::FromSrgb8(c));
    constexpr long kFullTurn = 360, kPercent = 100;
    return Format("hsl(%ld, %ld%%, %ld%%)", std::lround(h.h) % kFullTurn, std::lround(h.s * kPercent),
                  std::lround(h.l * kPercent));
  }
  return color::ToHex(c);
}

struct SamplingContext {
  const color::IsccNbs* iscc = nullptr;
  uint64_t seed = 0;
  double scale = 1;
  std::array<std::vector<PoolColor>, kLevelCount> colors;
  std::array<std::vector<ColorPair>, kLevelCount> pairs;
  std::array<size_t, kLevelCount> pool_sizes{};
};

class ItemBuilder {
 public:
  ItemBuilder(const SamplingContext& ctx, const VariationSpec& spec, const GroupSpec& group,
              std::vector<const PromptTemplate*> templates, int& counter)
      : ctx_(ctx),
        spec_(spec),
        templates_(std::move(templates)),
        counter_(counter),
        label_(Format("v%d/%s/%s", spec.variation, std::string(group.language).c_str(),
                      std::string(group.notation).c_str())) {}

  Status Append(std::vector<ManifestItem>& out) {
    const size_t n = std::max<size_t>(
        1, static_cast<size_t>(std::llround(static_cast<double>(spec_.base_items_per_group) * ctx_.scale)));
    const std::array<size_t, kLevelCount> per_level = AllocateLevels(n, ctx_.pool_sizes);
    const size_t t_count = templates_.size();
    const std::vector<size_t> template_order = ShuffledIndices(t_count, StreamSeed(ctx_.seed, label_ + "/templates"));
    const size_t blocks = static_cast<size_t>(BlockCount(spec_.layouts.front()));
    size_t offset = 0;
    for (int level = 1; level <= kLevelCount; ++level) {
      const size_t n_level = per_level[level - 1];
      const size_t pool = spec_.fuzzy ? ctx_.pairs[level - 1].size() : ctx_.colors[level - 1].size();
      if (n_level == 0) continue;
      if (pool < blocks)
        return Status::Corrupt(Format("only %zu colors or pairs at ISCC-NBS level %d", pool, level),
                               "data/color/iscc_nbs_*.csv", Format("at least %zu", blocks));
      const uint64_t stream = StreamSeed(ctx_.seed, label_ + Format("/L%d/colors", level));
      if (blocks == 1) {
        // One fixed order; pass r shifts templates by r, so a color meets a new template in every
        // pass (all prompts distinct while n_level <= pool * templates) and templates stay balanced.
        const std::vector<size_t> order = ShuffledIndices(pool, stream);
        for (size_t j = 0; j < n_level; ++j) {
          const size_t p = j % pool, pass = j / pool;
          const PromptTemplate& t = *templates_[template_order[(p + pass + offset) % t_count]];
          VISALIGN_ASSIGN_OR_RETURN(ManifestItem item, MakeItem(t, level, {order[p]}));
          out.push_back(std::move(item));
        }
      } else {
        Deck deck(pool, stream);
        for (size_t j = 0; j < n_level; ++j) {
          std::vector<size_t> cards;
          for (size_t b = 0; b < blocks; ++b) cards.push_back(deck.Draw(cards));
          VISALIGN_ASSIGN_OR_RETURN(ManifestItem item,
                                    MakeItem(*templates_[template_order[(j + offset) % t_count]], level, cards));
          out.push_back(std::move(item));
        }
      }
      offset += n_level;
    }
    return Status::Ok();
  }

 private:
  Result<ManifestItem> MakeItem(const PromptTemplate& t, int level, const std::vector<size_t>& cards) {
    ManifestItem item;
    item.id = Format("v%d-t%02d-%05d", spec_.variation, t.number, ++counter_);
    item.variation = spec_.variation;
    item.language = t.language;
    item.notation = t.notation;
    item.template_id = t.id;
    item.layout = t.layout;
    item.prompt_split = t.prompt_split;
    std::vector<std::string> texts;
    if (spec_.fuzzy) {
      const ColorPair& pair = ctx_.pairs[level - 1][cards.front()];
      texts = {color::ToHex(pair.low.rgb), color::ToHex(pair.high.rgb)};
      item.targets = {HslMidpoint(pair.low.rgb, pair.high.rgb)};
      item.fuzzy = std::make_pair(pair.low.rgb, pair.high.rgb);
      item.target_names = {"between " + pair.low.name + " and " + pair.high.name};
      item.levels = {level};
    } else {
      for (size_t card : cards) {
        const PoolColor& c = ctx_.colors[level - 1][card];
        texts.push_back(NotationText(c.rgb, t.notation));
        // The target is what the text denotes: for rounded hsl() that can differ from c.rgb.
        VISALIGN_ASSIGN_OR_RETURN(color::ParsedColor parsed, color::ParseColor(texts.back(), *ctx_.iscc));
        item.targets.push_back(parsed.rgb8);
        item.target_names.push_back(c.name);
        item.levels.push_back(level);
      }
    }
    item.prompt = FillTemplate(t, spec_.fuzzy, texts);
    const double hue = color::RgbToHsl(color::FromSrgb8(item.targets.front())).h;
    item.hue_split1 = TrainOrTest(hue >= kHueSplit1TestLow && hue <= kHueSplit1TestHigh);
    item.hue_split2 = TrainOrTest(static_cast<int>(std::floor(hue / kHueSplit2BandWidth)) % 2 == 1);
    return item;
  }

  const SamplingContext& ctx_;
  const VariationSpec& spec_;
  std::vector<const PromptTemplate*> templates_;
  int& counter_;
  std::string label_;
};

// split: per stratum (variation, language, notation, level) a seeded shuffle; the first
// round(n / 5) items are test.
void AssignSplits(std::vector<ManifestItem>& items, uint64_t seed) {
  std::map<std::tuple<int, std::string, std::string, int>, std::vector<size_t>> strata;
  for (size_t i = 0; i < items.size(); ++i) {
    const ManifestItem& it = items[i];
    strata[{it.variation, it.language, it.notation, it.levels.front()}].push_back(i);
  }
  for (const auto& [key, members] : strata) {
    const auto& [variation, language, notation, level] = key;
    const size_t n = members.size();
    const size_t n_test = (n * kTestPercent * 2 + 100) / 200;  // round half up
    const std::vector<size_t> order = ShuffledIndices(
        n, StreamSeed(seed, Format("split/v%d/%s/%s/L%d", variation, language.c_str(), notation.c_str(), level)));
    for (size_t k = 0; k < n; ++k) items[members[order[k]]].split = TrainOrTest(k < n_test);
  }
}

Result<SamplingContext> MakeContext(const DatasetOptions& options) {
  SamplingContext ctx;
  VISALIGN_ASSIGN_OR_RETURN(ctx.iscc, color::IsccNbs::Default());
  ctx.seed = options.seed;
  ctx.scale = options.scale;
  for (int level = 1; level <= kLevelCount; ++level) {
    ctx.colors[level - 1] = LevelPool(*ctx.iscc, level);
    ctx.pairs[level - 1] = FuzzyPairPool(*ctx.iscc, level);
    ctx.pool_sizes[level - 1] = ctx.colors[level - 1].size();
  }
  return ctx;
}

Result<fs::path> TemplatesPath(const DatasetOptions& options) {
  if (!options.templates.empty()) return options.templates;
  return DataFile(kTemplatesFile);
}

bool IsItemImageName(const std::string& name) {
  static const std::regex kPattern(R"(v[0-9]+-t[0-9]+-[0-9]+\.png(\.tmp)?)");
  return std::regex_match(name, kPattern);
}

// What an interrupted `violin dataset` leaves (summary.json is written last): images/ holding item
// images (and their temporary files) only, perhaps manifest.jsonl, and nothing else.
bool IsInterruptedDataset(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / kSummaryName, ec)) return false;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name == kManifestName && e.is_regular_file(ec)) continue;
    if (name != kImagesDir || !e.is_directory(ec)) return false;
    for (const fs::directory_entry& f : fs::directory_iterator(e.path(), ec))
      if (!f.is_regular_file(ec) || !IsItemImageName(f.path().filename().string())) return false;
  }
  return !ec;
}

// Creates out_dir, or checks that it may be reused; with --force, or when it holds an interrupted
// dataset only, removes our previous outputs.
Status PrepareOutputDir(const DatasetOptions& options) {
  const fs::path& dir = options.out_dir;
  const std::string where = "output folder " + dir.string();
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) return Status::InvalidArgument("not a directory", where, "a directory path");
    const bool empty = fs::is_empty(dir, ec);
    if (ec) return Status::IoError("cannot read directory: " + ec.message(), where, "a readable directory");
    const bool interrupted = !empty && IsInterruptedDataset(dir);
    if (interrupted) spdlog::warn("{}: replacing an interrupted dataset (no {} yet)", dir.string(), kSummaryName);
    if (!empty && !options.force && !interrupted)
      return Status::InvalidArgument("output directory is not empty", where,
                                     "an empty or new directory, or --force to replace a previous dataset");
    if (!empty) {
      std::vector<fs::path> previous{dir / kManifestName, dir / kSummaryName};
      const fs::path images = dir / kImagesDir;
      if (fs::is_directory(images, ec)) {
        for (const fs::directory_entry& e : fs::directory_iterator(images, ec))
          if (e.is_regular_file() && IsItemImageName(e.path().filename().string())) previous.push_back(e.path());
        if (ec)
          return Status::IoError("cannot list directory: " + ec.message(), images.string(), "a readable directory");
      }
      for (const fs::path& p : previous) {
        fs::remove(p, ec);
        if (ec)
          return Status::IoError("cannot remove previous output: " + ec.message(), p.string(), "a writable directory");
      }
    }
  }
  VISALIGN_RETURN_IF_ERROR(EnsureDirectory(dir));
  if (options.write_images) VISALIGN_RETURN_IF_ERROR(EnsureDirectory(dir / kImagesDir));
  return Status::Ok();
}

// Images are written to a temporary name and renamed, without a per-file fsync (tens of
// thousands of fsyncs would dominate the run); SyncFilesystem() before the manifest is written
// makes them durable first, so a manifest on disk never names an image that is not.
Status WriteImageFile(const fs::path& path, std::string_view bytes) {
  fs::path tmp = path;
  tmp += ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kFileMode);
  if (fd < 0)
    return Status::IoError("cannot create file: " + std::string(std::strerror(errno)), tmp.string(),
                           "a writable output directory");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string err = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return Status::IoError("write failed: " + err, tmp.string(), "free disk space");
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Status::IoError("write failed: " + err, path.string(), "a writable output directory");
  }
  return Status::Ok();
}

Status SyncFilesystem(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::IoError("cannot open directory: " + std::string(std::strerror(errno)), dir.string());
  const int rc = ::syncfs(fd);
  const std::string err = std::strerror(errno);
  ::close(fd);
  if (rc != 0) return Status::IoError("syncfs failed: " + err, dir.string(), "a writable file system");
  return Status::Ok();
}

// GT images of single-color items repeat (variations 1, 4, 5 and 6 draw from ~600 colors), so
// each distinct one is encoded once. Multi-block images are almost all distinct and bypass it.
class PngCache {
 public:
  explicit PngCache(int size) : size_(size) {}
  std::shared_ptr<const std::string> Get(const ManifestItem& item) {
    if (item.layout != Layout::kSingle) return Encode(item);
    const std::string key = color::ToHex(item.targets.front());
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = cache_.find(key);
      if (it != cache_.end()) return it->second;
    }
    std::shared_ptr<const std::string> png = Encode(item);
    std::lock_guard<std::mutex> lock(mu_);
    return cache_.emplace(key, png).first->second;
  }

 private:
  std::shared_ptr<const std::string> Encode(const ManifestItem& item) const {
    return std::make_shared<const std::string>(EncodeFlatPng(RenderGroundTruth(item, size_, size_)));
  }
  int size_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const std::string>> cache_;
};

// Fills the rect's first row pixel by pixel and copies it to the other rows.
void FillRect(imaging::Image& image, const Rect& r, color::Srgb8 c) {
  if (r.w <= 0 || r.h <= 0) return;
  uint8_t* first = image.pixel(r.x, r.y);
  for (int x = 0; x < r.w; ++x) {
    first[3 * x] = c.r;
    first[3 * x + 1] = c.g;
    first[3 * x + 2] = c.b;
  }
  for (int y = r.y + 1; y < r.y + r.h; ++y) std::memcpy(image.pixel(r.x, y), first, static_cast<size_t>(r.w) * 3);
}

Json Tally(const std::vector<const ManifestItem*>& items) {
  std::map<std::string, std::map<std::string, int64_t>> counts;
  for (const ManifestItem* it : items) {
    ++counts["variation"][std::to_string(it->variation)];
    ++counts["language"][it->language];
    ++counts["notation"][it->notation];
    ++counts["layout"][std::string(LayoutName(it->layout))];
    ++counts["level"][std::to_string(it->levels.front())];
    ++counts["split"][it->split];
    ++counts["prompt_split"][it->prompt_split];
    ++counts["hue_split1"][it->hue_split1];
    ++counts["hue_split2"][it->hue_split2];
  }
  Json j = counts;
  j["items"] = items.size();
  return j;
}

}  // namespace

Status ValidateOptions(const DatasetOptions& options) {
  if (options.variations.empty())
    return Status::InvalidArgument("no variations selected", "variations", "a list of 1..6, e.g. 1,2,3");
  std::set<int> seen;
  for (int v : options.variations) {
    if (!FindVariation(v))
      return Status::InvalidArgument("variation " + std::to_string(v) + " does not exist", "variations",
                                     "numbers 1..6 (1 hex, 2 halves, 3 quadrants, 4 fuzzy, 5 zh/fr, 6 rgb/hsl)");
    if (!seen.insert(v).second)
      return Status::InvalidArgument("variation " + std::to_string(v) + " given twice", "variations",
                                     "each variation at most once");
  }
  if (!(options.scale > 0 && options.scale <= kMaxScale))
    return Status::InvalidArgument("scale " + Format("%g", options.scale) + " out of range", "scale",
                                   Format("a number > 0 and <= %g (1 = the published sizes)", kMaxScale));
  if (options.image_size < kMinImageSize || options.image_size > kMaxImageSize)
    return Status::InvalidArgument("image size " + std::to_string(options.image_size) + " out of range",
                                   "ground-truth image size", Format("%d..%d pixels", kMinImageSize, kMaxImageSize));
  return Status::Ok();
}

Result<std::vector<ManifestItem>> BuildItems(const DatasetOptions& options) {
  VISALIGN_RETURN_IF_ERROR(ValidateOptions(options));
  VISALIGN_ASSIGN_OR_RETURN(fs::path templates_path, TemplatesPath(options));
  VISALIGN_ASSIGN_OR_RETURN(std::vector<PromptTemplate> templates, LoadTemplates(templates_path));
  VISALIGN_ASSIGN_OR_RETURN(SamplingContext ctx, MakeContext(options));
  std::vector<int> variations = options.variations;
  std::sort(variations.begin(), variations.end());
  std::vector<ManifestItem> items;
  for (int v : variations) {
    const VariationSpec& spec = *FindVariation(v);
    int counter = 0;
    for (const GroupSpec& group : spec.groups) {
      std::vector<const PromptTemplate*> group_templates;
      for (const PromptTemplate& t : templates)
        if (t.variation == v && t.language == group.language && t.notation == group.notation)
          group_templates.push_back(&t);
      ItemBuilder builder(ctx, spec, group, std::move(group_templates), counter);
      VISALIGN_RETURN_IF_ERROR(builder.Append(items));
    }
  }
  AssignSplits(items, options.seed);
  if (options.write_images)
    for (ManifestItem& item : items) item.image = std::string(kImagesDir) + "/" + item.id + ".png";
  return items;
}

Json CountItems(const std::vector<ManifestItem>& items) {
  std::vector<const ManifestItem*> all;
  std::map<int, std::vector<const ManifestItem*>> by_variation;
  for (const ManifestItem& it : items) {
    all.push_back(&it);
    by_variation[it.variation].push_back(&it);
  }
  Json j = Tally(all);
  for (const auto& [v, members] : by_variation) {
    Json per = Tally(members);
    per.erase("variation");
    j["by_variation"][std::to_string(v)] = per;
  }
  return j;
}

imaging::Image RenderGroundTruth(const ManifestItem& item, int width, int height) {
  if (item.probe) return RenderProbe(item, width, height);
  const int blocks = BlockCount(item.layout);
  if (width < 1 || height < 1 || item.targets.size() != static_cast<size_t>(blocks)) return {};
  imaging::Image image(width, height);
  for (int b = 0; b < blocks; ++b) FillRect(image, BlockRect(item.layout, b, width, height), item.targets[b]);
  return image;
}

Result<DatasetReport> GenerateDataset(const DatasetOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  VISALIGN_RETURN_IF_ERROR(ValidateOptions(options));
  VISALIGN_ASSIGN_OR_RETURN(fs::path templates_path, TemplatesPath(options));
  VISALIGN_ASSIGN_OR_RETURN(std::vector<ManifestItem> items, BuildItems(options));
  VISALIGN_RETURN_IF_ERROR(PrepareOutputDir(options));

  DatasetReport report;
  report.items = items.size();
  if (options.write_images) {
    Progress progress("violin dataset: images", items.size(), options.show_progress);
    std::mutex mu;
    Status first_error;
    std::atomic<uint64_t> bytes{0};
    PngCache cache(options.image_size);
    ParallelFor(items.size(), [&](size_t i) {
      const ManifestItem& item = items[i];
      const std::shared_ptr<const std::string> png = cache.Get(item);
      Status st = png->empty() ? Status::Internal("PNG encoding failed for " + item.id)
                               : WriteImageFile(options.out_dir / *item.image, *png);
      if (st.ok()) {
        bytes += png->size();
      } else {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = st;
      }
      progress.Add(st.ok() ? 1 : 0, st.ok() ? 0 : 1);
    });
    progress.Finish();
    VISALIGN_RETURN_IF_ERROR(first_error);
    VISALIGN_RETURN_IF_ERROR(SyncFilesystem(options.out_dir / kImagesDir));
    report.images = items.size();
    report.image_bytes = bytes.load();
  }

  std::string manifest;
  for (const ManifestItem& item : items) manifest += ManifestLine(item) + "\n";
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(options.out_dir / kManifestName, manifest));
  report.manifest_bytes = manifest.size();

  VISALIGN_ASSIGN_OR_RETURN(std::string templates_text, ReadFile(templates_path));
  Json variations = options.variations;
  std::sort(variations.begin(), variations.end());
  report.summary = {
      {"format", kDatasetFormat},
      {"version", kDatasetFormatVersion},
      {"options",
       {{"seed", options.seed},
        {"scale", options.scale},
        {"variations", variations},
        {"image_size", options.write_images ? Json(options.image_size) : Json(nullptr)}}},
      {"manifest_sha256", Sha256Hex(manifest)},
      {"templates_sha256", Sha256Hex(templates_text)},
      {"counts", CountItems(items)},
  };
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(options.out_dir / kSummaryName, report.summary.dump(2) + "\n"));
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace visalign::violin
