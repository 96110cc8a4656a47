// Test-only: the siglip-tiny fixture (OpenCLIP layout) rewritten as a transformers SiglipModel
// checkpoint, with an explicit name table, so the HF layout is checked against the fixture's own
// expected outputs. Used by hf_siglip_test.cc.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "clip/fixture_testing.h"
#include "clip/safetensors.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"

namespace visalign::clip::testing {

// OpenCLIP name -> HF name, for the tensors that are renamed only ("<i>" is the layer index).
// timm's fused qkv / OpenCLIP's in_proj are split into q/k/v rows, the pooling head's q and kv are
// fused into nn.MultiheadAttention's in_proj, and timm's pos_embed [1, N, D] becomes an
// nn.Embedding [N, D]: those are handled in HfSiglipTensors.
inline const std::vector<std::pair<std::string, std::string>>& HfSiglipRenames() {
  static const std::vector<std::pair<std::string, std::string>> kTable = {
      {"visual.trunk.patch_embed.proj.", "vision_model.embeddings.patch_embedding."},
      {"visual.trunk.blocks.<i>.norm1.", "vision_model.encoder.layers.<i>.layer_norm1."},
      {"visual.trunk.blocks.<i>.norm2.", "vision_model.encoder.layers.<i>.layer_norm2."},
      {"visual.trunk.blocks.<i>.attn.proj.", "vision_model.encoder.layers.<i>.self_attn.out_proj."},
      {"visual.trunk.blocks.<i>.mlp.fc1.", "vision_model.encoder.layers.<i>.mlp.fc1."},
      {"visual.trunk.blocks.<i>.mlp.fc2.", "vision_model.encoder.layers.<i>.mlp.fc2."},
      {"visual.trunk.norm.", "vision_model.post_layernorm."},
      {"visual.trunk.attn_pool.latent", "vision_model.head.probe"},
      {"visual.trunk.attn_pool.proj.", "vision_model.head.attention.out_proj."},
      {"visual.trunk.attn_pool.norm.", "vision_model.head.layernorm."},
      {"visual.trunk.attn_pool.mlp.fc1.", "vision_model.head.mlp.fc1."},
      {"visual.trunk.attn_pool.mlp.fc2.", "vision_model.head.mlp.fc2."},
      {"text.token_embedding.weight", "text_model.embeddings.token_embedding.weight"},
      {"text.positional_embedding", "text_model.embeddings.position_embedding.weight"},
      {"text.transformer.resblocks.<i>.ln_1.", "text_model.encoder.layers.<i>.layer_norm1."},
      {"text.transformer.resblocks.<i>.ln_2.", "text_model.encoder.layers.<i>.layer_norm2."},
      {"text.transformer.resblocks.<i>.attn.out_proj.", "text_model.encoder.layers.<i>.self_attn.out_proj."},
      {"text.transformer.resblocks.<i>.mlp.c_fc.", "text_model.encoder.layers.<i>.mlp.fc1."},
      {"text.transformer.resblocks.<i>.mlp.c_proj.", "text_model.encoder.layers.<i>.mlp.fc2."},
      {"text.ln_final.", "text_model.final_layer_norm."},
      {"text.text_projection.", "text_model.head."},
  };
  return kTable;
}

// The HF name of an OpenCLIP tensor renamed by the table, or nullopt.
inline std::optional<std::string> HfSiglipRename(const std::string& name) {
  static const std::regex kIndex("\\.([0-9]+)\\.");
  std::smatch m;
  const std::string index = std::regex_search(name, m, kIndex) ? m[1].str() : "";
  for (const auto& [from_pattern, to_pattern] : HfSiglipRenames()) {
    std::string from = std::regex_replace(from_pattern, std::regex("<i>"), index);
    if (name.rfind(from, 0) != 0) continue;
    return std::regex_replace(to_pattern, std::regex("<i>"), index) + name.substr(from.size());
  }
  return std::nullopt;
}

// Every tensor of the fixture's OpenCLIP model under its transformers SiglipModel name and shape.
// `unmapped` receives fixture tensors the conversion does not know (the test requires none).
inline std::vector<NamedTensor> HfSiglipTensors(const SafetensorsFile& open_clip, std::vector<std::string>& unmapped) {
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<float>>> in;
  for (const TensorInfo& t : open_clip.tensors()) in[t.name] = {t.shape, SafetensorsFile::ToFloat(t, t.name).value()};
  std::vector<NamedTensor> out;
  auto rows = [](const std::vector<float>& v, int64_t row_values, int64_t begin, int64_t count) {
    return std::vector<float>(v.begin() + begin * row_values, v.begin() + (begin + count) * row_values);
  };
  static const std::regex kFusedQkv(
      "(visual\\.trunk\\.blocks\\.([0-9]+)\\.attn\\.qkv\\.|text\\.transformer\\.resblocks\\.([0-9]+)\\.attn\\.in_proj_)"
      "(weight|bias)");
  for (const auto& [name, tensor] : in) {
    const auto& [shape, values] = tensor;
    std::smatch m;
    if (std::regex_match(name, m, kFusedQkv)) {  // [3D, D] / [3D] -> q, k, v
      const bool vision = m[2].matched;
      const std::string layer = vision ? m[2].str() : m[3].str();
      const std::string p =
          (vision ? "vision_model" : "text_model") + std::string(".encoder.layers.") + layer + ".self_attn.";
      const int64_t d = shape[0] / 3;
      const int64_t row_values = shape.size() == 2 ? shape[1] : 1;
      std::vector<int64_t> part = shape;
      part[0] = d;
      const char* parts[] = {"q_proj.", "k_proj.", "v_proj."};
      for (int k = 0; k < 3; ++k) out.push_back({p + parts[k] + m[4].str(), part, rows(values, row_values, k * d, d)});
    } else if (name == "visual.trunk.attn_pool.q.weight" || name == "visual.trunk.attn_pool.q.bias") {
      const std::string suffix = name.substr(name.rfind('.') + 1);
      const auto& kv = in.at("visual.trunk.attn_pool.kv." + suffix);
      std::vector<int64_t> fused = shape;
      fused[0] *= 3;
      std::vector<float> v = values;
      v.insert(v.end(), kv.second.begin(), kv.second.end());  // rows q, then k | v as timm's kv holds them
      out.push_back({"vision_model.head.attention.in_proj_" + suffix, fused, v});
    } else if (name.rfind("visual.trunk.attn_pool.kv.", 0) == 0) {
      continue;  // fused with q above
    } else if (name == "visual.trunk.pos_embed") {
      out.push_back({"vision_model.embeddings.position_embedding.weight", {shape[1], shape[2]}, values});
    } else if (name == "logit_scale" || name == "logit_bias") {
      out.push_back({name, {1}, values});  // SiglipModel's nn.Parameter(torch.randn(1))
    } else if (std::optional<std::string> renamed = HfSiglipRename(name)) {
      out.push_back({*renamed, shape, values});
    } else {
      unmapped.push_back(name);
    }
  }
  return out;
}

// transformers' config.json for the fixture's shapes. hidden_act "gelu" (exact): the fixture was
// computed by OpenCLIP/timm, whose SigLIP towers use exact GELU (released HF checkpoints leave it
// out, i.e. SiglipConfig's gelu_pytorch_tanh, the tanh approximation).
inline Json HfSiglipConfig() {
  const Json tower = {{"hidden_size", 64},      {"intermediate_size", 256}, {"num_attention_heads", 4},
                      {"num_hidden_layers", 2}, {"hidden_act", "gelu"},     {"layer_norm_eps", 1e-6}};
  Json vision = tower, text = tower;
  vision["model_type"] = "siglip_vision_model";
  vision["image_size"] = 64;
  vision["patch_size"] = 16;
  text["model_type"] = "siglip_text_model";
  text["max_position_embeddings"] = 64;
  text["vocab_size"] = 1000;
  return {{"architectures", {"SiglipModel"}},
          {"model_type", "siglip"},
          {"vision_config", vision},
          {"text_config", text},
          {"initializer_factor", 1.0}};
}

// Writes dir/{config.json, model.safetensors, spiece.model, tokenizer_config.json}: the fixture
// as an HF SigLIP checkpoint with transformers' SiglipTokenizer.
inline Status WriteHfSiglipFixture(const std::filesystem::path& dir, std::vector<std::string>& unmapped) {
  const std::filesystem::path fixture = FixtureDir("siglip-tiny");
  VISALIGN_ASSIGN_OR_RETURN(SafetensorsFile open_clip, SafetensorsFile::Open(fixture / "model.safetensors"));
  VISALIGN_RETURN_IF_ERROR(WriteSafetensors(dir / "model.safetensors", HfSiglipTensors(open_clip, unmapped)));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "config.json", HfSiglipConfig().dump(2)));
  std::filesystem::copy_file(fixture / "tokenizer" / "spiece.model", dir / "spiece.model");
  const Json tokenizer = {{"tokenizer_class", "SiglipTokenizer"},
                          {"eos_token", "</s>"},
                          {"pad_token", "</s>"},
                          {"unk_token", "<unk>"},
                          {"do_lower_case", true},
                          {"model_max_length", 64}};
  return WriteFileAtomic(dir / "tokenizer_config.json", tokenizer.dump(2));
}

}  // namespace visalign::clip::testing
