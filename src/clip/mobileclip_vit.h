// MobileCLIP-B's image tower (timm vit_base_mci_224, MobileCLIP-B / MobileCLIP2-B): a ViT-B/16 whose
// patch embedding is timm's ConvStem — conv 4×4 stride 4 (3 → 192, no bias) + BatchNorm + GELU, conv
// 2×2 stride 2 (192 → 192) + BatchNorm + GELU, conv 2×2 stride 2 (192 → 768, with bias), no padding —
// flattened row-major to the S/16 × S/16 patch tokens (HybridEmbed without projection). The
// BatchNorms are folded into their convolutions at load. The rest runs on the ViT path (towers.cc):
// position embedding on the patch tokens only, then the class token prepended (no_embed_class).
// Internal to the clip module.
#pragma once

#include <array>
#include <vector>

#include "clip/conv.h"
#include "clip/towers.h"
#include "clip/weight_loader.h"

namespace visalign::clip {

struct MciConvStemWeights {
  std::array<ConvWeights, 3> convs;
};

// visual.trunk.patch_embed.backbone.{0,1,2} for config.vision (width = the last conv's channels).
Result<MciConvStemWeights> LoadMciConvStem(WeightLoader& l, const VisionConfig& v);

// pixels: rows = images, 3·S·S CHW floats each. Returns the patch tokens [images · grid², width].
std::vector<float> RunMciConvStem(const VisionConfig& v, const MciConvStemWeights& w, const Matrix& pixels,
                                  const ForwardOptions& o);

}  // namespace visalign::clip
