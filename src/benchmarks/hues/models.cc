#include "visalign/benchmarks/hues/models.h"

#include <fmt/format.h>

#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::hues {

std::string_view ModelSupportName(ModelSupport support) {
  switch (support) {
    case ModelSupport::kNative:
      return "native";
    case ModelSupport::kEmbeddings:
      return "embeddings";
    case ModelSupport::kNone:
      return "none";
  }
  return "none";
}

Result<OpenClipConfigs> OpenClipConfigs::Default() {
  VISALIGN_ASSIGN_OR_RETURN(std::filesystem::path path, DataFile("clip/open_clip_model_configs.json"));
  return Load(path);
}

Result<OpenClipConfigs> OpenClipConfigs::Load(const std::filesystem::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  auto j = ParseJson(text);
  const std::string expected = "a JSON object {\"configs\": {name: OpenCLIP model config}}";
  if (!j.ok()) return Status::InvalidArgument(j.status().what(), path.string(), expected);
  if (!j->is_object() || !j->contains("configs") || !(*j)["configs"].is_object())
    return Status::InvalidArgument("no \"configs\" object", path.string(), expected);
  OpenClipConfigs out;
  out.source_ = path.string();
  for (const auto& [name, config] : (*j)["configs"].items()) out.configs_[name] = config.dump();
  return out;
}

CatalogModel OpenClipConfigs::Classify(const std::string& model, const CatalogEntry& entry) const {
  CatalogModel out{model, entry, ModelSupport::kNone, "", ""};
  if (entry.open_clip_model.empty()) {
    out.reason = "no open_clip_model in the catalog row";
    return out;
  }
  const auto it = configs_.find(entry.open_clip_model);
  if (it == configs_.end()) {
    out.reason = fmt::format("no OpenCLIP config for \"{}\" in {}", entry.open_clip_model, source_);
    return out;
  }
  const Result<clip::ClipConfig> config = clip::ParseOpenClipConfigJson(it->second, entry.open_clip_model);
  if (config.ok()) {
    out.support = ModelSupport::kNative;
    out.vision_tower = std::string(clip::VisionTowerName(config->vision.tower));
  } else {
    // A refused feature means the model runs through embeddings computed elsewhere; a malformed
    // shipped config would be a bug of ours, named all the same.
    out.support = config.status().code() == StatusCode::kUnsupported ? ModelSupport::kEmbeddings : ModelSupport::kNone;
    out.reason = config.status().what();
  }
  return out;
}

Result<std::vector<CatalogModel>> ListCatalogModels(const std::filesystem::path& override_csv,
                                                    std::vector<std::string>& sources) {
  VISALIGN_ASSIGN_OR_RETURN(Catalog catalog, LoadModelCatalog(override_csv, sources));
  VISALIGN_ASSIGN_OR_RETURN(OpenClipConfigs configs, OpenClipConfigs::Default());
  std::vector<CatalogModel> out;
  for (const auto& [model, entry] : catalog) out.push_back(configs.Classify(model, entry));
  return out;
}

}  // namespace visalign::hues
