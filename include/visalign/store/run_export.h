// What a run store holds, as documents: a run described as JSON (`visalign store ls/show --json`,
// and run.json of an export) and a run exported into a folder any tool can read without SQL
// (`visalign store export`). Exported images are checked against the SHA-256 the store recorded,
// so an export never passes on an image that changed on disk.
#pragma once

#include <cstddef>
#include <filesystem>

#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/store.h"

namespace visalign::store {

// {"name", "benchmark", "dataset_fingerprint", "created_at", "identity", "connection",
//  "rows": {"done", "failed", "pending", "refused", "leased", "attempts", "first_update", "last_update"}}.
Result<Json> RunJson(RunStore& store, const RunInfo& run);

struct RunExportCounts {
  size_t rows = 0, images = 0;
};
// Writes `out`/run.json (RunJson), `out`/rows.jsonl (one object per row: item_id, k, prompt, seed,
// status, attempts, last_error, latency_ms, sha256, created_at, updated_at, done_at, job and image,
// the exported file's path relative to `out` or null) and `out`/images/ (every done image, named as
// in the store), each file written atomically. Corrupt naming the file when a done image's bytes
// differ from its recorded SHA-256; the store's and the file system's errors otherwise.
Result<RunExportCounts> ExportRun(RunStore& store, const RunInfo& run, const std::filesystem::path& out);

}  // namespace visalign::store
