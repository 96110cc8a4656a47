// `hues run --models / --models-file / --published` as a library: which models a sweep runs, what
// happens to a hub model's download around its run, and the scheduler that runs them — alone, or
// shared by any number of processes through a run store.
//
// Scheduling: models run grouped by preprocessing (PreprocessFingerprintText of their config; hub
// names and unreadable folders first), by name within a group, so a caller that shares the board's
// pixels between models holds one group's at a time. With a store, a model is claimed in the store's
// cache (namespace kSweepNamespace, key = the absolute OUT/<name>) before it runs, its lease renewed
// while it runs (store::CacheLeaseRenewer); once it is done its key gets the run's status (ending the
// lease), and a failure releases it for another process to try. A model another process holds is
// asked for again every `busy_poll` until it is done there (the run then finds its run record and
// skips it) or its lease expired (a process that died), so every process ends with every model done.
// A failing model never stops the others.
#pragma once

#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "visalign/core/json.h"

#include "visalign/core/status.h"
#include "visalign/hub/hub.h"
#include "visalign/store.h"

namespace visalign::hues {

// A model of a sweep: its name in the outputs and its --clip-model value (a folder or a hub name).
struct ModelEntry {
  std::string name;
  std::string model;
  bool operator<(const ModelEntry& o) const { return std::tie(name, model) < std::tie(o.name, o.model); }
};

// `models` (a folder): its model folders (subfolders with open_clip_config.json or config.json),
// named by folder, sorted; else `models_file`: one model value per line (blank lines and # comments
// skipped), named by hub::ResultsName or the folder's name; else `published`: the catalog's models
// that run natively, as MODEL/TAG (the others are logged with how to bring their embeddings).
// InvalidArgument at "--models" / "--models-file" / "--published" when there is none.
Result<std::vector<ModelEntry>> ModelEntries(const std::string& models, const std::string& models_file, bool published);

// The downloads of a sweep. Each hub model is fetched before its run (within options.disk_budget)
// and its weights are deleted after it (kept with `keep_checkpoints`); a folder is left alone.
// Under a budget, a download that would pass it first deletes the weights kept for models this
// sweep already ran, oldest first; a model that still does not fit fails alone.
class SweepDownloads {
 public:
  static std::unique_ptr<SweepDownloads> Make(hub::HubOptions options, bool keep_checkpoints);
  Status Fetch(const std::string& model);
  // After the model's run, whether it succeeded or not (a partial download stays, to resume).
  Status Done(const std::string& model);

 private:
  SweepDownloads() = default;
  void MakeRoom(uint64_t excess);

  hub::HubOptions options_;
  bool keep_ = false;
  std::deque<std::string> kept_;  // hub models whose weights are in the cache, oldest first
};

inline constexpr const char* kSweepNamespace = "hues-run-models";

struct SweepOptions {
  std::vector<ModelEntry> models;
  std::filesystem::path out;  // OUT: each model's outputs in OUT/<name>/ (its claim key)
  std::chrono::milliseconds lease{60000};
  std::chrono::milliseconds busy_poll{500};
  SweepDownloads* downloads = nullptr;  // null: models are folders, nothing is fetched
};

// One model's run (the caller's: load, predict, write): its JSON object, with "status" "done" or
// "skipped" (and "board_pixels" "prepared"/"shared" when the caller shares them), or the error.
// `preprocessing` is the model's group.
using RunSweepModel = std::function<Result<Json>(const ModelEntry& entry, const std::string& preprocessing)>;

struct SweepReport {
  std::vector<Json> models;  // by name: each run's object, or {"model", "status": "failed", "error"}
  size_t total = 0;          // models in the sweep
  size_t failed = 0;
  Status first_failure = Status::Ok();
  // OK, or the first failure's code, where and expected with "N of M models failed, the first
  // with: <what>".
  Status ToStatus() const;
};

// Runs every model of `options` through `run_one` as described above; `shared` may be null (no
// store: nothing is claimed). Errors are the store's (claims, completion) and the downloads'
// clean-up; a model's own failure is in the report.
Result<SweepReport> RunModelsFolder(const SweepOptions& options, store::RunStore* shared, const RunSweepModel& run_one);

}  // namespace visalign::hues
