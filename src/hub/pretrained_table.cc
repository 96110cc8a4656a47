// open_clip's pretrained table and --clip-model names.
#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"
#include "visalign/hub/hub.h"

namespace visalign::hub {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHubPrefix = "hf-hub:";
constexpr const char* kTableFile = "clip/open_clip_pretrained.json";

std::string CleanTag(std::string_view tag) {  // open_clip's _clean_tag
  std::string out;
  for (char c : tag) out.push_back(c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

Result<std::array<float, 3>> Triple(const Json& entry, const char* key, const std::string& where) {
  const auto it = entry.find(key);
  if (it == entry.end() || !it->is_array() || it->size() != 3 || !(*it)[0].is_number() || !(*it)[1].is_number() ||
      !(*it)[2].is_number()) {
    return Status::InvalidArgument(fmt::format("no {} of three numbers", key), where, "open_clip's pretrained entry");
  }
  return std::array<float, 3>{(*it)[0].get<float>(), (*it)[1].get<float>(), (*it)[2].get<float>()};
}

Result<PretrainedTag> ParseEntry(const std::string& model, const std::string& tag, const Json& e,
                                 const std::string& path) {
  const std::string where = fmt::format("{} {}/{}", path, model, tag);
  PretrainedTag t;
  t.model = model;
  t.tag = tag;
  const auto hf = e.find("hf_hub");
  if (hf == e.end() || !hf->is_string() || hf->get<std::string>().empty()) {
    return t;  // a URL-only entry (no Hub repository): repo stays empty
  }
  // "ORG/NAME/" (the default file) or "ORG/NAME/FILE", as open_clip splits it.
  const std::string spec = hf->get<std::string>();
  const size_t first = spec.find('/');
  const size_t second = first == std::string::npos ? std::string::npos : spec.find('/', first + 1);
  if (second == std::string::npos) {
    return Status::InvalidArgument(fmt::format("hf_hub {}", QuoteText(spec)), where, "ORG/NAME/ or ORG/NAME/FILE");
  }
  t.repo = spec.substr(0, second);
  t.weights_file = spec.substr(second + 1);
  if (e.contains("mean")) {
    VISALIGN_ASSIGN_OR_RETURN(t.mean, Triple(e, "mean", where));
    VISALIGN_ASSIGN_OR_RETURN(t.std, Triple(e, "std", where));
  }
  const std::string interpolation = e.value("interpolation", "bicubic");
  const std::string resize = e.value("resize_mode", "shortest");
  if (interpolation != "bicubic" && interpolation != "bilinear") {
    return Status::Unsupported(fmt::format("interpolation {}", QuoteText(interpolation)), where, "bicubic or bilinear");
  }
  if (resize != "shortest" && resize != "squash") {
    return Status::Unsupported(fmt::format("resize_mode {}", QuoteText(resize)), where, "shortest or squash");
  }
  t.interpolation = interpolation == "bicubic" ? clip::Interpolation::kBicubic : clip::Interpolation::kBilinear;
  t.resize_mode = resize == "shortest" ? clip::ResizeMode::kShortest : clip::ResizeMode::kSquash;
  t.quick_gelu = e.value("quick_gelu", false);
  return t;
}

}  // namespace

Result<PretrainedTable> PretrainedTable::Load(const fs::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  Result<Json> j = ParseJson(text);
  const std::string expected = "{\"source\", \"models\": {model: {tag: entry}}} (scripts/open_clip_pretrained.py)";
  if (!j.ok()) return Status::InvalidArgument(j.status().what(), path.string(), expected);
  if (!j->is_object() || !j->contains("models") || !(*j)["models"].is_object()) {
    return Status::InvalidArgument("no \"models\" object", path.string(), expected);
  }
  PretrainedTable table;
  table.source_ = j->value("source", path.string());
  for (const auto& [model, tags] : (*j)["models"].items()) {
    if (!tags.is_object())
      return Status::InvalidArgument(fmt::format("model {} is not an object", QuoteText(model)), path.string(),
                                     expected);
    for (const auto& [tag, entry] : tags.items()) {
      if (!entry.is_object()) continue;
      VISALIGN_ASSIGN_OR_RETURN(PretrainedTag t, ParseEntry(model, tag, entry, path.string()));
      table.tags_.push_back(std::move(t));
    }
  }
  return table;
}

Result<const PretrainedTable*> PretrainedTable::Default() {
  static std::once_flag once;
  static Result<PretrainedTable> table = Status::Internal("not loaded");
  std::call_once(once, [] {
    Result<fs::path> path = DataFile(kTableFile);
    table = path.ok() ? Load(*path) : Result<PretrainedTable>(path.status());
  });
  if (!table.ok()) return table.status();
  return &*table;
}

const PretrainedTag* PretrainedTable::Find(std::string_view model, std::string_view tag) const {
  const std::string clean = CleanTag(tag);
  for (const PretrainedTag& t : tags_) {
    if (t.model == model && t.tag == clean) return &t;
  }
  return nullptr;
}

std::vector<std::string> PretrainedTable::Nearest(std::string_view name, size_t count) const {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const PretrainedTag& t : tags_) {
    std::string full = t.model + "/" + t.tag;
    scored.emplace_back(EditDistance(name, full), std::move(full));
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < count; ++i) out.push_back(scored[i].second);
  return out;
}

Result<ModelName> ParseModelName(std::string_view name) {
  ModelName out;
  out.text = std::string(name);
  std::error_code ec;
  if (name.empty() || fs::exists(fs::path(std::string(name)), ec)) return out;
  if (name.starts_with(kHubPrefix)) {
    std::string_view rest = name.substr(kHubPrefix.size());
    if (const size_t at = rest.find('@'); at != std::string_view::npos) {
      out.revision = std::string(rest.substr(at + 1));
      rest = rest.substr(0, at);
    }
    const size_t slash = rest.find('/');
    const bool valid = slash != std::string_view::npos && slash > 0 && slash + 1 < rest.size() &&
                       rest.find('/', slash + 1) == std::string_view::npos && !out.revision.empty() &&
                       rest.find("..") == std::string_view::npos && out.revision.find("..") == std::string_view::npos;
    if (!valid) {
      return Status::InvalidArgument(fmt::format("model name {}", QuoteText(name)), "model name",
                                     "hf-hub:ORG/NAME or hf-hub:ORG/NAME@REVISION");
    }
    out.kind = NameKind::kHubRepo;
    out.repo = std::string(rest);
    return out;
  }
  const size_t slash = name.find('/');
  if (slash == std::string_view::npos || slash == 0 || name.front() == '.' || slash + 1 == name.size() ||
      name.find('/', slash + 1) != std::string_view::npos) {
    return out;  // a folder (LoadClipModel says if it is missing)
  }
  VISALIGN_ASSIGN_OR_RETURN(const PretrainedTable* table, PretrainedTable::Default());
  const PretrainedTag* tag = table->Find(name.substr(0, slash), name.substr(slash + 1));
  if (tag == nullptr) {
    std::string nearest;
    for (const std::string& n : table->Nearest(name)) nearest += (nearest.empty() ? "" : ", ") + n;
    return Status::NotFound(
        fmt::format("unknown model {} (not a folder, not in open_clip's pretrained table)", QuoteText(name)),
        "model name", "a folder, hf-hub:ORG/NAME or MODEL/TAG; nearest: " + nearest);
  }
  if (tag->repo.empty()) {
    return Status::Unsupported(
        fmt::format("{} has no Hugging Face Hub repository in open_clip's table", QuoteText(name)), "model name",
        "a MODEL/TAG with an hf_hub entry, or a local folder");
  }
  out.kind = NameKind::kPretrainedTag;
  out.repo = tag->repo;
  out.pretrained = *tag;
  return out;
}

std::string ResultsName(const ModelName& name) {
  switch (name.kind) {
    case NameKind::kFolder:
      return "";
    case NameKind::kHubRepo:
      return name.repo.substr(name.repo.find('/') + 1);
    case NameKind::kPretrainedTag:
      return name.pretrained->model + "-" + name.pretrained->tag;
  }
  return "";
}

}  // namespace visalign::hub
