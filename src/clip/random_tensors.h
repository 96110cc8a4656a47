// The tensors of each vision tower family (and the transformer blocks both towers share) with
// OpenCLIP's / timm's initialisation scales: the parts RandomTensorSpecs (random_model.h) assembles.
// Each Add* appends its tensors to `specs` in the order the loaders' state dicts list them; that
// order is the safetensors layout, so it is part of the random model's pinned bytes. Internal to the
// clip module.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clip/config.h"
#include "clip/random_model.h"

namespace visalign::clip {

// OpenCLIP's scales as variances 1/n: LayerNorm gains 1 + 0.1·N and biases 0.05·N (the perturbation
// the clip-tiny fixture applies so that every parameter matters).
inline constexpr int64_t kGainVarianceDenominator = 100;
inline constexpr int64_t kBiasVarianceDenominator = 400;

// A uniform init with variance 1 / variance_denominator, centred on 0.
RandomInit Uniform(int64_t variance_denominator);
// LayerNorm / BatchNorm gains (and running variances): around 1.
RandomInit Gain();
// Biases (and running means, small layer scales): around 0.
RandomInit Bias();

// Layers, `name` without the ".weight" / ".bias" suffix unless said otherwise:
// a convolution's weight `name` (with its suffix) with PyTorch's default init (uniform with bound
// fan_in^-½: variance 1 / (3 fan_in));
void AddConv(std::vector<RandomTensorSpec>& specs, const std::string& name, int64_t out, int64_t in, int64_t kernel);
// that convolution's weight and a bias;
void AddBiasedConv(std::vector<RandomTensorSpec>& specs, const std::string& name, int64_t out, int64_t in,
                   int64_t kernel);
// BatchNorm2d in eval: gain and running variance around 1, bias and running mean small;
void AddBatchNorm(std::vector<RandomTensorSpec>& specs, const std::string& name, int64_t c);
// a Linear with variance 1 / fan_in, and its bias when `bias`;
void AddLinear(std::vector<RandomTensorSpec>& specs, const std::string& name, int64_t out, int64_t in, bool bias);
// a LayerNorm.
void AddNorm(std::vector<RandomTensorSpec>& specs, const std::string& name, int64_t c);

// OpenCLIP's transformer.resblocks.* under `prefix` (the text tower's, and the ViT's under "visual.").
void AddTower(std::vector<RandomTensorSpec>& specs, const std::string& prefix, const TowerConfig& t);

// Vision towers (random_vit_towers.cc): OpenCLIP's VisionTransformer; timm's Eva-class trunks; CoCa's
// attentional pooler, replacing the ViT's ln_post / proj; MobileCLIP-B's vit_base_mci_224.
void AddVitVision(std::vector<RandomTensorSpec>& specs, const ClipConfig& c);
void AddTimmEvaVision(std::vector<RandomTensorSpec>& specs, const ClipConfig& c);
void AddAttentionalPooler(std::vector<RandomTensorSpec>& specs, const ClipConfig& c);
void AddMciVit(std::vector<RandomTensorSpec>& specs, const ClipConfig& c);

// Convolutional and hybrid towers (random_conv_towers.cc): ModifiedResNet, timm ConvNeXt, timm ViTamin,
// timm FastViT MCi.
void AddResNet(std::vector<RandomTensorSpec>& specs, const ClipConfig& c);
void AddConvNext(std::vector<RandomTensorSpec>& specs, const ClipConfig& c);
void AddVitamin(std::vector<RandomTensorSpec>& specs, const ClipConfig& c);
void AddFastVit(std::vector<RandomTensorSpec>& specs, const ClipConfig& c);

}  // namespace visalign::clip
