// The models of a `hues run` sweep and what happens to a hub model's download after its run.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "cli/cli.h"
#include "visalign/core/status.h"
#include "visalign/hub/hub.h"

namespace visalign::cli {

// A model of a sweep: its name in the outputs and its --clip-model value (a folder or a hub name).
struct ModelEntry {
  std::string name;
  std::string model;
  bool operator<(const ModelEntry& o) const { return std::tie(name, model) < std::tie(o.name, o.model); }
};

// `models` (--models DIR): its model folders; else `models_file` (--models-file FILE): one --clip-model
// value per line (blank lines and # comments skipped); else `published`: the catalog's models that run
// natively, as MODEL/TAG (the others are logged with how to bring their embeddings).
Result<std::vector<ModelEntry>> ModelEntries(const std::string& models, const std::string& models_file, bool published);

// The downloads of a sweep. Each hub model is fetched before its run (within --disk-budget) and its
// weights are deleted after it (kept with --keep-checkpoints); a folder is left alone. Under a budget,
// a download that would pass it first deletes the weights kept for models this sweep already ran,
// oldest first; a model that still does not fit fails alone (the sweep goes on).
class SweepDownloads {
 public:
  static Result<std::unique_ptr<SweepDownloads>> Make(const Cli& cli, uint64_t disk_budget, bool keep_checkpoints);
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

}  // namespace visalign::cli
