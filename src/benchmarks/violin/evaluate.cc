// Dataset-level VIOLIN evaluation: image discovery, the split, a bounded parallel scoring
// pipeline and the streamed items.jsonl; the summary is built in summary.cc.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "benchmarks/violin/probes_evaluate.h"
#include "benchmarks/violin/summary.h"
#include "benchmarks/violin/summary_output.h"
#include "visalign/benchmarks/violin/evaluate.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"
#include "visalign/core/progress.h"
#include "visalign/imaging/image.h"

namespace visalign::violin {
namespace {

constexpr std::string_view kSampleSeparator = "__";
bool IsImageExtension(const std::string& ext) { return imaging::ImageFileExtensionRank(ext) >= 0; }

struct Job {
  size_t model;
  const ImageSource* source;
  size_t item;  // index into the selection
};

using Records = std::vector<std::vector<std::vector<ImageRecord>>>;

// Normalization::kMinMax: rescales every scored image's normalised values to the range of the image-level raw
// values over all scored images, records that range in `summary`, and recomputes pre_mean and pur_mean.
void MinMaxNormalise(Records& records, const Weights& weights, Summary& summary) {
  std::array<double, kMetricCount> lo, hi;
  lo.fill(std::numeric_limits<double>::infinity());
  hi.fill(-std::numeric_limits<double>::infinity());
  for (const auto& model : records)
    for (const auto& item : model)
      for (const ImageRecord& r : item)
        if (r.scored && !r.metrics.probe)
          for (size_t k = 0; k < kMetricCount; ++k) {
            lo[k] = std::min(lo[k], r.metrics.raw[k]);
            hi[k] = std::max(hi[k], r.metrics.raw[k]);
          }
  for (auto& model : records)
    for (auto& item : model)
      for (ImageRecord& r : item) {
        if (!r.scored || r.metrics.probe) continue;
        for (size_t k = 0; k < kMetricCount; ++k)
          r.metrics.norm[k] = hi[k] > lo[k] ? (r.metrics.raw[k] - lo[k]) / (hi[k] - lo[k]) : 0.0;
        WeightMeans(r.metrics, weights);
      }
  summary.raw_min = lo;
  summary.raw_max = hi;
}

}  // namespace

Result<ModelImages> CollectImageDirectory(const std::filesystem::path& dir, const std::string& model,
                                          const std::vector<ManifestItem>& items) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Status::NotFound("image folder " + dir.string() + " does not exist", "image folder",
                            "a folder of <id>.png or <id>__<k>.png images");
  std::set<std::string_view> ids;
  for (const ManifestItem& item : items) ids.insert(item.id);

  ModelImages out;
  out.model = model;
  out.origin.kind = "folder";
  out.origin.path = std::filesystem::absolute(dir, ec).lexically_normal();
  std::map<std::pair<std::string, int>, std::filesystem::path> seen;
  std::filesystem::directory_iterator it(dir, ec), end;
  if (ec) return Status::IoError("cannot list " + dir.string() + ": " + ec.message(), "image folder");
  for (; it != end; it.increment(ec)) {
    if (ec) return Status::IoError("cannot list " + dir.string() + ": " + ec.message(), "image folder");
    const std::filesystem::path& path = it->path();
    if (!it->is_regular_file(ec) || !IsImageExtension(path.extension().string())) continue;
    const std::string stem = path.stem().string();
    std::optional<std::pair<std::string, int>> key;
    if (ids.count(stem)) {
      key.emplace(stem, 0);
    } else if (size_t sep = stem.rfind(kSampleSeparator); sep != std::string::npos) {
      const std::string id = stem.substr(0, sep);
      const std::string k_text = stem.substr(sep + kSampleSeparator.size());
      const bool digits = !k_text.empty() && k_text.size() < 10 &&
                          std::all_of(k_text.begin(), k_text.end(), [](unsigned char c) { return std::isdigit(c); });
      if (ids.count(id) && digits) key.emplace(id, std::stoi(k_text));
    }
    if (!key) {
      out.unmatched.push_back(path);
      continue;
    }
    auto [pos, inserted] = seen.emplace(*key, path);
    if (!inserted)
      return Status::InvalidArgument("two images for item " + key->first + " sample " + std::to_string(key->second) +
                                         ": " + pos->second.filename().string() + " and " + path.filename().string(),
                                     dir.string(), "one file per <id>__<k> (<id>.<ext> is sample 0)");
  }
  for (auto& [key, path] : seen) out.sources.push_back({key.first, key.second, path});
  std::sort(out.unmatched.begin(), out.unmatched.end());
  return out;
}

Json ImageScoreJson(const ImageScore& s) {
  Json j;
  j["id"] = s.item->id;
  j["model"] = s.model;
  j["k"] = s.k;
  j["path"] = AbsoluteImagePath(s.path);
  j["variation"] = s.item->variation;
  j["language"] = s.item->language;
  j["notation"] = s.item->notation;
  j["layout"] = std::string(LayoutName(s.item->layout));
  j["prompt"] = s.item->prompt;
  Json targets = Json::array();
  for (const color::Srgb8& t : s.item->targets) targets.push_back(color::ToHex(t));
  j["targets"] = targets;
  if (s.item->fuzzy) j["fuzzy"] = {color::ToHex(s.item->fuzzy->first), color::ToHex(s.item->fuzzy->second)};
  j["alpha_min"] = s.metrics.alpha_min;
  if (!s.metrics.probe) {  // inertia and geometry probes have their own measures instead
    j["blocks"] = BlocksJson(s.metrics.blocks);
    j["raw"] = MetricObject(s.metrics.raw, false);
    j["norm"] = MetricObject(s.metrics.norm, true);
    j["pre_mean"] = s.metrics.pre_mean;
    j["pur_mean"] = s.metrics.pur_mean;
  }
  AddProbeJson(*s.item, s.metrics, j);
  return j;
}

Result<Summary> Evaluate(const std::vector<ManifestItem>& items, const std::vector<ModelImages>& models,
                         const EvaluateOptions& options) {
  if (options.split != "all" && options.split != "train" && options.split != "test")
    return Status::InvalidArgument("unknown split \"" + options.split + "\"", "split", "train, test or all");
  for (const std::string& column : options.by) VISALIGN_RETURN_IF_ERROR(ColumnValue(ManifestItem{}, column).status());
  Summary summary;
  summary.split = options.split;
  summary.filters = options.filters;
  summary.limit = options.limit;
  summary.by = options.by;
  summary.refusals = options.refusals;
  summary.missing_policy = options.missing;
  summary.alpha = options.alpha;
  summary.bootstrap = options.bootstrap;
  summary.manifest_sha256 = options.manifest_sha256;
  summary.normalization = options.normalization;
  for (const ModelImages& model : models) summary.origins.emplace_back(model.model, model.origin);

  // The selection: items of the split matching the filters, up to the limit, in manifest order;
  // `slot` maps a manifest index to it.
  constexpr size_t kOutside = SIZE_MAX;
  std::vector<const ManifestItem*> selected;
  std::vector<size_t> slot(items.size(), kOutside);
  std::unordered_map<std::string_view, size_t> index_of;
  for (size_t i = 0; i < items.size(); ++i) {
    index_of.emplace(items[i].id, i);
    if ((options.split == "all" || items[i].split == options.split) && MatchesFilters(items[i], options.filters) &&
        (options.limit <= 0 || selected.size() < static_cast<size_t>(options.limit))) {
      slot[i] = selected.size();
      selected.push_back(&items[i]);
    }
  }

  // Jobs in a fixed order: models as given, then manifest order, then k.
  std::vector<Job> jobs;
  std::vector<std::string> names;
  for (size_t m = 0; m < models.size(); ++m) {
    const ModelImages& model = models[m];
    names.push_back(model.model);
    std::vector<std::pair<std::pair<size_t, int>, const ImageSource*>> ordered;
    std::set<std::pair<size_t, int>> seen;
    for (const ImageSource& source : model.sources) {
      auto it = index_of.find(source.item_id);
      if (it == index_of.end())
        return Status::InvalidArgument("image for unknown item \"" + source.item_id + "\"",
                                       "model " + model.model + ", " + source.path.string(),
                                       "ids from the dataset's manifest.jsonl");
      if (!seen.emplace(it->second, source.k).second)
        return Status::InvalidArgument("two images for item " + source.item_id + " sample " + std::to_string(source.k),
                                       "model " + model.model, "one image per (item, k)");
      if (slot[it->second] == kOutside) {
        ++summary.n_outside_split;
        continue;
      }
      ordered.push_back({{slot[it->second], source.k}, &source});
    }
    std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<bool> has_image(selected.size(), false);
    for (const auto& [key, source] : ordered) {
      jobs.push_back({m, source, key.first});
      has_image[key.first] = true;
    }
    for (size_t i = 0; i < selected.size(); ++i)
      if (!has_image[i]) summary.missing.push_back({model.model, selected[i]->id, -1, {}, "no image"});
    for (const std::filesystem::path& path : model.unmatched)
      summary.unmatched.push_back({model.model, {}, -1, path, "no manifest item with this id"});
  }

  Records records(models.size(), std::vector<std::vector<ImageRecord>>(selected.size()));
  // Min-max values need every image first, so their items.jsonl lines are written after scoring.
  const bool defer_images = options.normalization == Normalization::kMinMax;
  std::vector<size_t> record_of(jobs.size());  // a job's position in its records[model][item]
  Progress progress("violin evaluate", jobs.size(), options.show_progress);
  auto produce = [&](size_t i) -> Result<Metrics> {
    const Job& job = jobs[i];
    VISALIGN_ASSIGN_OR_RETURN(imaging::Image image, imaging::ReadImage(job.source->path, options.alpha));
    return ScoreItemImage(image, *selected[job.item], options.weights);
  };
  auto consume = [&](size_t i, Result<Metrics>&& result) -> Status {
    const Job& job = jobs[i];
    const ManifestItem& item = *selected[job.item];
    std::vector<ImageRecord>& item_records = records[job.model][job.item];
    record_of[i] = item_records.size();
    if (!result.ok()) {
      item_records.push_back({false, {}});
      summary.unreadable.push_back(
          {models[job.model].model, item.id, job.source->k, job.source->path, result.status().ToString()});
      progress.Add(0, 1);
      return Status::Ok();
    }
    if (result->alpha_min < 255)
      summary.transparent.push_back({models[job.model].model, item.id, job.source->k, job.source->path,
                                     "alpha_min " + std::to_string(result->alpha_min)});
    item_records.push_back({true, *result});
    progress.Add(1, 0);
    if (options.on_image && !defer_images)
      return options.on_image(ImageScore{&item, models[job.model].model, job.source->k, job.source->path, *result});
    return Status::Ok();
  };
  VISALIGN_RETURN_IF_ERROR(ParallelForOrdered(jobs.size(), produce, consume, options.threads));
  progress.Finish();
  if (defer_images) {
    MinMaxNormalise(records, options.weights, summary);
    for (size_t i = 0; i < jobs.size() && options.on_image; ++i) {
      const Job& job = jobs[i];
      const ImageRecord& r = records[job.model][job.item][record_of[i]];
      if (!r.scored) continue;
      VISALIGN_RETURN_IF_ERROR(options.on_image(
          ImageScore{selected[job.item], models[job.model].model, job.source->k, job.source->path, r.metrics}));
    }
  }
  summary.probes = SummariseProbes(selected, names, records, options.bootstrap);
  // Inertia and geometry probe items have no VIOLIN score: the VIOLIN rows leave them out.
  std::vector<const ManifestItem*> scored_items;
  Records scored_records(models.size());
  for (size_t i = 0; i < selected.size(); ++i) {
    if (!HasViolinScore(*selected[i])) continue;
    scored_items.push_back(selected[i]);
    for (size_t m = 0; m < models.size(); ++m) scored_records[m].push_back(std::move(records[m][i]));
  }
  Progress intervals("violin evaluate: bootstrap intervals (resamples)",
                     BootstrapSteps(models.size(), summary.bootstrap.resamples), options.show_progress);
  VISALIGN_RETURN_IF_ERROR(BuildRows(scored_items, names, scored_records, summary, &intervals));
  intervals.Finish();
  return summary;
}

Result<Summary> EvaluateToDirectory(const std::vector<ManifestItem>& items, const std::vector<ModelImages>& models,
                                    const EvaluateOptions& options, const std::filesystem::path& out_dir) {
  VISALIGN_RETURN_IF_ERROR(EnsureDirectory(out_dir));
  const std::filesystem::path items_path = out_dir / "items.jsonl";
  const std::filesystem::path partial_path = out_dir / "items.jsonl.partial";
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(partial_path.c_str(), "wb"), &std::fclose);
  if (!file) return Status::IoError("cannot create " + partial_path.string(), "output folder", "a writable folder");

  EvaluateOptions streaming = options;
  streaming.on_image = [&](const ImageScore& score) -> Status {
    const std::string line = ImageScoreJson(score).dump() + "\n";
    if (std::fwrite(line.data(), 1, line.size(), file.get()) != line.size())
      return Status::IoError("cannot write " + partial_path.string(), "output folder", "free disk space");
    return options.on_image ? options.on_image(score) : Status::Ok();
  };
  Result<Summary> summary = Evaluate(items, models, streaming);
  const bool closed = std::fclose(file.release()) == 0;
  std::error_code ec;
  if (!summary.ok()) {
    std::filesystem::remove(partial_path, ec);
    return summary.status();
  }
  if (!closed) return Status::IoError("cannot write " + partial_path.string(), "output folder", "free disk space");
  std::filesystem::rename(partial_path, items_path, ec);
  if (ec) return Status::IoError("cannot rename to " + items_path.string() + ": " + ec.message(), "output folder");

  VISALIGN_RETURN_IF_ERROR(
      WriteFileAtomic(out_dir / "summary.json", SummaryJson(*summary, options.weights).dump(2) + "\n"));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(out_dir / "summary.csv", SummaryCsv(*summary)));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(out_dir / "summary.md", SummaryMarkdown(*summary)));
  if (!summary->probes.empty()) VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(out_dir / "probes.csv", ProbesCsv(*summary)));
  return summary;
}

}  // namespace visalign::violin
