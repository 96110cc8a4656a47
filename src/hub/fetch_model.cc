// A hub name's files into the cache and its model folder (visalign/models/<name>--<commit>/).
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>

#include "hub/fetch_file.h"
#include "hub/hub_cache.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"
#include "visalign/hub/hub.h"

namespace visalign::hub {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOpenClipConfig = "open_clip_config.json";
constexpr const char* kHfConfig = "config.json";
constexpr const char* kHubSourceKey = "visalign_hub_source";  // clip/config.h kHubSourceConfigKey
constexpr const char* kModelConfigsFile = "clip/open_clip_model_configs.json";
constexpr size_t kCommitPrefix = 12;
// Hugging Face tokenizer files, fetched (where the repository has them) when the config names a
// Hugging Face tokenizer: SentencePiece (SigLIP), WordPiece (CLIPA), XLM-R SentencePiece (MetaCLIP 2),
// tokenizers' tokenizer.json (SigLIP2's Gemma).
constexpr std::array<const char*, 6> kTokenizerFiles = {
    "spiece.model", "tokenizer_config.json",   "special_tokens_map.json",
    "vocab.txt",    "sentencepiece.bpe.model", "tokenizer.json"};
// The revision of a tokenizer repository named by hf_tokenizer_name (open_clip's HFTokenizer loads
// AutoTokenizer.from_pretrained(name), i.e. its default branch).
constexpr const char* kTokenizerRevision = "main";

// open_clip's _get_safe_alternatives, then the file itself.
std::vector<std::string> WeightCandidates(const ModelName& name, bool hf_layout) {
  if (hf_layout) return {"model.safetensors", "pytorch_model.bin"};
  const std::string file = name.pretrained ? name.pretrained->weights_file : "";
  if (file.empty() || file == "open_clip_pytorch_model.bin")
    return {"open_clip_model.safetensors", "open_clip_pytorch_model.bin"};
  if (file.ends_with(".bin") || file.ends_with(".pth")) return {file.substr(0, file.size() - 4) + ".safetensors", file};
  return {file};
}

// The name the model folder links fetched weights under: one clip::LoadClipModel looks for. A table
// entry may name any file (ViTamin's pytorch_model.bin, whose safe alternative is
// pytorch_model.safetensors); an OpenCLIP folder holds open_clip_model.safetensors or
// open_clip_pytorch_model.bin (the loader tells a checkpoint's format from its bytes).
std::string LinkedWeightsName(const std::string& fetched, bool hf_layout) {
  if (hf_layout) return fetched;
  return fetched.ends_with(".safetensors") ? "open_clip_model.safetensors" : "open_clip_pytorch_model.bin";
}

// A config file (a repository's open_clip_config.json / config.json, the shipped model configs): core's
// ReadJsonFile (a syntax error names the file and the byte), and then a JSON object.
Result<Json> ReadConfigObject(const fs::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(Json config, ReadJsonFile(path));
  if (!config.is_object()) {
    return Status::InvalidArgument(fmt::format("not a JSON object but {}", QuoteJson(config)), path.string(),
                                   "a model config (a JSON object)");
  }
  return config;
}

// The model_cfg open_clip ships for `model` (data/clip/open_clip_model_configs.json), for a tag whose
// repository has no open_clip_config.json.
Result<Json> ShippedModelConfig(const std::string& model) {
  VISALIGN_ASSIGN_OR_RETURN(fs::path path, DataFile(kModelConfigsFile));
  VISALIGN_ASSIGN_OR_RETURN(Json all, ReadConfigObject(path));
  const auto configs = all.find("configs");
  if (configs == all.end() || !configs->is_object() || !configs->contains(model) || !(*configs)[model].is_object()) {
    return Status::NotFound(fmt::format("no model config for {}", QuoteText(model)), path.string(),
                            "a repository with open_clip_config.json, or a model in open_clip_model_configs.json");
  }
  return (*configs)[model];
}

Json TagPreprocess(const PretrainedTag& t, const Json& model_cfg) {
  Json p = {{"mean", t.mean},
            {"std", t.std},
            {"interpolation", t.interpolation == clip::Interpolation::kBicubic ? "bicubic" : "bilinear"},
            {"resize_mode", t.resize_mode == clip::ResizeMode::kShortest ? "shortest" : "squash"}};
  const auto vision = model_cfg.find("vision_cfg");
  if (vision != model_cfg.end() && vision->is_object() && vision->contains("image_size"))
    p["size"] = (*vision)["image_size"];
  return p;
}

std::string Slug(const std::string& text) {
  std::string out;
  for (char c : text)
    out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ? c : '_');
  return out;
}

Status Link(const fs::path& target, const fs::path& link) {
  std::error_code ec;
  fs::create_directories(link.parent_path(), ec);
  fs::create_symlink(fs::absolute(target), link, ec);
  if (ec) return Status::IoError("cannot link: " + ec.message(), link.string(), "a writable model cache");
  return Status::Ok();
}

// Writes the folder under a temporary name and renames it into place (a folder another process made
// first is kept: it has the same content).
Status WriteModelFolder(const fs::path& dir, const std::string& config_name, const Json& config,
                        const std::vector<std::pair<std::string, fs::path>>& links) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return Status::Ok();
  const fs::path temp = dir.parent_path() / fmt::format(".{}.{}.tmp", dir.filename().string(), ::getpid());
  fs::remove_all(temp, ec);
  fs::create_directories(temp, ec);
  if (ec)
    return Status::IoError("cannot create the model folder: " + ec.message(), temp.string(), "a writable model cache");
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(temp / config_name, config.dump(1) + "\n"));
  for (const auto& [name, target] : links) VISALIGN_RETURN_IF_ERROR(Link(target, temp / name));
  fs::rename(temp, dir, ec);
  if (ec) {
    fs::remove_all(temp, ec);
    if (!fs::is_directory(dir, ec))
      return Status::IoError("cannot move the model folder into place", dir.string(), "a writable model cache");
  }
  return Status::Ok();
}

}  // namespace

Result<ResolvedModel> FetchModel(const ModelName& name, const HubOptions& options) {
  if (name.kind == NameKind::kFolder) {
    return Status::InvalidArgument(fmt::format("{} is a folder", QuoteText(name.text)), "model name",
                                   "hf-hub:ORG/NAME or MODEL/TAG");
  }
  ResolvedModel out;
  out.name = name;
  const std::string revision = name.revision;
  std::string commit;
  auto fetch = [&](const std::string& file, bool optional) -> Result<std::optional<FetchedFile>> {
    Result<std::optional<FetchedFile>> f = FetchFile(options, name.repo, revision, file, optional, &commit);
    if (f.ok() && f->has_value()) out.files.push_back(**f);
    return f;
  };
  // The config: the repository's open_clip_config.json, else (a transformers repository) config.json,
  // else for a table entry the model config open_clip ships.
  VISALIGN_ASSIGN_OR_RETURN(std::optional<FetchedFile> config_file, fetch(kOpenClipConfig, true));
  bool hf_layout = false;
  Json config;
  if (config_file) {
    VISALIGN_ASSIGN_OR_RETURN(config, ReadConfigObject(config_file->path));
    out.config_source = name.repo + " " + kOpenClipConfig;
  } else if (name.pretrained) {
    VISALIGN_ASSIGN_OR_RETURN(Json model_cfg, ShippedModelConfig(name.pretrained->model));
    config = {{"model_cfg", model_cfg}};
    out.config_source = std::string("data/") + kModelConfigsFile + " " + name.pretrained->model;
  } else {
    VISALIGN_ASSIGN_OR_RETURN(config_file, fetch(kHfConfig, true));
    if (!config_file) {
      return Status::NotFound(fmt::format("{} has neither {} nor {}", name.repo, kOpenClipConfig, kHfConfig),
                              options.endpoint + "/" + name.repo, "an OpenCLIP or transformers CLIP repository");
    }
    VISALIGN_ASSIGN_OR_RETURN(config, ReadConfigObject(config_file->path));
    hf_layout = true;
    out.config_source = name.repo + " " + kHfConfig;
  }
  std::vector<std::pair<std::string, fs::path>> links;
  if (hf_layout) {
    VISALIGN_ASSIGN_OR_RETURN(std::optional<FetchedFile> pre, fetch("preprocessor_config.json", true));
    if (pre) links.emplace_back(pre->name, pre->path);
  }
  if (name.pretrained) {
    const Json model_cfg = config.contains("model_cfg") ? config["model_cfg"] : Json::object();
    config["preprocess_cfg"] = TagPreprocess(*name.pretrained, model_cfg);
    if (name.pretrained->quick_gelu && !(model_cfg.is_object() && model_cfg.value("quick_gelu", false))) {
      out.warnings.push_back(
          fmt::format("tag {} was trained with QuickGELU but model {} uses GELU (as open_clip, which "
                      "warns the same); {}-quickgelu/{} is the matching name",
                      name.pretrained->tag, name.pretrained->model, name.pretrained->model, name.pretrained->tag));
    }
  }
  // Weights: safetensors first.
  const std::vector<std::string> candidates = WeightCandidates(name, hf_layout);
  std::optional<FetchedFile> weights;
  for (size_t i = 0; i < candidates.size() && !weights; ++i) {
    VISALIGN_ASSIGN_OR_RETURN(weights, fetch(candidates[i], i + 1 < candidates.size()));
  }
  links.emplace_back(LinkedWeightsName(weights->name, hf_layout), weights->path);
  // A Hugging Face tokenizer (hf_tokenizer_name): a name without '/' is a subfolder of the weights
  // repository (SigLIP's "tokenizer"); an ORG/NAME is a repository of its own (CLIPA's, MetaCLIP 2's
  // facebook/xlm-v-base), fetched into the cache and linked as the folder <ORG>/<NAME>/ of the model
  // folder, which clip::ResolveHfTokenizer reads. Without one there, the weights repository's root files.
  const Json* text_cfg = config.contains("model_cfg") && config["model_cfg"].contains("text_cfg")
                             ? &config["model_cfg"]["text_cfg"]
                             : nullptr;
  if (text_cfg != nullptr && text_cfg->is_object() && text_cfg->contains("hf_tokenizer_name")) {
    const std::string hf_name = text_cfg->value("hf_tokenizer_name", "");
    const bool own_repo = hf_name.find('/') != std::string::npos && hf_name != name.repo;
    bool found = false;
    if (own_repo) {
      std::string tokenizer_commit;
      for (const char* file : kTokenizerFiles) {
        Result<std::optional<FetchedFile>> f =
            FetchFile(options, hf_name, kTokenizerRevision, file, true, &tokenizer_commit);
        // A missing or gated tokenizer repository leaves the model loadable from token ids (clip embed --token-ids).
        if (!f.ok()) {
          out.warnings.push_back(
              fmt::format("tokenizer repository {} (hf_tokenizer_name): {}", hf_name, f.status().what()));
          break;
        }
        if (!f->has_value()) continue;
        out.files.push_back(**f);
        links.emplace_back(hf_name + "/" + (*f)->name, (*f)->path);
        found = true;
      }
    }
    const std::string prefix = hf_name.find('/') == std::string::npos && !hf_name.empty() ? hf_name + "/" : "";
    for (size_t i = 0; !found && i < kTokenizerFiles.size(); ++i) {
      VISALIGN_ASSIGN_OR_RETURN(std::optional<FetchedFile> f, fetch(prefix + kTokenizerFiles[i], true));
      if (f) links.emplace_back(f->name, f->path);
    }
  }
  out.commit = commit;
  const std::string weights_name = weights->name;
  config[kHubSourceKey] = fmt::format("hf-hub:{}@{} {}", name.repo, commit, weights_name);
  out.model_dir =
      options.cache / "visalign" / "models" /
      fmt::format("{}--{}", Slug(name.pretrained ? name.pretrained->model + "--" + name.pretrained->tag : name.repo),
                  commit.substr(0, kCommitPrefix));
  VISALIGN_RETURN_IF_ERROR(WriteModelFolder(out.model_dir, hf_layout ? kHfConfig : kOpenClipConfig, config, links));
  Result<clip::ClipConfig> parsed = clip::ReadClipModelConfig(out.model_dir);
  out.native = parsed.ok();
  if (parsed.ok()) {
    out.preprocess = parsed->preprocess;
    out.native_reason = std::string(clip::VisionTowerName(parsed->vision.tower));
  } else {
    out.native_reason = parsed.status().what();
    if (name.pretrained) {
      const PretrainedTag& t = *name.pretrained;
      out.preprocess = {0, t.resize_mode, t.interpolation, t.mean, t.std};
    }
  }
  return out;
}

Result<std::filesystem::path> ModelFolder(std::string_view text, const HubOptions& options) {
  VISALIGN_ASSIGN_OR_RETURN(ModelName name, ParseModelName(text));
  if (name.kind == NameKind::kFolder) return fs::path(name.text);
  VISALIGN_ASSIGN_OR_RETURN(ResolvedModel model, FetchModel(name, options));
  return model.model_dir;
}

Result<uint64_t> DeleteDownloadedWeights(std::string_view text, const HubOptions& options) {
  VISALIGN_ASSIGN_OR_RETURN(ModelName name, ParseModelName(text));
  if (name.kind == NameKind::kFolder) return uint64_t{0};
  HubOptions cached = options;
  cached.offline = true;
  Result<ResolvedModel> model = FetchModel(name, cached);
  if (!model.ok()) return uint64_t{0};
  uint64_t freed = 0;
  for (const FetchedFile& f : model->files) {
    const bool weights = f.name.ends_with(".safetensors") || f.name.ends_with(".bin") || f.name.ends_with(".pt") ||
                         f.name.ends_with(".pth");
    if (!weights) continue;
    std::error_code ec;
    const fs::path blob = fs::canonical(f.path, ec);
    if (!ec && fs::remove(blob, ec)) freed += f.size;
    fs::remove(f.path, ec);
  }
  return freed;
}

Result<HubOptions> HubOptionsFromEnvironment() {
  HubOptions o;
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v == nullptr ? "" : v;
  };
  if (!env("VISALIGN_CACHE").empty()) {
    o.cache = env("VISALIGN_CACHE");
  } else if (!env("HF_HOME").empty()) {
    o.cache = fs::path(env("HF_HOME")) / "hub";
  } else if (!env("HOME").empty()) {
    o.cache = fs::path(env("HOME")) / ".cache" / "visalign";
  } else {
    return Status::InvalidArgument("no model cache folder", "environment", "VISALIGN_CACHE, HF_HOME or HOME set");
  }
  if (!env("HF_ENDPOINT").empty()) o.endpoint = env("HF_ENDPOINT");
  while (!o.endpoint.empty() && o.endpoint.back() == '/') o.endpoint.pop_back();
  if (!o.endpoint.starts_with("http://") && !o.endpoint.starts_with("https://")) {
    return Status::InvalidArgument(fmt::format("HF_ENDPOINT {}", QuoteText(o.endpoint)), "environment",
                                   "an http:// or https:// URL");
  }
  o.token = env("HF_TOKEN");
  const std::string offline = env("HF_HUB_OFFLINE");
  o.offline = offline == "1" || offline == "true" || offline == "TRUE" || offline == "yes" || offline == "ON" ||
              offline == "on";
  return o;
}

}  // namespace visalign::hub
