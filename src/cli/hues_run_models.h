// The models of a `hues run` sweep and what happens to a hub model's download after its run.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "cli/cli.h"
#include "visalign/core/status.h"

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

// After a hub model's predictions are written: its downloaded weights are deleted (a folder: nothing).
Status DropCheckpoint(const Cli& cli, const std::string& model);

}  // namespace visalign::cli
