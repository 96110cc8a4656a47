// Model families for the Hues and Cues figures: the name rules of docs/report.md ("Model
// families") and the override file.
#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "visalign/core/io.h"
#include "visalign/report/report.h"

namespace visalign::report {
namespace {

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Pretraining data: the first keyword found in the lower-cased name, in this order (laion2b before
// laion, datacomp before commonpool).
constexpr std::pair<std::string_view, std::string_view> kDatasetKeywords[] = {
    {"openai", "OpenAI WIT"},   {"laion400m", "LAION-400M"}, {"laion2b", "LAION-2B"},      {"laion5b", "LAION-5B"},
    {"laion", "LAION (other)"}, {"datacomp", "DataComp"},    {"commonpool", "CommonPool"}, {"dfn", "DFN"},
    {"metaclip", "MetaCLIP"},   {"webli", "WebLI"},          {"yfcc", "YFCC-15M"},         {"cc12m", "CC12M"},
    {"merged2b", "Merged-2B"},  {"mscoco", "MS-COCO"},
};

}  // namespace

ModelFamily FamilyFromName(const std::string& model) {
  const std::string lower = Lower(model);
  ModelFamily family{"other", "other"};
  static const std::regex kResNet("^rn[0-9]");
  static const std::regex kViT("(^|[^a-z])vit-([a-z0-9]+)");
  std::smatch match;
  if (std::regex_search(lower, kResNet)) {
    family.architecture = "ResNet";
  } else if (lower.find("convnext") != std::string::npos) {
    family.architecture = "ConvNeXt";
  } else if (lower.rfind("eva", 0) == 0) {
    family.architecture = "EVA";
  } else if (lower.find("coca") != std::string::npos) {
    family.architecture = "CoCa";
  } else if (std::regex_search(lower, match, kViT)) {
    // The size token as the name spells it: ViT-B, ViT-L, ViT-H, ViT-g, ViT-bigG, ViT-SO400M.
    const size_t at = static_cast<size_t>(match.position(2));
    family.architecture = "ViT-" + model.substr(at, static_cast<size_t>(match.length(2)));
  }
  for (const auto& [keyword, name] : kDatasetKeywords) {
    if (lower.find(keyword) != std::string::npos) {
      family.dataset = name;
      break;
    }
  }
  return family;
}

Result<std::map<std::string, ModelFamily>> ReadFamilyOverrides(const std::filesystem::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(CsvTable table, ReadCsv(path));
  VISALIGN_ASSIGN_OR_RETURN(size_t model, table.Column("model"));
  VISALIGN_ASSIGN_OR_RETURN(size_t architecture, table.Column("architecture"));
  VISALIGN_ASSIGN_OR_RETURN(size_t dataset, table.Column("dataset"));
  std::map<std::string, ModelFamily> out;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const auto& row = table.rows[i];
    if (row[model].empty() || row[architecture].empty() || row[dataset].empty())
      return Status::InvalidArgument("empty field", "families file " + table.Where(i),
                                     "model,architecture,dataset, none empty");
    if (!out.emplace(row[model], ModelFamily{row[architecture], row[dataset]}).second)
      return Status::InvalidArgument(fmt::format("model \"{}\" listed twice", row[model]),
                                     "families file " + table.Where(i), "one row per model");
  }
  return out;
}

}  // namespace visalign::report
