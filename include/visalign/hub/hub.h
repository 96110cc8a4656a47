// CLIP models by name: `hf-hub:ORG/NAME[@REVISION]` (a Hugging Face Hub repository in OpenCLIP's layout)
// or open_clip's `MODEL/TAG` (e.g. `ViT-B-32/laion2b_s34b_b79k`), looked up in the shipped copy of open_clip's
// pretrained table (data/clip/open_clip_pretrained.json), which names the tag's repository and the
// preprocessing it was trained with. Files come through the Hub's `resolve` endpoint into a cache in the
// huggingface_hub layout (models--ORG--NAME/{blobs,snapshots/<commit>,refs}), verified (SHA-256 of LFS
// files against X-Linked-Etag), resumable (HTTP Range), shared by concurrent processes (one lock per
// blob; files appear only complete, by rename), usable offline. A fetched model becomes a model folder
// (visalign/models/<name>--<commit>/: the config with the tag's preprocessing and the commit, links
// to the cached files) that clip::LoadClipModel reads; the commit enters the model's fingerprint.
// docs/clip.md "Models by name".
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/clip.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::hub {

// One (model, tag) entry of open_clip's pretrained table.
struct PretrainedTag {
  std::string model;         // "ViT-B-32"
  std::string tag;           // "laion2b_s34b_b79k"
  std::string repo;          // "laion/CLIP-ViT-B-32-laion2B-s34B-b79K"
  std::string weights_file;  // "" = open_clip's default: open_clip_model.safetensors, else open_clip_pytorch_model.bin
  clip::ResizeMode resize_mode = clip::ResizeMode::kShortest;
  clip::Interpolation interpolation = clip::Interpolation::kBicubic;
  std::array<float, 3> mean{};
  std::array<float, 3> std{};
  bool quick_gelu = false;
};

// The shipped table (data/clip/open_clip_pretrained.json), loaded once.
class PretrainedTable {
 public:
  static Result<const PretrainedTable*> Default();
  static Result<PretrainedTable> Load(const std::filesystem::path& path);
  // open_clip's lookup: the model exactly, the tag lower-cased with '-' as '_'; nullptr when absent.
  const PretrainedTag* Find(std::string_view model, std::string_view tag) const;
  // The `count` known "MODEL/TAG" names nearest to `name` (edit distance), nearest first.
  std::vector<std::string> Nearest(std::string_view name, size_t count = 3) const;
  const std::vector<PretrainedTag>& tags() const { return tags_; }
  const std::string& source() const { return source_; }

 private:
  std::vector<PretrainedTag> tags_;
  std::string source_;
};

enum class NameKind { kFolder, kHubRepo, kPretrainedTag };

struct ModelName {
  NameKind kind = NameKind::kFolder;
  std::string text;                         // as given
  std::string repo;                         // kHubRepo / kPretrainedTag
  std::string revision = "main";            // kHubRepo: after '@'
  std::optional<PretrainedTag> pretrained;  // kPretrainedTag
};

// Parses a --clip-model value. An existing path is a folder; "hf-hub:ORG/NAME[@REV]" a repository;
// "MODEL/TAG" (one '/', not starting with '.' or '/') an entry of the table, an unknown one kNotFound
// naming the nearest known names; anything else a folder.
Result<ModelName> ParseModelName(std::string_view name);

// The name results of a hub model go under: "<MODEL>-<TAG>" (the published results' folder names),
// "NAME" of hf-hub:ORG/NAME; "" for a folder.
std::string ResultsName(const ModelName& name);

struct HubOptions {
  std::filesystem::path cache;  // the root of the hub layout
  std::string endpoint = "https://huggingface.co";
  std::string token;           // sent as a Bearer token; never printed or stored
  bool offline = false;        // only the cache
  bool show_progress = false;  // a progress bar (bytes, rate) per download
  // The most bytes the cache's blobs (all repositories, partial downloads included) may hold after a
  // download; 0 = no limit. A download that would pass it first calls make_room (if set) with the
  // excess, then fails (kInvalidArgument, naming the sizes) if the cache still does not fit. Whatever
  // the budget, a download larger than the file system's free space fails first (kIoError, "disk full").
  uint64_t disk_budget = 0;
  std::function<void(uint64_t excess)> make_room;
};

// From the environment: cache $VISALIGN_CACHE, else $HF_HOME/hub, else ~/.cache/visalign;
// endpoint $HF_ENDPOINT; token $HF_TOKEN; offline $HF_HUB_OFFLINE=1 (or "true"/"yes").
Result<HubOptions> HubOptionsFromEnvironment();

struct FetchedFile {
  std::string name;            // in the repository
  std::filesystem::path path;  // the snapshot's file
  uint64_t size = 0;
  std::string etag;         // LFS: the SHA-256; else the git blob id
  bool downloaded = false;  // false: it was in the cache
};

struct ResolvedModel {
  ModelName name;
  std::string commit;  // the repository's commit the files are from
  std::vector<FetchedFile> files;
  std::filesystem::path model_dir;  // a folder LoadClipModel reads
  clip::PreprocessConfig preprocess;
  std::string config_source;  // "the repository's open_clip_config.json" / "data/clip/open_clip_model_configs.json"
  bool native = false;        // whether visalign runs it (ParseOpenClipConfigJson)
  std::string native_reason;  // the vision tower, or the feature that is not supported
  std::vector<std::string> warnings;  // e.g. a tag trained with QuickGELU on a model config without it
};

// Downloads (or finds in the cache) what a hub name needs and assembles its model folder. Errors are
// one line: 401/403 (gated: how to set HF_TOKEN), 404 (repository or file), a checksum mismatch (the
// download is deleted), a full disk, offline without the files.
Result<ResolvedModel> FetchModel(const ModelName& name, const HubOptions& options);

// A --clip-model value as a model folder: a folder as it is, a hub name fetched (FetchModel).
Result<std::filesystem::path> ModelFolder(std::string_view name, const HubOptions& options);

// Deletes the weights a hub name downloaded (their blobs and snapshot links; configs and the model
// folder stay, and a later use downloads the weights again), so a sweep fits a small disk. Nothing
// for a folder or a name not in the cache. Returns the bytes freed.
Result<uint64_t> DeleteDownloadedWeights(std::string_view name, const HubOptions& options);

// The bytes of the cache's blobs, partial downloads included (what disk_budget limits).
uint64_t CacheBlobBytes(const std::filesystem::path& cache);

// `clip resolve` output.
Json ResolvedModelJson(const ResolvedModel& model);
std::string ResolvedModelText(const ResolvedModel& model);

}  // namespace visalign::hub
