// Runs as JSON documents and folders (see run_export.h).
#include "visalign/store/run_export.h"

#include "visalign/core/io.h"

namespace visalign::store {
namespace fs = std::filesystem;
namespace {

Json CountsJson(const RunCounts& c) {
  return {
      {"done", c.done},     {"failed", c.failed},     {"pending", c.pending},           {"refused", c.refused},
      {"leased", c.leased}, {"attempts", c.attempts}, {"first_update", c.first_update}, {"last_update", c.last_update}};
}

Json RowJson(const Row& r) {
  return {{"item_id", r.item_id},
          {"k", r.k},
          {"prompt", r.prompt},
          {"seed", r.seed ? Json(*r.seed) : Json()},
          {"status", RowStatusName(r.status)},
          {"attempts", r.attempts},
          {"last_error", r.last_error},
          {"latency_ms", r.latency_ms},
          {"sha256", r.sha256},
          {"created_at", r.created_at},
          {"updated_at", r.updated_at},
          {"done_at", r.done_at},
          {"job", r.job},
          {"image", nullptr}};
}

}  // namespace

Result<Json> RunJson(RunStore& store, const RunInfo& run) {
  VISALIGN_ASSIGN_OR_RETURN(RunCounts c, store.Counts(run.name));
  return Json{{"name", run.name},
              {"benchmark", run.benchmark},
              {"dataset_fingerprint", run.dataset_fingerprint},
              {"created_at", run.created_at},
              {"identity", run.identity},
              {"connection", run.connection},
              {"rows", CountsJson(c)}};
}

Result<RunExportCounts> ExportRun(RunStore& store, const RunInfo& run, const fs::path& out) {
  VISALIGN_ASSIGN_OR_RETURN(Json description, RunJson(store, run));
  VISALIGN_ASSIGN_OR_RETURN(std::vector<Row> rows, store.Rows(run.name));
  // Makes sure every done image is a file under root() (a store keeping images in its database).
  VISALIGN_RETURN_IF_ERROR(store.DoneImages(run.name).status());
  VISALIGN_RETURN_IF_ERROR(EnsureDirectory(out / "images"));
  RunExportCounts counts;
  std::string lines;
  for (const Row& r : rows) {
    Json j = RowJson(r);
    if (r.status == RowStatus::kDone) {
      const fs::path name = fs::path(r.image_path).filename();
      VISALIGN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(store.root() / r.image_path));
      if (Sha256Hex(bytes) != r.sha256)
        return Status::Corrupt(
            "image of item " + r.item_id + " sample " + std::to_string(r.k) + " differs from its recorded SHA-256",
            (store.root() / r.image_path).string(), "the image the store recorded");
      VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(out / "images" / name, bytes));
      j["image"] = ("images" / name).generic_string();
      ++counts.images;
    }
    lines += j.dump() + "\n";
    ++counts.rows;
  }
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(out / "rows.jsonl", lines));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(out / "run.json", description.dump(2) + "\n"));
  return counts;
}

}  // namespace visalign::store
