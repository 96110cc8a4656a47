// `visalign hues models`: the model zoo's catalog with families and native support.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "cli/cli.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"

namespace visalign::cli {
namespace {

using namespace visalign::hues;

struct ModelsArgs {
  std::string catalog;
  std::string format = "text";
};

Json ModelJson(const CatalogModel& m) {
  return {{"model", m.model},
          {"architecture", m.entry.architecture},
          {"dataset", m.entry.dataset},
          {"open_clip_model", m.entry.open_clip_model},
          {"pretrained", m.entry.pretrained},
          {"support", ModelSupportName(m.support)},
          {"vision_tower", m.vision_tower},
          {"reason", m.reason}};
}

std::string ModelsCsv(const std::vector<CatalogModel>& models) {
  std::string csv = "model,architecture,dataset,open_clip_model,pretrained,support,vision_tower,reason\n";
  for (const CatalogModel& m : models) {
    for (const std::string_view field :
         {std::string_view(m.model), std::string_view(m.entry.architecture), std::string_view(m.entry.dataset),
          std::string_view(m.entry.open_clip_model), std::string_view(m.entry.pretrained), ModelSupportName(m.support),
          std::string_view(m.vision_tower)})
      csv += CsvField(field) + ",";
    csv += CsvField(m.reason) + "\n";
  }
  return csv;
}

void PrintText(const std::vector<CatalogModel>& models, const std::vector<std::string>& sources) {
  fmt::print("{:<44} {:<12} {:<17} {:<10} {}\n", "model", "architecture", "dataset", "support",
             "vision tower / why not");
  std::map<std::string_view, int> counts;
  for (const CatalogModel& m : models) {
    fmt::print("{:<44} {:<12} {:<17} {:<10} {}\n", m.model, m.entry.architecture, m.entry.dataset,
               ModelSupportName(m.support), m.support == ModelSupport::kNative ? m.vision_tower : m.reason);
    ++counts[ModelSupportName(m.support)];
  }
  fmt::print(
      "\n{} models: {} native (hues run --clip-model), {} through embeddings (hues run --embeddings), {} "
      "unknown to visalign. Catalog: {}\n",
      models.size(), counts["native"], counts["embeddings"], counts["none"], fmt::join(sources, ", "));
}

void AddModels(Cli& cli, CLI::App* g) {
  CLI::App* cmd = g->add_subcommand(
      "models", "List the catalog's models with their families and whether visalign runs them natively");
  auto a = std::make_shared<ModelsArgs>();
  cmd->add_option("--catalog", a->catalog,
                  "CSV model,architecture,dataset[,open_clip_model,pretrained] whose rows override (or add to) the "
                  "shipped catalog data/hues/model_catalog.csv, as for hues evaluate");
  cmd->add_option("--format", a->format, "text (a table and counts), csv or json (as the global --json)")
      ->check(CLI::IsMember({"text", "csv", "json"}))
      ->capture_default_str();
  cmd->footer(
      "The 162 published models (the peer results' folder names, <open_clip_model>-<pretrained>) with their "
      "architecture and pretraining-data families (the families hues evaluate and the report group by) and "
      "support: native (visalign's own loader accepts the model's OpenCLIP config, shipped in "
      "data/clip/open_clip_model_configs.json; hues run --clip-model with the model's folder), embeddings (the "
      "loader refuses a feature, named in the last column: compute the embeddings elsewhere and use hues run "
      "--embeddings or --embeddings-endpoint) or none (no OpenCLIP config known for the row).\n"
      "Examples:\n  visalign hues models\n  visalign hues models --format csv > zoo.csv\n"
      "  visalign hues models --catalog zoo.csv --json");
  cli.Bind(cmd, [&cli, a]() -> Status {
    std::vector<std::string> sources;
    VISALIGN_ASSIGN_OR_RETURN(std::vector<CatalogModel> models, ListCatalogModels(a->catalog, sources));
    if (cli.global().json || a->format == "json") {
      Json list = Json::array();
      for (const CatalogModel& m : models) list.push_back(ModelJson(m));
      PrintJson({{"catalog", sources}, {"models", list}});
    } else if (a->format == "csv") {
      std::cout << ModelsCsv(models);
    } else {
      PrintText(models, sources);
    }
    return Status::Ok();
  });
}

const CommandGroup kHuesModels(41, {"hues"}, [](Cli& cli) {
  AddModels(cli, cli.Group("hues", "Hues and Cues: CLIP color alignment vs human players"));
});

}  // namespace
}  // namespace visalign::cli
