// Internals of WriteRandomClipModel (include/visalign/clip.h), exposed for its tests: the config
// of each architecture, the tensors of an OpenCLIP-layout CLIP with their initialisation, and
// the deterministic value generator.
#pragma once

#include <cstdint>
#include <vector>

#include "clip/safetensors.h"
#include "visalign/clip.h"
#include "visalign/core/json.h"

namespace visalign::clip {

// Random values lie on the grid k · 2^-kRandomGridBits with |k| < 2^24, so every one is an exactly
// representable float computed without rounding.
inline constexpr int kRandomGridBits = 22;

// How one tensor's values are drawn.
struct RandomInit {
  enum class Kind { kUniform, kConstant };
  Kind kind = Kind::kUniform;
  int64_t variance_denominator = 1;  // kUniform: variance 1 / variance_denominator
  bool around_one = false;           // kUniform: centred on 1 (LayerNorm gains), else on 0
  float constant = 0.0f;             // kConstant: every value
};

struct RandomTensorSpec {
  TensorShape tensor;
  RandomInit init;
};

// The open_clip_config.json of `arch`, including the "visalign_random_model" record with `seed`.
Json RandomClipConfigJson(RandomClipArch arch, uint64_t seed);

// Every parameter of a CLIP with `config` (ViT with a class token or CoCa's attentional pooler, timm
// Eva-class trunks (EVA, PE-Core, timm CLIP ViTs), ModifiedResNet or timm ConvNeXt vision tower; the text
// tower under text. with custom_text, with CoCa's cls_emb) in the OpenCLIP layout (the names
// LoadClipModel reads), with OpenCLIP's initialisation scales. Not SigLIP's towers (bench/siglip_benchmark.cc).
std::vector<RandomTensorSpec> RandomTensorSpecs(const ClipConfig& config);

// Whether a kUniform init's values all fit the exact grid (variance small enough); kConstant: true.
bool RandomInitFitsGrid(const RandomInit& init);

// Fills `values` (spec.tensor.NumElements() floats) from the stream of (`seed`, tensor name), so a
// tensor's values do not depend on the other tensors. Requires RandomInitFitsGrid(spec.init).
void FillRandomTensor(const RandomTensorSpec& spec, uint64_t seed, float* values);

}  // namespace visalign::clip
