#include "cli/clip_model_option.h"

namespace visalign::cli {

Result<hub::HubOptions> HubOptionsFor(const Cli& cli) {
  VISALIGN_ASSIGN_OR_RETURN(hub::HubOptions options, hub::HubOptionsFromEnvironment());
  options.offline = options.offline || cli.global().offline;
  options.show_progress = !cli.global().json;
  return options;
}

Result<std::filesystem::path> ClipModelFolder(const Cli& cli, const std::string& value) {
  Result<hub::ModelName> parsed = hub::ParseModelName(value);
  if (!parsed.ok()) {
    // The library's "model name" is the --clip-model value, which the callers name as context.
    const Status& st = parsed.status();
    return st.where() == "model name" ? Status(st.code(), st.what(), "", st.expected()) : st;
  }
  const hub::ModelName& name = *parsed;
  if (name.kind == hub::NameKind::kFolder) return std::filesystem::path(value);
  VISALIGN_ASSIGN_OR_RETURN(hub::HubOptions options, HubOptionsFor(cli));
  return hub::ModelFolder(value, options);
}

const char* ClipModelFolderHelp() {
  return "CLIP model directory: open_clip_config.json or config.json (OpenCLIP CLIP or SigLIP, or Hugging Face "
         "transformers CLIP) plus open_clip_model.safetensors or model.safetensors";
}

Result<clip::ClipModel> LoadClipModelFlag(const Cli& cli, const std::string& value,
                                          const clip::ClipLoadOptions& options) {
  VISALIGN_ASSIGN_OR_RETURN(std::filesystem::path folder, ClipModelFolder(cli, value));
  return clip::LoadClipModel(folder, options);
}

}  // namespace visalign::cli
