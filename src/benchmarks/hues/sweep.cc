#include "visalign/benchmarks/hues/sweep.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "visalign/benchmarks/hues/models.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"

namespace visalign::hues {
namespace {

namespace fs = std::filesystem;

Result<std::vector<fs::path>> ModelDirs(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Status::InvalidArgument("\"" + dir.string() + "\" is not a directory", "--models",
                                   "a folder of CLIP model folders");
  }
  std::vector<fs::path> dirs;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory() &&
        (fs::is_regular_file(e.path() / "open_clip_config.json") || fs::is_regular_file(e.path() / "config.json"))) {
      dirs.push_back(e.path());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  if (dirs.empty()) {
    return Status::InvalidArgument("no model folders in \"" + dir.string() + "\"", "--models",
                                   "subfolders with open_clip_config.json or config.json");
  }
  return dirs;
}

}  // namespace

// --models DIR: its model folders; --models-file FILE: one --clip-model value per line (blank lines and
// # comments skipped); --published: the catalog's models that run natively, as MODEL/TAG (the others
// are listed with how to bring their embeddings).
Result<std::vector<ModelEntry>> ModelEntries(const std::string& models, const std::string& models_file,
                                             bool published) {
  std::vector<ModelEntry> entries;
  if (!models.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(std::vector<fs::path> dirs, ModelDirs(models));
    for (const fs::path& dir : dirs) entries.push_back({dir.filename().string(), dir.string()});
    return entries;
  }
  std::vector<std::pair<std::string, std::string>> values;  // (name, --clip-model value); name "" = derived
  if (published) {
    std::vector<std::string> sources;
    VISALIGN_ASSIGN_OR_RETURN(std::vector<CatalogModel> catalog, ListCatalogModels("", sources));
    for (const CatalogModel& m : catalog) {
      if (m.support == ModelSupport::kNative) {
        values.emplace_back(m.model, m.entry.open_clip_model + "/" + m.entry.pretrained);
      } else {
        spdlog::info("{}: needs embeddings ({}): hues run --embeddings FILE --name {} (docs/hues.md)", m.model,
                     m.reason, m.model);
      }
    }
  } else {
    VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(models_file));
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
      if (!line.empty() && line.front() != '#') values.emplace_back("", line);
    }
  }
  for (const auto& [given, v] : values) {
    VISALIGN_ASSIGN_OR_RETURN(hub::ModelName parsed, hub::ParseModelName(v));
    std::string name = given.empty() ? hub::ResultsName(parsed) : given;
    if (name.empty()) {
      const fs::path dir = fs::absolute(v).lexically_normal();  // "models/x/" ends in an empty filename
      name = (dir.has_filename() ? dir : dir.parent_path()).filename().string();
    }
    entries.push_back({name, v});
  }
  if (entries.empty())
    return Status::InvalidArgument("no models", published ? "--published" : "--models-file", "at least one model");
  return entries;
}

std::unique_ptr<SweepDownloads> SweepDownloads::Make(hub::HubOptions options, bool keep_checkpoints) {
  std::unique_ptr<SweepDownloads> d(new SweepDownloads());
  d->options_ = std::move(options);
  d->options_.make_room = [raw = d.get()](uint64_t excess) { raw->MakeRoom(excess); };
  d->keep_ = keep_checkpoints;
  return d;
}

Status SweepDownloads::Fetch(const std::string& model) {
  if (fs::is_directory(model)) return Status::Ok();
  return hub::ModelFolder(model, options_).status();
}

Status SweepDownloads::Done(const std::string& model) {
  if (fs::is_directory(model)) return Status::Ok();
  if (keep_) {
    kept_.push_back(model);
    return Status::Ok();
  }
  VISALIGN_ASSIGN_OR_RETURN(uint64_t freed, hub::DeleteDownloadedWeights(model, options_));
  if (freed > 0)
    spdlog::info("{}: deleted its downloaded weights ({} bytes; --keep-checkpoints keeps them)", model, freed);
  return Status::Ok();
}

void SweepDownloads::MakeRoom(uint64_t excess) {
  uint64_t freed = 0;
  while (freed < excess && !kept_.empty()) {
    const std::string model = kept_.front();
    kept_.pop_front();
    const Result<uint64_t> n = hub::DeleteDownloadedWeights(model, options_);
    if (!n.ok()) {
      spdlog::warn("{}: cannot delete its weights to stay within --disk-budget: {}", model, n.status().ToString());
      continue;
    }
    freed += *n;
    spdlog::info("{}: deleted its weights ({} bytes) to stay within --disk-budget", model, *n);
  }
}

Status SweepReport::ToStatus() const {
  if (failed == 0) return Status::Ok();
  return Status(first_failure.code(),
                fmt::format("{} of {} models failed, the first with: {}", failed, total, first_failure.what()),
                first_failure.where(), first_failure.expected());
}

Result<SweepReport> RunModelsFolder(const SweepOptions& options, store::RunStore* shared,
                                    const RunSweepModel& run_one) {
  std::vector<std::pair<std::string, ModelEntry>> order;  // (preprocessing, model): hub names first, by name
  for (const ModelEntry& e : options.models) {
    const Result<clip::ClipConfig> config = fs::is_directory(e.model)
                                                ? clip::ReadClipModelConfig(e.model)
                                                : Result<clip::ClipConfig>(Status::NotFound("a hub name"));
    order.emplace_back(config.ok() ? clip::PreprocessFingerprintText(config->preprocess) : "", e);
  }
  std::sort(order.begin(), order.end());
  const std::string owner = store::MakeOwnerId();
  SweepReport report;
  report.total = options.models.size();
  for (auto pending = order; !pending.empty();) {
    std::vector<std::pair<std::string, ModelEntry>> busy;
    for (const auto& [preprocessing, entry] : pending) {
      const std::string& name = entry.name;
      const std::string key = (fs::absolute(options.out) / name).lexically_normal().string();
      std::optional<store::CacheLeaseRenewer> lease;
      if (shared) {
        VISALIGN_ASSIGN_OR_RETURN(store::CacheClaim claim,
                                  shared->ClaimCacheKeys(kSweepNamespace, owner, {key}, options.lease));
        if (!claim.busy.empty()) {
          busy.emplace_back(preprocessing, entry);
          continue;
        }
        lease.emplace(*shared, kSweepNamespace, owner, options.lease);
      }
      const Status fetched = options.downloads ? options.downloads->Fetch(entry.model) : Status::Ok();
      Result<Json> r = fetched.ok() ? run_one(entry, preprocessing) : Result<Json>(fetched);
      if (shared) {
        lease.reset();
        // Done: the key's value ends its lease; failed: released, for another process to try.
        VISALIGN_RETURN_IF_ERROR(r.ok() ? shared->CachePut(kSweepNamespace, key, r->value("status", ""))
                                        : shared->ReleaseCacheLeases(kSweepNamespace, owner));
      }
      if (options.downloads) VISALIGN_RETURN_IF_ERROR(options.downloads->Done(entry.model));
      if (r.ok()) {
        if (const auto it = r->find("board_pixels"); it != r->end() && it->is_string())
          spdlog::info("{}: board pixels {} ({})", name, it->get<std::string>(), preprocessing);
        report.models.push_back(*r);
        continue;
      }
      spdlog::warn("{}: failed: {}", name, r.status().ToString());
      Json f = Json::object();
      f["model"] = name;
      f["status"] = "failed";
      f["error"] = r.status().ToString();
      report.models.push_back(f);
      if (report.failed++ == 0) report.first_failure = r.status();
    }
    pending = std::move(busy);
    if (!pending.empty()) std::this_thread::sleep_for(options.busy_poll);
  }
  std::sort(report.models.begin(), report.models.end(),
            [](const Json& x, const Json& y) { return x["model"] < y["model"]; });
  return report;
}

}  // namespace visalign::hues
