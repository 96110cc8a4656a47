// The PostgreSQL run store: the rows of the embedded store's schema in a database many workers on
// many hosts share. One connection per store object, behind a mutex (the statements are small).
// Claims lock the wanted rows with SELECT ... FOR UPDATE SKIP LOCKED, so claimers never wait for
// each other; completions lock their row (FOR UPDATE) while they check the lease and publish the
// image. Lease times are the workers' clocks (Unix ms), as in the embedded store: hosts sharing a
// store keep their clocks synchronised (NTP), as the lease length allows.
#include "store/postgres_store.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "store/postgres_connection.h"
#include "store/postgres_schema.h"
#include "store/row_semantics.h"
#include "visalign/core/io.h"

namespace visalign::store {
namespace {
namespace fs = std::filesystem;
using pg::Params;

constexpr const char* kRunColumns = "name, benchmark, dataset_fingerprint, backend, created_at, connection";
// Wanted rows as a relation: unnest of $2 (item ids) and $3 (samples k).
constexpr const char* kWantedRows = "(item_id, k) IN (SELECT * FROM unnest($2::text[], $3::int[]))";

std::vector<std::string> ItemIds(const std::vector<RowKey>& keys) {
  std::vector<std::string> out;
  for (const RowKey& key : keys) out.push_back(key.item_id);
  return out;
}
std::vector<std::optional<int64_t>> Samples(const std::vector<RowKey>& keys) {
  std::vector<std::optional<int64_t>> out;
  for (const RowKey& key : keys) out.emplace_back(key.k);
  return out;
}

class PostgresStore final : public RunStore {
 public:
  PostgresStore(fs::path root, std::unique_ptr<pg::Connection> db, ImageKeeping images, std::string where)
      : RunStore(std::move(root)), db_(std::move(db)), images_(images), where_(std::move(where)) {}

  Result<RunOpening> OpenRun(const RunInfo& info) override {
    VISALIGN_RETURN_IF_ERROR(ValidateRunName(info.name));
    std::lock_guard lock(mu_);
    RunOpening opening = RunOpening::kCreated;
    VISALIGN_RETURN_IF_ERROR(db_->Transaction([&]() -> Status {
      VISALIGN_ASSIGN_OR_RETURN(pg::Rows inserted,
                                db_->Exec("INSERT INTO runs(name, benchmark, dataset_fingerprint, backend, created_at, "
                                          "connection) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO NOTHING",
                                          Params()
                                              .Add(info.name)
                                              .Add(info.benchmark)
                                              .Add(info.dataset_fingerprint)
                                              .Add(info.identity.dump())
                                              .Add(NowUtc())
                                              .Add(info.connection.dump())));
      if (inserted.affected() == 1) {
        opening = RunOpening::kCreated;
        return Status::Ok();
      }
      VISALIGN_ASSIGN_OR_RETURN(std::vector<RunInfo> existing, QueryRunsLocked(&info.name, /*for_update=*/true));
      if (existing.empty()) return Status::Internal("run " + info.name + " vanished while being opened");
      VISALIGN_ASSIGN_OR_RETURN(
          pg::Rows done,
          db_->Exec(fmt::format("SELECT count(*) FROM items WHERE run = $1 AND {}", kFinalStatusSql).c_str(),
                    Params().Add(info.name)));
      VISALIGN_ASSIGN_OR_RETURN(opening,
                                CheckRunReuse(existing.front(), info, static_cast<size_t>(done.Int(0, 0)), where_));
      VISALIGN_RETURN_IF_ERROR(db_->Exec("UPDATE runs SET backend = $1, connection = $2 WHERE name = $3",
                                         Params().Add(info.identity.dump()).Add(info.connection.dump()).Add(info.name))
                                   .status());
      if (opening != RunOpening::kTakenOver) return Status::Ok();
      return db_
          ->Exec("UPDATE items SET status = 'pending', job = '', updated_at = $1 WHERE run = $2 AND status = 'failed'",
                 Params().Add(NowUtc()).Add(info.name))
          .status();
    }));
    return opening;
  }

  Result<std::optional<RunInfo>> FindRun(const std::string& name) override {
    std::lock_guard lock(mu_);
    VISALIGN_ASSIGN_OR_RETURN(std::vector<RunInfo> runs, QueryRunsLocked(&name, false));
    if (runs.empty()) return std::optional<RunInfo>();
    return std::optional<RunInfo>(std::move(runs.front()));
  }

  Result<std::vector<RunInfo>> ListRuns() override {
    std::lock_guard lock(mu_);
    return QueryRunsLocked(nullptr, false);
  }

  Status DeleteRun(const std::string& name) override {
    std::lock_guard lock(mu_);
    return db_->Transaction([&]() -> Status {
      VISALIGN_ASSIGN_OR_RETURN(std::vector<RunInfo> existing, QueryRunsLocked(&name, /*for_update=*/true));
      if (existing.empty())
        return Status::NotFound("no run named \"" + name + "\"", where_, "the name of one of the store's runs");
      VISALIGN_ASSIGN_OR_RETURN(
          pg::Rows leased,
          db_->Exec("SELECT count(*) FROM items WHERE run = $1 AND status <> 'done' AND lease_expires > $2",
                    Params().Add(name).Add(NowUnixMs())));
      if (const int64_t live = leased.Int(0, 0); live > 0)
        return Status::InvalidArgument(fmt::format("run \"{}\" has {} rows leased by running workers", name, live),
                                       where_, "no worker on the run: stop them, or wait until their leases expire");
      // Its rows and their images go with it (ON DELETE CASCADE).
      return db_->Exec("DELETE FROM runs WHERE name = $1", Params().Add(name)).status();
    });
  }

  Status AddItems(const std::string& run, const std::vector<ItemSpec>& items) override {
    std::vector<std::string> ids, prompts;
    std::vector<std::optional<int64_t>> ks, seeds;
    for (const ItemSpec& it : items) {
      ids.push_back(it.item_id);
      ks.emplace_back(it.k);
      prompts.push_back(it.prompt);
      seeds.push_back(it.seed);
    }
    const std::string now = NowUtc();
    std::lock_guard lock(mu_);
    return db_
        ->Exec(
            "INSERT INTO items(run, item_id, k, prompt, seed, status, created_at, updated_at) "
            "SELECT $1, w.item_id, w.k, w.prompt, w.seed, 'pending', $6, $6 "
            "FROM unnest($2::text[], $3::int[], $4::text[], $5::int8[]) AS w(item_id, k, prompt, seed) "
            "ON CONFLICT DO NOTHING",
            Params().Add(run).AddTextArray(ids).AddIntArray(ks).AddTextArray(prompts).AddIntArray(seeds).Add(now))
        .status();
  }

  Result<std::vector<Row>> Rows(const std::string& run) override {
    std::lock_guard lock(mu_);
    VISALIGN_ASSIGN_OR_RETURN(
        pg::Rows q, db_->Exec("SELECT item_id, k, prompt, seed, status, attempts, last_error, latency_ms, image_path, "
                              "sha256, created_at, updated_at, done_at, lease_owner, lease_expires, job FROM items "
                              "WHERE run = $1 ORDER BY item_id COLLATE \"C\", k",
                              Params().Add(run)));
    std::vector<Row> rows;
    for (int i = 0; i < q.size(); ++i) {
      Row r;
      r.item_id = q.Text(i, 0);
      r.k = static_cast<int>(q.Int(i, 1));
      r.prompt = q.Text(i, 2);
      if (!q.IsNull(i, 3)) r.seed = q.Int(i, 3);
      VISALIGN_ASSIGN_OR_RETURN(r.status, ParseRowStatus(q.Text(i, 4), where_ + " run " + run + " item " + r.item_id));
      r.attempts = static_cast<int>(q.Int(i, 5));
      r.last_error = q.Text(i, 6);
      r.latency_ms = q.Real(i, 7);
      r.image_path = q.Text(i, 8);
      r.sha256 = q.Text(i, 9);
      r.created_at = q.Text(i, 10);
      r.updated_at = q.Text(i, 11);
      r.done_at = q.Text(i, 12);
      r.lease_owner = q.Text(i, 13);
      r.lease_expires_ms = q.Int(i, 14);
      r.job = q.Text(i, 15);
      rows.push_back(std::move(r));
    }
    return rows;
  }

  Result<Completion> MarkDone(const std::string& run, const std::string& item_id, int k, const std::string& owner,
                              const StoredImage& image, double latency_ms) override {
    std::lock_guard lock(mu_);
    Completion completion = Completion::kRecorded;
    Status st = db_->Transaction([&]() -> Status {
      VISALIGN_ASSIGN_OR_RETURN(completion, LockRowForCompletion(run, item_id, k, owner));
      if (completion == Completion::kLeaseLost) return Status::Ok();
      if (images_ == ImageKeeping::kDatabase) {
        const fs::path file = root() / (image.staged_path.empty() ? image.relative_path : image.staged_path);
        VISALIGN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(file));
        VISALIGN_RETURN_IF_ERROR(db_->Exec("INSERT INTO images(run, item_id, k, bytes) VALUES ($1, $2, $3, $4) "
                                           "ON CONFLICT (run, item_id, k) DO UPDATE SET bytes = excluded.bytes",
                                           Params().Add(run).Add(item_id).Add(int64_t{k}).AddBytes(std::move(bytes)))
                                     .status());
      }
      // Published while this transaction holds the row's lock: no other completion of the row can
      // happen in between, and the row is done only once the image is in place.
      VISALIGN_RETURN_IF_ERROR(PublishImage(image));
      const std::string now = NowUtc();
      return db_
          ->Exec(
              "UPDATE items SET status = 'done', attempts = attempts + 1, last_error = '', latency_ms = $1, "
              "image_path = $2, sha256 = $3, updated_at = $4, done_at = $4, lease_owner = '', lease_expires = 0 "
              "WHERE run = $5 AND item_id = $6 AND k = $7",
              Params()
                  .Add(latency_ms)
                  .Add(image.relative_path)
                  .Add(image.sha256)
                  .Add(now)
                  .Add(run)
                  .Add(item_id)
                  .Add(int64_t{k}))
          .status();
    });
    if (!st.ok() || completion == Completion::kLeaseLost) DiscardImage(image);
    VISALIGN_RETURN_IF_ERROR(st);
    return completion;
  }

  Result<Completion> MarkFailure(const std::string& run, const std::string& item_id, int k, const std::string& owner,
                                 const std::string& error, double latency_ms, bool final) override {
    return Unsuccessful(run, item_id, k, owner, error, latency_ms, final ? "failed" : "pending");
  }

  Result<Completion> MarkRefused(const std::string& run, const std::string& item_id, int k, const std::string& owner,
                                 const std::string& reason, double latency_ms) override {
    return Unsuccessful(run, item_id, k, owner, reason, latency_ms, "refused");
  }

  Result<Completion> SetJob(const std::string& run, const std::string& item_id, int k, const std::string& owner,
                            const std::string& job) override {
    std::lock_guard lock(mu_);
    Completion completion = Completion::kRecorded;
    VISALIGN_RETURN_IF_ERROR(db_->Transaction([&]() -> Status {
      VISALIGN_ASSIGN_OR_RETURN(completion, LockRowForCompletion(run, item_id, k, owner));
      if (completion == Completion::kLeaseLost) return Status::Ok();
      return db_
          ->Exec("UPDATE items SET job = $1, updated_at = $2 WHERE run = $3 AND item_id = $4 AND k = $5",
                 Params().Add(job).Add(NowUtc()).Add(run).Add(item_id).Add(int64_t{k}))
          .status();
    }));
    return completion;
  }

  Result<Claim> ClaimRows(const std::string& run, const std::string& owner, const std::vector<RowKey>& wanted,
                          std::chrono::milliseconds ttl, bool include_failed) override {
    std::lock_guard lock(mu_);
    Claim claim;
    VISALIGN_RETURN_IF_ERROR(db_->Transaction([&]() -> Status {
      claim = {};
      const int64_t now = NowUnixMs();
      // Rows another claimer has locked are skipped, not waited for: they are being claimed.
      VISALIGN_ASSIGN_OR_RETURN(
          pg::Rows free, db_->Exec(fmt::format("SELECT item_id, k, status, lease_owner, lease_expires, job FROM items "
                                               "WHERE run = $1 AND {} FOR UPDATE SKIP LOCKED",
                                               kWantedRows)
                                       .c_str(),
                                   Params().Add(run).AddTextArray(ItemIds(wanted)).AddIntArray(Samples(wanted))));
      std::map<std::pair<std::string, int>, ClaimDecision> decisions;
      std::map<std::pair<std::string, int>, std::string> jobs;
      for (int i = 0; i < free.size(); ++i) {
        const std::pair<std::string, int> key{free.Text(i, 0), static_cast<int>(free.Int(i, 1))};
        decisions[key] = DecideClaim(free.Text(i, 2), free.Text(i, 3), free.Int(i, 4), owner, now, include_failed);
        jobs[key] = free.Text(i, 5);
      }
      std::vector<RowKey> locked;
      for (const RowKey& key : wanted) {
        auto it = decisions.find({key.item_id, key.k});
        if (it == decisions.end()) {
          locked.push_back(key);
        } else if (it->second == ClaimDecision::kClaim) {
          claim.claimed.push_back(key);
          claim.jobs.push_back(jobs[it->first]);
        } else if (it->second == ClaimDecision::kBusy) {
          claim.busy.push_back(key);
        }
      }
      VISALIGN_RETURN_IF_ERROR(AddLockedRowsAsBusy(run, locked, include_failed, claim));
      if (claim.claimed.empty()) return Status::Ok();
      return db_
          ->Exec(fmt::format("UPDATE items SET lease_owner = $4, lease_expires = $5 WHERE run = $1 AND {}", kWantedRows)
                     .c_str(),
                 Params()
                     .Add(run)
                     .AddTextArray(ItemIds(claim.claimed))
                     .AddIntArray(Samples(claim.claimed))
                     .Add(owner)
                     .Add(int64_t{now + ttl.count()}))
          .status();
    }));
    return claim;
  }

  Result<size_t> RenewLeases(const std::string& run, const std::string& owner, std::chrono::milliseconds ttl) override {
    std::lock_guard lock(mu_);
    VISALIGN_ASSIGN_OR_RETURN(pg::Rows r,
                              db_->Exec("UPDATE items SET lease_expires = $1 WHERE run = $2 AND lease_owner = $3",
                                        Params().Add(int64_t{NowUnixMs() + ttl.count()}).Add(run).Add(owner)));
    return r.affected();
  }

  Status ReleaseLeases(const std::string& run, const std::string& owner) override {
    std::lock_guard lock(mu_);
    return db_
        ->Exec("UPDATE items SET lease_owner = '', lease_expires = 0 WHERE run = $1 AND lease_owner = $2",
               Params().Add(run).Add(owner))
        .status();
  }

  Result<std::optional<std::string>> CacheGet(const std::string& ns, const std::string& key) override {
    std::lock_guard lock(mu_);
    VISALIGN_ASSIGN_OR_RETURN(
        pg::Rows r, db_->Exec("SELECT value FROM cache WHERE namespace = $1 AND key = $2", Params().Add(ns).Add(key)));
    if (r.size() == 0) return std::optional<std::string>();
    return std::optional<std::string>(r.Text(0, 0));
  }

  Status CachePut(const std::string& ns, const std::string& key, const std::string& value) override {
    std::lock_guard lock(mu_);
    return db_->Transaction([&]() -> Status {
      VISALIGN_RETURN_IF_ERROR(db_->Exec("INSERT INTO cache(namespace, key, value, updated_at) VALUES ($1, $2, $3, $4) "
                                         "ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, "
                                         "updated_at = excluded.updated_at",
                                         Params().Add(ns).Add(key).Add(value).Add(NowUtc()))
                                   .status());
      return db_->Exec("DELETE FROM cache_leases WHERE namespace = $1 AND key = $2", Params().Add(ns).Add(key))
          .status();
    });
  }

  Result<CacheClaim> ClaimCacheKeys(const std::string& ns, const std::string& owner,
                                    const std::vector<std::string>& keys, std::chrono::milliseconds ttl) override {
    std::lock_guard lock(mu_);
    // In sorted order, so two claimers of overlapping keys lock them in the same order.
    std::vector<std::string> sorted = keys;
    std::sort(sorted.begin(), sorted.end());
    const int64_t now = NowUnixMs();
    CacheClaim claim;
    VISALIGN_RETURN_IF_ERROR(db_->Transaction([&]() -> Status {
      VISALIGN_ASSIGN_OR_RETURN(
          pg::Rows got,
          db_->Exec("INSERT INTO cache_leases(namespace, key, owner, expires) "
                    "SELECT $1, key, $2, $3 FROM unnest($4::text[]) WITH ORDINALITY AS w(key, n) ORDER BY n "
                    "ON CONFLICT (namespace, key) DO UPDATE SET owner = excluded.owner, "
                    "expires = excluded.expires WHERE cache_leases.owner = excluded.owner "
                    "OR cache_leases.expires <= $5 RETURNING key",
                    Params().Add(ns).Add(owner).Add(int64_t{now + ttl.count()}).AddTextArray(sorted).Add(now)));
      std::set<std::string> claimed;
      for (int i = 0; i < got.size(); ++i) claimed.insert(got.Text(i, 0));
      claim = {};
      for (const std::string& key : keys) (claimed.count(key) ? claim.claimed : claim.busy).push_back(key);
      return Status::Ok();
    }));
    return claim;
  }

  Status RenewCacheLeases(const std::string& ns, const std::string& owner, std::chrono::milliseconds ttl) override {
    std::lock_guard lock(mu_);
    return db_
        ->Exec("UPDATE cache_leases SET expires = $1 WHERE namespace = $2 AND owner = $3",
               Params().Add(int64_t{NowUnixMs() + ttl.count()}).Add(ns).Add(owner))
        .status();
  }

  Status ReleaseCacheLeases(const std::string& ns, const std::string& owner) override {
    std::lock_guard lock(mu_);
    return db_->Exec("DELETE FROM cache_leases WHERE namespace = $1 AND owner = $2", Params().Add(ns).Add(owner))
        .status();
  }

 protected:
  // A store that keeps its images in the database copies those missing or different under root().
  Status MaterializeImages(const std::string& run, const std::vector<DoneImage>& images) override {
    if (images_ != ImageKeeping::kDatabase) return Status::Ok();
    for (const DoneImage& image : images) {
      auto have = Sha256File(image.image_path);
      if (have.ok() && *have == image.sha256) continue;
      std::unique_lock lock(mu_);
      VISALIGN_ASSIGN_OR_RETURN(pg::Rows r,
                                db_->Exec("SELECT bytes FROM images WHERE run = $1 AND item_id = $2 AND k = $3",
                                          Params().Add(run).Add(image.item_id).Add(int64_t{image.k}),
                                          /*binary_results=*/true));
      lock.unlock();
      if (r.size() == 0)
        return Status::Corrupt(
            fmt::format("done item \"{}\" sample {} of run \"{}\" has no image", image.item_id, image.k, run), where_,
            "a store whose done rows have their images");
      const std::string bytes = r.Text(0, 0);
      if (Sha256Hex(bytes) != image.sha256)
        return Status::Corrupt(fmt::format("the image of item \"{}\" sample {} of run \"{}\" is not the one recorded",
                                           image.item_id, image.k, run),
                               where_, "images with their recorded SHA-256");
      VISALIGN_RETURN_IF_ERROR(EnsureDirectory(image.image_path.parent_path()));
      VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(image.image_path, bytes));
    }
    return Status::Ok();
  }

 private:
  // A failed (`status` failed or pending: to be retried) or refused attempt by `owner`. Pending rows
  // keep their lease (the owner retries); the others are final and unleased.
  Result<Completion> Unsuccessful(const std::string& run, const std::string& item_id, int k, const std::string& owner,
                                  const std::string& error, double latency_ms, const char* status) {
    std::lock_guard lock(mu_);
    Completion completion = Completion::kRecorded;
    const bool retry = std::string_view(status) == "pending";
    VISALIGN_RETURN_IF_ERROR(db_->Transaction([&]() -> Status {
      VISALIGN_ASSIGN_OR_RETURN(completion, LockRowForCompletion(run, item_id, k, owner));
      if (completion == Completion::kLeaseLost) return Status::Ok();
      return db_
          ->Exec(retry ? "UPDATE items SET status = $7, attempts = attempts + 1, last_error = $1, "
                         "latency_ms = $2, updated_at = $3 WHERE run = $4 AND item_id = $5 AND k = $6"
                       : "UPDATE items SET status = $7, attempts = attempts + 1, last_error = $1, "
                         "latency_ms = $2, updated_at = $3, lease_owner = '', lease_expires = 0 "
                         "WHERE run = $4 AND item_id = $5 AND k = $6",
                 Params()
                     .Add(error)
                     .Add(latency_ms)
                     .Add(NowUtc())
                     .Add(run)
                     .Add(item_id)
                     .Add(int64_t{k})
                     .Add(std::string(status)))
          .status();
    }));
    return completion;
  }

  // Locks the row for the rest of the transaction and says whether `owner` may complete it.
  Result<Completion> LockRowForCompletion(const std::string& run, const std::string& item_id, int k,
                                          const std::string& owner) {
    VISALIGN_ASSIGN_OR_RETURN(
        pg::Rows q,
        db_->Exec("SELECT status, lease_owner FROM items WHERE run = $1 AND item_id = $2 AND k = $3 FOR UPDATE",
                  Params().Add(run).Add(item_id).Add(int64_t{k})));
    if (q.size() == 0)
      return Status::NotFound(fmt::format("no row for item \"{}\" sample {} in run \"{}\"", item_id, k, run), where_,
                              "a row added by AddItems");
    return CompletionFor(q.Text(0, 0), q.Text(0, 1), owner);
  }

  // Of the wanted rows the claim query skipped, those that exist and could be claimed are locked by
  // another claimer or completer: busy for now.
  Status AddLockedRowsAsBusy(const std::string& run, const std::vector<RowKey>& locked, bool include_failed,
                             Claim& claim) {
    if (locked.empty()) return Status::Ok();
    VISALIGN_ASSIGN_OR_RETURN(
        pg::Rows q,
        db_->Exec(
            fmt::format("SELECT item_id, k FROM items WHERE run = $1 AND {} AND status NOT IN ('done', 'refused') "
                        "AND (status = 'pending' OR $4 = 'yes')",
                        kWantedRows)
                .c_str(),
            Params()
                .Add(run)
                .AddTextArray(ItemIds(locked))
                .AddIntArray(Samples(locked))
                .Add(std::string(include_failed ? "yes" : "no"))));
    std::set<std::pair<std::string, int>> exists;
    for (int i = 0; i < q.size(); ++i) exists.insert({q.Text(i, 0), static_cast<int>(q.Int(i, 1))});
    for (const RowKey& key : locked)
      if (exists.count({key.item_id, key.k})) claim.busy.push_back(key);
    return Status::Ok();
  }

  Result<std::vector<RunInfo>> QueryRunsLocked(const std::string* name, bool for_update) {
    const std::string sql =
        name ? fmt::format("SELECT {} FROM runs WHERE name = $1{}", kRunColumns, for_update ? " FOR UPDATE" : "")
             : fmt::format("SELECT {} FROM runs ORDER BY name COLLATE \"C\"", kRunColumns);
    VISALIGN_ASSIGN_OR_RETURN(pg::Rows q, db_->Exec(sql.c_str(), name ? Params().Add(*name) : Params()));
    std::vector<RunInfo> runs;
    for (int i = 0; i < q.size(); ++i) {
      VISALIGN_ASSIGN_OR_RETURN(RunInfo r, RunFromColumns(q.Text(i, 0), q.Text(i, 1), q.Text(i, 2), q.Text(i, 3),
                                                          q.Text(i, 4), q.Text(i, 5), where_));
      runs.push_back(std::move(r));
    }
    return runs;
  }

  std::unique_ptr<pg::Connection> db_;
  const ImageKeeping images_;
  const std::string where_;
  std::mutex mu_;
};

// Where a store that keeps images in the database copies them by default: one folder per database
// under the system temp folder.
fs::path DefaultImageCache(const std::string& display_location) {
  return fs::temp_directory_path() / ("visalign-images-" + Sha256Hex(display_location).substr(0, 16));
}

}  // namespace

Result<std::unique_ptr<RunStore>> OpenPostgresStore(const std::string& location, const StoreOptions& options,
                                                    bool migrate, SchemaMigration* migration) {
  const std::string where = DisplayLocation(location);
  VISALIGN_ASSIGN_OR_RETURN(std::string password, pg::PasswordFromEnvironment(options.password_env));
  VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<pg::Connection> db, pg::Connection::Open(location, password, where));
  VISALIGN_ASSIGN_OR_RETURN(SchemaState state, PrepareSchema(*db, options, migrate, where));
  if (migration) *migration = state.migration;
  fs::path root = options.image_root;
  if (state.images == ImageKeeping::kFiles && root.empty())
    return Status::InvalidArgument("this store keeps its images as files in a folder its workers share", "image root",
                                   "the folder the store's images are in, shared by every worker");
  if (root.empty()) root = DefaultImageCache(where);
  VISALIGN_RETURN_IF_ERROR(EnsureDirectory(root));
  return std::unique_ptr<RunStore>(std::make_unique<PostgresStore>(root, std::move(db), state.images, where));
}

}  // namespace visalign::store
