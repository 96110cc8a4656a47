// Hues and Cues model zoo: the catalog's models (data/hues/model_catalog.csv, plus a user's rows)
// with their families and whether visalign runs each natively. "Native" is decided by the parser
// that loads a model folder (clip::ParseOpenClipConfigJson) applied to the model's OpenCLIP config,
// shipped for the catalog's architectures in data/clip/open_clip_model_configs.json: never a
// hand-kept column. The same catalog feeds `hues evaluate`'s families (and through its summary.json
// the report's family grouping).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/benchmarks/hues/evaluate.h"
#include "visalign/core/status.h"

namespace visalign::hues {

// kNative: `hues run --clip-model` runs it; kEmbeddings: its OpenCLIP config is refused (a feature
// not implemented natively), so it plays through `hues run --embeddings` / `--embeddings-endpoint`;
// kNone: no OpenCLIP config is known for it (no open_clip_model, or one not shipped), so visalign
// can say nothing of how it runs.
enum class ModelSupport { kNative, kEmbeddings, kNone };
std::string_view ModelSupportName(ModelSupport support);  // "native", "embeddings", "none"

struct CatalogModel {
  std::string model;  // the published name "<open_clip_model>-<pretrained>"
  CatalogEntry entry;
  ModelSupport support = ModelSupport::kNone;
  std::string vision_tower;  // clip::VisionTowerName of a native model, else ""
  std::string reason;        // kEmbeddings: the refusal (the feature); kNone: why nothing is known
};

// The OpenCLIP configs shipped in data/clip/open_clip_model_configs.json, by open_clip model name.
class OpenClipConfigs {
 public:
  static Result<OpenClipConfigs> Default();
  static Result<OpenClipConfigs> Load(const std::filesystem::path& path);
  // Support of `open_clip_model`: its config through clip::ParseOpenClipConfigJson.
  CatalogModel Classify(const std::string& model, const CatalogEntry& entry) const;
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::map<std::string, std::string> configs_;  // name -> config JSON text
};

// Every model of the catalog `hues evaluate` uses (LoadModelCatalog: shipped rows, then
// `override_csv`'s), sorted by name, each classified.
Result<std::vector<CatalogModel>> ListCatalogModels(const std::filesystem::path& override_csv,
                                                    std::vector<std::string>& sources);

}  // namespace visalign::hues
