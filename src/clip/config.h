// Reading a CLIP model directory's configuration: OpenCLIP (`open_clip_config.json` with
// {model_cfg, preprocess_cfg}, or a bare model_cfg; config.cc, timm towers in timm_config.cc) and
// Hugging Face transformers (`config.json` with vision_config/text_config, optional
// `preprocessor_config.json`: CLIPModel and SiglipModel, hf_config.cc). Every option the native
// towers do not implement is refused, naming the feature.
#pragma once

#include <filesystem>

#include "visalign/clip.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::clip {

// Top-level key of an OpenCLIP config written by WriteRandomClipModel: {"arch", "seed", "note"}.
inline constexpr const char* kRandomModelConfigKey = "visalign_random_model";
// Written by visalign::hub into the config of a model fetched by name: "hf-hub:ORG/NAME@<commit> <weights
// file>". LoadClipModel adds it to the model's fingerprint, so results name the commit.
inline constexpr const char* kHubSourceConfigKey = "visalign_hub_source";

// Finds the config and weights files in `dir` and parses the config (weights are not opened).
Result<ClipConfig> ReadClipConfig(const std::filesystem::path& dir);
// The config file's kHubSourceConfigKey string, "" when absent (or the file unreadable).
std::string HubSourceOf(const std::filesystem::path& config_file);

// Parses an OpenCLIP config ({model_cfg, preprocess_cfg} or a bare model_cfg). `source` names it in errors.
Result<ClipConfig> ParseOpenClipConfig(const Json& j, const std::string& source);
// Parses a transformers CLIPModel / SiglipModel config.json plus its preprocessor_config.json (null if absent).
Result<ClipConfig> ParseHuggingFaceConfig(const Json& j, const Json& preprocessor, const std::string& source);

}  // namespace visalign::clip
