// The initialisations and layers every tower family's tensors are made of (random_tensors.h).
#include <string>
#include <vector>

#include "clip/random_tensors.h"

namespace visalign::clip {

RandomInit Uniform(int64_t variance_denominator) {
  return {RandomInit::Kind::kUniform, variance_denominator, false, 0.0f};
}
RandomInit Gain() { return {RandomInit::Kind::kUniform, kGainVarianceDenominator, true, 0.0f}; }
RandomInit Bias() { return Uniform(kBiasVarianceDenominator); }

void AddConv(std::vector<RandomTensorSpec>& specs, const std::string& name, int64_t out, int64_t in, int64_t kernel) {
  specs.push_back({{name, {out, in, kernel, kernel}}, Uniform(3 * in * kernel * kernel)});
}

void AddBiasedConv(std::vector<RandomTensorSpec>& specs, const std::string& name, int64_t out, int64_t in,
                   int64_t kernel) {
  AddConv(specs, name + ".weight", out, in, kernel);
  specs.push_back({{name + ".bias", {out}}, Bias()});
}

void AddBatchNorm(std::vector<RandomTensorSpec>& specs, const std::string& name, int64_t c) {
  specs.push_back({{name + ".weight", {c}}, Gain()});
  specs.push_back({{name + ".bias", {c}}, Bias()});
  specs.push_back({{name + ".running_mean", {c}}, Bias()});
  specs.push_back({{name + ".running_var", {c}}, Gain()});
}

void AddLinear(std::vector<RandomTensorSpec>& specs, const std::string& name, int64_t out, int64_t in, bool bias) {
  specs.push_back({{name + ".weight", {out, in}}, Uniform(in)});
  if (bias) specs.push_back({{name + ".bias", {out}}, Bias()});
}

void AddNorm(std::vector<RandomTensorSpec>& specs, const std::string& name, int64_t c) {
  specs.push_back({{name + ".weight", {c}}, Gain()});
  specs.push_back({{name + ".bias", {c}}, Bias()});
}

void AddTower(std::vector<RandomTensorSpec>& specs, const std::string& prefix, const TowerConfig& t) {
  const int64_t w = t.width;
  const int64_t mlp = t.mlp_width;
  // OpenCLIP's text-tower init (also used here for the vision tower): attention std w^-½, MLP
  // input std (2w)^-½, output projections std w^-½ (2·layers)^-½.
  const int64_t attn = w;
  const int64_t fc = 2 * w;
  const int64_t out = 2 * static_cast<int64_t>(t.layers) * w;
  for (int i = 0; i < t.layers; ++i) {
    const std::string p = prefix + "transformer.resblocks." + std::to_string(i) + ".";
    AddNorm(specs, p + "ln_1", w);
    AddNorm(specs, p + "ln_2", w);
    specs.push_back({{p + "attn.in_proj_weight", {3 * w, w}}, Uniform(attn)});
    specs.push_back({{p + "attn.in_proj_bias", {3 * w}}, Bias()});
    specs.push_back({{p + "attn.out_proj.weight", {w, w}}, Uniform(out)});
    specs.push_back({{p + "attn.out_proj.bias", {w}}, Bias()});
    specs.push_back({{p + "mlp.c_fc.weight", {mlp, w}}, Uniform(fc)});
    specs.push_back({{p + "mlp.c_fc.bias", {mlp}}, Bias()});
    specs.push_back({{p + "mlp.c_proj.weight", {w, mlp}}, Uniform(out)});
    specs.push_back({{p + "mlp.c_proj.bias", {w}}, Bias()});
  }
}

}  // namespace visalign::clip
