// Writing and reading ACVA's output files.
#include "benchmarks/acva/jsonl.h"
#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/core/io.h"

namespace visalign::acva {

Status WriteOutputs(const std::filesystem::path& dir, const AnalysisResult& result) {
  VISALIGN_RETURN_IF_ERROR(EnsureDirectory(dir));
  std::string items;
  for (const Json& item : result.items) items += item.dump() + "\n";
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "items.jsonl", items));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "summary.json", result.summary.dump(2) + "\n"));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "summary.csv", SummaryCsv(result.summary)));
  return WriteFileAtomic(dir / "summary.md", SummaryMarkdown(result.summary));
}

Json AnalysisInputsJson(const ConceptSet& set, const std::vector<store::RunInfo>& runs, const JudgeSettings& judge,
                        const std::string& clip_fingerprint) {
  Json run_list = Json::array();
  for (const store::RunInfo& run : runs)
    run_list.push_back(
        {{"run", run.name}, {"dataset_fingerprint", run.dataset_fingerprint}, {"identity", run.identity}});
  return {{"concept_set", set.fingerprint},
          {"runs", run_list},
          {"judge", JudgeSettingsJson(judge)},
          {"clip_fingerprint", clip_fingerprint}};
}

Result<std::vector<Json>> ReadItems(const std::filesystem::path& items_jsonl) {
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(items_jsonl));
  std::vector<Json> items;
  VISALIGN_RETURN_IF_ERROR(
      jsonl::ForEachLine(text, items_jsonl.string(), [&](const Json& j, const std::string& where) -> Status {
        if (!j.is_object() || !j.contains("image_id"))
          return Status::InvalidArgument("not an ACVA item", where, "items.jsonl rows with image_id");
        items.push_back(j);
        return Status::Ok();
      }));
  return items;
}

}  // namespace visalign::acva
