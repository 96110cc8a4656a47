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
// embedded SQLite store; postgres://... is a PostgreSQL database shared by workers on many hosts,
// whose images are files under a shared folder (root() = --image-root) or rows of the database
// (bytea; root() is then a local folder DoneImages copies them into). Callers do not change.
// Leases let any number of processes share a run without a coordinator: a worker (an owner id
// unique per process, MakeOwnerId) claims rows before working on them (ClaimRows, one atomic
// transaction), renews its leases while it works, and completes (MarkDone / MarkFailure) or
// releases them. Only the row's current lease owner may complete it: a worker whose lease expired
// and was claimed by another finds MarkDone refused (kLeaseLost) and its image discarded. A row
// whose owner died returns to the pool when its lease expires. Unleased rows have owner "".
// A refused row is final like a done one (never claimed again, not even with --retry-failed):
// the provider's content filter declined the prompt, and last_error holds its reason. A row's job is
// the handle of an asynchronous provider job submitted for it (JSON text, "" = none), so a worker
// that takes the row over polls that job instead of paying for a new one.
// The cache table is a generic string key-value map in namespaces, e.g. a VLM judge's answers keyed
// by (image SHA-256, question, judge model, prompt hash).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::store {

enum class RowStatus { kPending, kDone, kFailed, kRefused };
// "pending", "done", "failed" or "refused" (as stored and shown).
const char* RowStatusName(RowStatus status);

struct RunInfo {
  std::string name;                  // [A-Za-z0-9._-]+, also the image folder's name
  std::string benchmark;             // benchmarks::kViolin, kAcva (visalign/core/benchmarks.h)
  std::string dataset_fingerprint;   // e.g. SHA-256 of the manifest
  Json identity;                     // backend kind, model, size, parameters, command: fixed for the run
  std::string created_at;            // ISO-8601 UTC, set by the store
  Json connection = Json::object();  // endpoint, key variable, timeouts...: last used
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
  int attempts = 0;                             // every attempt ever made, across resumed sessions
  std::string last_error;                       // empty when none
  double latency_ms = 0;                        // of the last attempt
  std::string image_path;                       // relative to the store root; empty unless done
  std::string sha256;                           // of the image file; empty unless done
  std::string created_at, updated_at, done_at;  // ISO-8601 UTC; done_at empty unless done
  std::string lease_owner;                      // who claimed the row last ("" = nobody, or completed)
  int64_t lease_expires_ms = 0;                 // Unix time in ms when that lease ends
  std::string job;                              // the provider job submitted for it (SetJob), "" = none
};

// Unix time in milliseconds (lease expiry times are in it).
int64_t NowUnixMs();

struct RunCounts {
  size_t pending = 0, done = 0, failed = 0, refused = 0;
  size_t leased = 0;                      // of the pending and failed rows: those under a lease that has not expired
  size_t attempts = 0;                    // over all rows
  std::string first_update, last_update;  // earliest created_at and latest updated_at of a row
  size_t total() const { return pending + done + failed + refused; }
};

// One row of a run: (item, sample k).
struct RowKey {
  std::string item_id;
  int k = 0;
  bool operator==(const RowKey&) const = default;
};

// What ClaimRows got: rows now leased to the caller, and rows it could not have because another
// owner's lease on them has not expired (worth asking again later). Wanted rows in neither are
// done, missing, or failed when failed rows were not asked for.
struct Claim {
  std::vector<RowKey> claimed, busy;
  std::vector<std::string> jobs;  // the job of each claimed row (same order; "" = none)
};

// What ClaimCacheKeys got: keys now leased to the caller, and keys another owner holds.
struct CacheClaim {
  std::vector<std::string> claimed, busy;
};

// Whether a completion was recorded or refused because the caller no longer holds the lease.
enum class Completion { kRecorded, kLeaseLost };

// An image file written by WriteImage, ready to be recorded by MarkDone: complete and fsynced in
// a staging file of its own (staged_path), renamed to relative_path only when MarkDone records it,
// so a worker that lost its lease never overwrites the image of the row's new owner.
struct StoredImage {
  std::string relative_path;  // relative to the store root
  std::string sha256;
  size_t bytes = 0;
  std::string staged_path;  // relative to the store root; empty once published
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
  // info.connection; a taken-over run also gets info.identity and its failed rows become pending
  // (without their jobs). Refused rows count as results, as done ones do, for CheckRunReuse.
  virtual Result<RunOpening> OpenRun(const RunInfo& info) = 0;
  virtual Result<std::optional<RunInfo>> FindRun(const std::string& name) = 0;
  virtual Result<std::vector<RunInfo>> ListRuns() = 0;

  // Deletes the run and its rows (not its image files: RemoveRun does both). NotFound for an
  // unknown run; InvalidArgument, deleting nothing, while a row of it is under a live lease.
  virtual Status DeleteRun(const std::string& name) = 0;

  // Adds pending rows for items not yet in the run; existing rows are kept as they are.
  virtual Status AddItems(const std::string& run, const std::vector<ItemSpec>& items) = 0;
  virtual Result<std::vector<Row>> Rows(const std::string& run) = 0;
  // Records a successful attempt by `owner`: publishes the staged image (PublishImage), then
  // attempts+1, status done, the image and latency, lease cleared. kLeaseLost when the row is done
  // (another worker finished it) or its lease owner is not `owner`; NotFound for a missing row.
  // Unless recorded, the staged image is deleted (an image not recorded is never published).
  virtual Result<Completion> MarkDone(const std::string& run, const std::string& item_id, int k,
                                      const std::string& owner, const StoredImage& image, double latency_ms) = 0;
  // Records a failed attempt by `owner`: attempts+1, last_error; status failed if `final` (the lease
  // is then cleared), else pending (the lease is kept: the owner retries). Both work on pending and
  // failed rows (a failed row may be retried); a done row is final (kLeaseLost, as for MarkDone).
  virtual Result<Completion> MarkFailure(const std::string& run, const std::string& item_id, int k,
                                         const std::string& owner, const std::string& error, double latency_ms,
                                         bool final) = 0;

  // Records that the provider refused the row's prompt (a final outcome, not an error): attempts+1,
  // status refused, last_error = `reason`, lease cleared. kLeaseLost as for MarkDone.
  virtual Result<Completion> MarkRefused(const std::string& run, const std::string& item_id, int k,
                                         const std::string& owner, const std::string& reason, double latency_ms) = 0;
  // Sets the row's job ("" clears it) while `owner` holds its lease; kLeaseLost otherwise.
  virtual Result<Completion> SetJob(const std::string& run, const std::string& item_id, int k, const std::string& owner,
                                    const std::string& job) = 0;

  // Leases `wanted` rows of `run` to `owner` until now + `ttl`, in one transaction: each row that
  // is pending (or failed, with include_failed) and unleased, leased by `owner`, or under an
  // expired lease. Other owners' live leases are reported busy.
  virtual Result<Claim> ClaimRows(const std::string& run, const std::string& owner, const std::vector<RowKey>& wanted,
                                  std::chrono::milliseconds ttl, bool include_failed) = 0;
  // Extends every lease `owner` holds in `run` to now + `ttl`; how many rows it holds.
  virtual Result<size_t> RenewLeases(const std::string& run, const std::string& owner,
                                     std::chrono::milliseconds ttl) = 0;
  // Gives back every lease `owner` holds in `run` (the rows return to the pool at once).
  virtual Status ReleaseLeases(const std::string& run, const std::string& owner) = 0;

  // Generic cache: value for (ns, key), or nullopt. Put overwrites, and ends the key's lease.
  virtual Result<std::optional<std::string>> CacheGet(const std::string& ns, const std::string& key) = 0;
  virtual Status CachePut(const std::string& ns, const std::string& key, const std::string& value) = 0;
  // Cache leases, so workers computing the same values (a judge's answers) compute each once:
  // leases the keys to `owner` until now + `ttl` unless another owner's lease on them is live
  // (those are busy). A claimed key may have a value meanwhile: read it again before computing.
  virtual Result<CacheClaim> ClaimCacheKeys(const std::string& ns, const std::string& owner,
                                            const std::vector<std::string>& keys, std::chrono::milliseconds ttl) = 0;
  virtual Status RenewCacheLeases(const std::string& ns, const std::string& owner, std::chrono::milliseconds ttl) = 0;
  virtual Status ReleaseCacheLeases(const std::string& ns, const std::string& owner) = 0;

  // Writes an image for (run, item, k) into a staging file of its own (written and fsynced) and
  // returns the path it will have under images/<run>/ once MarkDone publishes it, and its SHA-256.
  // `extension` without dot: png, jpg, webp.
  Result<StoredImage> WriteImage(const std::string& run, const std::string& item_id, int k, std::string_view bytes,
                                 std::string_view extension);

  // The run's done images (item id, k, absolute path), ordered by item id then k. NotFound if the
  // run does not exist. This is what evaluators read to score a run.
  Result<std::vector<DoneImage>> DoneImages(const std::string& run);
  Result<RunCounts> Counts(const std::string& run);
  // DeleteRun, then the run's image folder and staged files.
  Status RemoveRun(const std::string& name);

 protected:
  // For MarkDone implementations, inside the transaction that checked the lease: renames the staged
  // file to its final path (nothing to do without a staged file), or deletes it.
  Status PublishImage(const StoredImage& image);
  void DiscardImage(const StoredImage& image);
  // For stores that keep images elsewhere than root(): makes each of `images` (a done image of
  // `run`) a file at its image_path with its SHA-256, before DoneImages returns them.
  virtual Status MaterializeImages(const std::string& run, const std::vector<DoneImage>& images) {
    return Status::Ok();
  }

 private:
  std::filesystem::path root_;
};

// Renews `owner`'s cache leases in namespace `ns` to now + `ttl` every third of `ttl` until it is
// destroyed, for work that holds its keys longer than one lease (a model being run). A failed
// renewal is tried again at the next turn (the lease then only expires if every renewal fails).
class CacheLeaseRenewer {
 public:
  CacheLeaseRenewer(RunStore& store, std::string ns, std::string owner, std::chrono::milliseconds ttl);
  ~CacheLeaseRenewer();
  CacheLeaseRenewer(const CacheLeaseRenewer&) = delete;
  CacheLeaseRenewer& operator=(const CacheLeaseRenewer&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// <store_root>/tmp: scratch space for files made outside the store, e.g. a command backend's
// output files (whoever writes there creates it).
std::filesystem::path ScratchDir(const std::filesystem::path& store_root);
// Checks a run name (non-empty, [A-Za-z0-9._-], not "." or ".."); InvalidArgument at "run name".
Status ValidateRunName(const std::string& name);
// A new lease owner id, unique across processes and calls: <host>:<pid>:<random hex>:<n>.
std::string MakeOwnerId();
// File-name-safe form of an item id: bytes outside [A-Za-z0-9._-] become %XX.
std::string SafeFileName(std::string_view id);

// How to reach a server store, beside its location (the CLI's --store-password-env and --image-root).
struct StoreOptions {
  // Name of the environment variable holding the database password; empty: libpq's own sources
  // (PGPASSWORD, ~/.pgpass). The password is never part of a message, log or recorded connection.
  std::string password_env;
  // PostgreSQL, a store of image files: the folder holding them, shared by every worker. A store
  // that keeps its images in the database: the local folder they are copied into for scoring
  // (default: a folder under the system temp folder named after the database). Ignored by the
  // embedded store.
  std::filesystem::path image_root;
  // PostgreSQL, only when the store is created: keep images in the database even though
  // image_root is given. A store created without image_root keeps them there too.
  bool images_in_database = false;
};

// Opens (creating if needed) the store at `location`, choosing the implementation from it:
//   a folder (any location without "<scheme>://")  the embedded store: SQLite with WAL, a busy
//     timeout, and a schema version check (a store written by a newer visalign is refused, not
//     altered; one written by an older visalign is upgraded in place: schema 1 kept the endpoint,
//     API key variable and command timeout in the identity, they move to the connection)
//   postgres://user@host:port/db or postgresql://...  a PostgreSQL database (libpq URI; any libpq
//     parameter may follow "?"). An empty database gets the current schema; one written by a newer
//     visalign is refused, one written by an older visalign is refused until MigrateStore (the
//     workers sharing it may run different versions, so upgrading is an explicit step).
//   any other scheme  Unsupported, naming the scheme
// Errors name the location as DisplayLocation shows it, at "store location".
Result<std::unique_ptr<RunStore>> OpenStore(const std::string& location, const StoreOptions& options = {});

// What MigrateStore did: the schema version found (0: none, a new store) and the one now in place.
struct SchemaMigration {
  int from = 0, to = 0;
};
// Brings the store at `location` to this visalign's schema (creating it if needed); refuses a
// newer one, as OpenStore does.
Result<SchemaMigration> MigrateStore(const std::string& location, const StoreOptions& options = {});

// `location` safe to show: a server URL without its password ("postgres://ann@db/v" for
// "postgres://ann:secret@db/v?password=x"); a folder as it is.
std::string DisplayLocation(const std::string& location);
// Whether `location` already holds a store, for commands that must not create one: a folder with
// the embedded database; a server location always counts (opening it says whether it is there).
bool StoreExists(const std::string& location);

}  // namespace visalign::store
