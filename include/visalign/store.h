// The run store: where generated images and everything known about how they were made live, so a
// generation run can be resumed, audited and scored later. A store is a folder:
//   <store>/visalign.db            the database (SQLite in WAL mode for the embedded store)
//   <store>/images/<run>/<file>    images, named <item id>__<k>.<ext>, written atomically
//   <store>/tmp/                   scratch space (e.g. command backends' output files)
// A run has a name, the benchmark, the dataset fingerprint, the backend identity (what the images
// depend on) and the last-used connection (where the model was reached; never a secret), and one
// row per (item, sample k). Invariant: a row is `done` only after its image file
// is complete on disk (WriteImage renames a fully written temp file before MarkDone commits), so
// killing the process at any moment never leaves a done row without its image nor a half image.
//
// RunStore is an interface and OpenStore(location) chooses the implementation: a folder is the
// embedded SQLite store; a server database (postgres://..., not yet implemented) will implement the
// same virtual methods, and callers do not change.
// The cache table is a generic string key-value map in namespaces, e.g. a VLM judge's answers keyed
// by (image SHA-256, question, judge model, prompt hash).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "visalign/core/status.h"

namespace visalign::store {

enum class RowStatus { kPending, kDone, kFailed };

struct RunInfo {
  std::string name;                 // [A-Za-z0-9._-]+, also the image folder's name
  std::string benchmark;            // "violin", "acva", ...
  std::string dataset_fingerprint;  // e.g. SHA-256 of the manifest
  nlohmann::json identity;          // backend kind, model, size, parameters, command: fixed for the run
  std::string created_at;           // ISO-8601 UTC, set by the store
  nlohmann::json connection = nlohmann::json::object();  // endpoint, key variable, timeouts...: last used
};

// What opening a run did.
enum class RunOpening {
  kCreated,    // a new run
  kResumed,    // same benchmark, dataset and identity; the connection was updated
  kTakenOver,  // only the identity differed and the run had no done image: it now has the new one
};

// Whether `wanted` may open the existing run `existing`, which has `done` done rows: kResumed with
// the same benchmark, dataset fingerprint and identity (the connection does not matter); kTakenOver
// when only the identity differs and nothing is done yet (nothing would be mixed); else
// InvalidArgument naming what differs, at `where`.
Result<RunOpening> CheckRunReuse(const RunInfo& existing, const RunInfo& wanted, size_t done, const std::string& where);

// What to generate: one row per (item, k).
struct ItemSpec {
  std::string item_id;
  int k = 0;
  std::string prompt;
  std::optional<int64_t> seed;
};

struct Row {
  std::string item_id;
  int k = 0;
  std::string prompt;
  std::optional<int64_t> seed;
  RowStatus status = RowStatus::kPending;
  int attempts = 0;           // every attempt ever made, across resumed sessions
  std::string last_error;     // empty when none
  double latency_ms = 0;      // of the last attempt
  std::string image_path;     // relative to the store root; empty unless done
  std::string sha256;         // of the image file; empty unless done
  std::string created_at, updated_at, done_at;  // ISO-8601 UTC; done_at empty unless done
};

struct RunCounts {
  size_t pending = 0, done = 0, failed = 0;
  size_t total() const { return pending + done + failed; }
};

// An image file written by WriteImage, ready to be recorded by MarkDone.
struct StoredImage {
  std::string relative_path;  // relative to the store root
  std::string sha256;
  size_t bytes = 0;
};

// A done image of a run, for scoring: absolute path of the file.
struct DoneImage {
  std::string item_id;
  int k = 0;
  std::filesystem::path image_path;
  std::string sha256;
};

class RunStore {
 public:
  explicit RunStore(std::filesystem::path root) : root_(std::move(root)) {}
  virtual ~RunStore() = default;
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  const std::filesystem::path& root() const { return root_; }

  // Creates the run, or opens an existing run of that name as CheckRunReuse allows (resuming into
  // a run made with another model or dataset would mix results): its connection becomes
  // info.connection; a taken-over run also gets info.identity and its failed rows become pending.
  virtual Result<RunOpening> OpenRun(const RunInfo& info) = 0;
  virtual Result<std::optional<RunInfo>> FindRun(const std::string& name) = 0;
  virtual Result<std::vector<RunInfo>> ListRuns() = 0;

  // Adds pending rows for items not yet in the run; existing rows are kept as they are.
  virtual Status AddItems(const std::string& run, const std::vector<ItemSpec>& items) = 0;
  virtual Result<std::vector<Row>> Rows(const std::string& run) = 0;
  // Records a successful attempt: attempts+1, status done, the image and latency.
  virtual Status MarkDone(const std::string& run, const std::string& item_id, int k, const StoredImage& image,
                          double latency_ms) = 0;
  // Records a failed attempt: attempts+1, last_error; status failed if `final`, else pending.
  // Both work on pending and failed rows (a failed row may be retried); a done row is final.
  virtual Status MarkFailure(const std::string& run, const std::string& item_id, int k, const std::string& error,
                             double latency_ms, bool final) = 0;

  // Generic cache: value for (ns, key), or nullopt. Put overwrites.
  virtual Result<std::optional<std::string>> CacheGet(const std::string& ns, const std::string& key) = 0;
  virtual Status CachePut(const std::string& ns, const std::string& key, const std::string& value) = 0;

  // Writes an image for (run, item, k) atomically (temp file + fsync + rename) under
  // images/<run>/ and returns its path and SHA-256. `extension` without dot: png, jpg, webp.
  Result<StoredImage> WriteImage(const std::string& run, const std::string& item_id, int k, std::string_view bytes,
                                 std::string_view extension);

  // The run's done images (item id, k, absolute path), ordered by item id then k. NotFound if the
  // run does not exist. This is what evaluators read to score a run.
  Result<std::vector<DoneImage>> DoneImages(const std::string& run);
  Result<RunCounts> Counts(const std::string& run);

 private:
  std::filesystem::path root_;
};

// <store_root>/tmp: scratch space for files made outside the store, e.g. a command backend's
// output files (whoever writes there creates it).
std::filesystem::path ScratchDir(const std::filesystem::path& store_root);
// Checks a run name (non-empty, [A-Za-z0-9._-], not "." or ".."); InvalidArgument at "run name".
Status ValidateRunName(const std::string& name);
// File-name-safe form of an item id: bytes outside [A-Za-z0-9._-] become %XX.
std::string SafeFileName(std::string_view id);

// Opens (creating if needed) the store at `location`, choosing the implementation from it:
//   a folder (any location without "<scheme>://")  the embedded store: SQLite with WAL, a busy
//     timeout, and a schema version check (a store written by a newer visalign is refused, not
//     altered; one written by an older visalign is upgraded in place: schema 1 kept the endpoint,
//     API key variable and command timeout in the identity, they move to the connection)
//   postgres://... or postgresql://...  Unsupported: this visalign has no PostgreSQL store yet
//   any other scheme  Unsupported, naming the scheme
// An unsupported scheme is reported at "store location", quoting only the scheme (never credentials).
Result<std::unique_ptr<RunStore>> OpenStore(const std::string& location);
// Whether `location` already holds a store, for commands that must not create one: a folder with
// the embedded database; a server location always counts (opening it says whether it is there).
bool StoreExists(const std::string& location);

}  // namespace visalign::store
