// `visalign clip resolve` output: what a name resolves to.
#include <fmt/format.h>

#include "visalign/hub/hub.h"

namespace visalign::hub {
namespace {

std::string_view KindName(NameKind kind) {
  switch (kind) {
    case NameKind::kFolder:
      return "folder";
    case NameKind::kHubRepo:
      return "hf-hub";
    case NameKind::kPretrainedTag:
      return "open_clip tag";
  }
  return "folder";
}

Json PreprocessJson(const clip::PreprocessConfig& p) {
  return {{"image_size", p.image_size},
          {"resize_mode", p.resize_mode == clip::ResizeMode::kShortest ? "shortest" : "squash"},
          {"interpolation", p.interpolation == clip::Interpolation::kBicubic ? "bicubic" : "bilinear"},
          {"mean", p.mean},
          {"std", p.std}};
}

}  // namespace

Json ResolvedModelJson(const ResolvedModel& m) {
  Json files = Json::array();
  for (const FetchedFile& f : m.files) {
    files.push_back({{"name", f.name},
                     {"size", f.size},
                     {"etag", f.etag},
                     {"downloaded", f.downloaded},
                     {"path", f.path.string()}});
  }
  Json j = {{"name", m.name.text},
            {"kind", KindName(m.name.kind)},
            {"repository", m.name.repo},
            {"revision", m.name.revision},
            {"commit", m.commit},
            {"files", files},
            {"config", m.config_source},
            {"preprocess", PreprocessJson(m.preprocess)},
            {"native", m.native},
            {m.native ? "vision_tower" : "reason", m.native_reason},
            {"model_dir", m.model_dir.string()},
            {"warnings", m.warnings}};
  if (m.name.pretrained) {
    j["model"] = m.name.pretrained->model;
    j["tag"] = m.name.pretrained->tag;
  }
  return j;
}

std::string ResolvedModelText(const ResolvedModel& m) {
  std::string s = fmt::format("name        {} ({})\n", m.name.text, KindName(m.name.kind));
  s += fmt::format("repository  {}\nrevision    {}\ncommit      {}\n", m.name.repo, m.name.revision, m.commit);
  for (const FetchedFile& f : m.files) {
    s += fmt::format("file        {} ({} bytes, {})\n", f.name, f.size, f.downloaded ? "downloaded" : "cached");
  }
  s += fmt::format("config      {}\n", m.config_source);
  const clip::PreprocessConfig& p = m.preprocess;
  s += fmt::format("preprocess  size {}, resize {}, {}, mean {:.8g} {:.8g} {:.8g}, std {:.8g} {:.8g} {:.8g}\n",
                   p.image_size, p.resize_mode == clip::ResizeMode::kShortest ? "shortest" : "squash",
                   p.interpolation == clip::Interpolation::kBicubic ? "bicubic" : "bilinear", p.mean[0], p.mean[1],
                   p.mean[2], p.std[0], p.std[1], p.std[2]);
  s += m.native ? fmt::format("native      yes ({})\n", m.native_reason)
                : fmt::format("native      no: {} (run it through embeddings: docs/hues.md)\n", m.native_reason);
  s += fmt::format("model dir   {}\n", m.model_dir.string());
  for (const std::string& w : m.warnings) s += "warning     " + w + "\n";
  return s;
}

}  // namespace visalign::hub
