// Reading a CLIP model directory's configuration: OpenCLIP (`open_clip_config.json` with
// {model_cfg, preprocess_cfg}, or a bare model_cfg) and Hugging Face transformers (`config.json`
// with vision_config/text_config, optional `preprocessor_config.json`). Every option that would
// change the architecture away from a standard ViT CLIP or an OpenCLIP SigLIP (timm ViT-MAP vision,
// bidirectional text, SentencePiece tokenizer) is refused, naming the feature.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "visalign/clip.h"
#include "visalign/core/status.h"

namespace visalign::clip {

// Top-level key of an OpenCLIP config written by WriteRandomClipModel: {"arch", "seed", "note"}.
inline constexpr const char* kRandomModelConfigKey = "visalign_random_model";

// Finds the config and weights files in `dir` and parses the config (weights are not opened).
Result<ClipConfig> ReadClipConfig(const std::filesystem::path& dir);

// Parses an OpenCLIP config ({model_cfg, preprocess_cfg} or a bare model_cfg). `source` names it in errors.
Result<ClipConfig> ParseOpenClipConfig(const nlohmann::json& j, const std::string& source);
// Parses a transformers CLIPModel config.json plus its preprocessor_config.json (null if absent).
Result<ClipConfig> ParseHuggingFaceConfig(const nlohmann::json& j, const nlohmann::json& preprocessor,
                                          const std::string& source);

// The canonical preprocessing description that enters the model fingerprint.
std::string PreprocessFingerprintText(const PreprocessConfig& p);

}  // namespace visalign::clip
