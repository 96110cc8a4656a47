// The models of a `hues run` sweep (--models, --models-file, --published) and what happens to a
// hub model's download after its run.
#include "cli/hues_run_models.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <utility>

#include "cli/clip_model_option.h"
#include "visalign/benchmarks/hues/models.h"
#include "visalign/core/io.h"
#include "visalign/hub/hub.h"

namespace visalign::cli {
namespace {

namespace fs = std::filesystem;
using hues::CatalogModel;
using hues::ListCatalogModels;
using hues::ModelSupport;

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
Result<std::vector<ModelEntry>> ModelEntries(const std::string& models, const std::string& models_file, bool published) {
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
        spdlog::info("{}: needs embeddings ({}): hues run --embeddings FILE --name {} (docs/hues.md)", m.model, m.reason, m.model);
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
  if (entries.empty()) return Status::InvalidArgument("no models", published ? "--published" : "--models-file", "at least one model");
  return entries;
}

Result<std::unique_ptr<SweepDownloads>> SweepDownloads::Make(const Cli& cli, uint64_t disk_budget, bool keep_checkpoints) {
  std::unique_ptr<SweepDownloads> d(new SweepDownloads());
  VISALIGN_ASSIGN_OR_RETURN(d->options_, HubOptionsFor(cli));
  d->options_.disk_budget = disk_budget;
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
  if (freed > 0) spdlog::info("{}: deleted its downloaded weights ({} bytes; --keep-checkpoints keeps them)", model, freed);
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

}  // namespace visalign::cli
