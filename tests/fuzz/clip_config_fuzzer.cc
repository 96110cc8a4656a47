// The CLIP config reader, as a model folder downloaded from a hub reaches it: the input is the
// folder's open_clip_config.json (OpenCLIP, or transformers when it has vision_config/text_config)
// beside an empty weights file; ReadClipConfig parses it exactly as `clip info` does. A config it
// accepts describes a model that can be built: every size positive, heads dividing widths,
// preprocessing and normalisation constants finite (std and eps positive).
#include <cmath>

#include "clip/config.h"
#include "fuzz/fuzz_support.h"

namespace {

void CheckTower(const visalign::clip::TowerConfig& t) {
  VISALIGN_FUZZ_CHECK(t.width > 0 && t.layers > 0 && t.heads > 0 && t.mlp_width > 0);
  VISALIGN_FUZZ_CHECK(t.width % t.heads == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto config_file =
      visalign::fuzz::WriteScratchFile("open_clip_config.json", visalign::fuzz::AsText(data, size));
  static const auto weights = visalign::fuzz::WriteScratchFile("open_clip_model.safetensors", "");
  const auto config = visalign::clip::ReadClipConfig(config_file.parent_path());
  visalign::fuzz::CheckErrorLine(config.status());
  if (!config.ok()) return 0;
  VISALIGN_FUZZ_CHECK(config->embed_dim > 0);
  CheckTower(config->vision);
  CheckTower(config->text);
  VISALIGN_FUZZ_CHECK(config->vision.patch_size > 0 && config->vision.image_size >= config->vision.patch_size);
  VISALIGN_FUZZ_CHECK(config->text.context_length > 0 && config->text.vocab_size > 0);
  VISALIGN_FUZZ_CHECK(config->preprocess.image_size > 0);
  for (size_t c = 0; c < 3; ++c) {
    VISALIGN_FUZZ_CHECK(std::isfinite(config->preprocess.mean[c]) && std::isfinite(config->preprocess.std[c]) &&
                        config->preprocess.std[c] > 0);
  }
  VISALIGN_FUZZ_CHECK(std::isfinite(config->text.layer_norm_eps) && config->text.layer_norm_eps > 0);
  return 0;
}
