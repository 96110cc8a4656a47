// Dataset-level VIOLIN evaluation: image discovery, a bounded parallel scoring pipeline, the
// per-group summary and its JSON/CSV/Markdown forms.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "visalign/io.h"
#include "visalign/parallel.h"
#include "visalign/progress.h"
#include "visalign/violin_eval.h"

namespace visalign::violin {
namespace {

constexpr std::string_view kSampleSeparator = "__";
constexpr std::array<std::string_view, 4> kImageExtensions = {".png", ".jpg", ".jpeg", ".webp"};
constexpr int kMarkdownDecimals = 4;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool IsImageExtension(const std::string& ext) {
  const std::string lower = Lower(ext);
  return std::find(kImageExtensions.begin(), kImageExtensions.end(), lower) != kImageExtensions.end();
}

using GroupKey = std::tuple<size_t, int, std::string, std::string>;  // model, variation, language, notation

struct GroupSums {
  std::array<double, kMetricCount> norm{}, raw{};
  double pre_mean = 0, pur_mean = 0;
  size_t n_scored = 0, n_missing = 0, n_unreadable = 0;
};

GroupKey KeyOf(size_t model, const ManifestItem& item) {
  return {model, item.variation, item.language, item.notation};
}

struct Job {
  size_t model;
  const ImageSource* source;
  const ManifestItem* item;
};

std::string Number(double v) { return fmt::format("{}", v); }

nlohmann::ordered_json MetricObject(const std::array<double, kMetricCount>& values, bool normalised) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (Metric m : kAllMetrics)
    j[std::string(normalised ? NormName(m) : RawName(m))] = values[static_cast<size_t>(m)];
  return j;
}

nlohmann::ordered_json ProblemJson(const Problem& p) {
  nlohmann::ordered_json j;
  j["model"] = p.model;
  if (!p.item_id.empty()) j["id"] = p.item_id;
  if (p.k >= 0) j["k"] = p.k;
  if (!p.path.empty()) j["path"] = p.path.string();
  j["reason"] = p.reason;
  return j;
}

// Column order of the CSV and Markdown tables: precision, pre_mean, purity, pur_mean.
struct TableColumn {
  std::string name;
  std::function<std::optional<double>(const SummaryRow&)> value;
};

std::vector<TableColumn> MetricColumns() {
  std::vector<TableColumn> columns;
  auto metric = [](Metric m) {
    return TableColumn{std::string(NormName(m)), [m](const SummaryRow& r) -> std::optional<double> {
                         if (!r.mean_norm) return std::nullopt;
                         return (*r.mean_norm)[static_cast<size_t>(m)];
                       }};
  };
  for (size_t i = 0; i < kPrecisionCount; ++i) columns.push_back(metric(kAllMetrics[i]));
  columns.push_back({"pre_mean", [](const SummaryRow& r) { return r.pre_mean; }});
  for (size_t i = kPrecisionCount; i < kMetricCount; ++i) columns.push_back(metric(kAllMetrics[i]));
  columns.push_back({"pur_mean", [](const SummaryRow& r) { return r.pur_mean; }});
  return columns;
}

}  // namespace

Result<ModelImages> CollectImageDirectory(const std::filesystem::path& dir, const std::string& model,
                                          const std::vector<ManifestItem>& items) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Status::NotFound("image folder " + dir.string() + " does not exist", "--images/--model",
                            "a folder of <id>.png or <id>__<k>.png images");
  std::set<std::string_view> ids;
  for (const ManifestItem& item : items) ids.insert(item.id);

  ModelImages out;
  out.model = model;
  std::map<std::pair<std::string, int>, std::filesystem::path> seen;
  std::filesystem::directory_iterator it(dir, ec), end;
  if (ec) return Status::IoError("cannot list " + dir.string() + ": " + ec.message(), "--images/--model");
  for (; it != end; it.increment(ec)) {
    if (ec) return Status::IoError("cannot list " + dir.string() + ": " + ec.message(), "--images/--model");
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
                                         ": " + pos->second.filename().string() + " and " +
                                         path.filename().string(),
                                     dir.string(), "one file per <id>__<k> (<id>.<ext> is sample 0)");
  }
  for (auto& [key, path] : seen) out.sources.push_back({key.first, key.second, path});
  std::sort(out.unmatched.begin(), out.unmatched.end());
  return out;
}

nlohmann::ordered_json ImageScoreJson(const ImageScore& s) {
  nlohmann::ordered_json j;
  j["id"] = s.item->id;
  j["model"] = s.model;
  j["k"] = s.k;
  j["path"] = s.path.string();
  j["variation"] = s.item->variation;
  j["language"] = s.item->language;
  j["notation"] = s.item->notation;
  j["layout"] = std::string(LayoutName(s.item->layout));
  j["raw"] = MetricObject(s.metrics.raw, false);
  j["norm"] = MetricObject(s.metrics.norm, true);
  j["pre_mean"] = s.metrics.pre_mean;
  j["pur_mean"] = s.metrics.pur_mean;
  return j;
}

size_t Summary::n_scored() const {
  size_t n = 0;
  for (const SummaryRow& r : rows) n += r.n_scored;
  return n;
}

Result<Summary> Evaluate(const std::vector<ManifestItem>& items, const std::vector<ModelImages>& models,
                         const EvaluateOptions& options) {
  std::unordered_map<std::string_view, size_t> index_of;
  for (size_t i = 0; i < items.size(); ++i) index_of.emplace(items[i].id, i);

  // Jobs in a fixed order: models as given, then manifest order, then k.
  std::vector<Job> jobs;
  std::map<GroupKey, GroupSums> groups;
  Summary summary;
  for (size_t m = 0; m < models.size(); ++m) {
    const ModelImages& model = models[m];
    std::vector<std::pair<std::pair<size_t, int>, const ImageSource*>> ordered;
    std::set<std::pair<size_t, int>> seen;
    for (const ImageSource& source : model.sources) {
      auto it = index_of.find(source.item_id);
      if (it == index_of.end())
        return Status::InvalidArgument("image for unknown item \"" + source.item_id + "\"",
                                       "model " + model.model + ", " + source.path.string(),
                                       "ids from the dataset's manifest.jsonl");
      if (!seen.emplace(it->second, source.k).second)
        return Status::InvalidArgument(
            "two images for item " + source.item_id + " sample " + std::to_string(source.k),
            "model " + model.model, "one image per (item, k)");
      ordered.push_back({{it->second, source.k}, &source});
    }
    std::sort(ordered.begin(), ordered.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<bool> has_image(items.size(), false);
    for (const auto& [key, source] : ordered) {
      jobs.push_back({m, source, &items[key.first]});
      has_image[key.first] = true;
    }
    for (size_t i = 0; i < items.size(); ++i) {
      GroupSums& group = groups[KeyOf(m, items[i])];
      if (!has_image[i]) {
        ++group.n_missing;
        summary.missing.push_back({model.model, items[i].id, -1, {}, "no image"});
      }
    }
    for (const std::filesystem::path& path : model.unmatched)
      summary.unmatched.push_back({model.model, {}, -1, path, "no manifest item with this id"});
  }

  Progress progress("violin evaluate", jobs.size(), options.show_progress);
  auto produce = [&](size_t i) -> Result<Metrics> {
    const Job& job = jobs[i];
    VISALIGN_ASSIGN_OR_RETURN(imaging::Image image, imaging::ReadImage(job.source->path));
    return ScoreImage(image, TargetSpec::FromItem(*job.item), options.weights);
  };
  auto consume = [&](size_t i, Result<Metrics>&& result) -> Status {
    const Job& job = jobs[i];
    GroupSums& group = groups[KeyOf(job.model, *job.item)];
    if (!result.ok()) {
      ++group.n_unreadable;
      summary.unreadable.push_back(
          {models[job.model].model, job.item->id, job.source->k, job.source->path, result.status().ToString()});
      progress.Add(0, 1);
      return Status::Ok();
    }
    const Metrics& metrics = result.value();
    ++group.n_scored;
    for (size_t k = 0; k < kMetricCount; ++k) {
      group.norm[k] += metrics.norm[k];
      group.raw[k] += metrics.raw[k];
    }
    group.pre_mean += metrics.pre_mean;
    group.pur_mean += metrics.pur_mean;
    progress.Add(1, 0);
    if (options.on_image)
      return options.on_image(ImageScore{job.item, models[job.model].model, job.source->k, job.source->path, metrics});
    return Status::Ok();
  };
  VISALIGN_RETURN_IF_ERROR(ParallelForOrdered(jobs.size(), produce, consume, options.threads));
  progress.Finish();

  for (const auto& [key, sums] : groups) {
    SummaryRow row;
    row.model = models[std::get<0>(key)].model;
    row.variation = std::get<1>(key);
    row.language = std::get<2>(key);
    row.notation = std::get<3>(key);
    row.n_scored = sums.n_scored;
    row.n_missing = sums.n_missing;
    row.n_unreadable = sums.n_unreadable;
    if (sums.n_scored > 0) {
      const double n = static_cast<double>(sums.n_scored);
      std::array<double, kMetricCount> norm{}, raw{};
      for (size_t k = 0; k < kMetricCount; ++k) {
        norm[k] = sums.norm[k] / n;
        raw[k] = sums.raw[k] / n;
      }
      row.mean_norm = norm;
      row.mean_raw = raw;
      row.pre_mean = sums.pre_mean / n;
      row.pur_mean = sums.pur_mean / n;
    }
    summary.rows.push_back(std::move(row));
  }
  return summary;
}

nlohmann::ordered_json SummaryJson(const Summary& summary, const Weights& weights) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json w = nlohmann::ordered_json::object();
  for (size_t i = 0; i < kPrecisionCount; ++i) w[std::string(RawName(kAllMetrics[i]))] = weights.precision[i];
  j["weights"] = w;
  j["rows"] = nlohmann::ordered_json::array();
  for (const SummaryRow& r : summary.rows) {
    nlohmann::ordered_json row;
    row["model"] = r.model;
    row["variation"] = r.variation;
    row["language"] = r.language;
    row["notation"] = r.notation;
    row["n_scored"] = r.n_scored;
    row["n_missing"] = r.n_missing;
    row["n_unreadable"] = r.n_unreadable;
    row["norm"] = r.mean_norm ? MetricObject(*r.mean_norm, true) : nlohmann::ordered_json();
    row["raw"] = r.mean_raw ? MetricObject(*r.mean_raw, false) : nlohmann::ordered_json();
    row["pre_mean"] = r.pre_mean ? nlohmann::ordered_json(*r.pre_mean) : nlohmann::ordered_json();
    row["pur_mean"] = r.pur_mean ? nlohmann::ordered_json(*r.pur_mean) : nlohmann::ordered_json();
    j["rows"].push_back(row);
  }
  for (const auto& [name, list] : {std::pair{"missing", &summary.missing}, std::pair{"unreadable", &summary.unreadable},
                                   std::pair{"unmatched", &summary.unmatched}}) {
    j[std::string("n_") + name] = list->size();
    j[name] = nlohmann::ordered_json::array();
    for (const Problem& p : *list) j[name].push_back(ProblemJson(p));
  }
  return j;
}

std::string SummaryCsv(const Summary& summary) {
  const std::vector<TableColumn> columns = MetricColumns();
  std::string out = "model,variation,language,notation";
  for (const TableColumn& c : columns) out += "," + c.name;
  out += ",n_scored,n_missing,n_unreadable\n";
  for (const SummaryRow& r : summary.rows) {
    out += CsvField(r.model) + "," + std::to_string(r.variation) + "," + CsvField(r.language) + "," +
           CsvField(r.notation);
    for (const TableColumn& c : columns) {
      const std::optional<double> v = c.value(r);
      out += "," + (v ? Number(*v) : std::string());
    }
    out += fmt::format(",{},{},{}\n", r.n_scored, r.n_missing, r.n_unreadable);
  }
  return out;
}

std::string SummaryMarkdown(const Summary& summary) {
  const std::vector<TableColumn> columns = MetricColumns();
  std::string header = "| model | var | lang | notation |", rule = "|---|---:|---|---|";
  for (const TableColumn& c : columns) {
    header += " " + c.name + " |";
    rule += "---:|";
  }
  header += " n_scored | n_missing | n_unreadable |\n";
  rule += "---:|---:|---:|\n";
  std::string out = header + rule;
  for (const SummaryRow& r : summary.rows) {
    out += fmt::format("| {} | {} | {} | {} |", r.model, r.variation, r.language, r.notation);
    for (const TableColumn& c : columns) {
      const std::optional<double> v = c.value(r);
      out += v ? fmt::format(" {:.{}f} |", *v, kMarkdownDecimals) : std::string(" – |");
    }
    out += fmt::format(" {} | {} | {} |\n", r.n_scored, r.n_missing, r.n_unreadable);
  }
  return out;
}

Result<Summary> EvaluateToDirectory(const std::vector<ManifestItem>& items, const std::vector<ModelImages>& models,
                                    const EvaluateOptions& options, const std::filesystem::path& out_dir) {
  VISALIGN_RETURN_IF_ERROR(EnsureDirectory(out_dir));
  const std::filesystem::path items_path = out_dir / "items.jsonl";
  const std::filesystem::path partial_path = out_dir / "items.jsonl.partial";
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(partial_path.c_str(), "wb"), &std::fclose);
  if (!file) return Status::IoError("cannot create " + partial_path.string(), "--out", "a writable folder");

  EvaluateOptions streaming = options;
  streaming.on_image = [&](const ImageScore& score) -> Status {
    const std::string line = ImageScoreJson(score).dump() + "\n";
    if (std::fwrite(line.data(), 1, line.size(), file.get()) != line.size())
      return Status::IoError("cannot write " + partial_path.string(), "--out", "free disk space");
    return options.on_image ? options.on_image(score) : Status::Ok();
  };
  Result<Summary> summary = Evaluate(items, models, streaming);
  const bool closed = std::fclose(file.release()) == 0;
  std::error_code ec;
  if (!summary.ok()) {
    std::filesystem::remove(partial_path, ec);
    return summary.status();
  }
  if (!closed) return Status::IoError("cannot write " + partial_path.string(), "--out", "free disk space");
  std::filesystem::rename(partial_path, items_path, ec);
  if (ec) return Status::IoError("cannot rename to " + items_path.string() + ": " + ec.message(), "--out");

  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(out_dir / "summary.json", SummaryJson(*summary, options.weights).dump(2) + "\n"));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(out_dir / "summary.csv", SummaryCsv(*summary)));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(out_dir / "summary.md", SummaryMarkdown(*summary)));
  return summary;
}

}  // namespace visalign::violin
