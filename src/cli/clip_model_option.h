// --clip-model values in every command: a model folder, `hf-hub:ORG/NAME[@REVISION]` or open_clip's
// `MODEL/TAG`, the last two fetched into the model cache (visalign/hub/hub.h) with the environment's
// settings (VISALIGN_CACHE, HF_HOME, HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE) and the global --offline.
#pragma once

#include <filesystem>
#include <string>

#include "cli/cli.h"
#include "visalign/hub/hub.h"

namespace visalign::cli {

// The hub settings for this invocation (progress bars unless --json).
Result<hub::HubOptions> HubOptionsFor(const Cli& cli);

// The model folder a --clip-model value names (downloading what is missing).
Result<std::filesystem::path> ClipModelFolder(const Cli& cli, const std::string& value);
// The help text of a --clip-model option that takes a model folder (`clip embed`, `clip info`).
const char* ClipModelFolderHelp();
// LoadClipModel of that folder.
Result<clip::ClipModel> LoadClipModelFlag(const Cli& cli, const std::string& value,
                                          const clip::ClipLoadOptions& options = {});

}  // namespace visalign::cli
